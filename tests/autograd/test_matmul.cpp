// Tests for matmul (autograd/ops_matmul.cpp): torch.matmul's rank rules, its backward, its errors.
// One table of shape pairs covers every rank combination, broadcast batch dims and zero sizes.
// Forward values are compared with a naive reference written below (one output element at a
// time, straight from torch.matmul's definition, no BLAS), gradients with finite differences
// (gradcheck, float64), and one float32 [2, 3, 4] @ [4, 5] product and its gradients with real
// PyTorch (tests/fixtures/matmul.json, written by tools/reference/matmul_reference.py).
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "fixture.hpp"

namespace {

using namespace minigrad;
using nlohmann::json;

struct Case {
  Shape a, b;
  Shape out;  // written out by hand from torch.matmul's rules (checked with PyTorch 1.13)
  const char* what;
};

const std::vector<Case> kCases = {
    {{3}, {3}, {}, "vector @ vector: dot product, 0-d"},
    {{2, 3}, {3}, {2}, "matrix @ vector"},
    {{3}, {3, 4}, {4}, "vector @ matrix"},
    {{2, 3}, {3, 4}, {2, 4}, "matrix @ matrix"},
    {{2, 2, 3}, {3, 4}, {2, 2, 4}, "[B, T, C] @ [C, D]"},
    {{2, 2, 3}, {3}, {2, 2}, "batch @ vector"},
    {{3}, {2, 3, 4}, {2, 4}, "vector @ batch"},
    {{2, 3}, {5, 3, 4}, {5, 2, 4}, "matrix @ batch"},
    {{2, 2, 3}, {2, 3, 4}, {2, 2, 4}, "batch @ batch"},
    {{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}, "batch dims broadcast both ways"},
    {{1, 3, 4}, {2, 4, 5}, {2, 3, 5}, "a's size-1 batch dim stretches"},
    {{2, 3, 4}, {1, 4, 5}, {2, 3, 5}, "b's size-1 batch dim stretches"},
    {{3, 4}, {1, 1, 4, 5}, {1, 1, 3, 5}, "b's size-1 batch dims only prepend"},
    {{3, 17, 33}, {33, 9}, {3, 17, 9}, "larger than one BLAS block"},
    {{2, 1, 9, 20}, {3, 20, 11}, {2, 3, 9, 11}, "larger, broadcast batch"},
    {{0}, {0}, {}, "empty dot product is 0"},
    {{2, 0}, {0, 3}, {2, 3}, "zero inner dimension gives zeros"},
    {{2, 2, 0}, {2, 0, 3}, {2, 2, 3}, "zero inner dimension, batched"},
    {{0, 3}, {3, 4}, {0, 4}, "no rows"},
    {{2, 3}, {3, 0}, {2, 0}, "no columns"},
    {{3}, {3, 0}, {0}, "vector @ matrix without columns"},
    {{0, 2, 3}, {3, 4}, {0, 2, 4}, "empty batch, folded"},
    {{0, 2, 3}, {1, 3, 4}, {0, 2, 4}, "empty batch, broadcast"},
    {{2, 2, 3}, {0, 1, 3, 4}, {0, 2, 2, 4}, "empty batch from b"},
};

// Random values of the given dtype: normals for floats, integers in [-5, 5] for int64.
Tensor sample(const Shape& shape, Dtype dtype, Generator& generator) {
  if (dtype == kInt64) return randint(-5, 6, shape, generator);
  return randn(shape, generator, {.dtype = dtype});
}

// torch.matmul written out: a vector becomes a [1, k] matrix on the left and a [k, 1] matrix on
// the right, batch dims are padded with 1s on the left to a common rank, a size-1 batch dim
// repeats, and every output element is one dot product. The values come in the row-major order
// of [batch..., n, m], which is also the order of the real result (a vector's extra dim is 1).
std::vector<double> reference_matmul(const Tensor& a, const Tensor& b) {
  Shape sa = a.shape(), sb = b.shape();
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  const size_t rank = std::max(sa.size(), sb.size());
  while (sa.size() < rank) sa.insert(sa.begin(), 1);
  while (sb.size() < rank) sb.insert(sb.begin(), 1);
  const int64_t n = sa[rank - 2], k = sa[rank - 1], m = sb[rank - 1];

  Shape batch(rank - 2);
  int64_t batches = 1;
  for (size_t d = 0; d + 2 < rank; ++d) {
    batch[d] = sa[d] == 1 ? sb[d] : sa[d];
    batches *= batch[d];
  }
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  std::vector<double> out;
  for (int64_t flat = 0; flat < batches; ++flat) {
    // Split the flat batch number into one index per batch dim, last dim fastest.
    int64_t rest = flat, offset_a = 0, offset_b = 0, stride_a = n * k, stride_b = k * m;
    for (int64_t d = static_cast<int64_t>(rank) - 3; d >= 0; --d) {
      const int64_t index = rest % batch[d];
      rest /= batch[d];
      offset_a += (sa[d] == 1 ? 0 : index) * stride_a;
      offset_b += (sb[d] == 1 ? 0 : index) * stride_b;
      stride_a *= sa[d];
      stride_b *= sb[d];
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double total = 0;
        for (int64_t p = 0; p < k; ++p) total += x[offset_a + i * k + p] * y[offset_b + p * m + j];
        out.push_back(total);
      }
    }
  }
  return out;
}

// |got - expected| <= tolerance * (1 + |expected|) everywhere; one assertion naming the worst element.
void check_close(const std::vector<double>& got, const std::vector<double>& expected, double tolerance) {
  BOOST_TEST_REQUIRE(got.size() == expected.size());
  if (got.empty()) return;
  double worst = 0;
  size_t worst_index = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double error = std::abs(got[i] - expected[i]) / (1 + std::abs(expected[i]));
    if (!(error <= worst)) {  // also catches NaN
      worst = error;
      worst_index = i;
    }
  }
  BOOST_TEST(worst <= tolerance, "element " << worst_index << ": got " << got[worst_index] << ", expected "
                                            << expected[worst_index]);
}

const json& fixture() { return minigrad_test::read_fixture("matmul.json"); }

// Checks that f throws std::invalid_argument with exactly `message`.
template <typename F>
void check_throws(F f, const std::string& message) {
  BOOST_CHECK_EXCEPTION(f(), std::invalid_argument, [&](const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()) == message);
    return std::string(e.what()) == message;
  });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(matrix_product)

BOOST_AUTO_TEST_CASE(forward_matches_naive_reference_for_every_rank_combination) {
  Generator generator(0);
  for (const Case& c : kCases) {
    BOOST_TEST_CONTEXT(c.what << ": " << c.a << " @ " << c.b) {
      const Tensor a = sample(c.a, kFloat64, generator), b = sample(c.b, kFloat64, generator);
      const Tensor out = matmul(a, b);
      BOOST_TEST(out.shape() == c.out);
      BOOST_TEST((out.dtype() == kFloat64));
      check_close(out.to_vector<double>(), reference_matmul(a, b), 1e-12);
    }
  }
}

BOOST_AUTO_TEST_CASE(int64_forward_matches_naive_reference_exactly) {
  Generator generator(1);
  for (const Case& c : kCases) {
    BOOST_TEST_CONTEXT(c.what << ": " << c.a << " @ " << c.b) {
      const Tensor a = sample(c.a, kInt64, generator), b = sample(c.b, kInt64, generator);
      const Tensor out = matmul(a, b);
      BOOST_TEST(out.shape() == c.out);
      BOOST_TEST((out.dtype() == kInt64));
      const std::vector<double> expected = reference_matmul(a, b);
      const std::vector<int64_t> got = out.to_vector<int64_t>();
      BOOST_TEST_REQUIRE(got.size() == expected.size());
      for (size_t i = 0; i < got.size(); ++i)
        BOOST_TEST(got[i] == static_cast<int64_t>(expected[i]), "element " << i);
    }
  }
}

BOOST_AUTO_TEST_CASE(int64_product_wraps_around_on_overflow_as_pytorch) {
  // PyTorch: torch.tensor([2**62, 3]) @ torch.tensor([4, 1]) == tensor(3) (2**64 wraps to 0).
  const Tensor a = tensor(std::vector<int64_t>{int64_t{1} << 62, 3}, {2});
  const Tensor b = tensor(std::vector<int64_t>{4, 1}, {2});
  BOOST_TEST(matmul(a, b).item<int64_t>() == 3);
}

BOOST_AUTO_TEST_CASE(float32_forward_matches_float64_within_1e_5) {
  Generator generator(2);
  for (const Case& c : kCases) {
    BOOST_TEST_CONTEXT(c.what << ": " << c.a << " @ " << c.b) {
      // The reference reads the float32 values exactly as doubles and sums in float64.
      const Tensor a = sample(c.a, kFloat32, generator), b = sample(c.b, kFloat32, generator);
      const Tensor out = matmul(a, b);
      BOOST_TEST(out.shape() == c.out);
      BOOST_TEST((out.dtype() == kFloat32));
      check_close(out.to_vector<double>(), reference_matmul(a, b), 1e-5);
    }
  }
}

BOOST_AUTO_TEST_CASE(backward_matches_finite_differences_for_every_rank_combination) {
  Generator generator(3);
  for (const Case& c : kCases) {
    BOOST_TEST_CONTEXT(c.what << ": " << c.a << " @ " << c.b) {
      Tensor a = sample(c.a, kFloat64, generator).requires_grad_();
      Tensor b = sample(c.b, kFloat64, generator).requires_grad_();
      BOOST_TEST(gradcheck([](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); }, {a, b}));
    }
  }
}

BOOST_AUTO_TEST_CASE(backward_with_one_operand_requiring_grad_gives_its_gradient) {
  // With grad = ones: grad_a[i][p] = sum_j b[p][j] (row sums of b), grad_b[p][j] = sum_i a[i][p].
  const Tensor a_values = tensor({{1, 2, 3}, {4, 5, 6}}, {.dtype = kFloat64});
  const Tensor b_values = tensor({{1, -1}, {2, 0}, {0.5, 3}}, {.dtype = kFloat64});

  Tensor a = a_values.clone().requires_grad_();
  matmul(a, b_values).backward(ones({2, 2}, {.dtype = kFloat64}));
  BOOST_TEST(a.grad().to_vector<double>() == (std::vector<double>{0, 2, 3.5, 0, 2, 3.5}),
             boost::test_tools::per_element());

  Tensor b = b_values.clone().requires_grad_();
  matmul(a_values, b).backward(ones({2, 2}, {.dtype = kFloat64}));
  BOOST_TEST(b.grad().to_vector<double>() == (std::vector<double>{5, 5, 7, 7, 9, 9}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(zero_size_backward_gives_gradients_of_the_input_shapes) {
  // Zero inner dimension: nothing flows, and the empty gradients keep their shapes.
  Tensor a = zeros({2, 0}, {.dtype = kFloat64, .requires_grad = true});
  Tensor b = zeros({0, 3}, {.dtype = kFloat64, .requires_grad = true});
  matmul(a, b).backward(ones({2, 3}, {.dtype = kFloat64}));
  BOOST_TEST(a.grad().shape() == Shape({2, 0}));
  BOOST_TEST(b.grad().shape() == Shape({0, 3}));

  // No rows: b was used by no row, so its gradient is all zeros, not garbage.
  Tensor c = zeros({0, 3}, {.dtype = kFloat64, .requires_grad = true});
  Tensor d = ones({3, 4}, {.dtype = kFloat64, .requires_grad = true});
  matmul(c, d).backward(ones({0, 4}, {.dtype = kFloat64}));
  BOOST_TEST(d.grad().to_vector<double>() == std::vector<double>(12, 0.0), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(grad_fn_names_follow_pytorch) {
  struct Row {
    Shape a, b;
    std::string name;  // torch.matmul(x, y).grad_fn.name() in PyTorch 1.13
  };
  const std::vector<Row> rows = {
      {{3}, {3}, "DotBackward0"},
      {{2, 3}, {3}, "MvBackward0"},
      {{2, 3}, {3, 4}, "MmBackward0"},
      {{3}, {3, 4}, "SqueezeBackward3"},
      {{2, 2, 3}, {3, 4}, "UnsafeViewBackward0"},
      {{2, 1, 3, 4}, {5, 4, 2}, "UnsafeViewBackward0"},
  };
  for (const Row& row : rows) {
    const Tensor a = ones(row.a, {.requires_grad = true}), b = ones(row.b);
    BOOST_TEST(matmul(a, b).grad_fn()->name() == row.name, row.a << " @ " << row.b);
  }
}

BOOST_AUTO_TEST_CASE(errors_name_the_op_and_the_shapes) {
  struct Row {
    Shape a;
    Dtype a_dtype;
    Shape b;
    Dtype b_dtype;
    std::string message;
  };
  // clang-format off
  const std::vector<Row> rows = {
      {{2, 3}, kFloat32, {4, 5}, kFloat32,
       "matmul: cannot multiply [2, 3] by [4, 5] (inner dimensions 3 and 4 differ)"},
      {{3}, kFloat32, {4}, kFloat32,
       "matmul: cannot multiply [3] by [4] (inner dimensions 3 and 4 differ)"},
      {{2, 3}, kFloat32, {4}, kFloat32,
       "matmul: cannot multiply [2, 3] by [4] (inner dimensions 3 and 4 differ)"},
      {{3}, kFloat32, {4, 5}, kFloat32,
       "matmul: cannot multiply [3] by [4, 5] (inner dimensions 3 and 4 differ)"},
      {{2, 2, 3}, kFloat32, {2, 4, 5}, kFloat32,
       "matmul: cannot multiply [2, 2, 3] by [2, 4, 5] (inner dimensions 3 and 4 differ)"},
      {{2, 3, 4}, kFloat32, {5, 4, 2}, kFloat32,
       "matmul: cannot multiply [2, 3, 4] by [5, 4, 2] (batch dimensions [2] and [5] do not broadcast)"},
      {{}, kFloat32, {3}, kFloat32,
       "matmul: both arguments need at least 1 dimension, got [] and [3]"},
      {{3}, kFloat32, {}, kFloat32,
       "matmul: both arguments need at least 1 dimension, got [3] and []"},
      {{2, 3}, kFloat32, {3, 2}, kFloat64,
       "matmul: expected both operands to have the same dtype, got float32 and float64"},
      {{2, 3}, kInt64, {3, 2}, kFloat32,
       "matmul: expected both operands to have the same dtype, got int64 and float32"},
      {{2, 3}, kBool, {3, 2}, kBool,
       "matmul: expected float32, float64 or int64 operands, got bool"},
  };
  // clang-format on
  for (const Row& row : rows) {
    const Tensor a = zeros(row.a, {.dtype = row.a_dtype}), b = zeros(row.b, {.dtype = row.b_dtype});
    check_throws([&] { matmul(a, b); }, row.message);
  }
  check_throws([] { matmul(Tensor(), zeros({3})); }, "matmul: got an undefined tensor");
}

BOOST_AUTO_TEST_CASE(batched_float32_product_and_gradients_match_pytorch) {
  const json& c = fixture()["cases"][0];
  const Tensor a = tensor(c["a"].get<std::vector<float>>(), c["a_shape"].get<std::vector<int64_t>>(),
                          {.requires_grad = true});
  const Tensor b = tensor(c["b"].get<std::vector<float>>(), c["b_shape"].get<std::vector<int64_t>>(),
                          {.requires_grad = true});
  const Tensor out = matmul(a, b);
  BOOST_TEST(out.shape() == Shape(c["out_shape"].get<std::vector<int64_t>>()));
  BOOST_TEST(out.grad_fn()->name() == c["grad_fn"].get<std::string>());
  check_close(out.to_vector<double>(), c["out"].get<std::vector<double>>(), 1e-6);

  out.backward(tensor(c["grad_out"].get<std::vector<float>>(), out.shape()));
  check_close(a.grad().to_vector<double>(), c["grad_a"].get<std::vector<double>>(), 1e-6);
  check_close(b.grad().to_vector<double>(), c["grad_b"].get<std::vector<double>>(), 1e-6);
}

BOOST_AUTO_TEST_SUITE_END()
