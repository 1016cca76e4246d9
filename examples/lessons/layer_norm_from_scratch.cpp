// layer_norm_from_scratch: the lecture's LayerNorm1d, written out.
//
// The makemore BatchNorm1d normalised each column (one feature across the batch); LayerNorm
// takes the mean and variance over each row instead (the features of one example), so every
// row comes out with mean 0 and standard deviation 1 while the columns do not, and nothing
// depends on the other examples of the batch. gamma and beta (ones and zeros) let training undo
// the normalisation where it helps; nn::LayerNorm is the library's version of this class.
// tools/reference/lessons/layer_norm_from_scratch.py is this program in PyTorch.
//
// Shape letters: N rows (examples), D features.
#include <cstdint>
#include <iostream>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/ops_index.hpp"
#include "autograd/random.hpp"
#include "examples/lessons/python_print.hpp"

using namespace minigrad;
using namespace minigrad::indexing;  // Slice: x[:, 0] is x.index({Slice(), 0})
using lesson::py;

class LayerNorm1d {  // (used to be BatchNorm1d)
 public:
  explicit LayerNorm1d(int64_t dim, double eps = 1e-5) : eps(eps), gamma(ones({dim})), beta(zeros({dim})) {}

  Tensor operator()(const Tensor& x) {
    // calculate the forward pass
    Tensor xmean = x.mean(1, /*keepdim=*/true);                   // the mean of each row (N, 1)
    Tensor xvar = x.var(1, /*unbiased=*/true, /*keepdim=*/true);  // the variance of each row (N, 1)
    Tensor xhat = (x - xmean) / sqrt(xvar + eps);                 // normalize to unit variance
    out = gamma * xhat + beta;
    return out;
  }

  std::vector<Tensor> parameters() const { return {gamma, beta}; }

  double eps;
  Tensor gamma;  // (D,)
  Tensor beta;   // (D,)
  Tensor out;
};

int main() {
  manual_seed(1337);
  LayerNorm1d module(100);
  Tensor x = randn({32, 100});  // batch size 32 of 100-dimensional vectors
  x = module(x);
  std::cout << x.shape() << "\n";
  Tensor column = x.index({Slice(), 0});  // one feature across all batch inputs
  std::cout << py(column.mean(), column.std()) << "\n";
  Tensor row = x.index({0, Slice()});  // a single input from the batch, its features
  std::cout << py(row.mean(), row.std()) << "\n";
}
