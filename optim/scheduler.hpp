// Learning-rate schedulers: change an optimizer's lr once per epoch (PyTorch's torch.optim.lr_scheduler).
//
// Call scheduler.step() after optimizer.step(). Each scheduler computes the next lr from the
// optimizer's current one (PyTorch's "chainable" get_lr forms, which step() uses), so the lr
// sequence equals PyTorch's number for number. Constructing a scheduler already takes its first
// step (epoch 0), exactly as in PyTorch: LinearLR multiplies the lr by start_factor right away.
// A scheduler keeps a reference to its optimizer, which must outlive it.
#pragma once

#include <cstdint>
#include <vector>

#include "optim/optimizer.hpp"

namespace minigrad::optim {

/// What every scheduler shares (PyTorch's `_LRScheduler`).
class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  /// Advances one epoch and sets the optimizer's lr (`scheduler.step()`).
  void step();
  /// The lr the last step set, one per parameter group (`get_last_lr()`; minigrad's
  /// optimizers have one group, so this is `{optimizer.lr()}` unless you changed it since).
  std::vector<double> get_last_lr() const { return {last_lr_}; }
  /// Steps taken: 0 right after construction (`last_epoch`).
  int64_t last_epoch() const { return last_epoch_; }

 protected:
  /// Takes the optimizer's initial lr as the base lr (`base_lrs`), recording the current lr as the
  /// initial one if no scheduler has yet; the subclass's constructor then calls step() once, as
  /// PyTorch's constructor does.
  explicit LRScheduler(Optimizer& optimizer);
  /// The lr for epoch last_epoch() from the optimizer's current lr (PyTorch's `get_lr`).
  virtual double get_lr() const = 0;

  /// The optimizer whose lr is set; must outlive the scheduler.
  Optimizer& optimizer_;
  /// The optimizer's lr when its first scheduler was built (`base_lrs[0]`).
  double base_lr_;
  /// Steps taken so far (`last_epoch`); -1 until the constructor's step.
  int64_t last_epoch_ = -1;
  /// The lr the last step set (`get_last_lr()[0]`).
  double last_lr_ = 0;
};

/// `torch.optim.lr_scheduler.StepLR`: lr = base_lr * gamma^(epoch / step_size), integer division.
/// Throws std::invalid_argument for step_size < 1 or gamma < 0.
class StepLR : public LRScheduler {
 public:
  /// Multiplies the lr by gamma every step_size epochs; sets the epoch-0 lr at once. Throws as above.
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  double get_lr() const override;

 private:
  int64_t step_size_;
  double gamma_;
};

/// `torch.optim.lr_scheduler.CosineAnnealingLR` (Loshchilov and Hutter, "SGDR", ICLR 2017,
/// without restarts): lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2,
/// going back up after T_max as PyTorch's does. Throws std::invalid_argument for T_max < 1 or
/// eta_min < 0.
class CosineAnnealingLR : public LRScheduler {
 public:
  /// Anneals from the optimizer's lr to eta_min over T_max epochs. Throws as above.
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

 protected:
  double get_lr() const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

/// `torch.optim.lr_scheduler.LinearLR`: the lr's factor goes linearly from start_factor to
/// end_factor over total_iters epochs, then stays: lr = base_lr * (start + (end - start) *
/// min(epoch, total_iters) / total_iters). Throws std::invalid_argument for start_factor outside
/// (0, 1], end_factor outside [0, 1], or total_iters < 1.
class LinearLR : public LRScheduler {
 public:
  /// Scales the lr by start_factor at once, reaching end_factor after total_iters epochs. Throws as above.
  explicit LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
                    int64_t total_iters = 5);

 protected:
  double get_lr() const override;

 private:
  double start_factor_;
  double end_factor_;
  int64_t total_iters_;
};

}  // namespace minigrad::optim
