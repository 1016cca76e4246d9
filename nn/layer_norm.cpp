// F::layer_norm, forward and backward as one node, and the nn::LayerNorm module around it.
//
// The input [..., *normalized_shape] is R rows of M contiguous elements (M the product of
// normalized_shape, R that of the leading dims). Each row gets its own mean mu and reciprocal
// standard deviation rstd = 1 / sqrt(var + eps), computed in double and kept for the backward;
// x_hat = (x - mu) * rstd is the normalised row, out = x_hat * weight + bias.
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

/// The sum over j in [0, m) of term(j), in double: eight running sums (independent, so the compiler
/// keeps them in vector registers), added in order at the end.
template <typename Term>
double sum_over_row(int64_t m, Term term) {
  double part[8] = {};
  int64_t j = 0;
  for (; j + 8 <= m; j += 8)
    for (int lane = 0; lane < 8; ++lane) part[lane] += term(j + lane);
  double total = 0.0;
  for (double p : part) total += p;
  for (; j < m; ++j) total += term(j);
  return total;
}

/// Rows per piece of a parallel loop over rows of length m: PyTorch's grain size in elements.
int64_t row_grain(int64_t m) {
  return std::max<int64_t>(1, minigrad::detail::kGrainSize / std::max<int64_t>(m, 1));
}

/// grad_x, grad_w, grad_b of layer_norm (each only where its tensor requires grad):
/// grad_x = rstd * (g_hat - mean(g_hat) - x_hat * mean(g_hat * x_hat)) with g_hat = grad * w,
/// grad_w = sum over rows of grad * x_hat, grad_b = sum over rows of grad.
std::vector<Tensor> layer_norm_backward(const Tensor& grad_out, const std::vector<Tensor>& inputs,
                                        const RowStats& stats, int64_t m) {
  const Tensor &x = inputs[0], &w = inputs[1], &b = inputs[2];
  const Tensor grad = minigrad::detail::convert(grad_out, x.dtype());
  Tensor grad_x = x.requires_grad() ? minigrad::detail::new_tensor(x.shape(), x.dtype()) : Tensor();
  const bool want_w = w.defined() && w.requires_grad(), want_b = b.defined() && b.requires_grad();
  std::vector<double> sum_w(m, 0.0), sum_b(m, 0.0);
  const auto rows = static_cast<int64_t>(stats.size());
  dispatch_floating(x.dtype(), "layer_norm backward", [&]<typename T>() {
    const T *xs = x.data_ptr<T>(), *gs = grad.data_ptr<T>();
    std::vector<double> weight(m, 1.0);  // no weight: g_hat = grad
    if (w.defined())
      for (int64_t j = 0; j < m; ++j) weight[j] = w.data_ptr<T>()[j];
    if (grad_x.defined()) {
      T* out = grad_x.data_ptr<T>();
      minigrad::detail::parallel_for(rows, row_grain(m), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const double mu = stats[r].first, rstd = stats[r].second;  // not bound: the lambdas capture them
          const T *xr = xs + r * m, *gr = gs + r * m;
          auto g_hat = [&](int64_t j) { return gr[j] * weight[j]; };
          auto x_hat = [&](int64_t j) { return (xr[j] - mu) * rstd; };
          const double mean_g = sum_over_row(m, g_hat) / static_cast<double>(m);
          const double mean_gx =
              sum_over_row(m, [&](int64_t j) { return g_hat(j) * x_hat(j); }) / static_cast<double>(m);
          T* o = out + r * m;
          for (int64_t j = 0; j < m; ++j)
            o[j] = static_cast<T>(rstd * (g_hat(j) - mean_g - x_hat(j) * mean_gx));
        }
      });
    }
    if (!want_w && !want_b) return;
    for (int64_t r = 0; r < rows; ++r) {  // in row order: the same sums on every thread count
      const auto [mu, rstd] = stats[r];
      const T *xr = xs + r * m, *gr = gs + r * m;
      for (int64_t j = 0; j < m; ++j) {
        sum_w[j] += gr[j] * ((xr[j] - mu) * rstd);
        sum_b[j] += gr[j];
      }
    }
  });
  auto as_tensor = [](bool wanted, const std::vector<double>& v, const Tensor& like) {
    return wanted ? tensor(v, like.shape(), {.dtype = like.dtype()}) : Tensor();
  };
  return {grad_x, as_tensor(want_w, sum_w, w), as_tensor(want_b, sum_b, b)};
}

/// out = (x - mu) * rstd * w + b over rows [begin, end), each row's (mu, rstd) kept in stats;
/// w and b may be null (no weight, no bias).
template <typename T>
void normalize_rows(const T* x, const T* w, const T* b, T* out, RowStats& stats, int64_t begin, int64_t end,
                    int64_t m, double eps) {
  for (int64_t r = begin; r < end; ++r) {
    const T* xr = x + r * m;
    T* y = out + r * m;
    // two passes: the mean, then the squared deviations from it
    const double mu =
        sum_over_row(m, [&](int64_t j) { return static_cast<double>(xr[j]); }) / static_cast<double>(m);
    const double var =
        sum_over_row(m, [&](int64_t j) { return (xr[j] - mu) * (xr[j] - mu); }) / static_cast<double>(m);
    const double rstd = 1.0 / std::sqrt(var + eps);
    stats[r] = {mu, rstd};
    if (w && b) {  // the usual case, without a branch in the loop
      for (int64_t j = 0; j < m; ++j) y[j] = static_cast<T>((xr[j] - mu) * rstd * w[j] + b[j]);
      continue;
    }
    for (int64_t j = 0; j < m; ++j) {
      double value = (xr[j] - mu) * rstd;
      if (w) value *= w[j];
      if (b) value += b[j];
      y[j] = static_cast<T>(value);
    }
  }
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
    minigrad::detail::parallel_for(rows, row_grain(m), [&](int64_t begin, int64_t end) {
      normalize_rows(x, w, b, y, *stats, begin, end, m, eps);
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
