// nn::Flatten: one call to the flatten op.
//
// The layer only remembers which dims to merge; flatten (autograd/ops.hpp) does the work and
// its backward reshapes the gradient back.
#include "nn/flatten.hpp"

#include "autograd/ops.hpp"

namespace minigrad::nn {

Tensor Flatten::forward(const Tensor& input) { return flatten(input, start_dim, end_dim); }

std::string Flatten::extra_repr() const {
  return "start_dim=" + std::to_string(start_dim) + ", end_dim=" + std::to_string(end_dim);
}

}  // namespace minigrad::nn
