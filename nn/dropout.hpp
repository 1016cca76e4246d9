// nn::Dropout: during training, zero each number with probability p and scale the survivors by
// 1 / (1 - p), so the expected value is unchanged; in eval mode, pass everything through.
// It is the one layer of this folder whose forward depends on train() / eval() (`nn.Dropout`).
#pragma once

#include <string>

#include "autograd/random.hpp"
#include "nn/module.hpp"

namespace minigrad::nn {

/// Zeroes elements with probability p in training and scales the rest by 1 / (1 - p); the identity
/// in eval mode (`nn.Dropout(p)`). Any input shape, float32 or float64.
class Dropout : public Module {
 public:
  /// Throws std::invalid_argument unless 0 <= p <= 1.
  explicit Dropout(double p = 0.5);
  /// The same, drawing its masks from `generator` (which must outlive the module) instead of the
  /// default one, so that threads training their own models do not share a stream.
  Dropout(double p, Generator& generator);
  /// F::dropout(input, p, is_training()): draws its mask from the module's generator in training.
  Tensor forward(const Tensor& input) override;
  /// "p=0.5, inplace=False" (p printed as Python prints a float, so Dropout(0) shows p=0.0
  /// where PyTorch, given the integer 0, shows p=0)
  std::string extra_repr() const override;

  /// The probability of zeroing an element, in [0, 1].
  double p;

 private:
  Generator* generator_;  // the default generator unless one was given
};

}  // namespace minigrad::nn
