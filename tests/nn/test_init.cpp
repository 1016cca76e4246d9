// Tests for nn::init against torch.nn.init (tests/fixtures/nn_init.json from
// tools/reference/nn_reference.py): the gain table, the fans, and the exact numbers each
// function draws after a seed, followed by randn(3) to prove it drew exactly as many numbers as
// PyTorch. Then: a given Generator, parameters that require grad, and every kind of bad input.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "fixture_support.hpp"
#include "nn/init.hpp"

namespace {

using namespace minigrad;
namespace init = minigrad::nn::init;
using nn_test::check_close;
using nn_test::check_throws;
using nn_test::fixture;
using nn_test::json;

const json& data() { return fixture("nn_init.json"); }

// Runs the fixture's call `fn(**kwargs)` on `t` (Python's defaults where a kwarg is absent).
void apply(const std::string& fn, const json& kwargs, Tensor t) {
  auto number = [&](const char* key, double fallback) { return kwargs.value(key, fallback); };
  auto text = [&](const char* key, const char* fallback) { return kwargs.value(key, std::string(fallback)); };
  if (fn == "uniform_")
    init::uniform_(t, number("a", 0.0), number("b", 1.0));
  else if (fn == "normal_")
    init::normal_(t, number("mean", 0.0), number("std", 1.0));
  else if (fn == "constant_")
    init::constant_(t, number("val", 0.0));
  else if (fn == "zeros_")
    init::zeros_(t);
  else if (fn == "ones_")
    init::ones_(t);
  else if (fn == "xavier_uniform_")
    init::xavier_uniform_(t, number("gain", 1.0));
  else if (fn == "xavier_normal_")
    init::xavier_normal_(t, number("gain", 1.0));
  else if (fn == "kaiming_uniform_")
    init::kaiming_uniform_(t, number("a", 0.0), text("mode", "fan_in"), text("nonlinearity", "leaky_relu"));
  else if (fn == "kaiming_normal_")
    init::kaiming_normal_(t, number("a", 0.0), text("mode", "fan_in"), text("nonlinearity", "leaky_relu"));
  else
    BOOST_FAIL("unknown init function " << fn);
}

BOOST_AUTO_TEST_SUITE(init_)

BOOST_AUTO_TEST_CASE(calculate_gain_matches_pytorch_for_every_nonlinearity) {
  for (const json& c : data()["gains"]) {
    const std::string name = c["nonlinearity"];
    const std::optional<double> param =
        c["param"].is_null() ? std::nullopt : std::optional<double>(c["param"].get<double>());
    BOOST_TEST_CONTEXT(name << " with param " << (param ? std::to_string(*param) : "None")) {
      BOOST_TEST(init::calculate_gain(name, param) == c["gain"].get<double>());  // same double operations
    }
  }
}

BOOST_AUTO_TEST_CASE(fans_count_inputs_and_outputs_times_the_receptive_field) {
  for (const json& c : data()["fans"]) {
    const Shape shape = c["shape"].get<std::vector<int64_t>>();
    BOOST_TEST_CONTEXT("shape " << shape) {
      const init::Fans fans = init::calculate_fan_in_and_fan_out(zeros(shape));
      BOOST_TEST(fans.fan_in == c["fan_in"].get<int64_t>());
      BOOST_TEST(fans.fan_out == c["fan_out"].get<int64_t>());
    }
  }
}

BOOST_AUTO_TEST_CASE(each_init_function_draws_pytorchs_numbers_after_a_seed) {
  for (const json& c : data()["cases"]) {
    const Shape shape = c["shape"].get<std::vector<int64_t>>();
    const Dtype dtype = c["dtype"] == "float64" ? kFloat64 : kFloat32;
    BOOST_TEST_CONTEXT(c["function"].get<std::string>() << " on " << shape << " " << c["kwargs"].dump()) {
      manual_seed(c["seed"].get<uint64_t>());
      const Tensor t = zeros(shape, {.dtype = dtype});
      apply(c["function"], c["kwargs"], t);
      const Tensor after = randn({3});
      check_close(t, c["values"], dtype == kFloat64 ? 1e-12 : 1e-6, "values");
      check_close(after, c["randn_after"], 1e-6, "randn(3) after");
    }
  }
}

BOOST_AUTO_TEST_CASE(a_given_generator_draws_what_the_seeded_default_one_draws) {
  Generator generator(5);
  const Tensor from_generator =
      init::kaiming_uniform_(zeros({4, 3}), 0.0, "fan_in", "leaky_relu", &generator);
  manual_seed(5);
  const Tensor from_default = init::kaiming_uniform_(zeros({4, 3}));
  BOOST_TEST(equal(from_generator, from_default));
  BOOST_TEST(!equal(from_generator, zeros({4, 3})));
}

BOOST_AUTO_TEST_CASE(init_writes_parameters_that_require_grad_without_recording) {
  Tensor weight = zeros({3, 2}, {.requires_grad = true});
  init::xavier_normal_(weight);
  init::ones_(weight);
  BOOST_TEST(equal(weight, ones({3, 2})));
  BOOST_TEST(weight.is_leaf());
  BOOST_TEST(is_grad_enabled());  // the guard is gone again
}

BOOST_AUTO_TEST_CASE(bad_inputs_throw_naming_the_problem) {
  struct Case {
    std::string name;
    std::function<void()> call;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"an unknown nonlinearity", [] { init::calculate_gain("swish"); }, {"unsupported nonlinearity swish"}},
      {"fans of a 1-d tensor",
       [] { init::calculate_fan_in_and_fan_out(zeros({5})); },
       {"fewer than 2 dimensions", "[5]"}},
      {"xavier on a 1-d tensor", [] { init::xavier_uniform_(zeros({5})); }, {"fewer than 2 dimensions"}},
      {"an unknown mode",
       [] {
         init::kaiming_normal_(zeros({2, 2}), 0.0, "fan_avg");
       },
       {"mode fan_avg not supported"}},
      {"an unknown nonlinearity in kaiming",
       [] {
         init::kaiming_uniform_(zeros({2, 2}), 0.0, "fan_in", "swish");
       },
       {"unsupported nonlinearity swish"}},
      {"an undefined tensor", [] { init::kaiming_uniform_(Tensor()); }, {"undefined"}},
      {"an integer tensor", [] { init::uniform_(zeros({2}, {.dtype = kInt64})); }, {"uniform_", "int64"}},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.name) { check_throws<std::invalid_argument>(c.call, c.fragments); }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
