// sin, cos, linspace, cumsum, topk, var and std: values, indices (ties included) and gradients
// against PyTorch's (tests/fixtures/math.json, written by tools/reference/math_reference.py),
// each differentiable op's backward against finite differences, and the errors of bad arguments.
// float32 values must agree with PyTorch's to float32 rounding, float64 ones to 1e-12, integers
// and topk's indices exactly.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "nn/fixture_support.hpp"

using namespace minigrad;
using nn_test::check_close;
using nn_test::check_throws;
using nn_test::json;

namespace {

const json& fixture() { return minigrad_test::read_fixture("math.json"); }

Dtype dtype_named(const std::string& name) {
  if (name == "float32") return kFloat32;
  if (name == "float64") return kFloat64;
  if (name == "int64") return kInt64;
  return kBool;
}

/// A fixture tensor record {"shape", "dtype", "values"} as a tensor.
Tensor tensor_of(const json& record) {
  return nn_test::from_json(record["values"], record["shape"].get<std::vector<int64_t>>(),
                            dtype_named(record["dtype"]));
}

/// The minigrad call a fixture case recorded; every output of it.
std::vector<Tensor> run(const json& c, const std::vector<Tensor>& in) {
  const std::string op = c["op"];
  const json& args = c["args"];
  if (op == "sin") return {sin(in[0])};
  if (op == "cos") return {cos(in[0])};
  if (op == "cumsum") return {cumsum(in[0], args["dim"].get<int64_t>())};
  if (op == "topk") {
    auto [values, indices] = topk(in[0], args["k"].get<int64_t>(), args["dim"].get<int64_t>(),
                                  args["largest"].get<bool>(), args["sorted"].get<bool>());
    return {values, indices};
  }
  if (op == "linspace") {
    const Dtype dtype = dtype_named(c["dtype"]);
    return {linspace(args["start"].get<double>(), args["end"].get<double>(), args["steps"].get<int64_t>(),
                     {.dtype = dtype})};
  }
  const bool is_var = op == "var";
  if (args.contains("dims")) {
    const auto dims = args["dims"].get<std::vector<int64_t>>();
    const auto correction = args["correction"].get<int64_t>();
    const bool keepdim = args["keepdim"];
    return {is_var ? var(in[0], dims, correction, keepdim) : minigrad::std(in[0], dims, correction, keepdim)};
  }
  if (args.contains("dim")) {
    const auto dim = args["dim"].get<int64_t>();
    const bool unbiased = args["unbiased"], keepdim = args["keepdim"];
    return {is_var ? var(in[0], dim, unbiased, keepdim) : minigrad::std(in[0], dim, unbiased, keepdim)};
  }
  return {is_var ? var(in[0]) : minigrad::std(in[0])};
}

/// Tolerance for values of `dtype`: float32 rounding, float64 to 1e-12, integers exact.
double atol_of(Dtype dtype) { return dtype == kFloat32 ? 2e-6 : (dtype == kFloat64 ? 1e-12 : 0.0); }
double rtol_of(Dtype dtype) { return dtype == kFloat32 ? 2e-6 : (dtype == kFloat64 ? 1e-12 : 0.0); }

/// Replays one fixture case: the outputs (shapes, dtypes, values), the grad_fn's name, and the
/// gradient of (out * cotangent).sum() for every floating input.
void replay(const json& c) {
  const std::string name = c["name"];
  std::vector<Tensor> inputs;
  for (const json& record : c["inputs"]) {
    Tensor x = tensor_of(record);
    if (x.is_floating_point()) x.requires_grad_();
    inputs.push_back(x);
  }
  const std::vector<Tensor> outputs = run(c, inputs);
  BOOST_TEST_REQUIRE(outputs.size() == c["outputs"].size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const json& want = c["outputs"][i];
    const Dtype dtype = dtype_named(want["dtype"]);
    BOOST_TEST((outputs[i].shape() == Shape(want["shape"].get<std::vector<int64_t>>())),
               name << ": output " << i << " has shape " << outputs[i].shape());
    BOOST_TEST((outputs[i].dtype() == dtype),
               name << ": output " << i << " is " << dtype_name(outputs[i].dtype()));
    check_close(outputs[i], want["values"], atol_of(dtype), name + " output " + std::to_string(i),
                rtol_of(dtype));
  }
  if (!c.contains("grad_fn")) return;

  BOOST_TEST_REQUIRE(outputs[0].grad_fn() != nullptr, name << ": no grad_fn");
  BOOST_TEST(outputs[0].grad_fn()->name() == c["grad_fn"].get<std::string>(), name);
  const Tensor v = nn_test::from_json(c["cotangent"], outputs[0].shape(), outputs[0].dtype());
  (outputs[0] * v).sum().backward();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (c["grads"][i].is_null()) continue;
    const Dtype dtype = inputs[i].dtype();
    check_close(inputs[i].grad(), c["grads"][i], atol_of(dtype) * 5,
                name + " grad of input " + std::to_string(i), rtol_of(dtype) * 5);
  }
}

/// Replays every case of `group`; fails if there is none.
void replay_group(const std::string& group) {
  int count = 0;
  for (const json& c : fixture()["cases"]) {
    if (c["group"] != group) continue;
    BOOST_TEST_CONTEXT(c["name"].get<std::string>()) { replay(c); }
    ++count;
  }
  BOOST_TEST(count > 0, "no fixture case in group " << group);
}

/// A float64 leaf drawn from N(0, 1): distinct values, far enough apart that topk's choice cannot
/// change under the finite-difference step.
Tensor leaf(const Shape& shape, Generator& generator) {
  return randn(shape, generator, {.dtype = kFloat64}).requires_grad_();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(math_ops)

// ---- PyTorch's numbers ---------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(sin_and_cos_match_pytorch_values_and_gradients) { replay_group("sin_cos"); }

BOOST_AUTO_TEST_CASE(linspace_matches_pytorch_in_every_dtype) { replay_group("linspace"); }

BOOST_AUTO_TEST_CASE(cumsum_matches_pytorch_values_and_gradients) { replay_group("cumsum"); }

BOOST_AUTO_TEST_CASE(topk_matches_pytorch_values_indices_ties_and_gradients) { replay_group("topk"); }

BOOST_AUTO_TEST_CASE(var_and_std_match_pytorch_over_dims_with_every_correction) { replay_group("var_std"); }

BOOST_AUTO_TEST_CASE(every_fixture_group_has_a_test_case) {
  // The groups replayed here and in tests/nn/test_layer_norm.cpp; a new group in the script fails
  // this test instead of going unchecked.
  const std::set<std::string> replayed = {"sin_cos", "linspace",   "cumsum",           "topk",
                                          "var_std", "layer_norm", "layer_norm_module"};
  for (const json& c : fixture()["cases"])
    BOOST_TEST(replayed.contains(c["group"].get<std::string>()),
               "group " << c["group"] << " is not replayed");
}

// ---- values worked out by hand --------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(linspace_puts_both_ends_exactly_and_steps_evenly) {
  BOOST_TEST(linspace(0, 1, 5).equal(tensor({0, 0.25, 0.5, 0.75, 1})));
  BOOST_TEST(linspace(2, -2, 3, {.dtype = kFloat64}).equal(tensor({2, 0, -2}, {.dtype = kFloat64})));
  BOOST_TEST(linspace(-3, 7, 1).equal(tensor({-3})));
  BOOST_TEST(linspace(0, 1, 0).numel() == 0);
}

BOOST_AUTO_TEST_CASE(cumsum_of_bools_counts_in_int64) {
  const Tensor mask = tensor({1, 0, 1, 1}) > 0.5;
  const Tensor counts = cumsum(mask, 0);
  BOOST_TEST((counts.dtype() == kInt64));
  BOOST_TEST(counts.to_vector<int64_t>() == (std::vector<int64_t>{1, 1, 2, 3}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(topk_gradient_reaches_only_the_chosen_entries) {
  const Tensor x = tensor({{3, 1, 4, 1, 5}}, {.dtype = kFloat64}).requires_grad_();
  auto [values, indices] = x.topk(2);
  BOOST_TEST(values.equal(tensor({{5, 4}}, {.dtype = kFloat64})));
  BOOST_TEST(indices.to_vector<int64_t>() == (std::vector<int64_t>{4, 2}), boost::test_tools::per_element());
  (values * tensor({{10, 20}}, {.dtype = kFloat64})).sum().backward();
  BOOST_TEST(x.grad().equal(tensor({{0, 0, 20, 0, 10}}, {.dtype = kFloat64})));
}

BOOST_AUTO_TEST_CASE(std_of_a_constant_row_has_gradient_0_not_nan) {
  // d sqrt(v) / dv is infinite at v = 0, times (x - mean) = 0: PyTorch defines the gradient as 0.
  const Tensor x = tensor({{2, 2, 2}, {1, 2, 3}}, {.dtype = kFloat64}).requires_grad_();
  minigrad::std(x, 1).sum().backward();
  const std::vector<double> grad = x.grad().to_vector<double>();
  BOOST_TEST(grad[0] == 0.0);
  BOOST_TEST(grad[1] == 0.0);
  BOOST_TEST(grad[3] == -0.5);  // (x - mean) / ((N - 1) std) = -1 / (2 * 1)
}

BOOST_AUTO_TEST_CASE(var_and_std_methods_and_the_name_std_do_not_hide_namespace_std) {
  // This file says `using namespace minigrad`, and std::vector and std::sqrt still compile.
  const Tensor x = tensor({1, 2, 3, 4});
  const std::vector<double> plain = {x.var().item<double>(), x.std().item<double>(),
                                     minigrad::std(x).item<double>()};
  BOOST_TEST(plain[0] == 5.0 / 3.0, boost::test_tools::tolerance(1e-6));  // (2.25 + 0.25 + 0.25 + 2.25) / 3
  BOOST_TEST(plain[1] == std::sqrt(5.0 / 3.0), boost::test_tools::tolerance(1e-6));
  BOOST_TEST(plain[2] == plain[1]);
  BOOST_TEST(x.var(0, false).item<double>() == 1.25, boost::test_tools::tolerance(1e-6));
  // A braced list of one number is that number (see ops.hpp): {} is dim 0, {1} with 0 is biased.
  const Tensor m = tensor({{1, 2}, {5, 8}});
  BOOST_TEST(var(m, {}).equal(var(m, 0)));
  BOOST_TEST(var(m, {1}, 0).equal(var(m, std::vector<int64_t>{1}, 0)));
  BOOST_TEST(x.reshape({2, 2}).var({0, 1}, 0).item<double>() == 1.25, boost::test_tools::tolerance(1e-6));
}

// ---- gradcheck: every differentiable op ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(every_math_backward_matches_finite_differences) {
  struct Row {
    std::string name;
    std::function<Tensor(const std::vector<Tensor>&)> f;
    Shape shape;
  };
  using V = std::vector<Tensor>;
  const std::vector<Row> rows = {
      {"sin", [](const V& x) { return sin(x[0]); }, {2, 3}},
      {"cos", [](const V& x) { return cos(x[0]); }, {2, 3}},
      {"cumsum dim 0", [](const V& x) { return cumsum(x[0], 0); }, {3, 4}},
      {"cumsum dim -1", [](const V& x) { return cumsum(x[0], -1); }, {2, 3, 4}},
      {"topk largest", [](const V& x) { return std::get<0>(topk(x[0], 2)); }, {3, 5}},
      {"topk smallest dim 0", [](const V& x) { return std::get<0>(topk(x[0], 2, 0, false)); }, {4, 3}},
      {"topk unsorted many", [](const V& x) { return std::get<0>(topk(x[0], 3, 1, true, false)); }, {2, 200}},
      {"var all", [](const V& x) { return var(x[0]); }, {3, 4}},
      {"var dims 0 2 keepdim",
       [](const V& x) {
         return var(x[0], {0, 2}, 1, true);
       },
       {2, 3, 4}},
      {"var dim 1 biased", [](const V& x) { return var(x[0], 1, false); }, {3, 4}},
      {"std all", [](const V& x) { return minigrad::std(x[0]); }, {3, 4}},
      {"std dims 2 1",
       [](const V& x) {
         return minigrad::std(x[0], {2, 1});
       },
       {2, 3, 4}},
      {"std dim correction 2",
       [](const V& x) { return minigrad::std(x[0], std::vector<int64_t>{0}, 2); },
       {5, 2}},
  };
  Generator generator(14);
  for (const Row& row : rows) {
    BOOST_TEST_CONTEXT(row.name) {
      const V inputs = {leaf(row.shape, generator)};
      BOOST_CHECK_NO_THROW(gradcheck(row.f, inputs));
    }
  }
}

// ---- errors ----------------------------------------------------------------------------------------------

// Regression: topk of a 0-d tensor with k = 0 returned an unwritten element and index (they changed
// from run to run); PyTorch 1.13 returns the element and index 0, and passes the gradient back.
BOOST_AUTO_TEST_CASE(topk_of_a_0d_tensor_gives_its_element_for_k_0_and_1) {
  for (int64_t k : {0, 1}) {
    Tensor a = tensor({2.0}).reshape({}).detach().requires_grad_();
    auto [values, indices] = topk(a, k);
    BOOST_TEST(values.dim() == 0);
    BOOST_TEST(values.item<float>() == 2.0f);
    BOOST_TEST(indices.item<int64_t>() == 0);
    values.backward();
    BOOST_TEST(a.grad().item<float>() == 1.0f);
  }
}

// Regression: with a correction past the number of elements the forward is inf (its divisor is
// clamped at 0), and the backward divided by that 0 too, giving [-inf, -inf, inf]. PyTorch's
// var_backward divides by N - correction = -2: 2 / -2 * (x - 7/3) = [4/3, 1/3, -5/3].
BOOST_AUTO_TEST_CASE(var_backward_divides_by_n_minus_the_correction_even_when_negative) {
  Tensor v = tensor({1.0, 2.0, 4.0}, {.dtype = kFloat64, .requires_grad = true});
  const Tensor out = v.var(std::vector<int64_t>{0}, 5);
  BOOST_TEST(std::isinf(out.item<double>()));
  out.backward();
  const std::vector<double> g = v.grad().to_vector<double>();
  BOOST_TEST(g[0] == 4.0 / 3.0, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(g[1] == 1.0 / 3.0, boost::test_tools::tolerance(1e-14));
  BOOST_TEST(g[2] == -5.0 / 3.0, boost::test_tools::tolerance(1e-15));
}

BOOST_AUTO_TEST_CASE(topk_with_k_larger_than_the_dim_names_k_the_dim_and_the_shape) {
  const Tensor x = zeros({2, 5});
  check_throws<std::invalid_argument>([&] { topk(x, 7, 1); }, {"topk: k = 7", "dim 1 of size 5", "[2, 5]"});
  check_throws<std::invalid_argument>([&] { topk(x, -1); }, {"topk: k must be non-negative, got -1"});
  check_throws<std::out_of_range>([&] { topk(x, 1, 2); }, {"topk: dim 2", "[2, 5]"});
  check_throws<std::invalid_argument>([&] { topk(x > 0, 1); }, {"topk: not implemented for bool"});
}

BOOST_AUTO_TEST_CASE(var_and_std_refuse_integers_repeated_dims_and_bad_dims) {
  const Tensor x = zeros({2, 3});
  check_throws<std::invalid_argument>([&] { var(arange(4)); }, {"var: only float32 and float64", "int64"});
  check_throws<std::invalid_argument>(
      [&] {
        minigrad::std(x, {1, -1});
      },
      {"std: dim 1 appears more than once", "[2, 3]"});
  check_throws<std::out_of_range>([&] { var(x, 2); }, {"var: dim 2", "[2, 3]"});
}

BOOST_AUTO_TEST_CASE(cumsum_and_linspace_refuse_bad_arguments) {
  check_throws<std::out_of_range>([&] { cumsum(zeros({2, 3}), -3); }, {"cumsum: dim -3", "[2, 3]"});
  check_throws<std::invalid_argument>([&] { linspace(0, 1, -2); },
                                      {"linspace: number of steps must be non-negative, got -2"});
  check_throws<std::invalid_argument>([&] { linspace(0, 1, 3, {.dtype = kBool}); },
                                      {"linspace: not supported for bool"});
  check_throws<std::invalid_argument>(
      [&] { linspace(0, std::numeric_limits<double>::infinity(), 3, {.dtype = kInt64}); },
      {"cannot be converted to int64"});
}

BOOST_AUTO_TEST_SUITE_END()
