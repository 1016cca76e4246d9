// nn::Dropout: the probability, checked once, and F::dropout with the module's training flag.
//
// The one place where train() and eval() change what a forward computes: in training the mask
// is drawn from the module's generator (the default one unless given), in eval the input passes
// through untouched.
#include "nn/dropout.hpp"

#include "autograd/op_support.hpp"
#include "nn/functional.hpp"

namespace minigrad::nn {

Dropout::Dropout(double p) : Dropout(p, default_generator()) {}

Dropout::Dropout(double p, Generator& generator) : p(p), generator_(&generator) {
  minigrad::detail::check(p >= 0 && p <= 1, "Dropout: probability has to be between 0 and 1, but got ", p);
}

Tensor Dropout::forward(const Tensor& input) {
  return functional::dropout(input, p, is_training(), *generator_);
}

std::string Dropout::extra_repr() const { return "p=" + detail::python_repr(p) + ", inplace=False"; }

}  // namespace minigrad::nn
