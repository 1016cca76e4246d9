// Activation layers: the nonlinearity between two Linear layers (torch.nn's ReLU, Tanh, Sigmoid,
// GELU). Without one, Linear after Linear is still one linear map; with ReLU in between, the
// lesson's FeedForward can bend. They hold no parameters: each forward is one op, and its
// derivative lives with the op (relu, tanh, sigmoid in autograd/ops.hpp, gelu in functional.hpp).
#pragma once

#include <string>

#include "nn/module.hpp"

namespace minigrad::nn {

/// max(x, 0) elementwise: negatives become 0, the rest pass unchanged (`nn.ReLU`).
class ReLU : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};

/// tanh(x) elementwise, in (-1, 1) (`nn.Tanh`).
class Tanh : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};

/// 1 / (1 + e^-x) elementwise, in (0, 1) (`nn.Sigmoid`).
class Sigmoid : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};

/// x * Phi(x) elementwise, Phi the normal CDF; the tanh approximation with approximate = "tanh"
/// (`nn.GELU`, the activation of GPT-2's feed-forward blocks). Throws std::invalid_argument for
/// another approximate.
class GELU : public Module {
 public:
  /// `approximate` is "none" (the exact erf form) or "tanh"; throws std::invalid_argument otherwise.
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& input) override;
  /// "approximate='none'"
  std::string extra_repr() const override;

  /// "none" or "tanh", as given to the constructor.
  std::string approximate;
};

}  // namespace minigrad::nn
