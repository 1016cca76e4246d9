// Everything in nn/ in one include: modules and layers, functional ops, init, losses, data,
// checkpoints (PyTorch's torch.nn, torch.nn.functional, torch.utils.data, safetensors).
#pragma once

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
#include "nn/sequential.hpp"
