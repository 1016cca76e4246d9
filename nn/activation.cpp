// Activation layers: each forward is a single op call.
//
// The ops and their derivatives live in autograd/ops.hpp (relu, tanh, sigmoid) and
// nn/functional.hpp (gelu); a layer exists so the nonlinearity can sit in a Sequential.
#include "nn/activation.hpp"

#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"
#include "nn/functional.hpp"

namespace minigrad::nn {

Tensor ReLU::forward(const Tensor& input) { return relu(input); }
Tensor Tanh::forward(const Tensor& input) { return tanh(input); }
Tensor Sigmoid::forward(const Tensor& input) { return sigmoid(input); }

GELU::GELU(std::string approximate) : approximate(std::move(approximate)) {
  minigrad::detail::check(this->approximate == "none" || this->approximate == "tanh",
                          "GELU: approximate must be \"none\" or \"tanh\", got \"", this->approximate, "\"");
}

Tensor GELU::forward(const Tensor& input) { return functional::gelu(input, approximate); }

std::string GELU::extra_repr() const { return "approximate='" + approximate + "'"; }

}  // namespace minigrad::nn
