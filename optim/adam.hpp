// Adam and AdamW: per-parameter step sizes from running averages of the gradient and its square.
//
// References: Kingma and Ba, "Adam: A Method for Stochastic Optimization" (ICLR 2015); Loshchilov
// and Hutter, "Decoupled Weight Decay Regularization" (ICLR 2019) for AdamW; Reddi et al., "On the
// Convergence of Adam and Beyond" (ICLR 2018) for AMSGrad; PyTorch's torch.optim.Adam and
// torch.optim.AdamW (https://pytorch.org/docs/1.13/optim.html). The two differ only in weight
// decay: Adam adds lambda * param to the gradient (so it is rescaled like the gradient), AdamW
// shrinks the parameter directly by lr * lambda before the Adam step.
#pragma once

#include <utility>
#include <vector>

#include "optim/optimizer.hpp"

namespace minigrad::optim {

/// Adam's hyperparameters, PyTorch's names and defaults: `{.lr = 3e-4, .betas = {0.9, 0.99}}`.
struct AdamOptions {
  double lr = 1e-3;                                ///< step size
  std::pair<double, double> betas = {0.9, 0.999};  ///< beta1, beta2: decay of m and v, each in [0, 1)
  double eps = 1e-8;                               ///< added to sqrt(v) so the division stays finite
  double weight_decay = 0;                         ///< lambda: L2 penalty added to the gradient, >= 0
  bool amsgrad = false;                            ///< divide by the largest v seen so far
};

/// AdamW's hyperparameters: Adam's, with decoupled weight decay 0.01 by default (as PyTorch).
struct AdamWOptions {
  /// step size
  double lr = 1e-3;
  /// beta1, beta2: decay of m and v, each in [0, 1)
  std::pair<double, double> betas = {0.9, 0.999};
  /// added to sqrt(v) so the division stays finite
  double eps = 1e-8;
  double weight_decay = 1e-2;  ///< lambda: param shrinks by lr * lambda per step
  /// divide by the largest v seen so far
  bool amsgrad = false;
};

/// `torch.optim.Adam`. Per parameter, with g its gradient and t its own step count:
///   g = g + lambda * param;  m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2;
///   param = param - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
/// (with amsgrad, v_max = max(v_max, v) replaces v in the denominator).
/// Throws std::invalid_argument for bad parameters (see Optimizer), lr < 0, eps < 0,
/// a beta outside [0, 1), or weight_decay < 0.
class Adam : public Optimizer {
 public:
  /// Adam over `params` (usually `model.parameters()`): `optim::Adam opt(model.parameters(), {.lr = 1e-3});`.
  /// Throws as described above.
  explicit Adam(std::vector<Tensor> params, AdamOptions options = {});

 protected:
  void update(Tensor& param, const Tensor& grad, ParamState& state) override;
  std::map<std::string, Tensor> hyperparameters() const override;
  std::vector<std::string> state_names() const override;

 private:
  AdamOptions options_;  ///< options_.lr is the initial lr; the current one is lr()
};

/// `torch.optim.AdamW`: first param = param * (1 - lr * lambda), then Adam's update without the
/// L2 term. Throws as Adam.
class AdamW : public Optimizer {
 public:
  /// AdamW over `params`: `optim::AdamW opt(model.parameters(), {.lr = 1e-3, .weight_decay = 0.1});`.
  /// Throws as Adam.
  explicit AdamW(std::vector<Tensor> params, AdamWOptions options = {});

 protected:
  void update(Tensor& param, const Tensor& grad, ParamState& state) override;
  std::map<std::string, Tensor> hyperparameters() const override;
  std::vector<std::string> state_names() const override;

 private:
  AdamWOptions options_;  ///< options_.lr is the initial lr; the current one is lr()
};

}  // namespace minigrad::optim
