// The losses: l1 and cross_entropy as compositions of existing ops; mse, nll_loss and
// binary_cross_entropy_with_logits as single ops with their backward written out.
//
// A class-index loss sees its input [N, C, d1, ...] as "lanes": each position (n, d1, ...) holds C
// scores and one target, and gives one loss. The written-out losses compute their per-lane (or
// per-element) values in double, then `finish` applies the reduction; in backward, `upstream`
// gives each lane its share of the incoming gradient (all of it for Sum, 1/divisor of it for Mean,
// the divisor being the count of the losses, or their total class weight).
#include "nn/loss.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"

namespace minigrad::nn::functional {

using minigrad::detail::check;

namespace {

// ---- shared by all losses ----------------------------------------------------------------------

/// mse_loss, l1_loss and binary_cross_entropy_with_logits compare input and target element by
/// element, so they require the same shape. PyTorch broadcasts different shapes with a warning,
/// but that is the classic learner bug: predictions [N, 1] against targets [N] broadcast to
/// [N, N] and compare every prediction with every target, and the loss still decreases.
/// The same dtype too: PyTorch's mse_loss accepts an int64 target, then fails in backward().
void check_same_shape_and_dtype(const Tensor& input, const Tensor& target, const char* op) {
  minigrad::detail::check_defined(input, op);
  minigrad::detail::check_defined(target, op);
  check(input.is_floating_point(), op, ": input must be float32 or float64, got ", dtype_name(input.dtype()));
  check(input.shape() == target.shape(), op, ": input ", input.shape(), " and target ", target.shape(),
        " have different shapes (reshape one of them; broadcasting, as PyTorch does with a warning, would "
        "compare every input with every target)");
  check(input.dtype() == target.dtype(), op, ": input is ", dtype_name(input.dtype()), " but target is ",
        dtype_name(target.dtype()), " (convert the target with .to(", dtype_name(input.dtype()), "))");
}

/// The reduction, for losses built from recorded ops (mse, l1).
Tensor reduce(const Tensor& losses, Reduction reduction) {
  if (reduction == Reduction::Mean) return mean(losses);
  if (reduction == Reduction::Sum) return sum(losses);
  return losses;
}

/// The result of a written-out loss, from its per-element losses: a tensor of `shape` for None,
/// else their sum, divided by `divisor` for Mean (0 / 0 = nan when every target is ignored, as
/// PyTorch).
Tensor finish(const std::vector<double>& losses, const Shape& shape, Dtype dtype, Reduction reduction,
              double divisor) {
  if (reduction == Reduction::None) return tensor(losses, shape, {.dtype = dtype});
  double total = 0.0;
  for (double loss : losses) total += loss;
  if (reduction == Reduction::Mean) total /= divisor;
  // As a computed result, not a number the user gave: beyond float32's range it is inf, as PyTorch's
  // (scalar_tensor would refuse it, as torch.scalar_tensor does).
  return tensor(std::vector<double>{total}, {}, {.dtype = dtype});
}

/// The gradient reaching each of the n per-element losses: the incoming gradient itself for
/// None; for Sum the single incoming number; for Mean that number divided by `divisor`.
std::vector<double> upstream(const Tensor& grad, Reduction reduction, int64_t n, double divisor) {
  std::vector<double> g = grad.to_vector<double>();
  if (reduction == Reduction::None) return g;
  const double share = reduction == Reduction::Mean ? g[0] / divisor : g[0];
  return std::vector<double>(static_cast<size_t>(n), share);
}

// ---- class-index losses: cross_entropy and nll_loss ----------------------------------------

/// Where the scores of each lane sit in an input [N, C, d1, ...] (or [C]): lane (n, j), with j the
/// flat index over d1, ..., has its class c at offset (n * C + c) * inner + j.
struct ClassLayout {
  int64_t classes = 0;         ///< C
  int64_t inner = 1;           ///< d1 * d2 * ...: the distance between two classes of a lane (1 for [N, C])
  int64_t lanes = 0;           ///< N * d1 * ...: one target and one loss each
  double total_weight = 0;     ///< sum of weight[target] over the counted lanes: the divisor of Mean
  std::vector<double> weight;  ///< the class weights, all 1 without a weight tensor
  Shape loss_shape;            ///< the target's shape: the result's shape for Reduction::None

  int64_t at(int64_t lane, int64_t c) const { return (lane / inner * classes + c) * inner + lane % inner; }
};

/// Checks input, target and class weights of a class-index loss and describes its lanes.
ClassLayout check_class_target(const Tensor& input, const Tensor& target, const Tensor& weight,
                               int64_t ignore_index, const char* op) {
  minigrad::detail::check_defined(input, op);
  minigrad::detail::check_defined(target, op);
  check(input.is_floating_point(), op, ": input must be float32 or float64 scores, got ",
        dtype_name(input.dtype()));
  check(target.dtype() == kInt64, op, ": target must hold int64 class indices, got ",
        dtype_name(target.dtype()), " (class probabilities as targets are not supported)");
  check(input.dim() >= 1, op,
        ": input of shape [] has no class dim (expected [C], [N, C] or [N, C, d1, ...])");

  Shape expected = input.shape();  // the input without its class dim: dim 1, or dim 0 of a [C] input
  expected.erase(expected.begin() + (input.dim() == 1 ? 0 : 1));
  check(target.shape() == expected, op, ": input ", input.shape(), " needs a target of shape ", expected,
        " (one class index per position), got ", target.shape());

  ClassLayout layout;
  layout.classes = input.dim() == 1 ? input.size(0) : input.size(1);
  layout.lanes = target.numel();
  for (int64_t d = 2; d < input.dim(); ++d) layout.inner *= input.size(d);
  layout.loss_shape = expected;
  layout.weight.assign(static_cast<size_t>(layout.classes), 1.0);
  if (weight.defined()) {
    check(weight.shape() == Shape{layout.classes}, op, ": weight must hold one number per class, shape [",
          layout.classes, "], got ", weight.shape());
    check(weight.dtype() == input.dtype(), op, ": weight is ", dtype_name(weight.dtype()), " but input is ",
          dtype_name(input.dtype()));
    check(!weight.requires_grad(), op, ": weight cannot require grad (it is a constant, as in PyTorch)");
    layout.weight = weight.to_vector<double>();
  }
  const int64_t* t = target.data_ptr<int64_t>();
  for (int64_t lane = 0; lane < layout.lanes; ++lane) {
    if (t[lane] == ignore_index) continue;
    check<std::out_of_range>(t[lane] >= 0 && t[lane] < layout.classes, op, ": target ", t[lane],
                             " is out of range for ", layout.classes, " classes (expected 0..",
                             layout.classes - 1, " or ignore_index ", ignore_index, ")");
    layout.total_weight += layout.weight[t[lane]];
  }
  return layout;
}

// ---- binary cross entropy, one element ------------------------------------------------------

/// sigmoid(x) = 1 / (1 + e^-x), evaluated so that e^ never overflows.
double sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x)); }

/// softplus(z) = log(1 + e^z) = max(z, 0) + log(1 + e^-|z|), which never overflows.
double softplus(double z) { return std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z))); }

/// -(p y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))), with pos_weight p, in PyTorch's form
/// (1 - y) x + (1 + (p - 1) y) softplus(-x): it gives PyTorch's answers at infinite logits too
/// (inf for x = inf, y = 0; nan for x = -inf, y = 1). log1p inside softplus keeps tiny losses
/// exact where PyTorch's log(1 + e^-|x|) rounds them to 0. Without a pos_weight the (p - 1) y term
/// is left out, as PyTorch leaves it out: an infinite target then gives -inf or inf, where
/// (1 - 1) * inf would make it nan.
double bce_loss(double x, double y, double p, bool weighted) {
  const double log_weight = weighted ? 1.0 + (p - 1.0) * y : 1.0;
  return (1.0 - y) * x + log_weight * softplus(-x);
}

/// d bce_loss / dx = sigmoid(x) - y, plus (p - 1) y (sigmoid(x) - 1) with pos_weight p.
double bce_grad_input(double x, double y, double p, bool weighted) {
  const double grad = sigmoid(x) - y;
  return weighted ? grad + (p - 1.0) * y * (sigmoid(x) - 1.0) : grad;
}

/// d bce_loss / dy = -x, plus (p - 1) softplus(-x) with pos_weight p.
double bce_grad_target(double x, double p) {
  double grad = -x;
  if (p != 1.0) grad += (p - 1.0) * softplus(-x);
  return grad;
}

/// True if `from` broadcasts to `to` without changing it: aligned at the right, each size of
/// `from` is 1 or equal to the size of `to`.
bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const size_t offset = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1 && from[d] != to[offset + d]) return false;
  return true;
}

/// pos_weight, checked against the input (a 0-d 1 when there is none).
Tensor check_pos_weight(const Tensor& pos_weight, const Tensor& input, const char* op) {
  if (!pos_weight.defined()) return ones({}, {.dtype = input.dtype()});
  check(pos_weight.dtype() == input.dtype(), op, ": pos_weight is ", dtype_name(pos_weight.dtype()),
        " but input is ", dtype_name(input.dtype()));
  check(!pos_weight.requires_grad(), op,
        ": pos_weight cannot require grad (it is a constant, as in PyTorch)");
  check(broadcasts_to(pos_weight.shape(), input.shape()), op, ": pos_weight ", pos_weight.shape(),
        " does not broadcast to the input's shape ", input.shape(), " (typically it is [C], one per label)");
  return pos_weight.clone();  // the backward's own copy: changing pos_weight later must not change it
}

}  // namespace

// ---- regression losses ---------------------------------------------------------------------------

// One node, MseLossBackward0, as PyTorch's: grad_input = norm * (input - target) * grad with
// norm = 2 / N for Mean and 2 otherwise (PyTorch's mse_loss_backward, in that order of
// operations); grad_target = -grad_input.
Tensor mse_loss(const Tensor& input, const Tensor& target, LossOptions options) {
  check_same_shape_and_dtype(input, target, "mse_loss");
  Tensor diff, out;
  {
    NoGradGuard no_grad;  // the pieces below are not recorded: the node's backward is written out
    diff = sub(input, target);
    out = reduce(mul(diff, diff), options.reduction);  // a square as one multiplication, not std::pow
  }
  const double norm = options.reduction == Reduction::Mean ? 2.0 / static_cast<double>(input.numel()) : 2.0;
  return minigrad::detail::record(
      out, "MseLossBackward0", {input, target},
      [diff = minigrad::detail::saved(diff), norm](const Tensor& grad, const std::vector<Tensor>& inputs) {
        const Tensor grad_input = mul(mul(diff, norm), grad);
        return std::vector<Tensor>{inputs[0].requires_grad() ? grad_input : Tensor(),
                                   inputs[1].requires_grad() ? neg(grad_input) : Tensor()};
      });
}

Tensor l1_loss(const Tensor& input, const Tensor& target, LossOptions options) {
  check_same_shape_and_dtype(input, target, "l1_loss");
  return reduce(abs(sub(input, target)), options.reduction);
}

// ---- cross_entropy ---------------------------------------------------------------------------------

// cross_entropy is nll_loss(log_softmax(x, 1), t) plus, with smoothing, the uniform part, composed
// as PyTorch composes it (cross_entropy_loss_label_smoothing in aten/src/ATen/native/LossNLL.cpp):
// its numbers round as PyTorch's and its grad_fn is PyTorch's. No measured reason calls for a fused
// kernel: the one this replaced (one node, statistics in double) was slower in a Release build,
// forward and backward of a float32 [16384, 65] batch 65.6 ms fused against 33.5 ms composed (69.0
// and 48.1 ms with smoothing), [4096, 1000] 273 against 198 ms. It called std::exp in double two or
// three times per score; log_softmax calls it once, eight scores at a time.
Tensor cross_entropy(const Tensor& input, const Tensor& target, CrossEntropyLossOptions options) {
  const char* op = "cross_entropy";
  const ClassLayout layout = check_class_target(input, target, options.weight, options.ignore_index, op);
  const double eps = options.label_smoothing;
  check(eps >= 0.0 && eps <= 1.0, op, ": label_smoothing must be in [0, 1], got ", eps);

  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const Tensor log_p = log_softmax(input, class_dim);
  const Tensor nll = nll_loss(
      log_p, target,
      {.weight = options.weight, .reduction = options.reduction, .ignore_index = options.ignore_index});
  if (eps == 0.0) return nll;  // also keeps 0 * log p = nan out where a score is -inf

  // The uniform part: smooth = -sum_c w_c log p_c per position, 0 where the target is ignored,
  // reduced as the nll part (Mean divides by the same total weight).
  Tensor weighted = log_p;
  if (options.weight.defined()) {
    Shape weight_shape(static_cast<size_t>(input.dim()), 1);  // [1, C, 1, ...]: broadcast over the positions
    weight_shape[class_dim] = layout.classes;
    weighted = log_p * options.weight.view(weight_shape);
  }
  Tensor smooth = masked_fill(-sum(weighted, class_dim), target == options.ignore_index, 0.0);
  if (options.reduction == Reduction::Mean) smooth = sum(smooth) / layout.total_weight;
  if (options.reduction == Reduction::Sum) smooth = sum(smooth);
  return nll * (1.0 - eps) + smooth * (eps / static_cast<double>(layout.classes));
}

// ---- nll_loss ----------------------------------------------------------------------------------------

Tensor nll_loss(const Tensor& input, const Tensor& target, NLLLossOptions options) {
  const char* op = "nll_loss";
  const ClassLayout layout = check_class_target(input, target, options.weight, options.ignore_index, op);
  const int64_t ignore = options.ignore_index;

  std::vector<double> losses(static_cast<size_t>(layout.lanes), 0.0);  // ignored lanes add 0
  const int64_t* t = target.data_ptr<int64_t>();
  dispatch_floating(input.dtype(), op, [&]<typename T>() {
    const T* x = input.data_ptr<T>();
    for (int64_t lane = 0; lane < layout.lanes; ++lane)
      if (t[lane] != ignore)
        losses[lane] = -layout.weight[t[lane]] * static_cast<double>(x[layout.at(lane, t[lane])]);
  });
  Tensor out = finish(losses, layout.loss_shape, input.dtype(), options.reduction, layout.total_weight);

  // grad_x = -g w_t at each lane's target, 0 elsewhere.
  const Reduction reduction = options.reduction;
  return minigrad::detail::record(
      out, "NllLossBackward0", {input, target}, [=](const Tensor& grad, const std::vector<Tensor>& inputs) {
        const std::vector<double> g = upstream(grad, reduction, layout.lanes, layout.total_weight);
        Tensor grad_input = zeros(inputs[0].shape(), {.dtype = inputs[0].dtype()});
        const int64_t* t = inputs[1].data_ptr<int64_t>();
        dispatch_floating(grad_input.dtype(), "nll_loss backward", [&]<typename T>() {
          T* grad_x = grad_input.data_ptr<T>();
          for (int64_t lane = 0; lane < layout.lanes; ++lane)
            if (t[lane] != ignore)
              grad_x[layout.at(lane, t[lane])] = static_cast<T>(-g[lane] * layout.weight[t[lane]]);
        });
        return std::vector<Tensor>{grad_input, Tensor()};
      });
}

// ---- binary_cross_entropy_with_logits --------------------------------------------------------

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        BCEWithLogitsLossOptions options) {
  const char* op = "binary_cross_entropy_with_logits";
  check_same_shape_and_dtype(input, target, op);
  const Tensor weight = check_pos_weight(options.pos_weight, input, op);
  const bool weighted = options.pos_weight.defined();
  const Shape& shape = input.shape();

  std::vector<double> losses(static_cast<size_t>(input.numel()));
  dispatch_floating(input.dtype(), op, [&]<typename T>() {
    const T *x = input.data_ptr<T>(), *y = target.data_ptr<T>(), *p = weight.data_ptr<T>();
    minigrad::detail::for_each_broadcast(shape, shape, weight.shape(), [&](int64_t i, int64_t, int64_t k) {
      losses[i] = bce_loss(x[i], y[i], p[k], weighted);
    });
  });
  Tensor out = finish(losses, shape, input.dtype(), options.reduction, static_cast<double>(input.numel()));

  // grad_x = g * (sigmoid(x) - y),  grad_y = g * -x  (plus the pos_weight terms of bce_grad_*)
  const Reduction reduction = options.reduction;
  return minigrad::detail::record(
      out, "BinaryCrossEntropyWithLogitsBackward0", {input, target},
      [weight, weighted, reduction](const Tensor& grad, const std::vector<Tensor>& inputs) {
        const Tensor &input = inputs[0], &target = inputs[1];
        const std::vector<double> g =
            upstream(grad, reduction, input.numel(), static_cast<double>(input.numel()));
        Tensor grad_input = empty_like(input), grad_target = empty_like(target);
        dispatch_floating(input.dtype(), "binary_cross_entropy_with_logits backward", [&]<typename T>() {
          const T *x = input.data_ptr<T>(), *y = target.data_ptr<T>(), *p = weight.data_ptr<T>();
          T *grad_x = grad_input.data_ptr<T>(), *grad_y = grad_target.data_ptr<T>();
          minigrad::detail::for_each_broadcast(
              input.shape(), input.shape(), weight.shape(), [&](int64_t i, int64_t, int64_t k) {
                grad_x[i] = static_cast<T>(g[i] * bce_grad_input(x[i], y[i], p[k], weighted));
                grad_y[i] = static_cast<T>(g[i] * bce_grad_target(x[i], p[k]));
              });
        });
        return std::vector<Tensor>{grad_input, grad_target};
      });
}

}  // namespace minigrad::nn::functional

// ---- loss modules ------------------------------------------------------------------------------

namespace minigrad::nn {

// Called through Module::operator(), which puts the module in front: "(MSELoss): a loss ...".
Tensor Loss::forward(const Tensor&) {
  throw std::logic_error("a loss compares two tensors; call it as loss(input, target)");
}

Tensor MSELoss::forward(const Tensor& input, const Tensor& target) {
  return functional::mse_loss(input, target, options);
}

Tensor L1Loss::forward(const Tensor& input, const Tensor& target) {
  return functional::l1_loss(input, target, options);
}

CrossEntropyLoss::CrossEntropyLoss(CrossEntropyLossOptions options) : options(options) {
  minigrad::detail::check(options.label_smoothing >= 0.0 && options.label_smoothing <= 1.0,
                          "CrossEntropyLoss: label_smoothing must be in [0, 1], got ",
                          options.label_smoothing);
  if (!options.weight.defined()) return;
  minigrad::detail::check(!options.weight.requires_grad(),
                          "CrossEntropyLoss: weight cannot require grad (it is a constant, as in PyTorch)");
  register_buffer("weight", options.weight);  // the same handle as options.weight
}

Tensor CrossEntropyLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::cross_entropy(input, target, options);
}

NLLLoss::NLLLoss(NLLLossOptions options) : options(options) {
  if (!options.weight.defined()) return;
  minigrad::detail::check(!options.weight.requires_grad(),
                          "NLLLoss: weight cannot require grad (it is a constant, as in PyTorch)");
  register_buffer("weight", options.weight);
}

Tensor NLLLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::nll_loss(input, target, options);
}

BCEWithLogitsLoss::BCEWithLogitsLoss(BCEWithLogitsLossOptions options) : options(options) {
  if (!options.pos_weight.defined()) return;
  minigrad::detail::check(
      !options.pos_weight.requires_grad(),
      "BCEWithLogitsLoss: pos_weight cannot require grad (it is a constant, as in PyTorch)");
  register_buffer("pos_weight", options.pos_weight);  // the same handle as options.pos_weight
}

Tensor BCEWithLogitsLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::binary_cross_entropy_with_logits(input, target, options);
}

}  // namespace minigrad::nn
