// The whole public API in one include, as `#include <torch/torch.h>`:
//   minigrad::Tensor, ops and random numbers (autograd/), minigrad::nn (nn/), minigrad::optim (optim/),
//   minigrad::data (data/), checkpoints (io/), parity traces (parity/).
#pragma once

#include "autograd/autograd.hpp"
#include "data/data.hpp"
#include "io/safetensors.hpp"
#include "nn/nn.hpp"
#include "optim/optim.hpp"
#include "parity/parity.hpp"
