// The schedulers' lr rules, as PyTorch 1.13's chainable get_lr (torch/optim/lr_scheduler.py).
//
// Each rule turns the optimizer's current lr into the next one. The closed forms in the header
// give the same numbers up to rounding; the chainable forms are what PyTorch's step() runs, so
// they are what we run, with the same operations in the same order.
#include "optim/scheduler.hpp"

#include <cmath>
#include <limits>
#include <numbers>

#include "autograd/op_support.hpp"

namespace minigrad::optim {

using detail::check;

// The base lr is the optimizer's initial lr, which the first scheduler built records: PyTorch's
// group.setdefault("initial_lr", lr), then base_lrs = initial_lr. A second scheduler built after a
// LinearLR, whose constructor has already scaled the lr, still starts from the lr the user gave.
LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer), base_lr_(0) {
  optimizer.set_initial_lr_once(optimizer.lr());
  base_lr_ = *optimizer.initial_lr();
}

void LRScheduler::step() {
  check<std::overflow_error>(last_epoch_ < std::numeric_limits<int64_t>::max(),
                             "scheduler step: last_epoch is already ", last_epoch_, ", the largest int64");
  ++last_epoch_;
  last_lr_ = get_lr();
  optimizer_.set_scheduled_lr(last_lr_);
}

// ---- StepLR ------------------------------------------------------------------------------------

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  check(step_size >= 1, "StepLR: step_size must be >= 1, got ", step_size);
  check(gamma >= 0, "StepLR: gamma must be >= 0, got ", gamma);
  step();
}

double StepLR::get_lr() const {
  const double lr = optimizer_.lr();
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return lr;
  return lr * gamma_;  // every step_size epochs: lr * gamma
}

// ---- CosineAnnealingLR ---------------------------------------------------------------------------

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
  check(T_max >= 1, "CosineAnnealingLR: T_max must be >= 1, got ", T_max);
  check(eta_min >= 0, "CosineAnnealingLR: eta_min must be >= 0, got ", eta_min);
  step();
}

double CosineAnnealingLR::get_lr() const {
  const double pi = std::numbers::pi;
  const double lr = optimizer_.lr(), epoch = static_cast<double>(last_epoch_),
               t_max = static_cast<double>(t_max_);
  if (last_epoch_ == 0) return lr;
  // Just past a minimum the ratio below would be 0 / 0: step up by the first half-cosine step instead.
  // (t - 1 - T_max) % (2 T_max) == 0, asked without computing 2 T_max, which overflows int64 past
  // 2^62 (Python's integers never do): divisible by T_max, an even number of times.
  const int64_t past = last_epoch_ - 1 - t_max_;
  if (past % t_max_ == 0 && (past / t_max_) % 2 == 0) {
    return lr + (base_lr_ - eta_min_) * (1 - std::cos(pi / t_max)) / 2;
  }
  // (lr_t - eta_min) / (lr_{t-1} - eta_min) = (1 + cos(pi t / T_max)) / (1 + cos(pi (t - 1) / T_max))
  return (1 + std::cos(pi * epoch / t_max)) / (1 + std::cos(pi * (epoch - 1) / t_max)) * (lr - eta_min_) +
         eta_min_;
}

// ---- LinearLR ------------------------------------------------------------------------------------

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(optimizer),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  check(start_factor > 0 && start_factor <= 1, "LinearLR: start_factor must be in (0, 1], got ",
        start_factor);
  check(end_factor >= 0 && end_factor <= 1, "LinearLR: end_factor must be in [0, 1], got ", end_factor);
  check(total_iters >= 1, "LinearLR: total_iters must be >= 1, got ", total_iters);
  step();
}

double LinearLR::get_lr() const {
  const double lr = optimizer_.lr();
  if (last_epoch_ == 0) return lr * start_factor_;
  if (last_epoch_ > total_iters_) return lr;
  // factor_t / factor_{t-1}, with factor_t = start + (end - start) * t / total_iters
  const double change = end_factor_ - start_factor_;
  return lr * (1. + change / (static_cast<double>(total_iters_) * start_factor_ +
                              static_cast<double>(last_epoch_ - 1) * change));
}

}  // namespace minigrad::optim
