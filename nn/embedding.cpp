// nn::Embedding: one registered table, PyTorch's initialisation, and a call to F::embedding.
#include "nn/embedding.hpp"

#include <algorithm>

#include "autograd/op_support.hpp"
#include "nn/functional.hpp"
#include "nn/init.hpp"

namespace minigrad::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx)
    : num_embeddings(num_embeddings), embedding_dim(embedding_dim), padding_idx(padding_idx) {
  minigrad::detail::check(num_embeddings >= 0 && embedding_dim >= 0,
                          "Embedding: sizes must be non-negative, got num_embeddings=", num_embeddings,
                          ", embedding_dim=", embedding_dim);
  if (padding_idx) {
    // As nn.Embedding.__init__: a negative padding_idx counts from the end.
    minigrad::detail::check<std::out_of_range>(
        *padding_idx >= -num_embeddings && *padding_idx < num_embeddings, "Embedding: padding_idx ",
        *padding_idx, " must be within num_embeddings (", num_embeddings, ")");
    if (*padding_idx < 0) this->padding_idx = *padding_idx + num_embeddings;
  }
  weight = register_parameter("weight", empty({num_embeddings, embedding_dim}));
  reset_parameters();
}

void Embedding::reset_parameters() {
  // As nn.Embedding.reset_parameters: init.normal_(weight), then the padding row set to zero.
  init::normal_(weight);
  if (padding_idx) {
    // weight[padding_idx] would be a copy (select copies), so the row is zeroed in the storage.
    float* row = weight.data_ptr<float>() + *padding_idx * embedding_dim;
    std::fill(row, row + embedding_dim, 0.0f);
  }
}

Tensor Embedding::forward(const Tensor& input) { return functional::embedding(input, weight, padding_idx); }

std::string Embedding::extra_repr() const {
  std::string text = std::to_string(num_embeddings) + ", " + std::to_string(embedding_dim);
  if (padding_idx) text += ", padding_idx=" + std::to_string(*padding_idx);
  return text;
}

}  // namespace minigrad::nn
