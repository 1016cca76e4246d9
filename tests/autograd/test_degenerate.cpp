// Degenerate numerics against PyTorch: what the ops do at the edges, forward and backward.
//
// Empty tensors (0 rows) through nn::Linear and matmul; sum, mean, max, min and argmax of empty
// tensors; softmax, log_softmax and cross_entropy of huge, tiny, infinite and nan logits; and
// elementwise ops at 0, -0, +-inf and nan (log(0), 0/0, 1/0, pow at 0 and at negative bases, the
// gradients of sqrt, relu, abs and clamp at their kinks, sigmoid and tanh at +-1e4). The expected
// values are PyTorch 1.13.1's, from tests/fixtures/degenerate.json (made by
// tools/reference/degenerate_reference.py). A nan matches a nan and an infinity only the same one.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "autograd/ops.hpp"
#include "fixture.hpp"
#include "nn/linear.hpp"
#include "nn/loss.hpp"

namespace {

using namespace minigrad;
using nlohmann::json;
namespace F = minigrad::nn::functional;

const json& fixture() { return minigrad_test::read_fixture("degenerate.json"); }

double number(const json& value) { return minigrad_test::fixture_number(value); }

std::vector<double> numbers(const json& values) {
  std::vector<double> out;
  for (const json& value : values) out.push_back(number(value));
  return out;
}

Dtype dtype_named(const std::string& name) {
  if (name == "float64") return kFloat64;
  return name == "int64" ? kInt64 : kFloat32;
}

nn::Reduction reduction_named(const std::string& name) {
  if (name == "none") return nn::Reduction::None;
  return name == "sum" ? nn::Reduction::Sum : nn::Reduction::Mean;
}

/// The same number: nan matches nan, an infinity only the same infinity, and finite numbers agree
/// to the rounding of the dtype (PyTorch's float32 kernels and ours round differently).
bool same_number(double got, double want, Dtype dtype) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (std::isinf(got) || std::isinf(want)) return got == want;
  const double rtol = dtype == kFloat32 ? 1e-6 : 1e-12, atol = dtype == kFloat32 ? 1e-7 : 1e-15;
  return std::abs(got - want) <= atol + rtol * std::abs(want);
}

/// One assertion per check: shape, dtype, then the first element that differs.
void check_tensor(const Tensor& got, const json& want_values, const Shape& want_shape, Dtype want_dtype,
                  const std::string& what) {
  BOOST_TEST_REQUIRE(got.defined(), what << " is undefined");
  BOOST_TEST_REQUIRE(got.shape() == want_shape,
                     what << " has shape " << got.shape() << ", PyTorch's " << want_shape);
  BOOST_TEST_REQUIRE(got.dtype() == want_dtype,
                     what << " is " << got.dtype() << ", PyTorch's " << want_dtype);
  const std::vector<double> values = got.to_vector<double>(), want = numbers(want_values);
  BOOST_TEST_REQUIRE(values.size() == want.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (!same_number(values[i], want[i], want_dtype)) {
      BOOST_TEST(false, what << " element " << i << " is " << values[i] << ", PyTorch gives " << want[i]);
      return;
    }
  }
}

// ---- the minigrad call of each op in the fixture ------------------------------------------------

/// Runs the op on `inputs` with the fixture's `args`; returns its outputs (max and min over a dim:
/// values and indices). An op may replace an input by the tensor whose gradient PyTorch reports.
using Op = std::function<std::vector<Tensor>(std::vector<Tensor>& inputs, const json& args)>;

template <typename F>
Op unary(F f) {
  return [f](std::vector<Tensor>& in, const json&) { return std::vector<Tensor>{f(in[0])}; };
}

/// sum, mean, argmax over all elements, or over args["dim"].
template <typename All, typename Dim>
Op reduction(All all, Dim over_dim) {
  return [all, over_dim](std::vector<Tensor>& in, const json& args) {
    if (!args.contains("dim")) return std::vector<Tensor>{all(in[0])};
    return std::vector<Tensor>{over_dim(in[0], args["dim"].get<int64_t>(), args["keepdim"].get<bool>())};
  };
}

/// max or min: the value over all elements, or values and indices over args["dim"].
Op extreme(bool is_max) {
  return [is_max](std::vector<Tensor>& in, const json& args) {
    if (!args.contains("dim")) return std::vector<Tensor>{is_max ? max(in[0]) : min(in[0])};
    const int64_t dim = args["dim"].get<int64_t>();
    const bool keepdim = args["keepdim"].get<bool>();
    const auto [values, indices] = is_max ? max(in[0], dim, keepdim) : min(in[0], dim, keepdim);
    return std::vector<Tensor>{values, indices};
  };
}

/// nn::Linear with the fixture's weight and bias copied in; the layer's own weight and bias take
/// their places among the inputs, since theirs are the gradients PyTorch reports.
std::vector<Tensor> linear_layer(std::vector<Tensor>& in, const json&) {
  nn::Linear layer(in[1].size(1), in[1].size(0));
  {
    NoGradGuard no_grad;
    layer.weight.copy_(in[1]);
    layer.bias.copy_(in[2]);
  }
  in[1] = layer.weight;
  in[2] = layer.bias;
  return {layer(in[0])};
}

std::vector<Tensor> cross_entropy_loss(std::vector<Tensor>& in, const json& args) {
  const auto targets = args["target"].get<std::vector<int64_t>>();
  const Tensor target = tensor(targets, {static_cast<int64_t>(targets.size())});
  return {
      F::cross_entropy(in[0], target, {.reduction = reduction_named(args["reduction"].get<std::string>())})};
}

const std::map<std::string, Op>& ops() {
  static const std::map<std::string, Op> table = {
      {"log", unary([](const Tensor& x) { return log(x); })},
      {"sqrt", unary([](const Tensor& x) { return sqrt(x); })},
      {"exp", unary([](const Tensor& x) { return exp(x); })},
      {"relu", unary([](const Tensor& x) { return relu(x); })},
      {"abs", unary([](const Tensor& x) { return abs(x); })},
      {"sigmoid", unary([](const Tensor& x) { return sigmoid(x); })},
      {"tanh", unary([](const Tensor& x) { return tanh(x); })},
      {"div", [](std::vector<Tensor>& in, const json&) { return std::vector<Tensor>{div(in[0], in[1])}; }},
      {"matmul",
       [](std::vector<Tensor>& in, const json&) { return std::vector<Tensor>{matmul(in[0], in[1])}; }},
      {"pow",
       [](std::vector<Tensor>& in, const json& args) {
         return std::vector<Tensor>{pow(in[0], args["exponent"].get<double>())};
       }},
      {"clamp",
       [](std::vector<Tensor>& in, const json& args) {
         return std::vector<Tensor>{clamp(in[0], args["min"].get<double>(), args["max"].get<double>())};
       }},
      {"softmax",
       [](std::vector<Tensor>& in, const json& args) {
         return std::vector<Tensor>{softmax(in[0], args["dim"].get<int64_t>())};
       }},
      {"log_softmax",
       [](std::vector<Tensor>& in, const json& args) {
         return std::vector<Tensor>{log_softmax(in[0], args["dim"].get<int64_t>())};
       }},
      {"sum", reduction([](const Tensor& x) { return sum(x); },
                        [](const Tensor& x, int64_t d, bool k) { return sum(x, d, k); })},
      {"mean", reduction([](const Tensor& x) { return mean(x); },
                         [](const Tensor& x, int64_t d, bool k) { return mean(x, d, k); })},
      {"argmax", reduction([](const Tensor& x) { return argmax(x); },
                           [](const Tensor& x, int64_t d, bool k) { return argmax(x, d, k); })},
      {"max", extreme(true)},
      {"min", extreme(false)},
      {"linear", linear_layer},
      {"cross_entropy", cross_entropy_loss},
  };
  return table;
}

/// One fixture case: the op's outputs, then the gradient of each input for backward(cotangent);
/// or, where PyTorch raises (RuntimeError or IndexError), std::invalid_argument, which is what
/// ops.hpp documents for reducing an empty tensor or an empty dim.
void check_fixture_case(const json& c) {
  const Dtype dtype = dtype_named(c["dtype"].get<std::string>());
  const bool with_grads = c.contains("grads");
  std::vector<Tensor> inputs;
  for (const json& input : c["inputs"]) {
    inputs.push_back(
        tensor(numbers(input["values"]), input["shape"].get<std::vector<int64_t>>(), {.dtype = dtype}));
    if (with_grads) inputs.back().requires_grad_();
  }
  const Op& op = ops().at(c["op"].get<std::string>());
  if (c.contains("error")) {
    BOOST_CHECK_THROW(op(inputs, c["args"]), std::invalid_argument);
    return;
  }

  const std::vector<Tensor> outputs = op(inputs, c["args"]);
  const json& output = c["output"];
  const Shape shape = output["shape"].get<std::vector<int64_t>>();
  check_tensor(outputs[0], output["values"], shape, dtype_named(output["dtype"].get<std::string>()),
               "output");
  if (c.contains("indices")) check_tensor(outputs.at(1), c["indices"], shape, kInt64, "indices");
  if (!with_grads) return;

  outputs[0].backward(tensor(numbers(c["cotangent"]), shape, {.dtype = outputs[0].dtype()}));
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (c["grads"][k].is_null()) continue;
    check_tensor(inputs[k].grad(), c["grads"][k], inputs[k].shape(), dtype,
                 "gradient of input " + std::to_string(k));
  }
}

/// Checks every fixture case of `group`, each under its name; returns how many there were.
int check_group(const std::string& group) {
  int count = 0;
  for (const json& c : fixture()["cases"]) {
    if (c["group"] != group) continue;
    ++count;
    BOOST_TEST_CONTEXT(c["name"].get<std::string>()) { check_fixture_case(c); }
  }
  return count;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(degenerate)

BOOST_AUTO_TEST_CASE(elementwise_ops_at_zero_infinity_and_nan_match_pytorch) {
  BOOST_TEST(check_group("elementwise") == 32);
}

BOOST_AUTO_TEST_CASE(softmax_of_huge_tiny_infinite_and_nan_logits_matches_pytorch) {
  BOOST_TEST(check_group("softmax") == 36);
}

BOOST_AUTO_TEST_CASE(cross_entropy_of_huge_tiny_infinite_and_nan_logits_matches_pytorch) {
  BOOST_TEST(check_group("cross_entropy") == 37);
}

BOOST_AUTO_TEST_CASE(empty_tensors_through_linear_and_matmul_match_pytorch) {
  BOOST_TEST(check_group("empty_products") == 9);
}

BOOST_AUTO_TEST_CASE(reductions_of_empty_tensors_match_pytorch_values_and_errors) {
  BOOST_TEST(check_group("empty_reductions") == 49);
}

// Regression: ops over a tensor with no elements but a huge leading dim looped over that dim
// (2^40 empty lanes or blocks) and did not return; PyTorch returns each at once with these shapes.
BOOST_AUTO_TEST_CASE(empty_tensors_with_a_huge_leading_dim_return_at_once) {
  const int64_t B = int64_t{1} << 40;
  const Tensor z = zeros({B, 2, 0});
  const std::vector<std::pair<std::function<Tensor()>, Shape>> cases = {
      {[&] { return z.sum(1); }, {B, 0}},
      {[&] { return z.mean(1); }, {B, 0}},
      {[&] { return std::get<0>(z.max(1)); }, {B, 0}},
      {[&] { return z.argmax(1); }, {B, 0}},
      {[&] { return std::get<0>(z.topk(1, 1)); }, {B, 1, 0}},
      {[&] { return z.select(1, 0); }, {B, 0}},
      {[&] { return z.slice(1, 0, 1); }, {B, 1, 0}},
      {[&] { return z.split(1, 1)[0]; }, {B, 1, 0}},
      {[&] { return z.cumsum(1); }, {B, 2, 0}},
      {[&] { return z.softmax(1); }, {B, 2, 0}},
      {[&] {
         return cat({zeros({B, 0}), zeros({B, 0})}, 1);
       },
       {B, 0}},
  };
  for (const auto& [op, shape] : cases) BOOST_TEST(op().shape() == shape);
  Tensor x = zeros({B, 2, 0}, {.requires_grad = true});
  x.sum(1).sum().backward();
  BOOST_TEST(x.grad().shape() == (Shape{B, 2, 0}));
}

// Regression (review): a shape with a 0 whose other dims multiply past int64, which PyTorch
// accepts (torch.zeros(0, 2**63 - 1, 2**63 - 1)), overflowed int64 in slice's and permute's
// loops (undefined behaviour, which the sanitizer build reports). Shapes as torch 1.13 gives them.
BOOST_AUTO_TEST_CASE(empty_tensors_whose_other_dims_multiply_past_int64_keep_their_shapes) {
  const int64_t M = std::numeric_limits<int64_t>::max();
  const Tensor z = zeros({0, M, M});
  const std::vector<std::pair<std::function<Tensor()>, Shape>> cases = {
      {[&] { return z.select(1, 5); }, {0, M}},
      {[&] { return z + ones({1}); }, {0, M, M}},
      {[&] { return z.sum(2); }, {0, M}},
      {[&] { return z.slice(1, 1, 3); }, {0, 2, M}},
      {[&] {
         return z.reshape({M, 0});
       },
       {M, 0}},
      {[&] {
         return z.permute({0, 2, 1});
       },
       {0, M, M}},
      {[&] { return z.index_select(1, arange(2)); }, {0, 2, M}},
      {[&] {
         return z.gather(1, zeros({0, 1, 1}, {.dtype = kInt64}));
       },
       {0, 1, 1}},
      {[&] { return std::get<0>(z.max(2)); }, {0, M}},
      {[&] {
         return z + zeros({0, M, 1});
       },
       {0, M, M}},
  };
  for (const auto& [op, shape] : cases) BOOST_TEST(op().shape() == shape);
}

BOOST_AUTO_TEST_SUITE_END()
