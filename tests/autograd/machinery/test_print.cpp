// Tests for printing tensors (autograd/machinery/print.cpp) against the text real PyTorch 1.13.1 prints.
// The fixture tests/fixtures/print.json comes from tools/reference/print_reference.py: each case
// gives a tensor's dtype, shape, flat values and autograd state, and str(tensor) from PyTorch.
// Here each case is rebuilt with minigrad's factories (and `+ zeros` for the cases printed with
// grad_fn=<AddBackward0>) and its to_string() must equal PyTorch's text character for character.
// Further cases check operator<<, Shape printing, a grad_fn name from another op, and the throw.
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/tensor.hpp"
#include "fixture.hpp"
#include "nn/module.hpp"

namespace {

using namespace minigrad;
using nlohmann::json;

const json& fixture() { return minigrad_test::read_fixture("print.json"); }

double number(const json& value) { return minigrad_test::fixture_number(value); }

// The tensor a fixture case describes, made the way a learner would make it.
Tensor build(const json& c) {
  const Shape shape(c.at("shape").get<std::vector<int64_t>>());
  const std::string dtype = c.at("dtype").get<std::string>();
  const json& values = c.at("values");

  if (dtype == "int64") return tensor(values.get<std::vector<int64_t>>(), shape);
  if (dtype == "bool") return tensor(values.get<std::vector<bool>>(), shape);

  std::vector<double> data;
  for (const json& value : values) data.push_back(number(value));
  const TensorOptions options{.dtype = dtype == "float64" ? kFloat64 : kFloat32,
                              .requires_grad = c.at("requires_grad").get<bool>()};
  Tensor x = tensor(data, shape, options);
  if (c.value("op", "") == "add") return x + zeros(shape, {.dtype = options.dtype});
  if (c.value("op", "") == "parameter") {  // as a module's weight: registered by register_parameter
    struct Holder : nn::Module {
      Tensor weight;
      explicit Holder(const Tensor& t) { weight = register_parameter("weight", t); }
      Tensor forward(const Tensor& input) override { return input; }
    };
    return Holder(x.detach()).weight;
  }
  return x;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(print)

BOOST_AUTO_TEST_CASE(fixture_covers_every_case_of_the_reference_script) {
  BOOST_TEST(fixture().size() >= 60u);
}

BOOST_AUTO_TEST_CASE(every_fixture_tensor_prints_as_pytorch_prints_it) {
  for (const json& c : fixture()) {
    BOOST_TEST_CONTEXT(c.at("name").get<std::string>()) {
      BOOST_TEST(to_string(build(c)) == c.at("text").get<std::string>());
    }
  }
}

BOOST_AUTO_TEST_CASE(stream_output_equals_to_string) {
  for (const json& c : fixture()) {
    BOOST_TEST_CONTEXT(c.at("name").get<std::string>()) {
      std::ostringstream os;
      os << build(c);
      BOOST_TEST(os.str() == c.at("text").get<std::string>());
    }
  }
}

// Hand-written: 2 * [1, 2] is [2, 4], whole numbers, recorded by mul.
BOOST_AUTO_TEST_CASE(result_of_mul_names_mul_backward) {
  const Tensor x = tensor(std::vector<double>{1.0, 2.0}, {2}, {.requires_grad = true});
  BOOST_TEST(to_string(x * 2.0) == "tensor([2., 4.], grad_fn=<MulBackward0>)");
}

// Hand-written: a detached result is a plain tensor again, without suffixes.
BOOST_AUTO_TEST_CASE(detached_result_prints_without_suffixes) {
  const Tensor x = tensor(std::vector<double>{0.5, -1.0}, {2}, {.requires_grad = true});
  BOOST_TEST(to_string((x + x).detach()) == "tensor([ 1., -2.])");
}

BOOST_AUTO_TEST_CASE(shapes_print_as_bracketed_lists) {
  struct Row {
    Shape shape;
    std::string text;
  };
  const std::vector<Row> rows = {{{2, 128}, "[2, 128]"}, {{}, "[]"}, {{5}, "[5]"}, {{0, 3, 1}, "[0, 3, 1]"}};
  for (const Row& row : rows) {
    BOOST_TEST_CONTEXT(row.text) {
      std::ostringstream os;
      os << row.shape;
      BOOST_TEST(os.str() == row.text);
      BOOST_TEST(to_string(row.shape) == row.text);
    }
  }
}

BOOST_AUTO_TEST_CASE(an_undefined_tensor_prints_as_none_like_python) {
  // print(x.grad) before any backward() prints None in Python.
  const Tensor never_computed = tensor({1.0}).requires_grad_().grad();
  BOOST_TEST(to_string(never_computed) == "None");
  std::ostringstream os;
  os << never_computed;
  BOOST_TEST(os.str() == "None");
}

BOOST_AUTO_TEST_SUITE_END()
