// nn::Linear: two registered parameters, PyTorch's initialisation, and a call to F::linear.
//
// The layer itself holds no math: forward is F::linear (functional.cpp, where the GEMM and its
// backward live). What it adds is state: the weight and bias, registered so that
// named_parameters() finds them, and filled in PyTorch's order so that seeded runs agree.
#include "nn/linear.hpp"

#include <cmath>

#include "autograd/op_support.hpp"
#include "nn/functional.hpp"
#include "nn/init.hpp"

namespace minigrad::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool bias)
    : Linear(in_features, out_features, bias, default_generator()) {}

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, Generator& generator)
    : in_features(in_features), out_features(out_features) {
  minigrad::detail::check(in_features >= 0 && out_features >= 0,
                          "Linear: sizes must be non-negative, got in_features=", in_features,
                          ", out_features=", out_features);
  weight = register_parameter("weight", empty({out_features, in_features}));
  if (bias) this->bias = register_parameter("bias", empty({out_features}));
  reset_parameters(generator);
}

void Linear::reset_parameters() { reset_parameters(default_generator()); }

void Linear::reset_parameters(Generator& generator) {
  // As nn.Linear.reset_parameters. kaiming_uniform_ with a = sqrt(5) gives bound 1/sqrt(fan_in);
  // PyTorch keeps this form for backward compatibility, and we keep it to draw the same numbers.
  init::kaiming_uniform_(weight, std::sqrt(5.0), "fan_in", "leaky_relu", &generator);
  if (bias.defined()) {
    const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).fan_in;
    const double bound = fan_in > 0 ? 1 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound, &generator);
  }
}

Tensor Linear::forward(const Tensor& input) { return functional::linear(input, weight, bias); }

std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(in_features) + ", out_features=" + std::to_string(out_features) +
         ", bias=" + (bias.defined() ? "True" : "False");
}

}  // namespace minigrad::nn
