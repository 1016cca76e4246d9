// Everything in nn/ in one include: modules and layers, functional ops, init, losses, data,
// checkpoints (PyTorch's torch.nn, torch.nn.functional, torch.utils.data, safetensors).
#pragma once

/// \namespace minigrad::nn
/// Modules (layers and models), losses and checkpoints' state dicts, as `torch.nn`.

/// \namespace minigrad::nn::functional
/// The differentiable functions behind the layers and losses, as `torch.nn.functional`: write
/// `namespace F = minigrad::nn::functional;` to call `F::linear`, `F::cross_entropy`, ...

/// \namespace minigrad::nn::init
/// Weight initialisation schemes, as `torch.nn.init`: same formulas, same draws.

/// \namespace minigrad::data
/// Feeding a training loop, as `torch.utils.data`: TensorDataset, DataLoader, CSV files and the
/// data sets of the examples (iris, digits, toy sets).

#include "nn/activation.hpp"
#include "nn/csv.hpp"
#include "nn/data.hpp"
#include "nn/datasets.hpp"
#include "nn/dropout.hpp"
#include "nn/feedforward.hpp"
#include "nn/flatten.hpp"
#include "nn/functional.hpp"
#include "nn/init.hpp"
#include "nn/linear.hpp"
#include "nn/loss.hpp"
#include "nn/module.hpp"
#include "nn/module_list.hpp"
#include "nn/parity.hpp"
#include "nn/sequential.hpp"
#include "nn/serialize.hpp"
