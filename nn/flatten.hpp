// nn::Flatten: merges dims start_dim..end_dim into one, by default everything but the batch dim,
// so an image batch [N, 1, 28, 28] becomes [N, 784] rows a Linear layer can take (`nn.Flatten`).
#pragma once

#include <cstdint>
#include <string>

#include "nn/module.hpp"

namespace minigrad::nn {

/// Merges dims start_dim..end_dim of its input into one (`nn.Flatten(start_dim=1, end_dim=-1)`).
class Flatten : public Module {
 public:
  /// Negative dims count from the end; they are checked against the input in forward().
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1) : start_dim(start_dim), end_dim(end_dim) {}
  /// input.flatten(start_dim, end_dim); throws std::out_of_range for dims the input lacks.
  Tensor forward(const Tensor& input) override;
  /// "start_dim=1, end_dim=-1"
  std::string extra_repr() const override;

  /// First dim merged (1 by default: the batch dim stays).
  int64_t start_dim;
  /// Last dim merged (-1 by default: the last dim).
  int64_t end_dim;
};

}  // namespace minigrad::nn
