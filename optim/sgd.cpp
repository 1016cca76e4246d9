// SGD's update, line for line with PyTorch 1.13's _single_tensor_sgd (torch/optim/sgd.py).
//
// Every constant is converted to the parameter's dtype and each formula is one rounding step per
// operation, in PyTorch's order, so float32 parameters follow PyTorch's to the last bit or two.
#include "optim/sgd.hpp"

#include "autograd/op_support.hpp"

namespace minigrad::optim {

using detail::check;

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : Optimizer(std::move(params), options.lr, "SGD"), options_(options) {
  check(options.momentum >= 0, "SGD: momentum must be >= 0, got ", options.momentum);
  check(options.weight_decay >= 0, "SGD: weight_decay must be >= 0, got ", options.weight_decay);
  check(!options.nesterov || (options.momentum > 0 && options.dampening == 0),
        "SGD: nesterov momentum requires momentum > 0 and dampening 0, got momentum ", options.momentum,
        " and dampening ", options.dampening);
}

void SGD::update(Tensor& param, const Tensor& grad, ParamState& state) {
  const SGDOptions& o = options_;
  const bool has_momentum = o.momentum != 0;
  const bool first_step = state.empty();
  if (has_momentum && first_step) state["momentum_buffer"] = zeros_like(param);

  dispatch_floating(param.dtype(), "SGD", [&]<typename T>() {
    const T lambda = static_cast<T>(o.weight_decay);          // weight decay
    const T mu = static_cast<T>(o.momentum);                  // momentum
    const T one_minus_tau = static_cast<T>(1 - o.dampening);  // share of the new gradient
    const T minus_lr = static_cast<T>(-lr());
    T* p = param.data_ptr<T>();
    const T* g = grad.data_ptr<T>();
    T* b = has_momentum ? state.at("momentum_buffer").data_ptr<T>() : nullptr;

    const int64_t param_numel = param.numel();

    for (int64_t i = 0; i < param_numel; ++i) {
      T d_p = g[i];                                        // the direction to step against
      if (o.weight_decay != 0) d_p = d_p + lambda * p[i];  // g + lambda * param  (L2 penalty)
      if (has_momentum) {
        if (first_step) {
          b[i] = d_p;  // b_1 = g  (no dampening yet)
        } else {
          b[i] = b[i] * mu + one_minus_tau * d_p;  // b_t = mu * b_{t-1} + (1 - tau) * g
        }
        d_p = o.nesterov ? d_p + mu * b[i] : b[i];  // Nesterov looks one velocity ahead
      }
      p[i] = p[i] + minus_lr * d_p;  // param = param - lr * d_p
    }
  });
}

std::map<std::string, Tensor> SGD::hyperparameters() const {
  return {{"momentum", scalar_tensor(options_.momentum, {.dtype = kFloat64})},
          {"dampening", scalar_tensor(options_.dampening, {.dtype = kFloat64})},
          {"weight_decay", scalar_tensor(options_.weight_decay, {.dtype = kFloat64})},
          {"nesterov", scalar_tensor(options_.nesterov, {.dtype = kBool})}};
}

std::vector<std::string> SGD::state_names() const {
  if (options_.momentum == 0) return {};  // plain SGD keeps no state
  return {"momentum_buffer"};
}

}  // namespace minigrad::optim
