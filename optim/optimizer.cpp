// The Optimizer base class: checking the parameters, the step loop that skips parameters without
// a gradient, zero_grad, and the flat state_dict with PyTorch's key names.
//
// A subclass's update() sees one parameter, its gradient and its state; everything about lists
// of parameters, missing gradients and checkpoints lives here, once.
#include "optim/optimizer.hpp"

#include <cmath>
#include <range/v3/view/enumerate.hpp>
#include <range/v3/view/zip.hpp>
#include <set>
#include <sstream>
#include <utility>

#include "autograd/op_support.hpp"

namespace minigrad::optim {

using detail::check;

namespace {

const std::string kLrKey = "param_groups.0.lr";
const std::string kParamsKey = "param_groups.0.params";

std::string group_key(const std::string& name) { return "param_groups.0." + name; }

std::string state_key(size_t index, const std::string& name) {
  return "state." + std::to_string(index) + "." + name;
}

// "0.9", or "[0.9, 0.999]" for a tensor of several values; for error messages.
std::string describe(const Tensor& t) {
  const std::vector<double> values = t.to_vector<double>();
  std::ostringstream os;
  if (t.dim() == 0) {
    os << values[0];
    return os.str();
  }
  os << "[";
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  os << "]";
  return os.str();
}

// An independent copy of t's data in the given dtype: loading never aliases the caller's tensors.
Tensor copy_as(const Tensor& t, Dtype dtype) {
  Tensor out = detail::new_tensor(t.shape(), dtype);
  out.copy_(t);
  return out;
}

}  // namespace

Optimizer::Optimizer(std::vector<Tensor> params, double lr, std::string name)
    : params_(std::move(params)), state_(params_.size()), lr_(lr), name_(std::move(name)) {
  check(!params_.empty(), name_, ": got an empty parameter list (pass model.parameters())");
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    check(p.defined(), name_, ": parameter ", i, " is undefined");
    check(p.is_floating_point(), name_, ": parameter ", i, " (shape ", p.shape(), ") is ",
          dtype_name(p.dtype()), "; only float32 and float64 tensors can be optimized");
    check(p.is_leaf(), name_, ": parameter ", i, " (shape ", p.shape(),
          ") is not a leaf (it was computed by ", p.is_leaf() ? "" : p.grad_fn()->name(),
          "); optimize the tensors it was computed from");
    for (size_t j = 0; j < i; ++j) {
      check(params_[j].impl() != p.impl(), name_, ": parameter ", i, " is the same tensor as parameter ", j,
            "; pass each parameter once");
    }
  }
  set_lr(lr);
}

void Optimizer::set_lr(double lr) {
  check(!std::isnan(lr), name_, ": lr must be a number >= 0, got nan (set it in the options: {.lr = 0.1})");
  check(lr >= 0, name_, ": lr must be >= 0, got ", lr);
  lr_ = lr;
}

void Optimizer::step() {
  NoGradGuard no_grad;  // an update changes data; it is never part of a model's graph
  // State made for the parameters as they were no longer fits them after Module::to(kFloat64):
  // checked for all of them first, so that a refused step changes nothing.
  for (auto&& [i, param] : ranges::views::enumerate(params_)) {
    if (!param.grad().defined()) continue;
    for (const auto& [name, value] : state_[i]) {
      const Dtype dtype = name == "step" ? kFloat32 : param.dtype();  // as load_state_dict keeps them
      check(value.dtype() == dtype, name_, ": the ", name, " state of parameter ", i, " (shape ",
            param.shape(), ") is ", dtype_name(value.dtype()), " but the parameter is now ",
            dtype_name(param.dtype()), "; convert the model (Module::to) before making its optimizer");
    }
  }
  for (auto&& [param, state] : ranges::views::zip(params_, state_)) {
    const Tensor grad = param.grad();
    if (!grad.defined()) continue;  // no backward reached this parameter: leave it, as PyTorch
    update(param, detail::convert(grad, param.dtype()), state);
    // As PyTorch's param.add_: a graph that read the old values can no longer backward.
    detail::bump_version(param);
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (Tensor& param : params_) {
    if (!param.grad().defined()) continue;
    if (set_to_none) {
      param.set_grad(Tensor());
    } else {
      param.grad().zero_();  // in place: every handle to this gradient sees the zeros
    }
  }
}

std::map<std::string, Tensor> Optimizer::state_dict() const {
  std::map<std::string, Tensor> out;
  out[kLrKey] = scalar_tensor(lr_, {.dtype = kFloat64});
  out[kParamsKey] = arange(static_cast<int64_t>(params_.size()));  // PyTorch's indices 0, 1, ...
  for (const auto& [name, value] : hyperparameters()) out[group_key(name)] = value.clone();
  for (size_t i = 0; i < state_.size(); ++i) {
    for (const auto& [name, value] : state_[i]) out[state_key(i, name)] = value.clone();
  }
  return out;
}

void Optimizer::load_state_dict(const std::map<std::string, Tensor>& state_dict) {
  check_state_dict(state_dict);  // throws before anything below changes

  std::vector<ParamState> state(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    for (const std::string& name : state_names()) {
      auto found = state_dict.find(state_key(i, name));
      if (found == state_dict.end()) continue;  // this parameter was never updated
      state[i][name] = copy_as(found->second, name == "step" ? kFloat32 : params_[i].dtype());
    }
  }
  state_ = std::move(state);
  lr_ = state_dict.at(kLrKey).item<double>();
}

// Every key the optimizer expects is there with its shape, and no other key is.
void Optimizer::check_state_dict(const std::map<std::string, Tensor>& state_dict) const {
  const std::string where = name_ + ": load_state_dict";
  auto expect = [&](const std::string& key, const Shape& shape) {
    auto found = state_dict.find(key);
    check(found != state_dict.end(), where, ": missing key ", key);
    check(found->second.defined(), where, ": ", key, " is an undefined tensor");
    check(found->second.shape() == shape, where, ": ", key, " has shape ", found->second.shape(),
          ", expected ", shape);
    return found->second;
  };
  std::set<std::string> known = {kLrKey, kParamsKey};

  // The parameters' indices, [0, n): absent from files saved before they were recorded.
  if (const auto found = state_dict.find(kParamsKey); found != state_dict.end()) {
    const Tensor& indices = found->second;
    check(indices.defined() && indices.dim() == 1, where, ": ", kParamsKey, " is not a list of indices");
    check(indices.numel() == static_cast<int64_t>(params_.size()), where,
          ": the state dict's parameter group has ", indices.numel(), " parameters, this ", name_, "'s has ",
          params_.size(), " (as PyTorch: it must be made for the same parameters)");
  }

  const double lr = expect(kLrKey, {}).item<double>();
  // Any number but nan (PyTorch loads nan too): a scheduler may have left a negative one.
  check(!std::isnan(lr), where, ": ", kLrKey, " is nan");
  for (const auto& [name, mine] : hyperparameters()) {
    const Tensor saved = expect(group_key(name), mine.shape());
    check(saved.to_vector<double>() == mine.to_vector<double>(), where, ": ", group_key(name), " is ",
          describe(saved), " in the state dict but ", describe(mine),
          " in this optimizer (construct it with the options the state was saved with)");
    known.insert(group_key(name));
  }

  for (size_t i = 0; i < params_.size(); ++i) {
    bool updated = false;  // a parameter has all of its state or none of it
    for (const std::string& name : state_names())
      updated = updated || state_dict.contains(state_key(i, name));
    for (const std::string& name : state_names()) {
      if (updated) expect(state_key(i, name), name == "step" ? Shape{} : params_[i].shape());
      known.insert(state_key(i, name));
    }
  }

  for (const auto& [key, value] : state_dict) {
    check(known.contains(key), where, ": unexpected key ", key, " (not a hyperparameter or state of this ",
          name_, " with ", params_.size(), " parameters)");
  }
}

}  // namespace minigrad::optim
