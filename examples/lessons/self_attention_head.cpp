// self_attention_head: the lecture's "version 4", a single head of self-attention.
//
// Every position emits a query (what am I looking for?) and a key (what do I contain?); their
// dot products are the affinities wei, the future is masked out, softmax turns each row into
// weights, and the output is the weighted sum of the values. The weights now depend on the
// data: the first sequence's rows below are no longer plain averages.
// tools/reference/lessons/self_attention_head.py is this program in PyTorch.
//
// Shape letters: B batch, T time, C channels, hs head size.
#include <cmath>
#include <cstdint>
#include <iostream>

#include "autograd/ops.hpp"
#include "autograd/ops_index.hpp"
#include "autograd/random.hpp"
#include "examples/lessons/python_print.hpp"
#include "nn/functional.hpp"
#include "nn/linear.hpp"

using namespace minigrad;
namespace F = minigrad::nn::functional;

int main() {
  manual_seed(1337);
  const int64_t B = 4, T = 8, C = 32;  // batch, time, channels
  Tensor x = randn({B, T, C});

  // let's see a single Head perform self-attention
  const int64_t head_size = 16;
  nn::Linear key(C, head_size, /*bias=*/false);
  nn::Linear query(C, head_size, /*bias=*/false);
  nn::Linear value(C, head_size, /*bias=*/false);
  Tensor k = key(x);                           // (B, T, hs)
  Tensor q = query(x);                         // (B, T, hs)
  Tensor wei = q.matmul(k.transpose(-2, -1));  // (B, T, hs) @ (B, hs, T) -> (B, T, T)

  Tensor tril = minigrad::tril(ones({T, T}));
  wei = wei.masked_fill(tril == 0, -INFINITY);  // the [T, T] mask over every sequence
  wei = F::softmax(wei, -1);

  Tensor v = value(x);
  Tensor out = wei.matmul(v);  // (B, T, T) @ (B, T, hs) -> (B, T, hs)
  std::cout << out.shape() << "\n";
  std::cout << wei[0] << "\n";
}
