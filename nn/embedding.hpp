// nn::Embedding: a lookup table of learned vectors, one row per token id, as torch.nn.Embedding.
//
// The course's bigram model is one Embedding(vocab, vocab) whose row for the current character is
// the logits of the next; the GPT adds token and position embeddings [V, C] and [T, C]. The layer
// holds the table; the lookup and its backward (repeated ids add up their gradients) are
// minigrad::embedding in autograd/ops_index.hpp. Shape letters: V rows (num_embeddings), D
// features (embedding_dim), "..." the index tensor's own dims (B, T in the course).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "nn/module.hpp"

namespace minigrad::nn {

/// Looks up rows of a [num_embeddings, embedding_dim] float32 table: int64 ids [...] ->
/// [..., embedding_dim] (`nn.Embedding`).
class Embedding : public Module {
 public:
  /// weight [num_embeddings, embedding_dim] drawn from N(0, 1) on the default generator, as
  /// `init.normal_` in nn.Embedding.reset_parameters: after manual_seed(1337) it holds PyTorch's
  /// numbers. A padding_idx in -num_embeddings..num_embeddings-1 (negatives count from the end, as
  /// PyTorch) names a row that is zeroed and never gets a gradient. Throws std::invalid_argument
  /// for a negative size, std::out_of_range for a padding_idx out of range.
  Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx = std::nullopt);

  /// int64 ids [...] -> [..., embedding_dim]: F::embedding(input, weight, padding_idx). Throws as
  /// minigrad::embedding (`embedding: index 70 is out of range for 65 embeddings`).
  Tensor forward(const Tensor& input) override;
  /// "65, 128", or "65, 128, padding_idx=0" (PyTorch prints `Embedding(65, 128)`)
  std::string extra_repr() const override;
  /// Draws the weight again from N(0, 1) and zeroes the padding row (`reset_parameters`).
  void reset_parameters();

  int64_t num_embeddings;              ///< V, the number of rows (token ids 0..V-1)
  int64_t embedding_dim;               ///< D, the width of each row
  std::optional<int64_t> padding_idx;  ///< the row kept at zero, made non-negative; none by default
  Tensor weight;                       ///< [num_embeddings, embedding_dim], registered as "weight"
};

}  // namespace minigrad::nn
