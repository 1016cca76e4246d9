// Everything in nn/ in one include: modules and layers, functional ops, init, losses
// (PyTorch's torch.nn, torch.nn.functional, torch.nn.init).
#pragma once

/// \namespace minigrad::nn
/// Modules (layers and models), losses and state dicts, as `torch.nn`.

/// \namespace minigrad::nn::functional
/// The differentiable functions behind the layers and losses, as `torch.nn.functional`: write
/// `namespace F = minigrad::nn::functional;` to call `F::linear`, `F::cross_entropy`, ...

/// \namespace minigrad::nn::init
/// Weight initialisation schemes, as `torch.nn.init`: same formulas, same draws.

#include "nn/activation.hpp"
#include "nn/dropout.hpp"
#include "nn/embedding.hpp"
#include "nn/feedforward.hpp"
#include "nn/flatten.hpp"
#include "nn/functional.hpp"
#include "nn/init.hpp"
#include "nn/layer_norm.hpp"
#include "nn/linear.hpp"
#include "nn/loss.hpp"
#include "nn/module.hpp"
#include "nn/module_list.hpp"
#include "nn/sequential.hpp"
