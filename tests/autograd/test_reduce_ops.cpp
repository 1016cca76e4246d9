// Tests for the reductions of autograd/ops_reduce.cpp: sum, mean, max, min, argmax, softmax and
// log_softmax. Four layers: forward values computed by hand (and their dtypes and shapes); golden
// values from real PyTorch 1.13.1 in tests/fixtures/reduce.json (made by
// tools/reference/reduce_reference.py: huge, tiny and -inf softmax rows, long float32 sums, ties,
// NaN, empty inputs, with PyTorch's gradients); gradcheck of every differentiable op over every
// dim of a 3-d float64 input, keepdim true and false; and one test per error kind.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
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

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// Same value, treating two NaNs as equal and infinities as equal only to themselves.
bool close(double got, double want, double atol, double rtol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::abs(got - want) <= atol + rtol * std::abs(want);
}

// Checks every element of t against `want`, element i within atols[i] + rtol |want[i]|; one
// assertion naming the first mismatch.
void check_values(const Tensor& t, const std::vector<double>& want, const std::vector<double>& atols,
                  double rtol) {
  const std::vector<double> got = t.to_vector<double>();
  BOOST_TEST_REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (!close(got[i], want[i], atols[i], rtol)) {
      BOOST_TEST(false, "element " << i << ": got " << got[i] << ", want " << want[i]);
      return;
    }
  }
}

void check_values(const Tensor& t, const std::vector<double>& want, double atol = 0, double rtol = 0) {
  check_values(t, want, std::vector<double>(want.size(), atol), rtol);
}

// Runs f and checks it throws E with a message containing every one of `parts`.
template <typename E>
void check_throws(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    BOOST_TEST(false, "no exception; expected one mentioning " << parts.front());
  } catch (const E& e) {
    const std::string message = e.what();
    for (const std::string& part : parts)
      BOOST_TEST(message.find(part) != std::string::npos, message << " lacks " << part);
  }
}

// [2, 3, 4] holding 0..23, float32: element (o, k, i) is 12 o + 4 k + i.
Tensor counting_2x3x4() {
  std::vector<float> values;
  for (int i = 0; i < 24; ++i) values.push_back(static_cast<float>(i));
  return tensor(values, {2, 3, 4});
}

}  // namespace

namespace minigrad {
// Lets BOOST_TEST print a dtype when a comparison fails.
std::ostream& boost_test_print_type(std::ostream& os, Dtype dtype) { return os << dtype_name(dtype); }
}  // namespace minigrad

BOOST_AUTO_TEST_SUITE(reduce_ops)

// ---- forward values computed by hand -------------------------------------------------------------

BOOST_AUTO_TEST_CASE(sum_adds_every_element_and_keeps_the_float_dtype) {
  const Tensor x = tensor({{1, 2, 3}, {4, 5, 6}});
  const Tensor s = x.sum();
  BOOST_TEST(s.shape() == Shape{});
  BOOST_TEST(s.dtype() == kFloat32);
  BOOST_TEST(s.item<double>() == 21.0);
  BOOST_TEST(sum(x.to(kFloat64)).dtype() == kFloat64);
}

BOOST_AUTO_TEST_CASE(sum_over_a_dim_drops_it_or_keeps_it_as_size_1) {
  const Tensor x = tensor({{1, 2, 3}, {4, 5, 6}});
  check_values(x.sum(0), {5, 7, 9});
  BOOST_TEST(x.sum(0).shape() == Shape({3}));
  BOOST_TEST(x.sum(0, true).shape() == Shape({1, 3}));
  check_values(x.sum(1), {6, 15});
  check_values(x.sum(-1, true), {6, 15});
  BOOST_TEST(x.sum(-1, true).shape() == Shape({2, 1}));
}

BOOST_AUTO_TEST_CASE(sum_over_each_dim_of_a_3d_tensor_matches_the_closed_form) {
  // With x(o, k, i) = 12 o + 4 k + i: over dim 0, 12 + 8 k + 2 i; over dim 1, 36 o + 12 + 3 i;
  // over dim 2, 48 o + 16 k + 6.
  const Tensor x = counting_2x3x4();
  std::vector<double> dim0, dim1, dim2;
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 4; ++i) dim0.push_back(12 + 8 * k + 2 * i);
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 4; ++i) dim1.push_back(36 * o + 12 + 3 * i);
  for (int o = 0; o < 2; ++o)
    for (int k = 0; k < 3; ++k) dim2.push_back(48 * o + 16 * k + 6);
  check_values(x.sum(0), dim0);
  check_values(x.sum(1), dim1);
  check_values(x.sum(2), dim2);
  BOOST_TEST(x.sum(1).shape() == Shape({2, 4}));
  BOOST_TEST(x.sum(1, true).shape() == Shape({2, 1, 4}));
  BOOST_TEST(x.sum(-3, true).shape() == Shape({1, 3, 4}));
}

BOOST_AUTO_TEST_CASE(sum_of_a_comparison_counts_as_int64_as_in_the_lesson) {
  // The lesson's `(hidden < 0).sum().item()`: i - 236.5 is negative for the 237 values i = 0..236.
  std::vector<float> values;
  for (int i = 0; i < 300; ++i) values.push_back(static_cast<float>(i) - 236.5f);
  const Tensor hidden = tensor(values, {3, 100});
  const Tensor count = (hidden < 0).sum();
  BOOST_TEST(count.dtype() == kInt64);
  BOOST_TEST(count.item<int64_t>() == 237);
  check_values((hidden < 0).sum(1), {100, 100, 37});
  BOOST_TEST((hidden < 0).sum(1).dtype() == kInt64);
}

BOOST_AUTO_TEST_CASE(sum_of_int64_stays_int64_and_wraps_on_overflow) {
  const Tensor x = tensor(std::vector<int64_t>{5, -2, 40}, {3});
  BOOST_TEST(x.sum().dtype() == kInt64);
  BOOST_TEST(x.sum().item<int64_t>() == 43);
  const int64_t big = std::numeric_limits<int64_t>::max();
  const Tensor wrap = tensor(std::vector<int64_t>{big, 1}, {2});
  BOOST_TEST(wrap.sum().item<int64_t>() ==
             std::numeric_limits<int64_t>::min());  // two's complement, as PyTorch
}

BOOST_AUTO_TEST_CASE(float32_sum_is_as_close_to_exact_as_float32_allows) {
  // A naive float32 loop over 100000 copies of 0.1f drifts to 9998.56; the exact sum of the stored
  // value (0.100000001490116...) is 10000.0001490116, which rounds to 10000 in float32.
  const Tensor x = full({100000}, 0.1);
  BOOST_TEST(x.sum().item<float>() == 10000.0f);
  BOOST_TEST(x.mean().item<float>() == 0.1f);
}

BOOST_AUTO_TEST_CASE(sum_of_every_length_around_its_partial_sums_counts_each_element_once) {
  // 0 + 1 + ... + (n - 1) = n (n - 1) / 2, exact in the double the sum runs in, then rounded once
  // to float32. The lengths fall just short of, on and past multiples of the 32 partial sums of a
  // whole-tensor sum and the 8 of a row's, and past the grain size, where the threads split it.
  for (const int64_t n : {1, 7, 8, 9, 31, 32, 33, 63, 65, 100, 1000, 32769, 40001}) {
    const Tensor x = arange(0, static_cast<double>(n), 1, {.dtype = kFloat32});
    const double exact = static_cast<double>(n) * static_cast<double>(n - 1) / 2;
    BOOST_TEST(x.sum().item<float>() == static_cast<float>(exact), "n = " << n);
    BOOST_TEST(x.reshape({1, n}).sum(1).item<float>() == static_cast<float>(exact), "n = " << n);
  }
}

BOOST_AUTO_TEST_CASE(reductions_of_a_0d_tensor_accept_dim_0_and_minus_1) {
  const Tensor x = scalar_tensor(5.0);
  BOOST_TEST(x.sum(0).shape() == Shape{});
  BOOST_TEST(x.sum(-1, true).shape() == Shape{});  // a 0-d tensor stays 0-d even with keepdim
  BOOST_TEST(x.sum(0).item<double>() == 5.0);
  BOOST_TEST(x.mean(0).item<double>() == 5.0);
  const auto [value, index] = x.max(0);
  BOOST_TEST(value.item<double>() == 5.0);
  BOOST_TEST(index.item<int64_t>() == 0);
  BOOST_TEST(x.argmax(0).item<int64_t>() == 0);
  BOOST_TEST(x.softmax(0).item<double>() == 1.0);
  BOOST_TEST(x.log_softmax(-1).item<double>() == 0.0);
}

BOOST_AUTO_TEST_CASE(empty_tensors_sum_to_0_and_average_to_nan) {
  const Tensor empty = zeros({0});
  BOOST_TEST(empty.sum().item<double>() == 0.0);
  BOOST_TEST(std::isnan(empty.mean().item<double>()));
  const Tensor rows = zeros({2, 0});
  check_values(rows.sum(1), {0, 0});
  check_values(rows.mean(1), {kNan, kNan});
  BOOST_TEST(zeros({0}, {.dtype = kBool}).sum().item<int64_t>() == 0);
  // Reducing over a non-empty dim of an empty tensor gives an empty result, not an error.
  const auto [values, indices] = max(zeros({0, 3}), 1);
  BOOST_TEST(values.shape() == Shape({0}));
  BOOST_TEST(indices.shape() == Shape({0}));
  BOOST_TEST(softmax(zeros({0, 3}), 1).shape() == Shape({0, 3}));
}

BOOST_AUTO_TEST_CASE(mean_divides_the_sum_by_the_count) {
  const Tensor x = tensor({{1, 2}, {3, 5}});
  BOOST_TEST(x.mean().item<double>() == 2.75);
  check_values(x.mean(0), {2, 3.5});
  check_values(x.mean(1, true), {1.5, 4});
  BOOST_TEST(x.mean(1, true).shape() == Shape({2, 1}));
  BOOST_TEST(mean(x.to(kFloat64)).dtype() == kFloat64);
}

BOOST_AUTO_TEST_CASE(max_and_min_over_all_elements_give_a_0d_tensor_of_the_input_dtype) {
  const Tensor x = tensor({{1, -4, 3}, {7, 0, -2}});
  BOOST_TEST(x.max().shape() == Shape{});
  BOOST_TEST(x.max().item<double>() == 7.0);
  BOOST_TEST(x.min().item<double>() == -4.0);
  const Tensor ints = tensor(std::vector<int64_t>{3, 9, -1}, {3});
  BOOST_TEST(ints.max().dtype() == kInt64);
  BOOST_TEST(ints.max().item<int64_t>() == 9);
  BOOST_TEST(ints.min().item<int64_t>() == -1);
  const Tensor flags = tensor(std::vector<bool>{false, true}, {2});
  BOOST_TEST(flags.max().dtype() == kBool);
  BOOST_TEST(flags.max().item<bool>());
  BOOST_TEST(!flags.min().item<bool>());
}

BOOST_AUTO_TEST_CASE(max_and_min_over_a_dim_return_values_and_the_first_index_on_ties) {
  const Tensor x = tensor({{1, 3, 3}, {2, 2, 0}});
  const auto [max_values, max_indices] = x.max(1);
  check_values(max_values, {3, 2});
  check_values(max_indices, {1, 0});
  BOOST_TEST(max_indices.dtype() == kInt64);
  const auto [min_values, min_indices] = x.min(0, true);
  check_values(min_values, {1, 2, 0});
  check_values(min_indices, {0, 1, 1});
  BOOST_TEST(min_values.shape() == Shape({1, 3}));
  BOOST_TEST(min_indices.shape() == Shape({1, 3}));
  // Over the middle dim of a 3-d tensor: the largest k is always 2 (x grows with k).
  const auto [values, indices] = counting_2x3x4().max(1);
  check_values(values, {8, 9, 10, 11, 20, 21, 22, 23});
  check_values(indices, {2, 2, 2, 2, 2, 2, 2, 2});
}

BOOST_AUTO_TEST_CASE(argmax_gives_the_first_flat_index_of_the_largest_element) {
  const Tensor x = tensor({{1, 5, 0}, {5, 2, 5}});
  BOOST_TEST(x.argmax().dtype() == kInt64);
  BOOST_TEST(x.argmax().shape() == Shape{});
  BOOST_TEST(x.argmax().item<int64_t>() == 1);
  check_values(x.argmax(0), {1, 0, 1});
  check_values(x.argmax(1), {1, 0});
  BOOST_TEST(x.argmax(1, true).shape() == Shape({2, 1}));
  check_values(tensor(std::vector<int64_t>{4, 9, 9}, {3}).argmax(), {1});
}

BOOST_AUTO_TEST_CASE(nan_wins_max_min_and_argmax_as_in_pytorch) {
  const Tensor x = tensor({{1.0, kNan}, {3.0, kInf}});
  BOOST_TEST(std::isnan(x.max().item<double>()));
  BOOST_TEST(std::isnan(x.min().item<double>()));
  BOOST_TEST(x.argmax().item<int64_t>() == 1);
  const auto [values, indices] = x.min(1);
  check_values(values, {kNan, 3});
  check_values(indices, {1, 0});
}

BOOST_AUTO_TEST_CASE(softmax_and_log_softmax_match_the_formula) {
  // softmax([0, ln 3]) = [1, 3] / 4.
  const Tensor x = tensor({0.0, std::log(3.0)}, {.dtype = kFloat64});
  check_values(x.softmax(0), {0.25, 0.75}, 1e-15);
  check_values(x.log_softmax(0), {std::log(0.25), std::log(0.75)}, 1e-15);
  // Every lane of every dim sums to 1.
  const Tensor y = counting_2x3x4() / 10.0;
  for (int64_t dim = 0; dim < 3; ++dim)
    check_values(y.softmax(dim).sum(dim), std::vector<double>(24 / y.size(dim), 1.0), 1e-6);
}

BOOST_AUTO_TEST_CASE(softmax_is_stable_for_huge_and_infinite_inputs) {
  const Tensor x = tensor({{1e8, 0, -1e8}, {0, -kInf, std::log(3.0)}, {-kInf, -kInf, -kInf}});
  check_values(x.softmax(1), {1, 0, 0, 0.25, 0, 0.75, kNan, kNan, kNan}, 1e-7);
  check_values(x.log_softmax(1), {0, -1e8, -2e8, std::log(0.25), -kInf, std::log(0.75), kNan, kNan, kNan},
               1e-6);
}

// The last dim has its own vectorised path; a lane along dim 0 goes through the plain strided
// loop, the reference here. Rows of 75 (not a multiple of 8), a causal -inf mask, and a nan row.
BOOST_AUTO_TEST_CASE(softmax_over_the_last_dim_matches_the_plain_strided_version_with_its_gradient) {
  manual_seed(5);
  const Tensor future = arange(75).view({1, 75}) > arange(37).view({37, 1});
  Tensor x = randn({37, 75}).masked_fill(future, -kInf).masked_fill(arange(37).view({37, 1}) == 20, kNan);
  x.requires_grad_();
  Tensor x_t = x.detach().t().requires_grad_();
  const Tensor g = randn({37, 75});
  for (const bool log : {false, true}) {
    BOOST_TEST_CONTEXT((log ? "log_softmax" : "softmax")) {
      x.set_grad(Tensor());
      x_t.set_grad(Tensor());
      const Tensor fast = log ? x.log_softmax(-1) : x.softmax(-1);
      const Tensor plain = log ? x_t.log_softmax(0) : x_t.softmax(0);
      fast.backward(g);
      plain.backward(g.t());
      // float32 rounding of terms up to about 10 (the gradient's lane sums): 1e-6 absolute.
      BOOST_TEST_CONTEXT("out") check_values(fast, plain.t().to_vector<double>(), 1e-6, 1e-6);
      BOOST_TEST_CONTEXT("grad") check_values(x.grad(), x_t.grad().t().to_vector<double>(), 1e-6, 1e-6);
    }
  }
}

// ---- backward values computed by hand -------------------------------------------------------------

BOOST_AUTO_TEST_CASE(sum_and_mean_send_the_gradient_to_every_element) {
  Tensor x = counting_2x3x4().requires_grad_();
  x.sum(1).backward(tensor({{1, 2, 3, 4}, {5, 6, 7, 8}}));
  std::vector<double> want;
  for (int o = 0; o < 2; ++o)
    for (int k = 0; k < 3; ++k)
      for (int i = 0; i < 4; ++i) want.push_back(4 * o + i + 1);
  check_values(x.grad(), want);

  Tensor y = tensor({{1, 2}, {3, 5}}).requires_grad_();
  y.mean().backward();
  check_values(y.grad(), {0.25, 0.25, 0.25, 0.25});
}

BOOST_AUTO_TEST_CASE(max_over_all_elements_shares_the_gradient_among_ties) {
  // PyTorch: torch.tensor([1., 3., 3., 2.]).max().backward() gives [0, 0.5, 0.5, 0].
  Tensor x = tensor({1, 3, 3, 2}).requires_grad_();
  x.max().backward();
  check_values(x.grad(), {0, 0.5, 0.5, 0});
  Tensor y = tensor({1, 3, 3, 1}).requires_grad_();
  y.min().backward();
  check_values(y.grad(), {0.5, 0, 0, 0.5});
}

BOOST_AUTO_TEST_CASE(max_over_a_dim_sends_the_gradient_to_the_returned_index) {
  Tensor x = tensor({{1, 3, 3}, {2, 2, 0}}).requires_grad_();
  std::get<0>(x.max(1)).backward(tensor({10, 20}));
  check_values(x.grad(), {0, 10, 0, 20, 0, 0});
  Tensor y = tensor({{1, 3, 3}, {2, 2, 0}}).requires_grad_();
  std::get<0>(y.min(0, true)).backward(tensor({{1, 2, 3}}));
  check_values(y.grad(), {1, 0, 0, 0, 2, 3});
}

BOOST_AUTO_TEST_CASE(reductions_record_pytorchs_node_names) {
  Tensor x = ones({2, 3}).requires_grad_();
  BOOST_TEST(x.sum().grad_fn()->name() == "SumBackward0");
  BOOST_TEST(x.sum(1).grad_fn()->name() == "SumBackward1");
  BOOST_TEST(x.mean().grad_fn()->name() == "MeanBackward0");
  BOOST_TEST(x.mean(1).grad_fn()->name() == "MeanBackward1");
  BOOST_TEST(x.max().grad_fn()->name() == "MaxBackward1");
  BOOST_TEST(std::get<0>(x.max(1)).grad_fn()->name() == "MaxBackward0");
  BOOST_TEST(x.min().grad_fn()->name() == "MinBackward1");
  BOOST_TEST(std::get<0>(x.min(1)).grad_fn()->name() == "MinBackward0");
  BOOST_TEST(x.softmax(1).grad_fn()->name() == "SoftmaxBackward0");
  BOOST_TEST(x.log_softmax(1).grad_fn()->name() == "LogSoftmaxBackward0");
  BOOST_TEST(!std::get<1>(x.max(1)).requires_grad());  // indices carry no gradient
  BOOST_TEST(!x.argmax(1).requires_grad());
}

// ---- golden values from PyTorch ------------------------------------------------------------------

namespace {

const json& fixture() { return minigrad_test::read_fixture("reduce.json"); }

double decode(const json& value) { return minigrad_test::fixture_number(value); }

std::vector<double> decode_all(const json& values) {
  std::vector<double> out;
  for (const json& v : values) out.push_back(decode(v));
  return out;
}

Dtype dtype_named(const std::string& name) {
  if (name == "float64") return kFloat64;
  if (name == "int64") return kInt64;
  if (name == "bool") return kBool;
  return kFloat32;
}

Tensor input_named(const std::string& name) {
  const json& record = fixture()["inputs"][name];
  const Shape shape = record["shape"].get<std::vector<int64_t>>();
  const Dtype dtype = dtype_named(record["dtype"]);
  if (record.contains("fill")) return full(shape, decode(record["fill"]), {.dtype = dtype});
  return tensor(decode_all(record["values"]), shape, {.dtype = dtype});
}

// The case's op on x: its values, and its indices for max/min over a dim.
std::tuple<Tensor, Tensor> run_case(const json& c, const Tensor& x) {
  const std::string op = c["op"];
  if (op == "softmax") return {softmax(x, c["dim"].get<int64_t>()), Tensor()};
  if (op == "log_softmax") return {log_softmax(x, c["dim"].get<int64_t>()), Tensor()};
  if (c["dim"].is_null()) {
    if (op == "sum") return {sum(x), Tensor()};
    if (op == "mean") return {mean(x), Tensor()};
    if (op == "max") return {max(x), Tensor()};
    if (op == "min") return {min(x), Tensor()};
    return {argmax(x), Tensor()};
  }
  const auto dim = c["dim"].get<int64_t>();
  const bool keepdim = c["keepdim"].get<bool>();
  if (op == "sum") return {sum(x, dim, keepdim), Tensor()};
  if (op == "mean") return {mean(x, dim, keepdim), Tensor()};
  if (op == "max") return max(x, dim, keepdim);
  if (op == "min") return min(x, dim, keepdim);
  return {argmax(x, dim, keepdim), Tensor()};
}

// Sum of |x| over the elements that make each output element of a sum or mean (its lane), divided
// by the lane's length for a mean. Element j of a row-major tensor lies in lane
// (j / (n inner)) inner + j % inner, n the reduced size and inner the product of the sizes after it.
std::vector<double> lane_magnitudes(const json& c, const Tensor& x, int64_t out_numel) {
  const std::vector<double> values = x.to_vector<double>();
  int64_t n = x.numel(), inner = 1;
  if (!c["dim"].is_null()) {
    const int64_t dim = (c["dim"].get<int64_t>() + x.dim()) % x.dim();
    n = x.size(dim);
    for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  }
  std::vector<double> magnitudes(static_cast<size_t>(out_numel), 0.0);
  for (int64_t j = 0; j < x.numel(); ++j)
    magnitudes[j / (n * inner) * inner + j % inner] += std::abs(values[j]);
  if (c["op"] == "mean")
    for (double& m : magnitudes) m /= static_cast<double>(n);
  return magnitudes;
}

// Absolute tolerance per output element against PyTorch. float64: 1e-12. float32: 1e-7 for
// values (float32 rounding of numbers below 1) and 1e-6 for gradients (differences of O(1) terms
// such as softmax's grad - sum(grad * out), which PyTorch rounds to float32 step by step). A
// float32 sum or mean is added up in another order by PyTorch (cascade, in float32) than here (in
// double), and the rounding error of a float32 sum is a small multiple of 2^-24 * sum |x| over the
// lane (not of the result, which cancellation can make tiny): we allow 4 * 2^-24 * sum |x|; the
// fixture's cases differ by at most 1.9 * 2^-24 * sum |x|.
std::vector<double> tolerances(const json& c, const Tensor& x, int64_t out_numel, bool for_grad) {
  if (x.dtype() != kFloat32) return std::vector<double>(out_numel, x.dtype() == kFloat64 ? 1e-12 : 0.0);
  if (for_grad) return std::vector<double>(out_numel, 1e-6);
  if (c["op"] != "sum" && c["op"] != "mean") return std::vector<double>(out_numel, 1e-7);
  std::vector<double> atols = lane_magnitudes(c, x, out_numel);
  for (double& a : atols) a = std::ldexp(a, -22);
  return atols;
}

}  // namespace

BOOST_AUTO_TEST_CASE(forward_and_backward_match_pytorch) {
  for (const json& c : fixture()["cases"]) {
    BOOST_TEST_CONTEXT("case " << c["name"].get<std::string>()) {
      Tensor x = input_named(c["input"]);
      if (c.contains("grad")) x.requires_grad_();
      const auto [out, indices] = run_case(c, x);
      const double rtol = x.dtype() == kFloat64 ? 1e-12 : 1e-6;

      BOOST_TEST(out.shape() == Shape(c["out_shape"].get<std::vector<int64_t>>()));
      BOOST_TEST(dtype_name(out.dtype()) == c["out_dtype"].get<std::string>());
      check_values(out, decode_all(c["output"]), tolerances(c, x, out.numel(), false), rtol);
      if (c.contains("indices")) check_values(indices, decode_all(c["indices"]));
      if (c.contains("grad")) {
        out.backward(tensor(decode_all(c["cotangent"]), out.shape(), {.dtype = out.dtype()}));
        check_values(x.grad(), decode_all(c["grad"]), tolerances(c, x, x.numel(), true), rtol);
      }
    }
  }
}

// ---- gradcheck: every differentiable op, every dim, keepdim true and false -----------------------

BOOST_AUTO_TEST_CASE(every_reduction_backward_matches_finite_differences) {
  using Fn = std::function<Tensor(const Tensor&)>;
  struct Row {
    std::string op;
    std::optional<int64_t> dim;  // nullopt: over all elements
    bool keepdim;
    Fn f;
  };
  std::vector<Row> rows = {
      {"sum", std::nullopt, false, [](const Tensor& x) { return sum(x); }},
      {"mean", std::nullopt, false, [](const Tensor& x) { return mean(x); }},
      {"max", std::nullopt, false, [](const Tensor& x) { return max(x); }},
      {"min", std::nullopt, false, [](const Tensor& x) { return min(x); }},
  };
  for (int64_t dim : {0, 1, 2, -1}) {
    for (bool keepdim : {false, true}) {
      rows.push_back({"sum", dim, keepdim, [=](const Tensor& x) { return sum(x, dim, keepdim); }});
      rows.push_back({"mean", dim, keepdim, [=](const Tensor& x) { return mean(x, dim, keepdim); }});
      rows.push_back(
          {"max", dim, keepdim, [=](const Tensor& x) { return std::get<0>(max(x, dim, keepdim)); }});
      rows.push_back(
          {"min", dim, keepdim, [=](const Tensor& x) { return std::get<0>(min(x, dim, keepdim)); }});
    }
    rows.push_back({"softmax", dim, false, [=](const Tensor& x) { return softmax(x, dim); }});
    rows.push_back({"log_softmax", dim, false, [=](const Tensor& x) { return log_softmax(x, dim); }});
  }

  // Random normals are distinct with gaps far above the finite-difference step, so max and min
  // sit away from their kinks (ties).
  Generator generator(2024);
  const Tensor x = randn({2, 3, 4}, generator, {.dtype = kFloat64}).requires_grad_();
  for (const Row& row : rows) {
    BOOST_TEST_CONTEXT(row.op << "(" << (row.dim ? std::to_string(*row.dim) : "")
                              << (row.keepdim ? ", keepdim" : "") << ")") {
      BOOST_CHECK_NO_THROW(gradcheck([&](const std::vector<Tensor>& in) { return row.f(in[0]); }, {x}));
    }
  }
}

// ---- errors, one test per kind -------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_dim_out_of_range_names_the_dim_and_the_shape) {
  const Tensor x = zeros({2, 3});
  check_throws<std::out_of_range>([&] { sum(x, 2); }, {"sum: dim 2", "[2, 3]"});
  check_throws<std::out_of_range>([&] { mean(x, -3); }, {"mean: dim -3", "[2, 3]"});
  check_throws<std::out_of_range>([&] { max(x, 2); }, {"max: dim 2", "[2, 3]"});
  check_throws<std::out_of_range>([&] { min(x, 5, true); }, {"min: dim 5", "[2, 3]"});
  check_throws<std::out_of_range>([&] { argmax(x, 2); }, {"argmax: dim 2", "[2, 3]"});
  check_throws<std::out_of_range>([&] { softmax(x, 2); }, {"softmax: dim 2", "[2, 3]"});
  check_throws<std::out_of_range>([&] { log_softmax(x, -3); }, {"log_softmax: dim -3", "[2, 3]"});
  check_throws<std::out_of_range>([&] { sum(scalar_tensor(1.0), 1); }, {"sum: dim 1", "[]"});
}

BOOST_AUTO_TEST_CASE(mean_of_an_integer_or_bool_tensor_throws) {
  const Tensor ints = tensor(std::vector<int64_t>{1, 2}, {2});
  check_throws<std::invalid_argument>([&] { mean(ints); },
                                      {"mean: expected a floating-point tensor, got int64"});
  check_throws<std::invalid_argument>([&] { mean(ints, 0); },
                                      {"mean: expected a floating-point tensor, got int64"});
  check_throws<std::invalid_argument>([&] { mean(ints < 2); },
                                      {"mean: expected a floating-point tensor, got bool"});
}

BOOST_AUTO_TEST_CASE(softmax_of_an_integer_tensor_throws) {
  const Tensor ints = tensor(std::vector<int64_t>{1, 2}, {2});
  check_throws<std::invalid_argument>([&] { softmax(ints, 0); }, {"softmax", "int64"});
  check_throws<std::invalid_argument>([&] { log_softmax(ints < 2, 0); }, {"log_softmax", "bool"});
}

BOOST_AUTO_TEST_CASE(argmax_of_a_bool_tensor_throws) {
  const Tensor flags = tensor(std::vector<bool>{true, false}, {2});
  check_throws<std::invalid_argument>([&] { argmax(flags); }, {"argmax", "bool"});
  check_throws<std::invalid_argument>([&] { argmax(flags, 0); }, {"argmax", "bool"});
}

BOOST_AUTO_TEST_CASE(max_min_and_argmax_of_an_empty_tensor_throw) {
  const Tensor empty = zeros({0, 3});
  check_throws<std::invalid_argument>([&] { max(empty); }, {"max", "empty", "[0, 3]"});
  check_throws<std::invalid_argument>([&] { min(empty); }, {"min", "empty", "[0, 3]"});
  check_throws<std::invalid_argument>([&] { argmax(empty); }, {"argmax", "empty", "[0, 3]"});
}

BOOST_AUTO_TEST_CASE(max_min_and_argmax_over_a_dim_of_size_0_throw) {
  const Tensor rows = zeros({2, 0});
  check_throws<std::invalid_argument>([&] { max(rows, 1); }, {"max", "dim 1", "[2, 0]", "size 0"});
  check_throws<std::invalid_argument>([&] { min(rows, -1); }, {"min", "dim 1", "[2, 0]", "size 0"});
  check_throws<std::invalid_argument>([&] { argmax(zeros({0, 0}), 0); }, {"argmax", "dim 0", "[0, 0]"});
}

BOOST_AUTO_TEST_CASE(an_undefined_tensor_throws) {
  const Tensor undefined;
  check_throws<std::invalid_argument>([&] { sum(undefined); }, {"sum", "undefined"});
  check_throws<std::invalid_argument>([&] { mean(undefined, 0); }, {"mean", "undefined"});
  check_throws<std::invalid_argument>([&] { max(undefined); }, {"max", "undefined"});
  check_throws<std::invalid_argument>([&] { min(undefined, 0); }, {"min", "undefined"});
  check_throws<std::invalid_argument>([&] { argmax(undefined); }, {"argmax", "undefined"});
  check_throws<std::invalid_argument>([&] { softmax(undefined, 0); }, {"softmax", "undefined"});
}

BOOST_AUTO_TEST_SUITE_END()
