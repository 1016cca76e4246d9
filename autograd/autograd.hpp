// Everything in autograd/ in one include: tensors, ops, random numbers, gradcheck.
#pragma once

/// \namespace minigrad
/// minigrad's public names, as PyTorch's `torch::`: Tensor and its dtypes, every op, the
/// factories, random numbers (Generator, manual_seed), threads (set_num_threads), grad mode
/// (NoGradGuard) and gradcheck.
/// The layers, losses and data tools are in minigrad::nn and minigrad::data, the optimizers in
/// minigrad::optim.

#include "autograd/dtype.hpp"
#include "autograd/gradcheck.hpp"
#include "autograd/machinery/graph.hpp"
#include "autograd/machinery/parallel.hpp"
#include "autograd/machinery/storage.hpp"
#include "autograd/ops.hpp"
#include "autograd/ops_index.hpp"
#include "autograd/random.hpp"
#include "autograd/tensor.hpp"
