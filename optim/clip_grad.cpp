// clip_grad_norm_, as PyTorch 1.13's torch/nn/utils/clip_grad.py.
//
// PyTorch takes the norm of each gradient, then the norm of those norms; that equals the norm of
// all elements together, which we sum in double in one pass. The scale factor is applied to every
// gradient even when it is 1, as PyTorch does (multiplying by 1 changes nothing).
#include "optim/clip_grad.hpp"

#include <algorithm>
#include <cmath>

#include "autograd/op_support.hpp"

namespace minigrad::nn::utils {

using detail::check;

namespace {

// sum |g|^p over all elements, or max |g| for the infinity norm (NaN propagates, as PyTorch's).
double accumulate_norm(const std::vector<Tensor>& grads, double norm_type) {
  const bool infinity = std::isinf(norm_type);
  double total = 0;
  for (const Tensor& grad : grads) {
    dispatch_floating(grad.dtype(), "clip_grad_norm_", [&]<typename T>() {
      const T* g = grad.data_ptr<T>();
      const int64_t grad_numel = grad.numel();
      for (int64_t i = 0; i < grad_numel; ++i) {
        const double a = std::abs(static_cast<double>(g[i]));
        if (infinity) {
          if (std::isnan(a) || a > total) total = a;  // once nan, it stays nan: the norm of a set holding nan
        } else if (norm_type == 2) {
          total += a * a;
        } else {
          total += std::pow(a, norm_type);
        }
      }
    });
  }
  return total;
}

}  // namespace

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type) {
  check(max_norm >= 0, "clip_grad_norm_: max_norm must be >= 0, got ", max_norm);
  check(norm_type > 0, "clip_grad_norm_: norm_type must be > 0 (or infinity), got ", norm_type);
  std::vector<Tensor> grads;
  for (size_t i = 0; i < parameters.size(); ++i) {
    check(parameters[i].defined(), "clip_grad_norm_: parameter ", i, " is undefined");
    if (parameters[i].grad().defined()) grads.push_back(parameters[i].grad());
  }
  if (grads.empty()) return 0.0;

  const double sum = accumulate_norm(grads, norm_type);
  double total_norm = sum;  // the infinity norm is the largest |g| itself
  if (norm_type == 2) {
    total_norm = std::sqrt(sum);
  } else if (!std::isinf(norm_type)) {
    total_norm = std::pow(sum, 1.0 / norm_type);  // (sum |g|^p)^(1/p)
  }

  const double clip_coef = std::min(max_norm / (total_norm + 1e-6), 1.0);  // 1e-6 keeps 0 / 0 away
  NoGradGuard no_grad;
  for (Tensor& grad : grads) grad.mul_(clip_coef);
  return total_norm;
}

}  // namespace minigrad::nn::utils
