// Adam's and AdamW's update, line for line with PyTorch 1.13's _single_tensor_adam and
// _single_tensor_adamw (torch/optim/adam.py, adamw.py).
//
// The bias corrections and the step size are computed in double from the parameter's own step
// count, as PyTorch does in Python; the per-element formulas run in the parameter's dtype, one
// rounding per operation in PyTorch's order, so float32 parameters follow PyTorch's closely.
#include "optim/adam.hpp"

#include <algorithm>
#include <cmath>

#include "autograd/op_support.hpp"

namespace minigrad::optim {

using detail::check;

namespace {

// Adam's and AdamW's options have the same fields; one check serves both.
template <typename Options>
void check_options(const Options& o, const char* name) {
  check(o.eps >= 0, name, ": eps must be >= 0, got ", o.eps);
  check(o.betas.first >= 0 && o.betas.first < 1, name, ": beta1 must be in [0, 1), got ", o.betas.first);
  check(o.betas.second >= 0 && o.betas.second < 1, name, ": beta2 must be in [0, 1), got ", o.betas.second);
  check(o.weight_decay >= 0, name, ": weight_decay must be >= 0, got ", o.weight_decay);
}

// The per-element update in dtype T. `decoupled` selects AdamW's weight decay over Adam's L2.
template <typename T, typename Options>
void adam_elements(Tensor& param, const Tensor& grad, ParamState& state, const Options& o, double lr,
                   double step_size, double bias_correction2_sqrt, bool decoupled) {
  const T beta1 = static_cast<T>(o.betas.first), one_minus_beta1 = static_cast<T>(1 - o.betas.first);
  const T beta2 = static_cast<T>(o.betas.second), one_minus_beta2 = static_cast<T>(1 - o.betas.second);
  const T eps = static_cast<T>(o.eps), lambda = static_cast<T>(o.weight_decay);
  const T shrink = static_cast<T>(1 - lr * o.weight_decay);  // AdamW's decay factor
  const T minus_step_size = static_cast<T>(-step_size), bc2_sqrt = static_cast<T>(bias_correction2_sqrt);
  // The five buffers never overlap (the optimizer owns m, v and v_max; a parameter is never its own
  // gradient), and saying so with __restrict lets the compiler run the loop on SIMD registers.
  T* __restrict p = param.data_ptr<T>();
  const T* __restrict g = grad.data_ptr<T>();
  T* __restrict m = state.at("exp_avg").data_ptr<T>();
  T* __restrict v = state.at("exp_avg_sq").data_ptr<T>();
  T* __restrict v_max = o.amsgrad ? state.at("max_exp_avg_sq").data_ptr<T>() : nullptr;
  const bool amsgrad = o.amsgrad, l2_penalty = !decoupled && o.weight_decay != 0;

  const int64_t param_numel = param.numel();

  for (int64_t i = 0; i < param_numel; ++i) {
    T g_i = g[i];
    if (decoupled) {
      p[i] = p[i] * shrink;  // AdamW: param * (1 - lr * lambda)
    } else if (l2_penalty) {
      g_i = g_i + lambda * p[i];  // Adam: g + lambda * param  (L2 penalty)
    }
    m[i] = m[i] * beta1 + one_minus_beta1 * g_i;        // m_t = beta1 * m + (1 - beta1) * g
    v[i] = v[i] * beta2 + one_minus_beta2 * g_i * g_i;  // v_t = beta2 * v + (1 - beta2) * g^2
    T v_used = v[i];
    if (amsgrad) {
      v_max[i] = std::max(v_max[i], v[i]);  // AMSGrad: the largest v_t so far
      v_used = v_max[i];
    }
    const T denom = std::sqrt(v_used) / bc2_sqrt + eps;  // sqrt(v_t / (1 - beta2^t)) + eps
    p[i] = p[i] + minus_step_size * m[i] / denom;        // param - lr / (1 - beta1^t) * m_t / denom
  }
}

// One Adam or AdamW step of one parameter: state on first use, step count, bias corrections.
template <typename Options>
void adam_update(Tensor& param, const Tensor& grad, ParamState& state, const Options& o, double lr,
                 bool decoupled, const char* name) {
  if (state.empty()) {  // first update of this parameter: t = 0, m = v = 0
    state["step"] = zeros({});
    state["exp_avg"] = zeros_like(param);
    state["exp_avg_sq"] = zeros_like(param);
    if (o.amsgrad) state["max_exp_avg_sq"] = zeros_like(param);
  }
  Tensor& step_t = state.at("step");  // float32, as PyTorch keeps it
  step_t.data_ptr<float>()[0] += 1;
  const double t = step_t.item<double>();  // this parameter's own step count

  const auto [beta1, beta2] = o.betas;
  const double bias_correction1 = 1 - std::pow(beta1, t);  // m starts at 0: its average is shrunk by this
  const double bias_correction2 = 1 - std::pow(beta2, t);  // the same for v
  const double step_size = lr / bias_correction1;
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);

  dispatch_floating(param.dtype(), name, [&]<typename T>() {
    adam_elements<T>(param, grad, state, o, lr, step_size, bias_correction2_sqrt, decoupled);
  });
}

template <typename Options>
std::map<std::string, Tensor> adam_hyperparameters(const Options& o) {
  return {{"betas", tensor(std::vector<double>{o.betas.first, o.betas.second}, {2}, {.dtype = kFloat64})},
          {"eps", scalar_tensor(o.eps, {.dtype = kFloat64})},
          {"weight_decay", scalar_tensor(o.weight_decay, {.dtype = kFloat64})},
          {"amsgrad", scalar_tensor(o.amsgrad, {.dtype = kBool})}};
}

std::vector<std::string> adam_state_names(bool amsgrad) {
  if (amsgrad) return {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  return {"step", "exp_avg", "exp_avg_sq"};
}

}  // namespace

// ---- Adam ------------------------------------------------------------------------------------

Adam::Adam(std::vector<Tensor> params, AdamOptions options)
    : Optimizer(std::move(params), options.lr, "Adam"), options_(options) {
  check_options(options_, "Adam");
}

void Adam::update(Tensor& param, const Tensor& grad, ParamState& state) {
  adam_update(param, grad, state, options_, lr(), /*decoupled=*/false, "Adam");
}

std::map<std::string, Tensor> Adam::hyperparameters() const { return adam_hyperparameters(options_); }
std::vector<std::string> Adam::state_names() const { return adam_state_names(options_.amsgrad); }

// ---- AdamW -----------------------------------------------------------------------------------

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions options)
    : Optimizer(std::move(params), options.lr, "AdamW"), options_(options) {
  check_options(options_, "AdamW");
}

void AdamW::update(Tensor& param, const Tensor& grad, ParamState& state) {
  adam_update(param, grad, state, options_, lr(), /*decoupled=*/true, "AdamW");
}

std::map<std::string, Tensor> AdamW::hyperparameters() const { return adam_hyperparameters(options_); }
std::vector<std::string> AdamW::state_names() const { return adam_state_names(options_.amsgrad); }

}  // namespace minigrad::optim
