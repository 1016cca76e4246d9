// Elementwise ops: values by hand, gradients by finite differences, dtypes by PyTorch's rules,
// and the errors a learner meets first (shapes that do not broadcast).
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "support.hpp"

using namespace minigrad;
using minigrad_test::message_has;

namespace {

// A float64 input that requires grad, with values drawn from U(lo, hi) (kept away from kinks).
Tensor input(const Shape& shape, double lo, double hi, Generator& generator) {
  Tensor t = rand(shape, generator, {.dtype = kFloat64});
  {
    NoGradGuard no_grad;
    t = t * (hi - lo) + lo;
  }
  return t.detach().requires_grad_();
}

struct GradcheckCase {
  std::string name;
  std::function<Tensor(const std::vector<Tensor>&)> f;
  std::vector<Shape> shapes;
  double lo = -2.0, hi = 2.0;
};

const std::vector<GradcheckCase>& gradcheck_cases() {
  using V = std::vector<Tensor>;
  static const std::vector<GradcheckCase> cases = {
      {"add same shape", [](const V& x) { return x[0] + x[1]; }, {{2, 3}, {2, 3}}},
      {"add broadcast row", [](const V& x) { return x[0] + x[1]; }, {{4, 3}, {3}}},
      {"add broadcast both", [](const V& x) { return x[0] + x[1]; }, {{4, 1, 3}, {2, 1}}},
      {"add scalar", [](const V& x) { return x[0] + 1.5; }, {{3, 2}}},
      {"sub broadcast column", [](const V& x) { return x[0] - x[1]; }, {{3, 4}, {3, 1}}},
      {"rsub scalar", [](const V& x) { return 2.0 - x[0]; }, {{5}}},
      {"mul broadcast", [](const V& x) { return x[0] * x[1]; }, {{2, 3, 4}, {3, 1}}},
      {"mul by itself", [](const V& x) { return x[0] * x[0]; }, {{3, 3}}},
      {"mul 0-d", [](const V& x) { return x[0] * x[1]; }, {{2, 2}, {}}},
      {"div broadcast", [](const V& x) { return x[0] / x[1]; }, {{2, 3}, {3}}, 0.5, 2.0},
      {"rdiv scalar", [](const V& x) { return 3.0 / x[0]; }, {{4}}, 0.5, 2.0},
      {"neg", [](const V& x) { return -x[0]; }, {{2, 3}}},
      {"pow 3", [](const V& x) { return pow(x[0], 3.0); }, {{2, 3}}},
      {"pow -1.5", [](const V& x) { return pow(x[0], -1.5); }, {{2, 3}}, 0.5, 2.0},
      {"pow 0.5", [](const V& x) { return pow(x[0], 0.5); }, {{4}}, 0.5, 2.0},
      {"exp", [](const V& x) { return exp(x[0]); }, {{2, 3}}},
      {"log", [](const V& x) { return log(x[0]); }, {{2, 3}}, 0.2, 3.0},
      {"sqrt", [](const V& x) { return sqrt(x[0]); }, {{2, 3}}, 0.2, 3.0},
      {"reciprocal", [](const V& x) { return reciprocal(x[0]); }, {{2, 3}}, 0.5, 2.0},
      {"reciprocal negative", [](const V& x) { return reciprocal(x[0]); }, {{3}}, -2.0, -0.5},
      {"abs", [](const V& x) { return abs(x[0]); }, {{2, 3}}, 0.1, 2.0},
      {"abs negative", [](const V& x) { return abs(x[0]); }, {{2, 3}}, -2.0, -0.1},
      {"relu positive", [](const V& x) { return relu(x[0]); }, {{3, 2}}, 0.1, 2.0},
      {"relu negative", [](const V& x) { return relu(x[0]); }, {{3, 2}}, -2.0, -0.1},
      {"tanh", [](const V& x) { return tanh(x[0]); }, {{2, 3}}},
      {"sigmoid", [](const V& x) { return sigmoid(x[0]); }, {{2, 3}}, -6.0, 6.0},
      {"clamp inside", [](const V& x) { return clamp(x[0], -5.0, 5.0); }, {{2, 3}}},
      {"clamp below", [](const V& x) { return clamp(x[0], 3.0); }, {{2, 3}}},
      {"where", [](const V& x) { return where(x[0] > 0.0, x[0], x[1]); }, {{3, 4}, {4}}, 0.1, 1.0},
      {"where mixed",
       [](const V& x) {
         return where(tensor({1, 0, 1}, {.dtype = kFloat64}) > 0.5, x[0], x[1]);
       },
       {{2, 3}, {2, 3}}},
      {"masked_fill",
       [](const V& x) {
         return masked_fill(x[0], tensor({0, 1, 0}, {.dtype = kFloat64}) > 0.5, 7.0);
       },
       {{2, 3}}},
      {"chain",
       [](const V& x) { return tanh(x[0] * x[1] + exp(x[0])) / (x[1] * x[1] + 1.0); },
       {{3}, {2, 3}}},
  };
  return cases;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(elementwise)

BOOST_AUTO_TEST_CASE(every_elementwise_backward_matches_finite_differences) {
  Generator generator(0);
  for (const GradcheckCase& c : gradcheck_cases()) {
    BOOST_TEST_CONTEXT(c.name) {
      std::vector<Tensor> inputs;
      for (const Shape& shape : c.shapes) inputs.push_back(input(shape, c.lo, c.hi, generator));
      BOOST_CHECK_NO_THROW(gradcheck(c.f, inputs));
    }
  }
}

BOOST_AUTO_TEST_CASE(gradcheck_catches_a_wrong_backward) {
  // A gradcheck that cannot fail proves nothing: feed it a function whose "gradient" is wrong,
  // by cutting one path out of the graph with detach().
  Generator generator(1);
  const Tensor x = input({3}, -1.0, 1.0, generator);
  auto wrong = [](const std::vector<Tensor>& v) { return v[0] * v[0].detach(); };  // true grad is 2x
  BOOST_CHECK_THROW(gradcheck(wrong, {x}), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(broadcast_values_match_hand_computation) {
  const Tensor a = tensor({{1, 2, 3}, {4, 5, 6}});
  const Tensor b = tensor({10, 20, 30});
  BOOST_TEST((a + b).to_vector<float>() == std::vector<float>({11, 22, 33, 14, 25, 36}),
             boost::test_tools::per_element());
  const Tensor col = tensor(List2{{1}, {2}});
  BOOST_TEST((a * col).to_vector<float>() == std::vector<float>({1, 2, 3, 8, 10, 12}),
             boost::test_tools::per_element());
  BOOST_TEST((a - 1).to_vector<float>() == std::vector<float>({0, 1, 2, 3, 4, 5}),
             boost::test_tools::per_element());
  BOOST_TEST((12 / a).to_vector<float>() == std::vector<float>({12, 6, 4, 3, 2.4f, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(((a + b).shape() == Shape{2, 3}));
  BOOST_TEST((broadcast_shapes({4, 1, 3}, {2, 1}) == Shape{4, 2, 3}));
}

BOOST_AUTO_TEST_CASE(functions_match_the_standard_library) {
  const std::vector<double> xs = {-3.0, -0.5, 0.0, 0.25, 2.0};
  const Tensor x = tensor(xs, {5}, {.dtype = kFloat64});
  const auto e = exp(x).to_vector<double>(), th = tanh(x).to_vector<double>(),
             sg = sigmoid(x).to_vector<double>();
  const auto r = relu(x).to_vector<double>(), ab = abs(x).to_vector<double>(),
             sq = pow(x, 2.0).to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    BOOST_TEST(e[i] == std::exp(xs[i]), boost::test_tools::tolerance(1e-15));
    BOOST_TEST(th[i] == std::tanh(xs[i]), boost::test_tools::tolerance(1e-15));
    BOOST_TEST(sg[i] == 1.0 / (1.0 + std::exp(-xs[i])), boost::test_tools::tolerance(1e-15));
    BOOST_TEST(r[i] == (xs[i] > 0 ? xs[i] : 0.0));
    BOOST_TEST(ab[i] == std::fabs(xs[i]));
    BOOST_TEST(sq[i] == xs[i] * xs[i]);
  }
}

BOOST_AUTO_TEST_CASE(sigmoid_does_not_overflow_for_large_inputs) {
  const auto s = sigmoid(tensor({-1000.0, 1000.0})).to_vector<float>();
  BOOST_TEST(s[0] == 0.0f);
  BOOST_TEST(s[1] == 1.0f);
}

BOOST_AUTO_TEST_CASE(relu_gradient_at_exactly_zero_is_zero) {
  Tensor x = tensor({-1.0, 0.0, 2.0}).requires_grad_();
  relu(x).sum().backward();
  BOOST_TEST(x.grad().to_vector<float>() == std::vector<float>({0, 0, 1}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(result_dtypes_follow_pytorch_promotion) {
  const Tensor i = tensor(std::vector<int64_t>{1, 2, 3}, {3});
  const Tensor f = tensor({1.0, 2.0, 3.0});
  const Tensor d = tensor({1.0, 2.0, 3.0}, {.dtype = kFloat64});
  BOOST_TEST(dtype_name((i + i).dtype()) == "int64");
  BOOST_TEST(dtype_name((i * 2).dtype()) == "int64");
  BOOST_TEST(dtype_name((i * 2.5).dtype()) == "float32");
  BOOST_TEST(dtype_name((i / i).dtype()) == "float32");  // true division, as Python's /
  BOOST_TEST(dtype_name((i + f).dtype()) == "float32");
  BOOST_TEST(dtype_name((f + d).dtype()) == "float64");
  BOOST_TEST(dtype_name((f * 2.0).dtype()) == "float32");  // a Python float does not widen float32
  BOOST_TEST(dtype_name(exp(i).dtype()) == "float32");
  BOOST_TEST(dtype_name((f < 0).dtype()) == "bool");
  BOOST_TEST((i * 2.5).to_vector<float>() == std::vector<float>({2.5f, 5.0f, 7.5f}),
             boost::test_tools::per_element());
}

// Regression: a 0-d float64 tensor widened float32 tensors to float64 (and then nn::Linear refused
// the result), and tensor({0.1}) == a float64 0.1 was false. Each expected dtype and value below is
// what PyTorch 1.13 gives for the same operands.
BOOST_AUTO_TEST_CASE(a_0d_tensor_beside_a_tensor_with_dims_counts_only_by_its_category) {
  const Tensor f = ones({2}), i = ones({2}, {.dtype = kInt64}), b = ones({2}, {.dtype = kBool});
  const Tensor d0 = scalar_tensor(1.0, {.dtype = kFloat64}), f0 = scalar_tensor(1.0),
               i0 = scalar_tensor(1, {.dtype = kInt64});
  BOOST_TEST(dtype_name((f + d0).dtype()) == "float32");
  BOOST_TEST(dtype_name((i + d0).dtype()) == "float64");
  BOOST_TEST(dtype_name((i + f0).dtype()) == "float32");
  BOOST_TEST(dtype_name((b + i0).dtype()) == "int64");
  BOOST_TEST(dtype_name((f0 + d0).dtype()) == "float64");  // both 0-d: plain promotion
  BOOST_TEST(dtype_name((ones({2}, {.dtype = kFloat64}) + f0).dtype()) == "float64");
  BOOST_TEST((tensor({0.1}) == scalar_tensor(0.1, {.dtype = kFloat64})).item<bool>());
  BOOST_TEST(dtype_name(where(tensor({1, 0}) > 0, f, scalar_tensor(0.5, {.dtype = kFloat64})).dtype()) ==
             "float32");
  BOOST_TEST(dtype_name((f / d0).dtype()) == "float32");
}

BOOST_AUTO_TEST_CASE(comparisons_give_bool_tensors_and_count_as_integers) {
  const Tensor x = tensor({-2.0, -1.0, 0.0, 1.0, 2.0});
  BOOST_TEST((x < 0).to_vector<int64_t>() == std::vector<int64_t>({1, 1, 0, 0, 0}),
             boost::test_tools::per_element());
  BOOST_TEST((x >= 0).to_vector<int64_t>() == std::vector<int64_t>({0, 0, 1, 1, 1}),
             boost::test_tools::per_element());
  BOOST_TEST((x == x).to_vector<int64_t>() == std::vector<int64_t>({1, 1, 1, 1, 1}),
             boost::test_tools::per_element());
  BOOST_TEST((x != 1).to_vector<int64_t>() == std::vector<int64_t>({1, 1, 1, 0, 1}),
             boost::test_tools::per_element());
}

// PyTorch refuses any subtraction with a bool operand ("Subtraction, the `-` operator, with a bool
// tensor is not supported"); 1 - mask gave [0, 1] here, silently.
BOOST_AUTO_TEST_CASE(subtraction_with_a_bool_tensor_is_refused_as_in_pytorch) {
  const Tensor mask = tensor({1, 0}) > 0;
  const auto refused = minigrad_test::message_has({"sub", "bool", "mask == false"});
  BOOST_CHECK_EXCEPTION((void)(1 - mask), std::invalid_argument, refused);
  BOOST_CHECK_EXCEPTION((void)(mask - 1), std::invalid_argument, refused);
  BOOST_CHECK_EXCEPTION((void)(mask - 0.5), std::invalid_argument, refused);
  BOOST_CHECK_EXCEPTION((void)(tensor({3, 3}) - mask), std::invalid_argument, refused);
  BOOST_CHECK_THROW((void)(-mask), std::invalid_argument);
  BOOST_TEST((mask == false).to_vector<int64_t>() == std::vector<int64_t>({0, 1}),
             boost::test_tools::per_element());
  BOOST_TEST((tensor({3, 3}) + mask).to_vector<int64_t>() == std::vector<int64_t>({4, 3}),
             boost::test_tools::per_element());  // addition stays allowed, as in PyTorch
}

BOOST_AUTO_TEST_CASE(equal_and_allclose_follow_pytorch) {
  const Tensor a = tensor({1.0, 2.0, 3.0});
  BOOST_TEST(equal(a, a.clone()));
  BOOST_TEST(!equal(a, tensor({1.0, 2.0, 3.5})));
  BOOST_TEST(!equal(a, tensor({{1.0, 2.0, 3.0}})));  // different shapes: false, no throw
  BOOST_TEST(allclose(a, a + 1e-7));
  BOOST_TEST(!allclose(a, a + 1e-3));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  BOOST_TEST(!allclose(tensor({nan}), tensor({nan})));
}

BOOST_AUTO_TEST_CASE(where_and_masked_fill_pick_the_right_elements) {
  const Tensor x = tensor({{1, -2, 3}, {-4, 5, -6}});
  BOOST_TEST(masked_fill(x, x < 0, 0).to_vector<float>() == std::vector<float>({1, 0, 3, 0, 5, 0}),
             boost::test_tools::per_element());
  BOOST_TEST(where(x > 0, x, zeros({1})).to_vector<float>() == std::vector<float>({1, 0, 3, 0, 5, 0}),
             boost::test_tools::per_element());
  BOOST_TEST(clamp(x, -1.0, 2.0).to_vector<float>() == std::vector<float>({1, -1, 2, -1, 2, -1}),
             boost::test_tools::per_element());
}

// Regressions, values from PyTorch 1.13: clamp(6, 4) gave [6, 6, 4] (torch: min(max(x, 6), 4), all
// 4), and an int64 tensor clamped to [-0.5, 2.7] stayed int64 as [0, 2, 0] (torch: float32).
BOOST_AUTO_TEST_CASE(clamp_follows_torch_for_crossed_bounds_and_fractional_bounds_on_integers) {
  BOOST_TEST(tensor({0.0, 5.0, 10.0}).clamp(6.0, 4.0).to_vector<float>() == std::vector<float>({4, 4, 4}),
             boost::test_tools::per_element());
  const Tensor i = tensor(std::vector<int64_t>{-5, 5, 0}, {3});
  const Tensor fractional = i.clamp(-0.5, 2.7);
  BOOST_TEST(dtype_name(fractional.dtype()) == "float32");
  BOOST_TEST(fractional.to_vector<float>() == std::vector<float>({-0.5f, 2.7f, 0.0f}),
             boost::test_tools::per_element());
  const Tensor whole = i.clamp(-1, 2);
  BOOST_TEST(dtype_name(whole.dtype()) == "int64");
  BOOST_TEST(whole.to_vector<int64_t>() == std::vector<int64_t>({-1, 2, 0}),
             boost::test_tools::per_element());
  BOOST_CHECK_THROW((void)(tensor({1, 0}) > 0).clamp(0, 1), std::invalid_argument);  // bool
  for (float v : tensor({1.0, 2.0}).clamp(0.0, std::nan("")).to_vector<float>())
    BOOST_TEST(std::isnan(v));  // torch: nan
}

// Regressions, values from PyTorch 1.13. A float32 element equal to a bound rounded to float32 got
// no gradient: 0.7f is below the double 0.7, and PyTorch compares with the bound as a float (its
// grads [1, 0] for clamp(min=0.7), [0, 1] for clamp(max=0.1) of [0.7, 0.1]). A single nan bound
// made every element nan; PyTorch's clamp_min(x, nan) is x, with a gradient of 0.
BOOST_AUTO_TEST_CASE(clamp_compares_with_the_bounds_rounded_to_the_dtype_and_ignores_a_single_nan_bound) {
  Tensor x = tensor({0.7, 0.1}).requires_grad_();
  x.clamp(0.7).sum().backward();
  BOOST_TEST(x.grad().to_vector<float>() == std::vector<float>({1, 0}), boost::test_tools::per_element());
  Tensor y = tensor({0.7, 0.1}).requires_grad_();
  y.clamp(std::nullopt, 0.1).sum().backward();
  BOOST_TEST(y.grad().to_vector<float>() == std::vector<float>({0, 1}), boost::test_tools::per_element());

  Tensor z = tensor({1.5, -2.0}).requires_grad_();
  const Tensor kept = z.clamp(std::nan(""));
  BOOST_TEST(kept.to_vector<float>() == std::vector<float>({1.5f, -2.0f}), boost::test_tools::per_element());
  kept.sum().backward();
  BOOST_TEST(z.grad().to_vector<float>() == std::vector<float>({0, 0}), boost::test_tools::per_element());
  BOOST_TEST(z.clamp(std::nullopt, std::nan("")).to_vector<float>() == std::vector<float>({1.5f, -2.0f}),
             boost::test_tools::per_element());
  const Tensor i = tensor(std::vector<int64_t>{-7, 7}, {2}).clamp(std::nan(""));  // float32, as torch
  BOOST_TEST(dtype_name(i.dtype()) == "float32");
  BOOST_TEST(i.to_vector<float>() == std::vector<float>({-7, 7}), boost::test_tools::per_element());
  // a finite bound beyond float32's range is an error there (PyTorch: "value cannot be converted to
  // type float without overflow"), an infinite one is not; float64 holds 1e300
  BOOST_CHECK_THROW((void)tensor({1.0}).clamp(1e300), std::invalid_argument);
  BOOST_CHECK_THROW((void)tensor(std::vector<int64_t>{1}, {1}).clamp(std::nullopt, -3.5e38),
                    std::invalid_argument);
  BOOST_TEST(tensor({1.0}).clamp(-INFINITY, INFINITY).item<float>() == 1.0f);
  BOOST_TEST(tensor({1.0}, {.dtype = kFloat64}).clamp(1e300).item<double>() == 1e300);
  // an int64 bound is rounded once, straight to float (PyTorch 1.13: 4.611686568183202e18); through
  // a double it rounded twice, to 2^62
  const int64_t big = (int64_t{1} << 62) + (int64_t{1} << 38) + 1;
  BOOST_TEST(tensor({0.0}).clamp(big).item<float>() == static_cast<float>(big));
  BOOST_TEST(static_cast<double>(static_cast<float>(big)) == 4.611686568183202e18);
  BOOST_TEST(zeros({1}).fill_(big).item<float>() == static_cast<float>(big));  // Scalar::to<float>
}

// Regressions, values from PyTorch 1.13: abs(-0.0) kept the sign (1 / abs gave -inf, torch inf),
// and sigmoid(-90) in float32 was the subnormal 8.2e-40 where torch's 1 / (1 + e^90) is 0, so
// log(sigmoid(-90)) was -90 where torch gives -inf.
BOOST_AUTO_TEST_CASE(abs_of_minus_zero_is_plus_zero_and_float32_sigmoid_reaches_zero) {
  BOOST_TEST(!std::signbit(tensor({-0.0}).abs().item<float>()));
  BOOST_TEST(!std::signbit(tensor({-0.0}, {.dtype = kFloat64}).abs().item<double>()));
  const std::vector<float> s = tensor({-90.0, -100.0}).sigmoid().to_vector<float>();
  BOOST_TEST(s[0] == 0.0f);
  BOOST_TEST(s[1] == 0.0f);
  BOOST_TEST(std::isinf(tensor({-90.0}).sigmoid().log().item<float>()));
}

// Python's s / x is x.reciprocal() * s (torch/_tensor.py, __rdiv__): two roundings, so 3 / x can
// differ from the true quotient in the last bit (PyTorch 1.13: 3 / tensor([7.]) is 0.428571463,
// the quotient 0.428571433). reciprocal of int64 is float32.
BOOST_AUTO_TEST_CASE(a_number_divided_by_a_tensor_is_its_reciprocal_times_the_number) {
  manual_seed(0);
  const Tensor x = randn({1000});
  const std::vector<float> xs = x.to_vector<float>(), got = (3 / x).to_vector<float>();
  int differs = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    BOOST_TEST(got[i] == (1.0f / xs[i]) * 3.0f);
    differs += got[i] != 3.0f / xs[i];
  }
  BOOST_TEST(differs > 0);  // the two roundings show
  BOOST_TEST((3 / tensor({7.0})).item<float>() == 0.428571463f);
  const Tensor r = reciprocal(tensor(std::vector<int64_t>{-7, 2}, {2}));
  BOOST_TEST(dtype_name(r.dtype()) == "float32");
  BOOST_TEST(r.to_vector<float>() == std::vector<float>({-1.0f / 7.0f, 0.5f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(shapes_that_do_not_broadcast_throw_naming_op_and_shapes) {
  const Tensor a = zeros({2, 3}), b = zeros({4});
  try {
    (void)(a + b);
    BOOST_FAIL("add of [2, 3] and [4] should throw");
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    BOOST_TEST(message.find("add") != std::string::npos);
    BOOST_TEST(message.find("[2, 3]") != std::string::npos);
    BOOST_TEST(message.find("[4]") != std::string::npos);
  }
  BOOST_CHECK_THROW((void)(a * b), std::invalid_argument);
  BOOST_CHECK_THROW((void)(a < b), std::invalid_argument);
}

// Regression: sum_to wrote past its output for a target with more dims than the gradient ([3] to
// [2, 3]) and summed into the wrong elements for one that does not broadcast ([2, 3] to [2]).
BOOST_AUTO_TEST_CASE(sum_to_refuses_a_shape_that_does_not_broadcast_to_the_gradient) {
  const Tensor g = ones({2, 3});
  for (const Shape& shape : {Shape{2}, Shape{4}, Shape{5, 3}, Shape{1, 2, 3}, Shape{2, 1, 3}}) {
    BOOST_TEST_CONTEXT("to " << to_string(shape)) {
      BOOST_CHECK_EXCEPTION(
          (void)sum_to(g, shape), std::invalid_argument,
          message_has({"sum_to: size " + to_string(shape) + " is not expandable to size [2, 3]"}));
    }
  }
  BOOST_CHECK_THROW((void)sum_to(ones({3}), {2, 3}), std::invalid_argument);
  // The shapes that do broadcast: sums over the stretched dims, by hand.
  BOOST_TEST(sum_to(g, {3}).to_vector<float>() == (std::vector<float>{2, 2, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(sum_to(g, {2, 1}).to_vector<float>() == (std::vector<float>{3, 3}),
             boost::test_tools::per_element());
  BOOST_TEST(sum_to(g, {}).item<float>() == 6.0f);
  BOOST_TEST(sum_to(zeros({0, 3}), {1, 3}).to_vector<float>() == (std::vector<float>{0, 0, 0}),
             boost::test_tools::per_element());
}

// Regression: a mask larger than the tensor was refused; PyTorch 1.13's out-of-place masked_fill
// broadcasts both: [1.5, -2, 0.5] under [[1, 0, 1], [0, 0, 1]] gives [[9, -2, 9], [1.5, -2, 9]],
// and the gradient of its sum is [1, 2, 0].
BOOST_AUTO_TEST_CASE(masked_fill_broadcasts_a_mask_larger_than_the_tensor) {
  Tensor x = tensor({1.5, -2.0, 0.5}).requires_grad_();
  const Tensor mask = tensor(std::vector<bool>{true, false, true, false, false, true}, {2, 3});
  const Tensor y = x.masked_fill(mask, 9.0);
  BOOST_TEST(y.shape() == (Shape{2, 3}));
  BOOST_TEST(y.to_vector<float>() == std::vector<float>({9, -2, 9, 1.5, -2, 9}),
             boost::test_tools::per_element());
  y.sum().backward();
  BOOST_TEST(x.grad().to_vector<float>() == std::vector<float>({1, 2, 0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bad_dtypes_and_masks_throw) {
  const Tensor flags = zeros({3}, {.dtype = kBool});
  BOOST_CHECK_THROW((void)(flags + flags), std::invalid_argument);
  BOOST_CHECK_THROW((void)masked_fill(zeros({3}), zeros({3}), 1.0), std::invalid_argument);  // mask not bool
  BOOST_CHECK_THROW((void)masked_fill(zeros({3}), zeros({2, 2}, {.dtype = kBool}), 1.0),
                    std::invalid_argument);  // [3] and [2, 2] do not broadcast
  BOOST_CHECK_THROW((void)clamp(zeros({3}), std::nullopt, std::nullopt), std::invalid_argument);
  BOOST_CHECK_THROW((void)add(Tensor(), zeros({1})), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
