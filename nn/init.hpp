// nn::init: how layers fill their weights before training, as torch.nn.init.
//
// Every function here has the formula of its PyTorch namesake and draws from the generator in
// the same order, so after manual_seed(0) a minigrad Linear holds the very numbers a PyTorch
// nn.Linear holds. The scaled schemes pick the spread from the tensor's fans (how many inputs
// feed each output, and the reverse) so that signals neither blow up nor die out layer by layer.
// Each function writes in place under a NoGradGuard and returns the tensor (a handle to it).
#pragma once

#include <optional>
#include <string>

#include "autograd/random.hpp"
#include "autograd/tensor.hpp"

namespace minigrad::nn::init {

/// The gain a nonlinearity calls for (`init.calculate_gain`): 1 for "linear", "conv1d",
/// "conv2d", "conv3d", "conv_transpose1d/2d/3d" and "sigmoid"; 5/3 for "tanh"; sqrt(2) for
/// "relu"; sqrt(2 / (1 + slope^2)) for "leaky_relu" (slope = param, default 0.01); 3/4 for
/// "selu". Throws std::invalid_argument for any other name.
double calculate_gain(const std::string& nonlinearity, std::optional<double> param = std::nullopt);

/// The fans of a weight (`init._calculate_fan_in_and_fan_out`): for shape [O, I, k...],
/// fan_in = I * prod(k), fan_out = O * prod(k); for a Linear weight [O, I], (I, O).
/// Throws std::invalid_argument for a tensor with fewer than 2 dimensions.
struct Fans {
  /// Inputs feeding each output: I * prod(k).
  int64_t fan_in;
  /// Outputs each input feeds: O * prod(k).
  int64_t fan_out;
};
/// The fans of `tensor`, as described for Fans above.
Fans calculate_fan_in_and_fan_out(const Tensor& tensor);

/// Each element from U(a, b) (`init.uniform_`).
Tensor uniform_(Tensor tensor, double a = 0.0, double b = 1.0, Generator* generator = nullptr);
/// Each element from N(mean, std^2) (`init.normal_`).
Tensor normal_(Tensor tensor, double mean = 0.0, double std = 1.0, Generator* generator = nullptr);
/// Every element = value (`init.constant_`); zeros_ and ones_ for 0 and 1.
Tensor constant_(Tensor tensor, double value);
/// Every element = 0 (`init.zeros_`).
Tensor zeros_(Tensor tensor);
/// Every element = 1 (`init.ones_`).
Tensor ones_(Tensor tensor);

/// U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)) (`init.xavier_uniform_`, Glorot 2010).
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0, Generator* generator = nullptr);
/// N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)) (`init.xavier_normal_`).
Tensor xavier_normal_(Tensor tensor, double gain = 1.0, Generator* generator = nullptr);

/// U(-bound, bound), bound = gain * sqrt(3 / fan), gain = calculate_gain(nonlinearity, a) and
/// fan = fan_in or fan_out as `mode` says (`init.kaiming_uniform_`, He 2015). nn::Linear uses
/// a = sqrt(5), which gives bound = 1 / sqrt(fan_in). A tensor with no elements is left as is
/// (PyTorch warns and does the same). Throws std::invalid_argument for a mode other than
/// "fan_in" or "fan_out", and as calculate_gain and calculate_fan_in_and_fan_out do.
Tensor kaiming_uniform_(Tensor tensor, double a = 0.0, const std::string& mode = "fan_in",
                        const std::string& nonlinearity = "leaky_relu", Generator* generator = nullptr);
/// N(0, std^2), std = gain / sqrt(fan) (`init.kaiming_normal_`); arguments as kaiming_uniform_.
Tensor kaiming_normal_(Tensor tensor, double a = 0.0, const std::string& mode = "fan_in",
                       const std::string& nonlinearity = "leaky_relu", Generator* generator = nullptr);

}  // namespace minigrad::nn::init
