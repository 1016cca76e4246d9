// nn::Linear, the layer that widens and narrows the lesson's token vectors, and nn::Identity.
//
// Linear(I, O) holds weight [O, I] and bias [O] and maps the last dim of its input from I to O
// numbers: out = x @ W^T + b on [..., I], so one layer serves a token [I], a batch [N, I] and
// the course's [B, T, C] alike (as torch.nn.Linear; the math is F::linear in functional.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "autograd/random.hpp"
#include "nn/module.hpp"

namespace minigrad::nn {

/// y = x @ W^T + b over the last dim, [..., in_features] -> [..., out_features] (`nn.Linear`);
/// float32 parameters.
class Linear : public Module {
 public:
  /// weight [out_features, in_features] from kaiming_uniform_(a = sqrt(5)), then bias
  /// [out_features] from U(-1/sqrt(in_features), 1/sqrt(in_features)), drawn from the default
  /// generator in that order, as torch.nn.Linear: after manual_seed(0) the numbers equal
  /// PyTorch's. Throws std::invalid_argument for a negative size.
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  /// The same, drawing from `generator` instead of the default one, so that threads building
  /// their own models do not share a stream (PyTorch's init functions take `generator=`).
  Linear(int64_t in_features, int64_t out_features, bool bias, Generator& generator);

  /// [..., in_features] -> [..., out_features]. Throws std::invalid_argument for an input whose
  /// last dim is not in_features (the message gives both widths and both shapes).
  Tensor forward(const Tensor& input) override;
  /// "in_features=128, out_features=512, bias=True"
  std::string extra_repr() const override;
  /// Draws weight and bias again, as the constructor did (`reset_parameters`), from the default
  /// generator or the one given.
  ///@{
  void reset_parameters();
  void reset_parameters(Generator& generator);
  ///@}

  /// I, the width of each input row.
  int64_t in_features;
  /// O, the width of each output row.
  int64_t out_features;
  Tensor weight;  ///< [out_features, in_features], registered as "weight"
  Tensor bias;    ///< [out_features], registered as "bias"; undefined when built with bias = false
};

/// Returns its input unchanged (`nn.Identity`): a placeholder where a layer may or may not be.
class Identity : public Module {
 public:
  Tensor forward(const Tensor& input) override { return input; }
};

}  // namespace minigrad::nn
