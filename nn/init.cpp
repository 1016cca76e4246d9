// nn::init: torch.nn.init's formulas, step for step.
//
// The bounds are computed with the same double-precision operations in the same order as
// torch/nn/init.py, so they agree to the last bit, and the draws go through Tensor::uniform_ and
// Tensor::normal_, which reproduce PyTorch's CPU generator. Both matter: a bound one ulp off
// would already change some float32 weights.
#include "nn/init.hpp"

#include <cmath>

#include "autograd/op_support.hpp"

namespace minigrad::nn::init {

using minigrad::detail::check;

namespace {

Generator& pick(Generator* generator) { return generator ? *generator : default_generator(); }

// fan_in or fan_out, as `mode` says (init._calculate_correct_fan).
int64_t correct_fan(const Tensor& tensor, const std::string& mode) {
  check(mode == "fan_in" || mode == "fan_out", "init: mode ", mode,
        " not supported, please use one of fan_in, fan_out");
  const Fans fans = calculate_fan_in_and_fan_out(tensor);
  return mode == "fan_in" ? fans.fan_in : fans.fan_out;
}

bool has_no_elements(const Tensor& tensor) {
  minigrad::detail::check_defined(tensor, "init");
  return tensor.numel() == 0;  // "Initializing zero-element tensors is a no-op"
}

}  // namespace

double calculate_gain(const std::string& nonlinearity, std::optional<double> param) {
  const bool linear = nonlinearity == "linear" || nonlinearity == "conv1d" || nonlinearity == "conv2d" ||
                      nonlinearity == "conv3d" || nonlinearity == "conv_transpose1d" ||
                      nonlinearity == "conv_transpose2d" || nonlinearity == "conv_transpose3d";
  if (linear || nonlinearity == "sigmoid") return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    const double negative_slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1 + negative_slope * negative_slope));
  }
  if (nonlinearity == "selu") return 3.0 / 4;
  throw std::invalid_argument("calculate_gain: unsupported nonlinearity " + nonlinearity);
}

Fans calculate_fan_in_and_fan_out(const Tensor& tensor) {
  minigrad::detail::check_defined(tensor, "calculate_fan_in_and_fan_out");
  check(tensor.dim() >= 2,
        "calculate_fan_in_and_fan_out: fan in and fan out can not be computed for a tensor with "
        "fewer than 2 dimensions (shape ",
        tensor.shape(), ")");
  int64_t receptive_field_size = 1;  // the kernel's size, for convolution weights [O, I, k...]
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive_field_size *= tensor.size(d);
  return {tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size};
}

Tensor uniform_(Tensor tensor, double a, double b, Generator* generator) {
  NoGradGuard no_grad;
  tensor.uniform_(a, b, pick(generator));
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std, Generator* generator) {
  NoGradGuard no_grad;
  tensor.normal_(mean, std, pick(generator));
  return tensor;
}

Tensor constant_(Tensor tensor, double value) {
  NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}

Tensor zeros_(Tensor tensor) { return constant_(tensor, 0.0); }
Tensor ones_(Tensor tensor) { return constant_(tensor, 1.0); }

Tensor xavier_uniform_(Tensor tensor, double gain, Generator* generator) {
  const Fans fans = calculate_fan_in_and_fan_out(tensor);
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fans.fan_in + fans.fan_out));
  const double a = std::sqrt(3.0) * std;  // U(-a, a) has standard deviation a / sqrt(3)
  return uniform_(tensor, -a, a, generator);
}

Tensor xavier_normal_(Tensor tensor, double gain, Generator* generator) {
  const Fans fans = calculate_fan_in_and_fan_out(tensor);
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fans.fan_in + fans.fan_out));
  return normal_(tensor, 0.0, std, generator);
}

Tensor kaiming_uniform_(Tensor tensor, double a, const std::string& mode, const std::string& nonlinearity,
                        Generator* generator) {
  if (has_no_elements(tensor)) return tensor;
  const int64_t fan = correct_fan(tensor, mode);
  const double gain = calculate_gain(nonlinearity, a);
  const double std = gain / std::sqrt(static_cast<double>(fan));
  const double bound = std::sqrt(3.0) * std;  // U(-bound, bound) has standard deviation bound / sqrt(3)
  return uniform_(tensor, -bound, bound, generator);
}

Tensor kaiming_normal_(Tensor tensor, double a, const std::string& mode, const std::string& nonlinearity,
                       Generator* generator) {
  if (has_no_elements(tensor)) return tensor;
  const int64_t fan = correct_fan(tensor, mode);
  const double gain = calculate_gain(nonlinearity, a);
  const double std = gain / std::sqrt(static_cast<double>(fan));
  return normal_(tensor, 0.0, std, generator);
}

}  // namespace minigrad::nn::init
