// scaled_attention: why the lecture multiplies q @ k^T by head_size**-0.5.
//
// With unit-variance keys and queries, each affinity is a sum of head_size products, so its
// variance grows to about head_size (16 here); scaled by 1/sqrt(head_size) it stays near 1.
// That matters at initialisation: softmax of large numbers is nearly one-hot (the last line,
// a vector times 8), so each position would listen to a single other one.
// In the lecture this step follows the self-attention head and draws from the generator where
// that step left it; the first lines replay those draws, so the variances printed are the
// lecture's. tools/reference/lessons/scaled_attention.py is this program in PyTorch.
//
// Shape letters: B batch, T time, C channels, hs head size.
#include <cmath>
#include <cstdint>
#include <iostream>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "nn/linear.hpp"

using namespace minigrad;

int main() {
  // the draws of the self-attention head lesson, which this step continues
  manual_seed(1337);
  const int64_t B = 4, T = 8, C = 32;
  Tensor x = randn({B, T, C});
  const int64_t head_size = 16;
  nn::Linear key(C, head_size, /*bias=*/false);
  nn::Linear query(C, head_size, /*bias=*/false);
  nn::Linear value(C, head_size, /*bias=*/false);

  Tensor k = randn({B, T, head_size});
  Tensor q = randn({B, T, head_size});
  Tensor wei = q.matmul(k.transpose(-2, -1)) * std::pow(static_cast<double>(head_size), -0.5);
  std::cout << k.var() << "\n";
  std::cout << q.var() << "\n";
  std::cout << wei.var() << "\n";
  Tensor unscaled = q.matmul(k.transpose(-2, -1));
  std::cout << unscaled.var() << "\n";

  std::cout << softmax(tensor({0.1, -0.2, 0.3, -0.2, 0.5}), -1) << "\n";
  std::cout << softmax(tensor({0.1, -0.2, 0.3, -0.2, 0.5}) * 8, -1) << "\n";  // too peaky: nearly one-hot
}
