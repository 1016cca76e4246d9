// SGD: stochastic gradient descent with momentum, dampening, weight decay and Nesterov.
//
// Reference: PyTorch's torch.optim.SGD (https://pytorch.org/docs/1.13/generated/torch.optim.SGD.html),
// whose momentum follows Sutskever et al., "On the importance of initialization and momentum in
// deep learning" (ICML 2013). Plain SGD moves each parameter a small step against its gradient;
// momentum keeps a running velocity so that consistent directions build up speed and noisy ones
// cancel out.
#pragma once

#include <limits>
#include <vector>

#include "optim/optimizer.hpp"

namespace minigrad::optim {

/// SGD's hyperparameters, PyTorch's names and defaults: `{.lr = 0.1, .momentum = 0.9}`.
struct SGDOptions {
  double lr = std::numeric_limits<double>::quiet_NaN();  ///< step size; required (PyTorch has no default)
  double momentum = 0;      ///< mu: how much of the previous velocity is kept, >= 0
  double dampening = 0;     ///< tau: the new gradient enters the velocity scaled by 1 - tau
  double weight_decay = 0;  ///< lambda: L2 penalty, lambda * param added to the gradient, >= 0
  bool nesterov = false;    ///< step along grad + mu * velocity (needs momentum > 0, dampening 0)
};

/// `torch.optim.SGD`. Per parameter, with g its gradient and b its momentum buffer:
///   g = g + lambda * param;  b = g on the first step, else b = mu * b + (1 - tau) * g;
///   g = nesterov ? g + mu * b : b;  param = param - lr * g.
/// Throws std::invalid_argument for bad parameters (see Optimizer), lr < 0 or unset,
/// momentum < 0, weight_decay < 0, or nesterov without momentum > 0 and dampening 0.
class SGD : public Optimizer {
 public:
  /// SGD over `params`; options.lr is required: `optim::SGD opt(model.parameters(), {.lr = 0.1, .momentum =
  /// 0.9});`. Throws as described above.
  SGD(std::vector<Tensor> params, SGDOptions options);

 protected:
  void update(Tensor& param, const Tensor& grad, ParamState& state) override;
  std::map<std::string, Tensor> hyperparameters() const override;
  std::vector<std::string> state_names() const override;

 private:
  SGDOptions options_;  ///< options_.lr is the initial lr; the current one is lr()
};

}  // namespace minigrad::optim
