// Parity trace: one training step of the lesson's FeedForward (n_embd 16) here against the same
// step in PyTorch, dumped by tools/reference/parity_reference.py into tests/fixtures/parity/. The
// clean dump must agree everywhere; in the two perturbed dumps (LeakyReLU in place of ReLU, and one
// gradient element moved by 1e-3) the comparer must name the tensor and the max abs diff that the
// script computed between its own clean and perturbed runs. compare_traces itself is checked on
// small hand-made traces.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/random.hpp"
#include "io/safetensors.hpp"
#include "nn/feedforward.hpp"
#include "nn/linear.hpp"
#include "nn/loss.hpp"
#include "optim/sgd.hpp"
#include "parity/parity.hpp"

using namespace minigrad;

namespace {

std::string fixture(const std::string& name) {
  return std::string(MINIGRAD_FIXTURES_DIR) + "/parity/" + name;
}

// Scratch files go into the build folder, which is the running build's own.
std::string temp_path(const std::string& name) {
  return std::string(MINIGRAD_BINARY_DIR) + "/parity_test_" + name;
}

// Our step, with the configuration the PyTorch dump records in its metadata.
parity::Trace our_step(const Metadata& config) {
  const int64_t n_embd = std::stoll(config.at("n_embd")), rows = std::stoll(config.at("rows"));
  manual_seed(std::stoull(config.at("seed")));
  nn::FeedForward model(n_embd, std::stoll(config.at("widen")));
  Tensor x = randn({rows, n_embd});
  Tensor y = randn({rows, n_embd});
  optim::SGD sgd(model.parameters(), {.lr = std::stod(config.at("lr"))});
  return parity::trace_training_step(
      model, x, y,
      [](const Tensor& out, const Tensor& target) { return nn::functional::mse_loss(out, target); },
      [&] { sgd.step(); });
}

std::vector<std::string> names_of(const parity::Trace& trace) {
  std::vector<std::string> names;
  for (const auto& [name, tensor] : trace) names.push_back(name);
  return names;
}

// A one-entry trace {name: values} in float64.
parity::Trace one(const std::string& name, const std::vector<double>& values, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
  return {{name, tensor(values, shape, {.dtype = kFloat64})}};
}

parity::Trace join(parity::Trace a, const parity::Trace& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

BOOST_AUTO_TEST_SUITE(parity_trace)

BOOST_AUTO_TEST_CASE(feedforward_step_agrees_with_pytorch_tensor_by_tensor) {
  const parity::Trace reference = parity::load_trace(fixture("feedforward_step.safetensors"));
  const parity::Trace ours = our_step(load_metadata(fixture("feedforward_step.safetensors")));
  BOOST_TEST(names_of(ours) == names_of(reference), boost::test_tools::per_element());
  const parity::ParityReport report = parity::compare_traces(ours, reference);
  BOOST_TEST(report.agrees(), parity::to_string(report));
  BOOST_TEST(report.tensors.size() == 20u);
}

BOOST_AUTO_TEST_CASE(trace_names_follow_the_order_the_step_makes_them) {
  const std::vector<std::string> expected = {"input",
                                             "target",
                                             "net.0.weight",
                                             "net.0.bias",
                                             "net.2.weight",
                                             "net.2.bias",
                                             "net.0.output",
                                             "net.1.output",
                                             "net.2.output",
                                             "net.output",
                                             "output",
                                             "loss",
                                             "net.0.weight.grad",
                                             "net.0.bias.grad",
                                             "net.2.weight.grad",
                                             "net.2.bias.grad",
                                             "net.0.weight.updated",
                                             "net.0.bias.updated",
                                             "net.2.weight.updated",
                                             "net.2.bias.updated"};
  const parity::Trace ours =
      our_step({{"seed", "1"}, {"n_embd", "2"}, {"widen", "4"}, {"rows", "3"}, {"lr", "0.5"}});
  BOOST_TEST(names_of(ours) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(perturbed_pytorch_dumps_are_caught_at_the_right_tensor) {
  const parity::Trace ours = our_step(load_metadata(fixture("feedforward_step.safetensors")));
  for (const std::string file :
       {"feedforward_step_leaky_relu.safetensors", "feedforward_step_perturbed_grad.safetensors"}) {
    BOOST_TEST_CONTEXT(file) {
      const Metadata expected = load_metadata(fixture(file));
      const parity::ParityReport report = parity::compare_traces(ours, parity::load_trace(fixture(file)));
      const parity::TensorParity* first = report.first_divergence();
      BOOST_REQUIRE(first != nullptr);
      BOOST_TEST(first->name == expected.at("expected_first_divergence"));
      BOOST_TEST(first->problem == "values differ");
      // Ours differs from PyTorch's clean run by float rounding only (well under 1e-5).
      BOOST_TEST(std::abs(first->max_abs_diff - std::stod(expected.at("expected_max_abs_diff"))) < 1e-5);
    }
  }
}

BOOST_AUTO_TEST_CASE(compare_traces_names_the_first_tensor_beyond_tolerance) {
  struct Case {
    const char* name;
    parity::Trace ours, reference;
    std::string first;  // "" when all agree
    double max_abs_diff;
    std::string problem;
  };
  const parity::Trace a = one("a", {1.0, 2.0});
  const std::vector<Case> cases = {
      {"identical", join(a, one("b", {3.0})), join(a, one("b", {3.0})), "", 0, ""},
      {"second differs", join(a, one("b", {3.0, 4.0})), join(a, one("b", {3.0, 4.25})), "b", 0.25,
       "values differ"},
      {"first of two that differ", join(one("a", {1.5, 2.0}), one("b", {9.0})), join(a, one("b", {3.0})), "a",
       0.5, "values differ"},
      {"inside atol + rtol * |reference|", one("a", {100.0}), one("a", {100.005}), "", 0, ""},
      {"just outside it", one("a", {100.0}), one("a", {100.02}), "a", 0.02, "values differ"},
      {"nan meets nan, inf meets inf", one("a", {kNan, kInf}), one("a", {kNan, kInf}), "", 0, ""},
      {"nan meets a number", one("a", {kNan}), one("a", {1.0}), "a", kInf, "values differ"},
      {"shape differs", one("a", {1.0, 2.0}), one("a", {1.0, 2.0}, {1, 2}), "a", kInf,
       "shape [2] here, [1, 2] in the reference"},
      {"missing in the reference", join(a, one("b", {3.0})), a, "b", kInf, "missing in the reference"},
      {"only the reference has it", a, join(a, one("b", {3.0})), "", 0, ""},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      const parity::ParityReport report = parity::compare_traces(c.ours, c.reference);
      const parity::TensorParity* first = report.first_divergence();
      BOOST_TEST((first ? first->name : "") == c.first);
      if (first) {
        BOOST_TEST(first->problem == c.problem);
        if (std::isinf(c.max_abs_diff)) {
          BOOST_TEST(std::isinf(first->max_abs_diff));
        } else {
          BOOST_TEST(first->max_abs_diff == c.max_abs_diff, boost::test_tools::tolerance(1e-9));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(report_text_lists_every_tensor_then_the_verdict) {
  const parity::ParityReport report =
      parity::compare_traces(join(one("a", {1.0}), one("b", {2.0})), join(one("a", {1.0}), one("b", {2.5})));
  BOOST_TEST(parity::to_string(report) ==
             "  ok    a  max abs diff 0\n"
             "  DIFF  b  max abs diff 0.5  (values differ)\n"
             "first divergence: b (values differ, max abs diff 0.5)\n");
  BOOST_TEST(parity::to_string(parity::compare_traces(one("a", {1.0}), one("a", {1.0}))) ==
             "  ok    a  max abs diff 0\nall 1 tensors agree\n");
}

BOOST_AUTO_TEST_CASE(output_recorder_lists_module_outputs_inner_first) {
  manual_seed(0);
  nn::FeedForward ff(2);
  Tensor x = randn({1, 2});
  nn::OutputRecorder recorder;
  const Tensor out = ff(x);
  const std::vector<std::string> expected = {"net.0", "net.1", "net.2", "net", ""};
  BOOST_TEST(names_of(recorder.outputs()) == expected, boost::test_tools::per_element());
  // ReLU's output is the first Linear's with negatives set to 0; the last three are the same tensor.
  const auto hidden = recorder.outputs()[0].second.to_vector<float>();
  const auto relu = recorder.outputs()[1].second.to_vector<float>();
  for (size_t i = 0; i < hidden.size(); ++i) BOOST_TEST(relu[i] == std::max(hidden[i], 0.0f));
  for (size_t i = 2; i < 5; ++i) BOOST_TEST(recorder.outputs()[i].second.equal(out));
}

BOOST_AUTO_TEST_CASE(module_called_twice_gets_a_numbered_second_output) {
  manual_seed(0);
  auto shared = std::make_shared<nn::Linear>(2, 2);
  nn::Sequential model;
  model.push_back(shared);
  model.push_back(shared);
  optim::SGD sgd(model.parameters(), {.lr = 0.1});
  const parity::Trace trace = parity::trace_training_step(
      model, ones({1, 2}), zeros({1, 2}),
      [](const Tensor& out, const Tensor& target) { return nn::functional::mse_loss(out, target); },
      [&] { sgd.step(); });
  const std::vector<std::string> expected = {
      "input",  "target", "0.weight",      "0.bias",      "0.output",         "0.output#2",
      "output", "loss",   "0.weight.grad", "0.bias.grad", "0.weight.updated", "0.bias.updated"};
  BOOST_TEST(names_of(trace) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(saved_trace_loads_back_in_its_order) {
  const parity::Trace trace = join(join(one("z", {1.0, 2.0}), one("a", {3.0})), one("m.output", {4.0}));
  const std::string path = temp_path("roundtrip.safetensors");
  parity::save_trace(trace, path);
  const parity::Trace loaded = parity::load_trace(path);
  std::filesystem::remove(path);
  BOOST_TEST(names_of(loaded) == names_of(trace), boost::test_tools::per_element());
  BOOST_TEST(parity::compare_traces(loaded, trace, {.atol = 0, .rtol = 0}).agrees());
}

BOOST_AUTO_TEST_CASE(bad_input_throws_naming_the_function) {
  const auto message_starts = [](const std::string& start) {
    return [start](const std::exception& e) { return std::string(e.what()).rfind(start, 0) == 0; };
  };
  BOOST_CHECK_EXCEPTION(parity::compare_traces(one("a", {1.0}), one("a", {1.0}), {.atol = -1}),
                        std::invalid_argument, message_starts("compare_traces: tolerances must be >= 0"));
  BOOST_CHECK_EXCEPTION(parity::save_trace(one("a,b", {1.0}), temp_path("comma.safetensors")),
                        std::invalid_argument, message_starts("save_trace: the name \"a,b\" holds a comma"));
  BOOST_CHECK_THROW(parity::load_trace(temp_path("no_such_file.safetensors")), std::runtime_error);

  const std::string path = temp_path("bad_order.safetensors");
  save_file(join(one("a", {1.0}), one("b", {2.0})), path, {{"trace_order", "a,c"}});
  BOOST_CHECK_EXCEPTION(parity::load_trace(path), std::runtime_error,
                        message_starts("load_trace: " + path + ": trace_order names \"c\""));
  save_file(join(one("a", {1.0}), one("b", {2.0})), path, {{"trace_order", "a"}});
  BOOST_CHECK_EXCEPTION(
      parity::load_trace(path), std::runtime_error,
      message_starts("load_trace: " + path + ": trace_order leaves out 1 of the file's tensors"));
  std::filesystem::remove(path);
}

BOOST_AUTO_TEST_SUITE_END()
