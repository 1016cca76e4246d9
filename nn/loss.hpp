// Loss functions: one number that says how wrong a prediction is, for backward() to minimise.
//
// The functions live in minigrad::nn::functional, PyTorch's `torch.nn.functional` (write
// `namespace F = minigrad::nn::functional;` and call F::cross_entropy as in Python); the modules
// nn::MSELoss, nn::CrossEntropyLoss, ... wrap them as torch.nn does: `criterion(logits, targets)`.
// Each loss ends with a reduction of the per-element losses: their mean (the default), their sum,
// or none. nll_loss, mse_loss and binary_cross_entropy_with_logits are single ops whose backward
// is written out; cross_entropy is nll_loss(log_softmax(x, 1), target), as PyTorch composes it,
// and l1_loss is built from sub, abs and mean, whose backwards already exist.
//
// Shape letters: N batch rows, C classes, d1, ... extra positions (e.g. the tokens of a sequence).
#pragma once

#include <cstdint>

#include "autograd/tensor.hpp"
#include "nn/module.hpp"

namespace minigrad::nn {

/// How per-element losses become the result (PyTorch's `reduction=` strings "none", "mean",
/// "sum"): None keeps one loss per element (or per target), Mean averages them, Sum adds them.
enum class Reduction { None, Mean, Sum };

/// Options of mse_loss and l1_loss (and of MSELoss, L1Loss):
/// `F::mse_loss(pred, y, {.reduction = Reduction::Sum})`.
struct LossOptions {
  /// Mean (default), Sum or None.
  Reduction reduction = Reduction::Mean;
};

/// Options of cross_entropy (torch.nn.functional.cross_entropy's keyword arguments).
struct CrossEntropyLossOptions {
  /// Optional class weights w, [C] of the input's dtype (PyTorch's weight): each loss is scaled by
  /// w[target], and Mean divides by the sum of w[target] over the counted targets instead of their
  /// number; with label smoothing the uniform part becomes -sum_c w_c log p_c. A constant: it may
  /// not require grad.
  Tensor weight = {};
  /// Mean (default), Sum or None.
  Reduction reduction = Reduction::Mean;
  /// Targets equal to this add no loss and no gradient, and Mean divides by the other targets only.
  int64_t ignore_index = -100;
  /// eps in [0, 1]: the target distribution becomes (1 - eps) * one_hot + eps / C everywhere.
  double label_smoothing = 0.0;
};

/// Options of nll_loss.
struct NLLLossOptions {
  /// Optional class weights [C], as in CrossEntropyLossOptions.
  Tensor weight = {};
  /// Mean (default), Sum or None.
  Reduction reduction = Reduction::Mean;
  int64_t ignore_index = -100;  ///< as in CrossEntropyLossOptions
};

/// Options of binary_cross_entropy_with_logits.
struct BCEWithLogitsLossOptions {
  /// Mean (default), Sum or None.
  Reduction reduction = Reduction::Mean;
  /// Optional weight p of the positive term (PyTorch's pos_weight), broadcast to the input's shape,
  /// typically [C] (one per label): p > 1 favours recall. A constant: it may not require grad.
  Tensor pos_weight = {};
};

namespace functional {

using nn::Reduction;  // so that F::Reduction::Sum also reads as in PyTorch's F

// mse_loss: loss = (input - target)^2;  grad_input = 2 grad (input - target),  grad_target = -grad_input
/// Mean squared error: losses (input - target)^2, then the reduction (`F.mse_loss`).
/// input and target: the same shape (any) and the same floating dtype; result: 0-d, or the
/// input's shape for Reduction::None. Differentiable in both. Throws std::invalid_argument for
/// different shapes (PyTorch broadcasts them with a warning; see loss.cpp for why we refuse) or
/// dtypes, or a non-floating input.
Tensor mse_loss(const Tensor& input, const Tensor& target, LossOptions options = {});

// l1_loss: loss = |input - target|;  grad_input = grad sign(input - target),  grad_target = -grad_input
/// Mean absolute error: losses |input - target|, then the reduction (`F.l1_loss`). Shapes, dtypes
/// and errors as mse_loss; the gradient where input == target is 0, as PyTorch's sign(0).
Tensor l1_loss(const Tensor& input, const Tensor& target, LossOptions options = {});

// cross_entropy: loss = -(1 - eps) w_t log p_t - (eps / C) sum_c w_c log p_c, p = softmax over the C scores,
//   w = 1 without class weights, composed as (1 - eps) nll_loss(log_softmax(x, 1), t) + (eps / C) smooth;
//   grad_input_c = grad * (p_c - (1 - eps) [c == t] - eps / C) without class weights (softmax minus
//   the smoothed one-hot), from the backwards of log_softmax, nll_loss, mul, sum and masked_fill
/// Cross entropy of raw scores (logits) against class indices (`F.cross_entropy`):
/// loss = -log_softmax(input)[target], weighted by options.weight and smoothed by
/// options.label_smoothing, composed of log_softmax and nll_loss as PyTorch's (so its grad_fn is
/// NllLossBackward0, or AddBackward0 with smoothing, as PyTorch's). input [N, C], [N, C, d1, ...]
/// (classes on dim 1) or [C]; target int64 of shape [N], [N, d1, ...] or [] respectively, each in
/// 0..C-1 or equal to options.ignore_index. The course's logits [B, T, C] go in as
/// `logits.view({B * T, C})` with `targets.view({B * T})`. Result 0-d, or the target's shape for
/// Reduction::None. Differentiable in input. Throws std::invalid_argument for a non-int64 target
/// (class probabilities are not supported), a non-floating input, mismatched shapes, a weight
/// that is not [C] of the input's dtype or requires grad, or label_smoothing outside [0, 1];
/// std::out_of_range for a class index out of range: `cross_entropy: target 7 is out of range for
/// 5 classes`.
Tensor cross_entropy(const Tensor& input, const Tensor& target, CrossEntropyLossOptions options = {});

// nll_loss: loss = -w_t input[t] (w = 1 without class weights);  grad_input = -grad w_t at t, 0 at the other
// classes
/// Negative log likelihood of log-probabilities (`F.nll_loss`): loss = -weight[target] *
/// input[target]; Mean divides by the sum of weight[target] over the counted targets (their
/// number without weights). cross_entropy(x, t) is nll_loss(log_softmax(x, 1), t). Shapes,
/// targets, weight, ignore_index and errors as cross_entropy. Differentiable in input.
Tensor nll_loss(const Tensor& input, const Tensor& target, NLLLossOptions options = {});

// binary_cross_entropy_with_logits: loss = max(x, 0) - x y + log(1 + e^-|x|) elementwise;
//   grad_x = grad * (sigmoid(x) - y),  grad_y = -grad * x   (a pos_weight p adds (p - 1) y softplus(-x)
//   to the loss; its derivatives are in loss.cpp)
/// Binary cross entropy of logits x against targets y in [0, 1]
/// (`F.binary_cross_entropy_with_logits`): loss = -(y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))),
/// computed without overflow as max(x, 0) - x y + log(1 + e^-|x|). input and target: the same
/// shape and floating dtype; result 0-d, or the input's shape for Reduction::None.
/// Differentiable in input and target. Throws std::invalid_argument as mse_loss, and for a
/// pos_weight that does not broadcast to the input, has another dtype, or requires grad.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        BCEWithLogitsLossOptions options = {});

}  // namespace functional

// ---- loss modules: the functions above, holding their options (torch.nn's loss classes) ---------

/// The base of the loss modules (PyTorch's _Loss): called with two tensors, `loss(input, target)`.
/// They hold no parameters and print as PyTorch prints them, `CrossEntropyLoss()`.
class Loss : public Module {
 public:
  /// The loss of input against target; each subclass calls its function of F.
  virtual Tensor forward(const Tensor& input, const Tensor& target) = 0;
  /// Calls forward: `criterion(logits, targets)` as in Python. Errors name the module as
  /// Module::operator() does: `criterion (MSELoss): mse_loss: ...`.
  Tensor operator()(const Tensor& input, const Tensor& target) {
    return call_forward([&] { return forward(input, target); });
  }
  /// Throws std::logic_error: a loss needs the target too.
  Tensor forward(const Tensor& input) override;
};

/// F::mse_loss as a module (`nn.MSELoss(reduction=...)`).
class MSELoss : public Loss {
 public:
  /// Keeps the options; never throws.
  explicit MSELoss(LossOptions options = {}) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target) override;

  /// The reduction, as given.
  LossOptions options;
};

/// F::l1_loss as a module (`nn.L1Loss`).
class L1Loss : public Loss {
 public:
  /// Keeps the options; never throws.
  explicit L1Loss(LossOptions options = {}) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target) override;

  /// The reduction, as given.
  LossOptions options;
};

/// F::cross_entropy as a module (`nn.CrossEntropyLoss(weight=..., ignore_index=..., reduction=...,
/// label_smoothing=...)`): `nn::CrossEntropyLoss criterion({.label_smoothing = 0.1});`. A class
/// weight is registered as the buffer "weight", as PyTorch does. Throws std::invalid_argument for
/// label_smoothing outside [0, 1] or a weight that requires grad.
class CrossEntropyLoss : public Loss {
 public:
  /// Checks and keeps the options.
  explicit CrossEntropyLoss(CrossEntropyLossOptions options = {});
  Tensor forward(const Tensor& input, const Tensor& target) override;

  /// weight, reduction, ignore_index and label_smoothing, as given.
  CrossEntropyLossOptions options;
};

/// F::nll_loss as a module (`nn.NLLLoss`), for a model whose last op is log_softmax. A class
/// weight is registered as the buffer "weight". Throws std::invalid_argument for a weight that
/// requires grad.
class NLLLoss : public Loss {
 public:
  /// Checks and keeps the options.
  explicit NLLLoss(NLLLossOptions options = {});
  Tensor forward(const Tensor& input, const Tensor& target) override;

  /// weight, reduction and ignore_index, as given.
  NLLLossOptions options;
};

/// F::binary_cross_entropy_with_logits as a module (`nn.BCEWithLogitsLoss`). A pos_weight is
/// registered as the buffer "pos_weight", as PyTorch does, so it is saved in state_dict().
/// Throws std::invalid_argument for a pos_weight that is not floating or requires grad.
class BCEWithLogitsLoss : public Loss {
 public:
  /// Checks the options and registers a pos_weight as a buffer.
  explicit BCEWithLogitsLoss(BCEWithLogitsLossOptions options = {});
  Tensor forward(const Tensor& input, const Tensor& target) override;

  /// reduction and pos_weight, as given.
  BCEWithLogitsLossOptions options;
};

}  // namespace minigrad::nn
