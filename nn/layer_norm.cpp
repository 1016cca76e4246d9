// F::layer_norm, forward and backward as one node, and the nn::LayerNorm module around it.
//
// The input [..., *normalized_shape] is R rows of M contiguous elements (M the product of
// normalized_shape, R that of the leading dims). Each row gets its own mean mu and reciprocal
// standard deviation rstd = 1 / sqrt(var + eps), computed in the input's dtype (as PyTorch's CPU
// kernel) and kept for the backward; x_hat = (x - mu) * rstd is the normalised row,
// out = x_hat * weight + bias.
#include "nn/layer_norm.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "autograd/machinery/parallel.hpp"
#include "autograd/op_support.hpp"
#include "nn/functional.hpp"
#include "nn/init.hpp"

namespace minigrad::nn::functional {

using minigrad::detail::check;

namespace {

/// Checks layer_norm's arguments and returns {R, M}: the number of rows and their length.
std::pair<int64_t, int64_t> check_layer_norm(const Tensor& input,
                                             const std::vector<int64_t>& normalized_shape,
                                             const Tensor& weight, const Tensor& bias, double eps) {
  minigrad::detail::check_defined(input, "layer_norm");
  const Shape expected(normalized_shape);
  check(!normalized_shape.empty(), "layer_norm: normalized_shape must hold at least one dim, got []");
  check(input.is_floating_point(), "layer_norm: input must be float32 or float64, got ",
        dtype_name(input.dtype()));
  check(eps >= 0, "layer_norm: eps must be non-negative, got ", eps);
  const auto dims = static_cast<int64_t>(normalized_shape.size());
  bool matches = input.dim() >= dims;
  for (int64_t d = 0; matches && d < dims; ++d)
    matches = input.size(input.dim() - dims + d) == normalized_shape[d];
  std::string trailing = to_string(expected);
  trailing = "[*, " + trailing.substr(1);
  check(matches, "layer_norm: normalized_shape ", expected, " does not match input ", input.shape(),
        ": expected input of shape ", trailing);
  for (const auto& [name, p] : {std::pair{"weight", weight}, std::pair{"bias", bias}}) {
    if (!p.defined()) continue;
    check(p.shape() == expected, "layer_norm: ", name, " has shape ", p.shape(), " but normalized_shape is ",
          expected);
    check(p.dtype() == input.dtype(), "layer_norm: ", name, " is ", dtype_name(p.dtype()), " but input is ",
          dtype_name(input.dtype()));
  }
  int64_t rows = 1;
  for (int64_t d = 0; d < input.dim() - dims; ++d) rows *= input.size(d);
  return {rows, shape_numel(expected)};
}

/// Per row (mu, rstd), two doubles per row.
using RowStats = std::vector<std::pair<double, double>>;

// The row kernels compute in the rows' dtype T (float rows in float, as PyTorch's CPU kernel),
// but for the two row sums of the backward, in double: with float sums there, the 100-step course
// lesson's sample parts from PyTorch's after 900 characters. Each sum keeps 16 running sums in A
// (independent, so the compiler keeps them in vector registers) over blocks of 1024 elements, and
// adds the blocks' sums in double: a long row of float sums with a large mean (a million elements
// of 1e5 + noise) stays as accurate as PyTorch's instead of losing its mean. The kernels are plain
// loops over pointers, inlined into an AVX2 and a baseline copy of each (below).

/// The sum over j in [0, m) of term(j): in A within each block of 1024, the blocks in double.
template <typename A, typename Term>
[[gnu::always_inline]] inline double sum_over_row(int64_t m, Term term) {
  constexpr int64_t kBlock = 1024;
  double total = 0;
  for (int64_t start = 0; start < m; start += kBlock) {
    const int64_t end = std::min(m, start + kBlock);
    A part[16] = {};
    int64_t j = start;
    for (; j + 16 <= end; j += 16)
      for (int lane = 0; lane < 16; ++lane) part[lane] += term(j + lane);
    A block = 0;
    for (A p : part) block += p;
    for (; j < end; ++j) block += term(j);
    total += block;
  }
  return total;
}

/// out = (x - mu) * rstd * w + b over rows [begin, end), each row's (mu, rstd) kept in stats;
/// w and b may be null (no weight, no bias).
template <typename T>
[[gnu::always_inline]] inline void normalize_rows(const T* x, const T* w, const T* b, T* out, RowStats& stats,
                                                  int64_t begin, int64_t end, int64_t m, double eps) {
  for (int64_t r = begin; r < end; ++r) {
    const T* xr = x + r * m;
    T* y = out + r * m;
    // two passes: the mean, then the squared deviations from it
    const T mu = static_cast<T>(sum_over_row<T>(m, [xr](int64_t j) [[gnu::always_inline]] { return xr[j]; }) /
                                static_cast<double>(m));
    const T var = static_cast<T>(
        sum_over_row<T>(m,
                        [xr, mu](int64_t j) [[gnu::always_inline]] { return (xr[j] - mu) * (xr[j] - mu); }) /
        static_cast<double>(m));
    const T rstd = T(1) / std::sqrt(var + static_cast<T>(eps));
    stats[r] = {mu, rstd};
    if (w && b) {  // the usual case, without a branch in the loop
      for (int64_t j = 0; j < m; ++j) y[j] = (xr[j] - mu) * rstd * w[j] + b[j];
      continue;
    }
    for (int64_t j = 0; j < m; ++j) {
      T value = (xr[j] - mu) * rstd;
      if (w) value *= w[j];
      if (b) value += b[j];
      y[j] = value;
    }
  }
}

/// The backward over rows [begin, end): grad_x's rows into out (when not null; added to what out
/// holds when add_into_out), and the rows' sums
/// of grad * x_hat and of grad added into sum_w[m] and sum_b[m] (when not null).
/// grad_x = rstd * (g_hat - mean(g_hat) - x_hat * mean(g_hat * x_hat)) with g_hat = grad * w and
/// x_hat = (x - mu) * rstd.
template <typename T>
[[gnu::always_inline]] inline void layer_norm_backward_rows(const T* x, const T* grad, const T* w,
                                                            const RowStats& stats, T* out, bool add_into_out,
                                                            T* sum_w, T* sum_b, int64_t begin, int64_t end,
                                                            int64_t m) {
  for (int64_t r = begin; r < end; ++r) {
    const T mu = static_cast<T>(stats[r].first), rstd = static_cast<T>(stats[r].second);
    const T *xr = x + r * m, *gr = grad + r * m;
    auto g_hat = [gr, w](int64_t j) [[gnu::always_inline]] { return gr[j] * w[j]; };
    auto x_hat = [xr, mu, rstd](int64_t j) [[gnu::always_inline]] { return (xr[j] - mu) * rstd; };
    if (out) {
      const double mean_g =
          sum_over_row<double>(m, [&](int64_t j) [[gnu::always_inline]] { return double(g_hat(j)); }) /
          static_cast<double>(m);
      const double mean_gx =
          sum_over_row<double>(m,
                               [&](int64_t j) [[gnu::always_inline]] {
                                 return double(g_hat(j)) * ((xr[j] - double(mu)) * double(rstd));
                               }) /
          static_cast<double>(m);
      const T mg = static_cast<T>(mean_g), mgx = static_cast<T>(mean_gx);
      T* o = out + r * m;
      if (add_into_out)
        for (int64_t j = 0; j < m; ++j) o[j] += rstd * (g_hat(j) - mg - x_hat(j) * mgx);
      else
        for (int64_t j = 0; j < m; ++j) o[j] = rstd * (g_hat(j) - mg - x_hat(j) * mgx);
    }
    if (sum_w)
      for (int64_t j = 0; j < m; ++j) sum_w[j] += gr[j] * x_hat(j);
    if (sum_b)
      for (int64_t j = 0; j < m; ++j) sum_b[j] += gr[j];
  }
}

// The kernels as called: an AVX2 copy and a baseline one of each, picked when the program loads.
[[gnu::target_clones("avx2", "default")]] void layer_norm_rows(const float* x, const float* w, const float* b,
                                                               float* out, RowStats& stats, int64_t begin,
                                                               int64_t end, int64_t m, double eps) {
  normalize_rows(x, w, b, out, stats, begin, end, m, eps);
}
[[gnu::target_clones("avx2", "default")]] void layer_norm_rows(const double* x, const double* w,
                                                               const double* b, double* out, RowStats& stats,
                                                               int64_t begin, int64_t end, int64_t m,
                                                               double eps) {
  normalize_rows(x, w, b, out, stats, begin, end, m, eps);
}
[[gnu::target_clones("avx2", "default")]] void layer_norm_backward_block(
    const float* x, const float* grad, const float* w, const RowStats& stats, float* out, bool add_into_out,
    float* sum_w, float* sum_b, int64_t begin, int64_t end, int64_t m) {
  layer_norm_backward_rows(x, grad, w, stats, out, add_into_out, sum_w, sum_b, begin, end, m);
}
[[gnu::target_clones("avx2", "default")]] void layer_norm_backward_block(
    const double* x, const double* grad, const double* w, const RowStats& stats, double* out,
    bool add_into_out, double* sum_w, double* sum_b, int64_t begin, int64_t end, int64_t m) {
  layer_norm_backward_rows(x, grad, w, stats, out, add_into_out, sum_w, sum_b, begin, end, m);
}

/// Rows per block of the backward: each block sums grad * x_hat and grad over its own rows in T,
/// and the blocks' sums are added in block order in double, so grad_w and grad_b are the same on
/// every thread count.
constexpr int64_t kRowsPerBlock = 32;

/// grad_x, grad_w, grad_b of layer_norm (each only where its tensor requires grad):
/// grad_w = sum over rows of grad * x_hat, grad_b = sum over rows of grad. grad_x is added into
/// the gradient x's other uses have summed, when the engine offers it (a residual connection).
std::vector<Tensor> layer_norm_backward(const Tensor& grad_out, const std::vector<Tensor>& inputs,
                                        const RowStats& stats, int64_t m) {
  const Tensor &x = inputs[0], &w = inputs[1], &b = inputs[2];
  const Tensor grad = minigrad::detail::convert(grad_out, x.dtype());
  Tensor* sum_x = x.requires_grad() ? minigrad::detail::gradient_to_add_into(0) : nullptr;
  Tensor grad_x = x.requires_grad() && !sum_x ? minigrad::detail::new_tensor(x.shape(), x.dtype()) : Tensor();
  const bool want_w = w.defined() && w.requires_grad(), want_b = b.defined() && b.requires_grad();
  std::vector<double> sum_w(m, 0.0), sum_b(m, 0.0);
  const auto rows = static_cast<int64_t>(stats.size());
  const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  dispatch_floating(x.dtype(), "layer_norm backward", [&]<typename T>() {
    // each block's sums: [blocks, m] for the weight's, then [blocks, m] for the bias's, each row
    // zeroed by the piece that fills it; from the block cache (64 KiB at the course's size), so a
    // training loop allocates nothing here once it runs
    Tensor block_sums =
        want_w || want_b ? minigrad::detail::new_tensor({2 * blocks * m}, x.dtype()) : Tensor();
    T* sums = block_sums.defined() ? block_sums.data_ptr<T>() : nullptr;
    T* out = sum_x ? sum_x->data_ptr<T>() : grad_x.defined() ? grad_x.data_ptr<T>() : nullptr;
    const std::vector<T> ones(w.defined() ? 0 : m, T(1));  // no weight: g_hat = grad
    const T *xs = x.data_ptr<T>(), *gs = grad.data_ptr<T>(),
            *ws = w.defined() ? w.data_ptr<T>() : ones.data();
    const int64_t grain = std::max<int64_t>(1, minigrad::detail::grain_for(m) / kRowsPerBlock);
    minigrad::detail::parallel_for(blocks, grain, [&](int64_t first, int64_t last) {
      for (int64_t k = first; k < last; ++k) {
        T* sw = want_w ? sums + k * m : nullptr;
        T* sb = want_b ? sums + (blocks + k) * m : nullptr;
        if (sw) std::fill_n(sw, m, T(0));
        if (sb) std::fill_n(sb, m, T(0));
        layer_norm_backward_block(xs, gs, ws, stats, out, sum_x != nullptr, sw, sb, k * kRowsPerBlock,
                                  std::min(rows, (k + 1) * kRowsPerBlock), m);
      }
    });
    for (int64_t k = 0; k < blocks && (want_w || want_b); ++k)
      for (int64_t j = 0; j < m; ++j) {
        if (want_w) sum_w[j] += sums[k * m + j];
        if (want_b) sum_b[j] += sums[(blocks + k) * m + j];
      }
  });
  auto as_tensor = [](bool wanted, const std::vector<double>& v, const Tensor& like) {
    return wanted ? tensor(v, like.shape(), {.dtype = like.dtype()}) : Tensor();
  };
  return {grad_x, as_tensor(want_w, sum_w, w), as_tensor(want_b, sum_b, b)};
}

}  // namespace

Tensor layer_norm(const Tensor& input, const std::vector<int64_t>& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  const auto checked = check_layer_norm(input, normalized_shape, weight, bias, eps);
  const int64_t rows = checked.first, m = checked.second;  // named, not bound: lambdas below capture them
  auto stats = std::make_shared<RowStats>(rows);
  Tensor out = minigrad::detail::new_tensor(input.shape(), input.dtype());
  dispatch_floating(input.dtype(), "layer_norm", [&]<typename T>() {
    const T *x = input.data_ptr<T>(), *w = weight.defined() ? weight.data_ptr<T>() : nullptr,
            *b = bias.defined() ? bias.data_ptr<T>() : nullptr;
    T* y = out.data_ptr<T>();
    minigrad::detail::parallel_for(rows, minigrad::detail::grain_for(m), [&](int64_t begin, int64_t end) {
      layer_norm_rows(x, w, b, y, *stats, begin, end, m, eps);
    });
  });
  return minigrad::detail::record(out, "NativeLayerNormBackward0", {input, weight, bias},
                                  [stats, m](const Tensor& grad, const std::vector<Tensor>& inputs) {
                                    return layer_norm_backward(grad, inputs, *stats, m);
                                  });
}

}  // namespace minigrad::nn::functional

namespace minigrad::nn {

LayerNorm::LayerNorm(std::vector<int64_t> normalized_shape, double eps, bool elementwise_affine)
    : normalized_shape(std::move(normalized_shape)), eps(eps), elementwise_affine(elementwise_affine) {
  const Shape shape(this->normalized_shape);
  minigrad::detail::check(!shape.empty(), "LayerNorm: normalized_shape must hold at least one dim, got []");
  for (int64_t size : shape)
    minigrad::detail::check(size >= 0, "LayerNorm: sizes must be non-negative, got normalized_shape ", shape);
  minigrad::detail::check(eps >= 0, "LayerNorm: eps must be non-negative, got ", eps);
  if (!elementwise_affine) return;
  weight = register_parameter("weight", empty(shape));
  bias = register_parameter("bias", empty(shape));
  reset_parameters();
}

LayerNorm::LayerNorm(int64_t normalized_shape, double eps, bool elementwise_affine)
    : LayerNorm(std::vector<int64_t>{normalized_shape}, eps, elementwise_affine) {}

void LayerNorm::reset_parameters() {
  if (!elementwise_affine) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor LayerNorm::forward(const Tensor& input) {
  return functional::layer_norm(input, normalized_shape, weight, bias, eps);
}

std::string LayerNorm::extra_repr() const {
  std::string shape = "(";  // a Python tuple: (128,) for one dim, (4, 5) for two
  for (size_t d = 0; d < normalized_shape.size(); ++d)
    shape += (d > 0 ? ", " : "") + std::to_string(normalized_shape[d]);
  shape += normalized_shape.size() == 1 ? ",)" : ")";
  return shape + ", eps=" + detail::python_repr(eps) +
         ", elementwise_affine=" + (elementwise_affine ? "True" : "False");
}

}  // namespace minigrad::nn
