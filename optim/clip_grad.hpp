// Gradient clipping: rescale all gradients together when their combined norm is too large
// (clip_grad_norm_), or cap each gradient element (clip_grad_value_).
//
// One unlucky batch can give a huge gradient and throw the parameters far off; clipping the norm
// caps the length of the step direction while keeping the direction, clipping the values caps
// each coordinate and so can turn the direction. Either sits between loss.backward() and
// optimizer.step(). It lives in optim/ because nn must not depend on optim, but it keeps
// PyTorch's namespace: minigrad::nn::utils::clip_grad_norm_, as torch.nn.utils.clip_grad_norm_.
#pragma once

#include <vector>

#include "autograd/tensor.hpp"

namespace minigrad::nn::utils {

/// Treats the gradients of `parameters` as one long vector, computes its norm of order
/// `norm_type` (2 by default; infinity, `std::numeric_limits<double>::infinity()`, for the largest
/// absolute value), and multiplies every gradient in place by
/// clip_coef = min(max_norm / (total_norm + 1e-6), 1). Parameters without a gradient are skipped.
/// As in PyTorch, the norm is taken in float32 unless a gradient is float64, so float32 gradients
/// whose norm passes 1.8e19 (sqrt of float32's largest number) give an infinite norm and are
/// all multiplied by 0 (the sum itself is kept in double: the last bits can differ from PyTorch's).
/// Returns total_norm, the norm before clipping (0 when no parameter has a gradient).
/// Mirrors `torch.nn.utils.clip_grad_norm_`, which returns it as a 0-d tensor of that dtype.
/// Throws std::invalid_argument for an undefined parameter, max_norm < 0, or norm_type <= 0
/// (PyTorch accepts them); std::runtime_error when error_if_nonfinite and the norm is inf or nan.
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

/// Clamps every element of each gradient of `parameters` to [-clip_value, clip_value], in place
/// (`torch.nn.utils.clip_grad_value_`). The bounds are rounded to each gradient's dtype; nan
/// elements stay nan; as torch.clamp with min > max, a negative clip_value sets every element to
/// clip_value, and a nan clip_value sets them all to nan. Parameters without a gradient are
/// skipped. Returns nothing, as PyTorch returns None. Throws std::invalid_argument for an undefined
/// parameter, and (from clamp, as PyTorch) for a finite clip_value beyond float32's range when a
/// gradient is float32.
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);

}  // namespace minigrad::nn::utils
