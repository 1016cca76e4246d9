// Gradient clipping: rescale all gradients together when their combined norm is too large.
//
// One unlucky batch can give a huge gradient and throw the parameters far off; clipping caps the
// length of the step direction while keeping the direction. It sits between loss.backward() and
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
/// Returns total_norm, the norm before clipping (0 when no parameter has a gradient).
/// Mirrors `torch.nn.utils.clip_grad_norm_`, which returns it as a tensor.
/// Throws std::invalid_argument for an undefined parameter, max_norm < 0, or norm_type <= 0.
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0);

}  // namespace minigrad::nn::utils
