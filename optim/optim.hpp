// Everything in optim/ in one include: optimizers, learning-rate schedulers, gradient clipping.
#pragma once

#include "optim/adam.hpp"
#include "optim/clip_grad.hpp"
#include "optim/optimizer.hpp"
#include "optim/scheduler.hpp"
#include "optim/sgd.hpp"
