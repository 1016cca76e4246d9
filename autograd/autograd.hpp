// Everything in autograd/ in one include: tensors, ops, random numbers, gradcheck.
#pragma once

#include "autograd/dtype.hpp"
#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "autograd/tensor.hpp"
