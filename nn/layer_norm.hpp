// nn::LayerNorm, the normalisation of the GPT's residual blocks: each token's C features rescaled
// to mean 0 and variance 1, then a learned per-feature scale ("weight") and shift ("bias").
//
// The module holds only the parameters and eps; the math, with its backward written out as one
// node, is F::layer_norm (declared in functional.hpp, defined in layer_norm.cpp beside this).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/module.hpp"

namespace minigrad::nn {

/// Layer normalisation over the last dims, [..., *normalized_shape] -> same shape (`nn.LayerNorm`).
/// Prints as PyTorch's: `LayerNorm((128,), eps=1e-05, elementwise_affine=True)`.
class LayerNorm : public Module {
 public:
  /// With elementwise_affine, registers "weight" (ones) and "bias" (zeros) of shape
  /// normalized_shape, as torch.nn.LayerNorm: no random draws. Throws std::invalid_argument for an
  /// empty normalized_shape, a negative size, or eps < 0.
  explicit LayerNorm(std::vector<int64_t> normalized_shape, double eps = 1e-5,
                     bool elementwise_affine = true);
  /// The same for one normalised dim: `nn::LayerNorm(128)` normalises the last dim of 128 features.
  explicit LayerNorm(int64_t normalized_shape, double eps = 1e-5, bool elementwise_affine = true);

  /// F::layer_norm(input, normalized_shape, weight, bias, eps). Throws std::invalid_argument for
  /// an input whose last dims are not normalized_shape.
  Tensor forward(const Tensor& input) override;
  /// "(128,), eps=1e-05, elementwise_affine=True", as Python prints it.
  std::string extra_repr() const override;
  /// weight back to ones and bias to zeros (`reset_parameters`).
  void reset_parameters();

  std::vector<int64_t> normalized_shape;  ///< the trailing dims normalised together
  double eps;                             ///< added to the variance before the square root
  bool elementwise_affine;                ///< whether weight and bias exist
  Tensor weight;  ///< normalized_shape, registered as "weight"; undefined without elementwise_affine
  Tensor bias;    ///< normalized_shape, registered as "bias"; undefined without elementwise_affine
};

}  // namespace minigrad::nn
