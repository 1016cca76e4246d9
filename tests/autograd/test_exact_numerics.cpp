// Where PyTorch is exact and we were not: int64 arithmetic that overflows (it wraps around in two's
// complement, as PyTorch's kernels; in C++ signed overflow is undefined behaviour, so this suite
// also runs under UBSan in the sanitizer build), int64 pow (no rounding through a double),
// conversions from float to int64 that no int64 holds (an error, as PyTorch's "value cannot be
// converted"), int64 clamp and arange beyond 2^53, and division's backward near the float32 range.
// Expected values are what torch 1.13 prints for the same expressions (quoted beside each row).
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/ops_index.hpp"
#include "support.hpp"

using namespace minigrad;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Tensor ints(std::vector<int64_t> values) {
  const auto n = static_cast<int64_t>(values.size());
  return tensor(values, {n});
}

struct IntCase {
  std::string what;  // the PyTorch expression
  std::function<Tensor()> compute;
  std::vector<int64_t> expected;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(exact_numerics)

BOOST_AUTO_TEST_CASE(int64_arithmetic_wraps_around_on_overflow_as_pytorchs) {
  const std::vector<IntCase> cases = {
      {"torch.tensor([INT64_MAX]) + 1", [] { return ints({kMax}) + 1; }, {kMin}},
      {"torch.tensor([INT64_MIN]) - 1", [] { return ints({kMin}) - 1; }, {kMax}},
      {"torch.tensor([2**62]) * 4", [] { return ints({int64_t{1} << 62}) * 4; }, {0}},
      {"torch.tensor([3**20]) * 3**20",
       [] { return ints({3486784401}) * ints({3486784401}); },
       {-6289078614652622815}},
      {"-torch.tensor([INT64_MIN])", [] { return -ints({kMin}); }, {kMin}},
      {"torch.tensor([INT64_MIN]).abs()", [] { return ints({kMin}).abs(); }, {kMin}},
      {"x = torch.tensor([INT64_MAX]); x.add_(torch.tensor([1]), alpha=2)",
       [] { return ints({kMax}).add_(ints({1}), 2); },
       {-9223372036854775807}},
      {"x = torch.tensor([2**62 + 1]); x.mul_(2)",
       [] { return ints({(int64_t{1} << 62) + 1}).mul_(2); },
       {-9223372036854775806}},
      {"torch.tensor([[INT64_MAX], [1]]).sum(0)",
       [] {
         return sum_to(ints({kMax, 1}).reshape({2, 1}), {1, 1});
       },
       {kMin}},
      // Regression: these three overflowed as signed int64 (undefined behaviour; the sanitizer
      // build stopped) instead of wrapping.
      {"torch.tensor([INT64_MAX]).index_add(0, torch.tensor([0]), torch.tensor([1]), alpha=3)",
       [] { return index_add(ints({kMax}), 0, ints({0}), ints({1}), 3); },
       {-9223372036854775806}},
      {"torch.tensor([INT64_MAX]).scatter_add(0, torch.tensor([0]), torch.tensor([1]))",
       [] { return scatter_add(ints({kMax}), 0, ints({0}), ints({1})); },
       {kMin}},
      {"torch.tensor([INT64_MAX, 1]).cumsum(0)",
       [] {
         return cumsum(ints({kMax, 1}), 0);
       },
       {kMax, kMin}},
  };
  for (const IntCase& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      const Tensor got = c.compute();
      BOOST_TEST(got.dtype() == kInt64);
      BOOST_TEST(got.to_vector<int64_t>() == c.expected, boost::test_tools::per_element());
    }
  }
}

BOOST_AUTO_TEST_CASE(int64_pow_is_exact_where_a_double_rounds_it) {
  const std::vector<IntCase> cases = {
      {"torch.tensor([7]) ** 21",
       [] { return ints({7}).pow(21); },
       {558545864083284007}},  // a double: ...032
      {"torch.tensor([3]) ** 40", [] { return ints({3}).pow(40); }, {-6289078614652622815}},  // wraps
      {"torch.tensor([2]) ** 62", [] { return ints({2}).pow(62); }, {int64_t{1} << 62}},
      {"torch.tensor([2]) ** 63", [] { return ints({2}).pow(63); }, {kMin}},
      {"torch.tensor([-3]) ** 3", [] { return ints({-3}).pow(3); }, {-27}},
      {"torch.tensor([5, -3]) ** 0",
       [] {
         return ints({5, -3}).pow(0);
       },
       {1, 1}},
  };
  for (const IntCase& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      const Tensor got = c.compute();
      BOOST_TEST(got.dtype() == kInt64);
      BOOST_TEST(got.to_vector<int64_t>() == c.expected, boost::test_tools::per_element());
    }
  }
  // torch.tensor([1, 0, 2, -2]) ** float('inf') == tensor([1., 0., inf, inf]) (float32); we gave 0.
  const Tensor infinite = ints({1, 0, 2, -2}).pow(INFINITY);
  BOOST_TEST(infinite.dtype() == kFloat32);
  BOOST_TEST(infinite.to_vector<double>() == (std::vector<double>{1.0, 0.0, INFINITY, INFINITY}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(int64_clamp_and_arange_beyond_2_to_53_are_exact) {
  const std::vector<IntCase> cases = {
      {"torch.tensor([1, INT64_MAX]).clamp(max=INT64_MAX)",
       [] {
         return ints({1, kMax}).clamp(std::nullopt, kMax);
       },
       {1, kMax}},
      {"torch.tensor([1, 2**62]).clamp(min=2**62 - 1)",
       [] {
         return ints({1, int64_t{1} << 62}).clamp((int64_t{1} << 62) - 1);
       },
       {4611686018427387903, 4611686018427387904}},
      {"torch.tensor([kMin, 0]).clamp(min=INT64_MIN + 1)",
       [] {
         return ints({kMin, 0}).clamp(kMin + 1);
       },
       {kMin + 1, 0}},
      {"torch.arange(2**62, 2**62 + 3)",
       [] { return arange(int64_t{1} << 62, (int64_t{1} << 62) + 3); },
       {4611686018427387904, 4611686018427387905, 4611686018427387906}},
      {"torch.arange(INT64_MAX - 2, INT64_MAX)",
       [] { return arange(kMax - 2, kMax); },
       {9223372036854775805, 9223372036854775806}},
      {"torch.arange(-5, 5, 2.5, dtype=torch.int64) (converted first: steps by 2)",
       [] { return arange(-5, 5, 2.5, {.dtype = kInt64}); },
       {-5, -3, -1, 1, 3}},
      {"torch.arange(0.5, 4.9, 1.5, dtype=torch.int64)",
       [] { return arange(0.5, 4.9, 1.5, {.dtype = kInt64}); },
       {0, 1, 2, 3}},
      {"torch.arange(INT64_MAX, INT64_MIN, -2**62) (PyTorch's own count overflows: [])",
       [] { return arange(kMax, kMin, -(int64_t{1} << 62)); },
       {kMax, 4611686018427387903, -1, -4611686018427387905}},
  };
  for (const IntCase& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      const Tensor got = c.compute();
      BOOST_TEST(got.dtype() == kInt64);
      BOOST_TEST(got.to_vector<int64_t>() == c.expected, boost::test_tools::per_element());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_float_that_no_int64_holds_is_refused_instead_of_converted) {
  // PyTorch: "value cannot be converted to type int64 without overflow" for each of these.
  const std::vector<std::pair<std::string, std::function<void()>>> cases = {
      {"tensor({1e30}, int64)", [] { tensor({1e30}, {.dtype = kInt64}); }},
      {"tensor({nan}, int64)", [] { tensor({NAN}, {.dtype = kInt64}); }},
      {"tensor({-inf}, int64)", [] { tensor(std::vector<double>{-INFINITY}, {1}, {.dtype = kInt64}); }},
      {"tensor({nan}).to(int64)", [] { tensor({NAN}).to(kInt64); }},
      {"tensor({1e19}, float64).to(int64)", [] { tensor({1e19}, {.dtype = kFloat64}).to(kInt64); }},
      {"arange(0.0, 1e19, 1e18, int64)", [] { arange(0.0, 1e19, 1e18, {.dtype = kInt64}); }},
      {"full({2}, nan, int64)", [] { full({2}, NAN, {.dtype = kInt64}); }},
      {"tensor([2**40]).item<int>()", [] { ints({int64_t{1} << 40}).item<int>(); }},
      {"tensor([2.0**40]).item<int>()", [] { tensor({std::ldexp(1.0, 40)}).item<int>(); }},
  };
  for (const auto& [what, call] : cases) {
    BOOST_TEST_CONTEXT(what) {
      try {
        call();
        BOOST_ERROR("no exception thrown");
      } catch (const std::invalid_argument& error) {
        BOOST_TEST(std::string(error.what()).find("cannot be converted") != std::string::npos, error.what());
      }
    }
  }
  // Regression: the number was written out in full, 301 digits for 1e300.
  BOOST_CHECK_EXCEPTION(
      full({2}, 1e300, {.dtype = kInt64}), std::invalid_argument, [](const std::exception& e) {
        return std::string(e.what()) == "Scalar: 1e+300 cannot be converted to int64 without overflow";
      });
  // What does fit still converts, truncated toward zero as PyTorch's.
  BOOST_TEST(tensor({-2.7, 2.7, 9.2e18}, {.dtype = kFloat64}).to(kInt64).to_vector<int64_t>() ==
                 (std::vector<int64_t>{-2, 2, 9200000000000000000}),
             boost::test_tools::per_element());
  BOOST_TEST(ints({int64_t{1} << 30}).item<int>() == 1 << 30);
}

// PyTorch's fill_ converts its number with a check: torch.full((2,), 1e40) raises "value cannot be
// converted to type float without overflow" (fill_ gave inf). Infinity itself is a float32 value,
// and an op's result may still overflow, as x * 1e40 does in PyTorch.
BOOST_AUTO_TEST_CASE(a_finite_number_beyond_float32s_range_is_refused_by_fill) {
  BOOST_CHECK_EXCEPTION(full({2}, 1e40), std::invalid_argument,
                        minigrad_test::message_has({"fill_", "1e+40", "cannot be converted to type float"}));
  Tensor x = zeros({3});
  BOOST_CHECK_THROW(x.fill_(-1e39), std::invalid_argument);
  BOOST_CHECK_THROW(x.index_put_({0}, 1e40), std::invalid_argument);
  BOOST_TEST(x.to_vector<double>() == std::vector<double>({0, 0, 0}), boost::test_tools::per_element());
  BOOST_TEST(full({1}, INFINITY).item<double>() == INFINITY);
  BOOST_TEST(full({1}, 3.4028234663852886e38).item<double>() == 3.4028234663852886e38);  // float32's largest
  BOOST_TEST(full({1}, 1e40, {.dtype = kFloat64}).item<double>() == 1e40);
  BOOST_TEST((ones({1}) * 1e40).item<double>() == INFINITY);
  // A 0-d value over several elements is filled in, and checked likewise; into one element it is
  // copied (PyTorch 1.13: x[0, 0] = tensor(1e40, dtype=float64) raises for x of [2, 3, 4], writes
  // inf for x of [2, 3]). linspace's bounds are checked too (it gave [nan, nan, nan]).
  const Tensor huge = tensor(std::vector<double>{1e40}, {}, {.dtype = kFloat64});
  Tensor rows = zeros({2, 3});
  BOOST_CHECK_EXCEPTION(rows.index_put_({0}, huge), std::invalid_argument,
                        minigrad_test::message_has({"index_put_", "1e+40"}));
  rows.index_put_({0, 0}, huge);
  BOOST_TEST(rows.to_vector<double>()[0] == INFINITY);
  BOOST_CHECK_EXCEPTION(
      linspace(0, 1e39, 3), std::invalid_argument,
      minigrad_test::message_has({"linspace", "1e+39", "cannot be converted to type float"}));
  BOOST_TEST(
      linspace(0, 1e39, 3, {.dtype = kFloat64}).to_vector<double>() == std::vector<double>({0, 5e38, 1e39}),
      boost::test_tools::per_element());
  Tensor counts = zeros({2}, {.dtype = kInt64});
  counts.index_put_({0}, tensor(std::vector<double>{2.7}, {}, {.dtype = kFloat64}));  // truncated, as PyTorch
  BOOST_TEST(counts.to_vector<int64_t>() == std::vector<int64_t>({2, 0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(division_backward_does_not_underflow_or_overflow_where_b_squared_would) {
  struct Case {
    double a, b;
    float grad_a, grad_b;  // torch: a = tensor([a]), b = tensor([b]), (a / b).backward()
  };
  const std::vector<Case> cases = {
      {1e30, 1e25, 1.0000000195e-25f, -1.0000001298e-20f},  // b * b overflows to inf: grad_b was -0
      {1e-30, 1e-25, 1e25f, -1e20f},                        // b * b underflows to 0: grad_b was -inf
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT("a = " << c.a << ", b = " << c.b) {
      Tensor a = tensor({c.a}).requires_grad_(), b = tensor({c.b}).requires_grad_();
      (a / b).backward();
      BOOST_TEST(a.grad().item<float>() == c.grad_a, boost::test_tools::tolerance(1e-6f));
      BOOST_TEST(b.grad().item<float>() == c.grad_b, boost::test_tools::tolerance(1e-6f));
    }
  }
}

// PyTorch's float pow computes the common exponents as products, sqrt and quotients
// (aten/src/ATen/native/cpu/PowKernel.cpp); std::pow rounds those differently: x^3 once where
// x * x * x rounds twice, and on 10,000 of 40,000 draws for x^3, x^-2 and x^-0.5. Each row is a
// value where C's powf gives another float32 than torch 1.13 (torch's result quoted in hex).
BOOST_AUTO_TEST_CASE(float32_pow_has_pytorchs_bits_for_its_special_exponents) {
  struct Case {
    double exponent;
    float x, want;  // torch.tensor([x]).pow(exponent)
  };
  const std::vector<Case> cases = {
      {2.0, 0x1.41fp-1f, 0x1.94dbcp-2f},       // x * x is a tie, rounded to even (powf: up)
      {3.0, 0x1.09bb44p+1f, 0x1.1e5182p+3f},   // powf: 0x1.1e518p+3
      {-2.0, 0x1.702732p-2f, 0x1.ef225ep+2f},  // powf: 0x1.ef225cp+2
      {-0.5, 0x1.0cc97ep+0f, 0x1.f3ac3ep-1f},  // powf: 0x1.f3ac4p-1
      {-1.0, 0x1.c830acp-1f, 0x1.1f519cp+0f},  // powf: 0x1.1f519ep+0
      {0.5, -0.0f, -0.0f},                     // sqrt(-0) = -0; powf: +0
      {-0.5, -0.0f, -INFINITY},                // 1 / sqrt(-0); powf: +inf
      {-1.0, -0.0f, -INFINITY},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT("pow(" << c.x << ", " << c.exponent << ")") {
      const float got = pow(tensor({c.x}), c.exponent).item<float>();
      BOOST_TEST(got == c.want);
      BOOST_TEST(std::signbit(got) == std::signbit(c.want));
    }
  }
  BOOST_TEST(std::isnan(pow(tensor({-INFINITY}), 0.5).item<float>()));  // sqrt(-inf); powf: +inf
}

// PyTorch's pow_backward is grad * (p * x^(p-1)), and abs's is grad * sign(x): the grouping
// decides where a product overflows, and sign(0) = 0 times an infinite grad is nan.
BOOST_AUTO_TEST_CASE(pow_and_abs_backward_group_their_products_as_pytorch) {
  Tensor x = tensor({-3e38}).requires_grad_();  // torch: x.pow(2).backward(tensor([0.5])) gives -inf
  pow(x, 2.0).backward(tensor({0.5}));
  BOOST_TEST(x.grad().item<float>() == -INFINITY);  // (0.5 * 2) * -3e38 was -3e38
  Tensor z = tensor({-0.0}).requires_grad_();       // torch: d/dx x^0.5 at -0 is 0.5 * rsqrt(-0) = -inf
  pow(z, 0.5).backward();
  BOOST_TEST(z.grad().item<float>() == -INFINITY);
  // torch: x = tensor([0., nan, -2., 0.]); x.abs().backward(tensor([inf, 1., inf, -1.]))
  // gives [nan, 0., -inf, -0.]
  Tensor a = tensor({0.0, NAN, -2.0, 0.0}).requires_grad_();
  abs(a).backward(tensor({INFINITY, 1.0, INFINITY, -1.0}));
  const std::vector<float> grad = a.grad().to_vector<float>();
  BOOST_TEST(std::isnan(grad[0]));  // was 0
  BOOST_TEST(grad[1] == 0.0f);
  BOOST_TEST(grad[2] == -INFINITY);
  BOOST_TEST((grad[3] == 0.0f && std::signbit(grad[3])));
}

BOOST_AUTO_TEST_SUITE_END()
