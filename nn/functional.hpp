// The differentiable functions behind nn's layers (torch.nn.functional, imported as F):
// linear, gelu, dropout and layer_norm. Each is one op with its forward and backward side by side
// (functional.cpp; layer_norm in layer_norm.cpp beside its module), like the ops of
// autograd/ops.hpp; a layer (nn::Linear, nn::GELU, nn::Dropout, nn::LayerNorm) only holds their
// arguments. Write `namespace F = minigrad::nn::functional;` to spell them `F::linear(x, w, b)` as
// the Python does; F::softmax, F::log_softmax and F::relu are the ops of autograd/ops.hpp.
//
// Shape letters: N rows, I input features, O output features, M the elements of one normalised
// row; "..." any leading dimensions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/ops_index.hpp"
#include "autograd/random.hpp"
#include "autograd/tensor.hpp"

namespace minigrad::nn::functional {

// linear: out = x @ W^T + b, x [..., I], W [O, I], b [O] -> out [..., O] (leading dims flattened
// into N rows);  grad_x = grad @ W,  grad_W = grad^T @ x (summed over all rows),
// grad_b = grad summed over all rows
/// As `F.linear(input, weight, bias)`; bias may be an undefined Tensor (no bias). Float32 or
/// float64, all three of one dtype. Throws std::invalid_argument for an input of the wrong width
/// (`linear: input has 64 features but the weight expects 128 (input [2, 64], weight [512, 128])`),
/// a weight that is not 2-d, a bias that is not [O], mixed or integer dtypes, a 0-d input.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor());

// gelu: out = x * Phi(x), Phi the standard normal CDF: 0.5 * (1 + erf(x / sqrt 2));
//   grad_x = grad * (Phi(x) + x * phi(x)),  phi(x) = e^(-x^2/2) / sqrt(2 pi)
// With approximate = "tanh": out = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3);
//   grad_x = grad * (0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2))
/// As `F.gelu(input, approximate)`; float32 or float64. Throws std::invalid_argument for an
/// approximate other than "none" or "tanh".
Tensor gelu(const Tensor& input, const std::string& approximate = "none");

// dropout: out = x * mask / (1 - p), mask[i] = 1 with probability 1 - p, else 0;
//   grad_x = grad * mask / (1 - p)
/// As `F.dropout(input, p, training)`: in training, zeroes each element with probability p and
/// scales the rest by 1 / (1 - p), drawing the mask as PyTorch's CPU code does (bernoulli_(1 - p)
/// on the default generator, or on `generator`); out of training, or with p = 0, returns the
/// input itself. Float32 or float64. Throws std::invalid_argument unless 0 <= p <= 1.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true);
/// The same, drawing the mask from `generator` instead of the default generator.
Tensor dropout(const Tensor& input, double p, bool training, Generator& generator);

// layer_norm: mu, var = mean and biased variance of each row of M elements (the last dims, those of
// normalized_shape), x_hat = (x - mu) / sqrt(var + eps), out = x_hat * w + b;
//   grad_x = (g_hat - mean(g_hat) - x_hat * mean(g_hat * x_hat)) / sqrt(var + eps) per row, with
//   g_hat = grad * w,  grad_w = sum over rows of grad * x_hat,  grad_b = sum over rows of grad
/// As `F.layer_norm(input, normalized_shape, weight, bias, eps)`: each row of the last dims
/// ([..., *normalized_shape]) rescaled to mean 0 and variance 1, then times weight and plus bias,
/// both of shape normalized_shape and either may be undefined (left out). One node, whose grad_fn
/// is NativeLayerNormBackward0 as PyTorch's. Float32 or float64, all of one dtype; the statistics
/// are computed in double. Throws std::invalid_argument for an empty normalized_shape, one that
/// is not the input's last dims (`layer_norm: normalized_shape [128] does not match input [2, 3,
/// 64]: expected input of shape [*, 128]`), a weight or bias of another shape or dtype, integer
/// dtypes, or eps < 0.
Tensor layer_norm(const Tensor& input, const std::vector<int64_t>& normalized_shape,
                  const Tensor& weight = {}, const Tensor& bias = {}, double eps = 1e-5);

/// `F.softmax(x, dim)`, `F.log_softmax(x, dim)` and `F.relu(x)`: the ops of autograd/ops.hpp
/// under their F. names (the same functions, so `softmax` and `F::softmax` never clash).
using minigrad::log_softmax;
using minigrad::relu;
using minigrad::softmax;

/// As `F.embedding(input, weight, padding_idx)`: the rows of weight [V, D] picked by the int64
/// indices `input` [...] -> [..., D]. Note the order: input first, as F.embedding, where
/// minigrad::embedding(weight, indices) follows torch.embedding. The op, its derivative and its
/// errors are minigrad::embedding's (autograd/ops_index.hpp). max_norm, scale_grad_by_freq and
/// sparse are not supported.
inline Tensor embedding(const Tensor& input, const Tensor& weight,
                        std::optional<int64_t> padding_idx = std::nullopt) {
  return minigrad::embedding(weight, input, padding_idx);
}

/// As `F.one_hot(tensor, num_classes)`: minigrad::one_hot (autograd/ops_index.hpp).
inline Tensor one_hot(const Tensor& tensor, int64_t num_classes = -1) {
  return minigrad::one_hot(tensor, num_classes);
}

}  // namespace minigrad::nn::functional

namespace minigrad {
/// `torch.layer_norm`: the same function as F::layer_norm.
using nn::functional::layer_norm;
}  // namespace minigrad
