// Tests for detail::exp_contiguous (autograd/machinery/vector_math.cpp), the vector exp behind exp and
// softmax: accuracy against e^x computed in double, special values, and the same result for a
// value whatever its position in the array (the partial last block goes through the same call).
// Then the AVX2 softmax lane and its backward, bit for bit against the plain lane's arithmetic
// written out here one value at a time, and the AVX2 transpose against its definition.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "autograd/machinery/vector_math.hpp"

namespace {

// Distance from `got` to `exact` in units of the float spacing at `exact`.
double ulps(float got, double exact) {
  const float rounded = static_cast<float>(exact);
  const double spacing =
      std::nextafter(std::fabs(rounded), std::numeric_limits<float>::infinity()) - std::fabs(rounded);
  return std::fabs(got - exact) / spacing;
}

// The plain softmax lane of ops_reduce.cpp, one value at a time: max; e^(x - max) through
// exp_contiguous; eight partial sums in double over whole blocks of 8, added in order, then the
// tail; each e times 1 / sum in double.
std::vector<float> plain_softmax(const std::vector<float>& x) {
  float m = x[0];
  for (const float v : x) m = v > m ? v : m;
  std::vector<float> e(x.size());
  for (size_t k = 0; k < x.size(); ++k) e[k] = x[k] - m;
  minigrad::detail::exp_contiguous(e.data(), e.data(), static_cast<int64_t>(e.size()));
  double part[8] = {};
  size_t k = 0;
  for (; k + 8 <= e.size(); k += 8)
    for (size_t j = 0; j < 8; ++j) part[j] += e[k + j];
  double total = 0;
  for (const double p : part) total += p;
  for (; k < e.size(); ++k) total += e[k];
  const double inverse = 1.0 / total;
  for (float& v : e) v = static_cast<float>(v * inverse);
  return e;
}

// Its backward: y * (g - sum(g * y)) in double, the sum in eight parts as above.
std::vector<float> plain_softmax_backward(const std::vector<float>& g, const std::vector<float>& y) {
  double part[8] = {};
  size_t k = 0;
  for (; k + 8 <= g.size(); k += 8)
    for (size_t j = 0; j < 8; ++j) part[j] += static_cast<double>(g[k + j]) * y[k + j];
  double total = 0;
  for (const double p : part) total += p;
  for (; k < g.size(); ++k) total += static_cast<double>(g[k]) * y[k];
  std::vector<float> ga(g.size());
  for (k = 0; k < g.size(); ++k) ga[k] = static_cast<float>(static_cast<double>(y[k]) * (g[k] - total));
  return ga;
}

// Same bits, nan equal to nan.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return false;
  }
  return a.size() == b.size();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(vector_math)

BOOST_AUTO_TEST_CASE(exp_is_within_3_ulp_of_the_double_result_over_the_float_range) {
  // 200,001 values from -87 to 88, where e^x is a normal float.
  std::vector<float> x(200001), y(x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = -87.0f + 175.0f * static_cast<float>(i) / 200000.0f;
  minigrad::detail::exp_contiguous(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, ulps(y[i], std::exp(static_cast<double>(x[i]))));
  BOOST_TEST(worst <= 3.0);
}

BOOST_AUTO_TEST_CASE(exp_special_values_match_std_exp) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {
      -inf, inf, std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.0f, 100.0f, -200.0f, -103.9f, 88.7f};
  std::vector<float> y(x.size());
  minigrad::detail::exp_contiguous(x.data(), y.data(), static_cast<int64_t>(x.size()));
  BOOST_TEST(y[0] == 0.0f);
  BOOST_TEST(y[1] == inf);
  BOOST_TEST(std::isnan(y[2]));
  BOOST_TEST(y[3] == 1.0f);
  BOOST_TEST(y[4] == 1.0f);
  BOOST_TEST(y[5] == inf);   // overflow
  BOOST_TEST(y[6] == 0.0f);  // underflow
  BOOST_TEST(y[7] > 0.0f);   // a subnormal, as expf gives
  BOOST_TEST(y[7] < std::numeric_limits<float>::min());
  BOOST_TEST(ulps(y[8], std::exp(static_cast<double>(88.7f))) <= 3.0);
}

BOOST_AUTO_TEST_CASE(a_value_gets_the_same_exp_at_every_position_and_length) {
  const float value = 0.3f;
  std::vector<float> x(17, value), y(17);
  minigrad::detail::exp_contiguous(x.data(), y.data(), 17);
  const float reference = y[0];
  for (int64_t n = 1; n <= 17; ++n) {
    std::vector<float> out(static_cast<size_t>(n), -1.0f);
    minigrad::detail::exp_contiguous(x.data(), out.data(), n);
    for (float v : out) BOOST_TEST(v == reference);
  }
  // In place, and nothing past n is written.
  std::vector<float> z = {value, value, value, 7.0f};
  minigrad::detail::exp_contiguous(z.data(), z.data(), 3);
  BOOST_TEST(z[2] == reference);
  BOOST_TEST(z[3] == 7.0f);
}

// A causal softmax row: the masked future is -inf. Those lanes take a shortcut to 0; the others
// must get the value they get in a block of their own.
BOOST_AUTO_TEST_CASE(a_value_beside_minus_infinity_gets_the_same_exp_as_alone) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> alone = {0.3f, -1.7f, 2.5f, -0.01f, 0.3f, -1.7f, 2.5f, -0.01f};
  std::vector<float> expected(8), mixed = alone, got(8);
  minigrad::detail::exp_contiguous(alone.data(), expected.data(), 8);
  for (int masked = 1; masked < 8; ++masked) {
    for (int i = masked; i < 8; ++i) mixed[i] = -inf;  // the last lanes masked, as in a causal row
    mixed[0] = -inf;                                   // and one at the front
    minigrad::detail::exp_contiguous(mixed.data(), got.data(), 8);
    for (int i = 0; i < 8; ++i) {
      BOOST_TEST(got[i] == (mixed[i] == -inf ? 0.0f : expected[i]), "lane " << i << " with " << masked);
    }
    mixed = alone;
  }
}

BOOST_AUTO_TEST_CASE(float64_exp_is_std_exp) {
  std::vector<double> x = {-1.5, 0.0, 2.25}, y(3);
  minigrad::detail::exp_contiguous(x.data(), y.data(), 3);
  for (size_t i = 0; i < x.size(); ++i) BOOST_TEST(y[i] == std::exp(x[i]));
}

// Lanes of 1 to 80 values (whole blocks and tails), with a causal mask's -inf after position n/2,
// with a +inf, with a nan, and all -inf (nan everywhere, as PyTorch).
BOOST_AUTO_TEST_CASE(the_vector_softmax_lane_and_its_backward_give_the_plain_lanes_bits) {
  if (!minigrad::detail::has_avx2()) return;  // not called on this CPU
  const float inf = std::numeric_limits<float>::infinity();
  std::mt19937 engine(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int n = 1; n <= 80; ++n) {
    for (int variant = 0; variant < 5; ++variant) {
      std::vector<float> x(static_cast<size_t>(n)), g(x.size());
      for (size_t k = 0; k < x.size(); ++k) {
        x[k] = normal(engine);
        g[k] = normal(engine);
      }
      if (variant == 1)
        for (size_t k = x.size() / 2 + 1; k < x.size(); ++k) x[k] = -inf;
      if (variant == 2) x[x.size() / 3] = inf;
      if (variant == 3) x[x.size() - 1] = std::numeric_limits<float>::quiet_NaN();
      if (variant == 4) std::fill(x.begin(), x.end(), -inf);
      std::vector<float> y(x.size()), ga(x.size());
      minigrad::detail::softmax_contiguous(x.data(), y.data(), n);
      minigrad::detail::softmax_backward_contiguous(g.data(), y.data(), ga.data(), n);
      BOOST_TEST(same_bits(y, plain_softmax(x)), "softmax, n " << n << ", variant " << variant);
      BOOST_TEST(same_bits(ga, plain_softmax_backward(g, y)), "backward, n " << n << ", variant " << variant);
    }
  }
}

// Every shape from 1 x 1 to 19 x 19: whole 8 x 8 blocks, and edges of every width on both sides.
BOOST_AUTO_TEST_CASE(the_vector_transpose_puts_every_value_at_its_transposed_place) {
  if (!minigrad::detail::has_avx2()) return;  // not called on this CPU
  for (int64_t rows = 1; rows < 20; ++rows) {
    for (int64_t cols = 1; cols < 20; ++cols) {
      std::vector<float> src(static_cast<size_t>(rows * cols)), dst(src.size(), -1.0f);
      for (size_t e = 0; e < src.size(); ++e) src[e] = static_cast<float>(e);
      minigrad::detail::transpose_contiguous(src.data(), dst.data(), rows, cols);
      bool right = true;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) right = right && dst[j * rows + i] == src[i * cols + j];
      BOOST_TEST(right, rows << " x " << cols);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
