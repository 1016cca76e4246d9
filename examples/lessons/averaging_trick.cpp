// averaging_trick: the lecture's "mathematical trick in self-attention", line for line.
//
// A position may only look at the positions before it. The simplest way to let it: average
// them. A lower-triangular matrix whose rows sum to 1 does that average as one matrix product,
// and softmax over a mask of -inf builds the same matrix, which is where self-attention goes
// next (the weights stop being equal and start depending on the data). Three versions, the
// same numbers: tools/reference/lessons/averaging_trick.py is this program in PyTorch.
//
// Shape letters: B batch, T time (positions), C channels.
#include <cmath>
#include <cstdint>
#include <iostream>

#include "autograd/ops.hpp"
#include "autograd/ops_index.hpp"
#include "autograd/random.hpp"
#include "examples/lessons/python_print.hpp"
#include "nn/functional.hpp"

using namespace minigrad;
using namespace minigrad::indexing;  // Slice: x[b, :t+1] is x.index({b, Slice(None, t + 1)})
namespace F = minigrad::nn::functional;
using lesson::py;

int main() {
  // the toy example: a @ b averages the rows of b up to each row
  manual_seed(42);
  Tensor a = tril(ones({3, 3}));
  a = a / sum(a, 1, /*keepdim=*/true);
  Tensor b = randint(0, 10, {3, 2}).to(kFloat32);
  Tensor c = a.matmul(b);
  std::cout << "a=\n" << a << "\n--\n";
  std::cout << "b=\n" << b << "\n--\n";
  std::cout << "c=\n" << c << "\n";

  // a batch of B sequences of T positions with C channels each
  manual_seed(1337);
  const int64_t B = 4, T = 8, C = 2;
  Tensor x = randn({B, T, C});
  std::cout << x.shape() << "\n";

  // version 1: for every position, the mean of the positions up to it
  Tensor xbow = zeros({B, T, C});
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) {
      Tensor xprev = x.index({b, Slice(None, t + 1)});  // (t+1, C)
      xbow.index_put_({b, t}, mean(xprev, 0));          // xbow[b, t] = torch.mean(xprev, 0)
    }
  }
  std::cout << x[0] << "\n";
  std::cout << xbow[0] << "\n";

  // version 2: the same averages as one matrix product
  Tensor wei = tril(ones({T, T}));
  wei = wei / wei.sum(1, /*keepdim=*/true);
  Tensor xbow2 = wei.matmul(x);  // (T, T) @ (B, T, C) -> (B, T, C)
  std::cout << wei << "\n";
  std::cout << py(allclose(xbow, xbow2)) << "\n";

  // version 3: the weights as a softmax over a mask of -inf
  Tensor mask = tril(ones({T, T}));
  wei = zeros({T, T});
  wei = wei.masked_fill(mask == 0, -INFINITY);
  std::cout << wei << "\n";
  wei = F::softmax(wei, -1);
  Tensor xbow3 = wei.matmul(x);
  std::cout << py(allclose(xbow, xbow3)) << "\n";
  std::cout << xbow3[0] << "\n";
}
