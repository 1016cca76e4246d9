// clip_grad_norm_ and clip_grad_value_, as PyTorch 1.13's torch/nn/utils/clip_grad.py.
//
// PyTorch takes the norm of each gradient in the gradient's dtype, then the norm of those norms,
// then clip_coef = max_norm / (total_norm + 1e-6) clamped to 1, all as tensors of that dtype
// (float32 unless a gradient is float64). Here each term |g|^p is computed in the dtype (so a
// float32 square underflows to 0 or overflows to inf where PyTorch's does) and the terms are
// summed in double, then rounded to the dtype: past float32's range the norm is inf, so float32
// gradients whose norm passes sqrt(FLT_MAX) = 1.8e19 are all multiplied by 0, as in PyTorch.
// PyTorch rounds each addition in float32, so the two norms can differ in their last bits.
// The scale factor is applied to every gradient even when it is 1, as PyTorch does.
#include "optim/clip_grad.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "autograd/op_support.hpp"

namespace minigrad::nn::utils {

using detail::check;

namespace {

// A sum of terms computed in double, rounded to `dtype` as round-to-nearest rounds it: a float32
// sum at or past FLT_MAX + half its last step (2^103) is inf.
double in_dtype(double value, Dtype dtype) {
  if (dtype == kFloat64) return value;
  const double overflow = static_cast<double>(std::numeric_limits<float>::max()) + std::ldexp(1.0, 103);
  if (value >= overflow) return std::numeric_limits<double>::infinity();
  return static_cast<float>(value);
}

// (sum |x|^p)^(1/p), or max |x| for the infinity norm, of `values` in `dtype` (NaN propagates).
// Each term is computed in T, as PyTorch computes it in the tensor's dtype.
template <typename T>
double norm_of(const T* values, int64_t n, double norm_type, Dtype dtype) {
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T a = std::abs(values[i]);
    if (std::isinf(norm_type)) {
      if (std::isnan(a) || a > total) total = a;  // once nan, it stays nan: the norm of a set holding nan
    } else {
      total += static_cast<double>(norm_type == 2 ? a * a : std::pow(a, static_cast<T>(norm_type)));
    }
  }
  if (std::isinf(norm_type)) return total;
  total = in_dtype(total, dtype);
  return in_dtype(norm_type == 2 ? std::sqrt(total) : std::pow(total, 1.0 / norm_type), dtype);
}

}  // namespace

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  check(max_norm >= 0, "clip_grad_norm_: max_norm must be >= 0, got ", max_norm);
  check(norm_type > 0, "clip_grad_norm_: norm_type must be > 0 (or infinity), got ", norm_type);
  std::vector<Tensor> grads;
  for (size_t i = 0; i < parameters.size(); ++i) {
    check(parameters[i].defined(), "clip_grad_norm_: parameter ", i, " is undefined");
    if (parameters[i].grad().defined()) grads.push_back(parameters[i].grad());
  }
  if (grads.empty()) return 0.0;

  // Each gradient's norm in its dtype; the norm of the norms in the widest of them (torch.stack).
  Dtype dtype = kFloat32;
  std::vector<double> norms;
  for (const Tensor& grad : grads) {
    dispatch_floating(grad.dtype(), "clip_grad_norm_", [&]<typename T>() {
      norms.push_back(norm_of(grad.data_ptr<T>(), grad.numel(), norm_type, grad.dtype()));
    });
    if (grad.dtype() == kFloat64) dtype = kFloat64;
  }
  double total_norm = 0;
  if (dtype == kFloat32) {  // the norms are float32 numbers: their terms too are computed in float32
    const std::vector<float> float_norms(norms.begin(), norms.end());
    total_norm = norm_of(float_norms.data(), static_cast<int64_t>(norms.size()), norm_type, dtype);
  } else {
    total_norm = norm_of(norms.data(), static_cast<int64_t>(norms.size()), norm_type, dtype);
  }
  if (error_if_nonfinite && !std::isfinite(total_norm))
    throw std::runtime_error(detail::concat(
        "clip_grad_norm_: the total norm of order ", norm_type,
        " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and "
        "scale the gradients by the non-finite norm anyway, set error_if_nonfinite = false"));

  // max_norm / (total_norm + 1e-6), clamped to 1; PyTorch divides as reciprocal times max_norm.
  double clip_coef = 0;
  if (dtype == kFloat32) {
    const float denominator = static_cast<float>(total_norm) + 1e-6f;  // 1e-6 keeps 0 / 0 away
    clip_coef = std::min((1.0f / denominator) * static_cast<float>(max_norm), 1.0f);
  } else {
    clip_coef = std::min((1.0 / (total_norm + 1e-6)) * max_norm, 1.0);
  }
  NoGradGuard no_grad;
  for (Tensor& grad : grads) grad.mul_(clip_coef);
  return total_norm;
}

// p.grad.data.clamp_(min=-clip_value, max=clip_value) for every parameter with a gradient.
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  for (size_t i = 0; i < parameters.size(); ++i)
    check(parameters[i].defined(), "clip_grad_value_: parameter ", i, " is undefined");
  NoGradGuard no_grad;
  for (const Tensor& parameter : parameters) {
    Tensor grad = parameter.grad();
    if (grad.defined()) grad.copy_(grad.clamp(-clip_value, clip_value));
  }
}

}  // namespace minigrad::nn::utils
