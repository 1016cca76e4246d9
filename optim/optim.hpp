// Everything in optim/ in one include: optimizers, learning-rate schedulers, gradient clipping.
#pragma once

/// \namespace minigrad::optim
/// Optimizers and learning-rate schedulers, as `torch.optim` and `torch.optim.lr_scheduler`.

/// \namespace minigrad::nn::utils
/// Training utilities that act on parameters, as `torch.nn.utils` (clip_grad_norm_).

#include "optim/adam.hpp"
#include "optim/clip_grad.hpp"
#include "optim/optimizer.hpp"
#include "optim/scheduler.hpp"
#include "optim/sgd.hpp"
