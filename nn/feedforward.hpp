// nn::FeedForward: the lesson's class, the position-wise feed-forward block of a GPT.
//
// It widens each token vector from n_embd to widen * n_embd numbers, clears the negatives with
// ReLU, and narrows it back to n_embd. Every row (token) goes through the same three layers on
// its own, so the same vector gives the same output at any position (up to the last bit, which
// the BLAS's tiling of rows can change, in PyTorch too): the block never mixes positions
// (attention does that, before it). At the course width, n_embd = 128, it holds
// 128*512 + 512 + 512*128 + 128 = 131,712 parameters.
#pragma once

#include <cstdint>

#include "nn/module.hpp"
#include "nn/sequential.hpp"

namespace minigrad::nn {

/// The lesson's position-wise feed-forward block: Linear(n_embd, widen * n_embd), ReLU, Linear back
/// to n_embd, held in the Sequential `net` (PyTorch: the lesson's `FeedForward(nn.Module)`).
class FeedForward : public Module {
 public:
  /// net = Sequential(Linear(n_embd, widen * n_embd), ReLU(), Linear(widen * n_embd, n_embd)),
  /// registered as "net"; the two Linear layers draw their weights in that order.
  explicit FeedForward(int64_t n_embd = 128, int64_t widen = 4);

  /// [..., n_embd] -> [..., n_embd]: net(x).
  Tensor forward(const Tensor& x) override { return net(x); }

  /// The registered child "net" itself (the reference points into the module tree), so
  /// `ff.net[0](token)` runs the widening layer alone, as the lesson's `ff.net[0](token)`.
  Sequential& net;
};

}  // namespace minigrad::nn
