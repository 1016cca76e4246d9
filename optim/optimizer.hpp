// Optimizer: what every optimizer shares (PyTorch's torch.optim.Optimizer).
//
// An optimizer holds handles to the model's parameters (they alias the model's tensors, so an
// update is seen by the model), a learning rate, and per-parameter state such as a momentum
// buffer. step() reads each parameter's .grad() and changes the parameter in place, under a
// NoGradGuard; zero_grad() clears the gradients, which otherwise add up across backward() calls.
// state_dict() flattens the state into named tensors, with PyTorch's names, for checkpoints.
// Subclasses (SGD, Adam, AdamW) only write the update of one parameter: the textbook formulas.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "autograd/tensor.hpp"

namespace minigrad::optim {

/// The state of one parameter, by PyTorch's names: "momentum_buffer", or "step", "exp_avg",
/// "exp_avg_sq", "max_exp_avg_sq". Empty until the parameter's first update (PyTorch's
/// `optimizer.state[p]`).
using ParamState = std::map<std::string, Tensor>;

/// The base of SGD, Adam and AdamW (`torch.optim.Optimizer`): holds the parameters, the lr and
/// each parameter's state; step() applies the subclass's update to every parameter with a gradient.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// One update of every parameter from its gradient (`optimizer.step()`). Runs under NoGradGuard.
  /// A parameter whose grad() is undefined (no backward reached it) is skipped and its state
  /// left as it is, as PyTorch does. Each updated parameter's version() goes up by one, so a
  /// graph recorded before the step throws if it is backwarded again, as in PyTorch.
  virtual void step();

  /// Clears every parameter's gradient; gradients add up across backward() calls until then
  /// (`optimizer.zero_grad()`). With set_to_none the grads become undefined (PyTorch 2's
  /// default), else they are filled with zeros in place (PyTorch 1.13's default, and Module's).
  void zero_grad(bool set_to_none = false);

  /// The learning rate (PyTorch's `param_groups[0]["lr"]`), what schedulers read and change.
  double lr() const { return lr_; }
  /// Throws std::invalid_argument for a negative or NaN lr (a scheduler's lr is not checked).
  void set_lr(double lr);
  /// The lr when the first scheduler was built on this optimizer, unset before (PyTorch's
  /// `param_groups[0]["initial_lr"]`). Every scheduler starts from it, so a second scheduler is
  /// not misled by the lr the first one has already changed.
  std::optional<double> initial_lr() const { return initial_lr_; }
  /// Records the initial lr if none is recorded yet (`group.setdefault("initial_lr", lr)`).
  void set_initial_lr_once(double lr) {
    if (!initial_lr_) initial_lr_ = lr;
  }

  /// The parameters, in the order given to the constructor (`param_groups[0]["params"]`).
  const std::vector<Tensor>& parameters() const { return params_; }

  /// A snapshot (copies) of the hyperparameters and state as flat, named tensors, PyTorch's
  /// state_dict with its nesting spelt as dots: "param_groups.0.lr", "param_groups.0.betas",
  /// "state.0.step", "state.0.exp_avg", ... (parameters are numbered from 0; a parameter never
  /// updated has no "state.i.*" entries). Hyperparameters are 0-d tensors (betas has shape [2]);
  /// "param_groups.0.params" holds the parameters' indices 0, 1, ..., n - 1 (int64, [n]).
  std::map<std::string, Tensor> state_dict() const;

  /// Restores what state_dict() saved into an optimizer of the same type, options and parameter
  /// shapes: the lr and every parameter's state (converted to the parameter's dtype, as PyTorch).
  /// Unlike PyTorch, the other hyperparameters are not overwritten: they must equal this
  /// optimizer's. Throws std::invalid_argument, before changing anything, for a missing or
  /// unexpected key, a tensor of the wrong shape, a hyperparameter that differs, or a state saved
  /// for another number of parameters (PyTorch's "doesn't match the size of optimizer's group").
  void load_state_dict(const std::map<std::string, Tensor>& state_dict);

 protected:
  /// Checks the parameters (not empty, floating, leaves, each given once) and the lr; `name`
  /// ("SGD") starts every error message. A parameter that does not require grad (frozen for
  /// fine-tuning) is kept, as PyTorch keeps it: it gets no gradient, so step() leaves it alone.
  Optimizer(std::vector<Tensor> params, double lr, std::string name);

  /// The update of one parameter from its gradient (same shape and dtype), using and updating
  /// its state. Called by step() under NoGradGuard, only for parameters that have a gradient.
  virtual void update(Tensor& param, const Tensor& grad, ParamState& state) = 0;

  /// The hyperparameters other than lr, by PyTorch's names, for state_dict ("momentum" -> 0-d).
  virtual std::map<std::string, Tensor> hyperparameters() const = 0;

  /// The names of the state one updated parameter has ({"step", "exp_avg", "exp_avg_sq"}).
  /// "step" is a 0-d counter; every other state tensor has the parameter's shape.
  virtual std::vector<std::string> state_names() const = 0;

  /// The optimizer's name ("SGD", "Adam"), the start of its error messages.
  const std::string& name() const { return name_; }

 private:
  void check_state_dict(const std::map<std::string, Tensor>& state_dict) const;

  /// A scheduler's lr goes in unchecked, as PyTorch's schedulers write param_groups[0]["lr"]:
  /// LinearLR down to end_factor 0 can round to -1.9e-18 at its last epoch.
  friend class LRScheduler;
  void set_scheduled_lr(double lr) { lr_ = lr; }

  std::vector<Tensor> params_;
  std::vector<ParamState> state_;  ///< state_[i] belongs to params_[i]
  double lr_;
  std::optional<double> initial_lr_;  ///< set by the first scheduler (initial_lr())
  std::string name_;
};

}  // namespace minigrad::optim
