// nn::Module: the base of every layer and model, as torch.nn.Module.
//
// A module owns named parameters (tensors an optimizer trains), named buffers (tensors it keeps
// but does not train) and named child modules, all registered in its constructor. From those
// three lists it answers every question a training loop asks: parameters(), named_parameters()
// with PyTorch's dotted names (`net.0.weight`), train()/eval(), zero_grad(), state_dict().
// Each registered child knows its parent, so a module knows its dotted path in the tree ("net.0"):
// an error escaping its forward names that path and the module's configuration.
// A custom module is a subclass: register members in the constructor, override forward():
//
//   struct Block : nn::Module {
//     nn::Linear& proj;
//     Block() : proj(register_module("proj", nn::Linear(128, 128))) {}
//     Tensor forward(const Tensor& x) override { return proj(x).relu(); }
//   };
#pragma once

#include <concepts>
#include <deque>
#include <exception>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_set>
#include <utility>
#include <vector>

#include "autograd/tensor.hpp"
#include "nn/hooks.hpp"

namespace minigrad::nn {

class Module;

/// Any subclass of nn::Module (what register_module and Sequential take).
template <typename M>
concept AnyModule = std::derived_from<std::remove_cvref_t<M>, Module>;

/// (name, tensor) pairs in PyTorch's order, e.g. {"net.0.weight", W}, {"net.0.bias", b}, ...
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
/// What state_dict() returns and load_state_dict() takes (PyTorch's OrderedDict of tensors).
using StateDict = NamedTensors;
/// (name, module) pairs; the module is a reference into the tree, valid while the tree lives.
using NamedModules = std::vector<std::pair<std::string, std::reference_wrapper<Module>>>;

/// The base of every layer and model (`torch.nn.Module`): subclass it, register parameters and
/// children in the constructor, override forward(), call it as `module(x)`.
class Module {
 public:
  Module() = default;
  /// Children that outlive this module (shared through a std::shared_ptr) forget it as parent.
  virtual ~Module();
  // A module is moved into its parent (Sequential{Linear(...), ...}), never copied: a copy would
  // silently share parameters. Share one module between parents with a std::shared_ptr instead.
  /// Takes over the parameters, buffers and children, which now point at this module as their
  /// parent; the new module is not in any tree until it is registered.
  Module(Module&& other) noexcept;
  /// As the move constructor, except that this module keeps its own place in its tree.
  Module& operator=(Module&& other) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // ---- what a subclass defines ---------------------------------------------------------------

  /// The computation: out = forward(x). The default throws std::logic_error naming the module,
  /// as PyTorch's `Module [Name] is missing the required "forward" function`.
  virtual Tensor forward(const Tensor& input);
  /// Calls forward: `layer(x)` as in Python. A std::invalid_argument, std::out_of_range,
  /// std::runtime_error (or another standard exception type) escaping forward is thrown again as
  /// the same type with the innermost failing module's path and configuration in front of its
  /// message, once: `net.0 (Linear in_features=128, out_features=512, bias=True): linear: ...`.
  /// It can also be caught as nn::ModuleError to read that path. Other exception types pass
  /// through unchanged. While anomaly detection is on, ops recorded inside note this module.
  Tensor operator()(const Tensor& input);

  /// The class name printed by operator<< ("Linear", "FeedForward"): the C++ type's name without
  /// namespaces, unless a subclass overrides it.
  virtual std::string name() const;
  /// The text inside the parentheses when printed, as `Module.extra_repr`
  /// ("in_features=128, out_features=512, bias=True"); empty by default.
  virtual std::string extra_repr() const { return ""; }

  // ---- registration (call these in a constructor) --------------------------------------------

  /// Adds a trained tensor under `name` and turns on its requires_grad (`nn.Parameter`). Returns
  /// the same tensor (a handle: a member holding it and the module see the same data).
  /// Throws std::invalid_argument for an empty name, a name with '.', a name already used, an
  /// undefined or non-floating tensor.
  Tensor register_parameter(const std::string& name, Tensor tensor);
  /// Adds a tensor the module keeps but does not train (`register_buffer`), such as the
  /// attention head's mask `tril`: listed by buffers() and named_buffers(), converted by to(dtype)
  /// when floating, and, when `persistent`, saved in state_dict() and checkpoints under its dotted
  /// name (`blocks.0.sa.heads.0.tril`). Any dtype. Returns a reference to the registered handle,
  /// valid while the module lives. Throws std::invalid_argument for an empty name, a name with
  /// '.', a name already used by a parameter, buffer or child, an undefined tensor, or a tensor
  /// that requires grad (a buffer gets no gradient: pass t.detach(), or register a parameter).
  Tensor& register_buffer(const std::string& name, Tensor tensor, bool persistent = true);
  /// Adds a child module, moved in (or shared, when given a shared_ptr), and returns a reference
  /// to the registered child, so a member can be bound to it:
  /// `nn::Linear& proj = register_module("proj", nn::Linear(4, 4));`. Same name checks.
  template <AnyModule M>
  std::remove_cvref_t<M>& register_module(const std::string& name, M&& module);
  /// The same for a module shared with other parents: the child's path() is the one under its
  /// first parent.
  template <AnyModule M>
  M& register_module(const std::string& name, std::shared_ptr<M> module);

  // ---- walking the tree (PyTorch's order: own entries first, then each child, depth first) ---

  /// Every parameter, each once, in named_parameters() order (`module.parameters()`).
  std::vector<Tensor> parameters(bool recurse = true) const;
  /// ("net.0.weight", W) ...; a tensor registered twice is listed once, under its first name.
  NamedTensors named_parameters(bool recurse = true) const;
  /// Every buffer, each once, in named_buffers() order (`module.buffers()`).
  std::vector<Tensor> buffers(bool recurse = true) const;
  /// (dotted name, buffer) pairs, as named_parameters() (`module.named_buffers()`).
  NamedTensors named_buffers(bool recurse = true) const;
  /// The direct children, in registration order, each once (`module.children()`).
  std::vector<std::reference_wrapper<Module>> children();
  /// As children(), with the names they were registered under (`module.named_children()`).
  NamedModules named_children();
  /// This module and all its descendants, depth first, each once (`module.modules()`).
  std::vector<std::reference_wrapper<Module>> modules();
  /// As modules(), with dotted names; this module's own name is "".
  NamedModules named_modules();
  /// This module's dotted path from the root of its tree ("net.0"), "" for a root: its name in
  /// named_modules() of the root. A module shared by two parents has the path of the first.
  std::string path() const;
  /// The path and the configuration, as errors and anomaly notes name a module:
  /// "net.0 (Linear in_features=128, out_features=512, bias=True)"; "(FeedForward)" for a root.
  std::string describe() const;

  /// Calls fn on every child's subtree, in registration order, then on this module: children
  /// before their parent, as `module.apply(fn)` (a module shared by two parents is visited under
  /// each). Returns *this. The course's weight init is
  /// `model.apply([](nn::Module& m) { if (auto* linear = m.as<nn::Linear>()) ... });`.
  Module& apply(const std::function<void(Module&)>& fn);
  /// This module as a T, or nullptr if it is not one (`isinstance(module, T)`).
  ///@{
  template <typename T>
  T* as() {
    return dynamic_cast<T*>(this);
  }
  template <typename T>
  const T* as() const {
    return dynamic_cast<const T*>(this);
  }
  ///@}

  // ---- dtype ---------------------------------------------------------------------------------

  /// Converts every floating parameter and buffer of this module and its descendants, and their
  /// gradients, to `dtype` in place (`module.to(dtype)`): handles held elsewhere (a Linear's
  /// `weight` member, parameters()) see the new dtype. int64 and bool buffers stay as they are.
  /// Counts as an in-place change: a graph recorded before cannot be backpropagated. Convert
  /// before making an optimizer, whose state keeps the old dtype. Returns *this. Throws
  /// std::invalid_argument for a dtype other than float32 or float64, as PyTorch refuses one.
  Module& to(Dtype dtype);
  /// to(kFloat64) (`module.double()`).
  Module& double_() { return to(kFloat64); }
  /// to(kFloat32) (`module.float()`).
  Module& float_() { return to(kFloat32); }

  // ---- training state ------------------------------------------------------------------------

  /// Sets training mode on this module and every descendant (Dropout drops only in training).
  /// Returns *this, as `module.train(mode)`.
  Module& train(bool on = true);
  /// Same as train(false) (`module.eval()`).
  Module& eval() { return train(false); }
  /// True unless eval() was called (`module.training`); a new module is in training mode.
  bool is_training() const { return training_; }
  /// Resets the gradient of every parameter: gradients accumulate across backward() calls, so
  /// call this before each one. Zeroes them in place, as PyTorch 1.13's default; with
  /// set_to_none, makes them undefined instead (`module.zero_grad(set_to_none)`).
  void zero_grad(bool set_to_none = false);

  // ---- hooks (nn/hooks.hpp) -------------------------------------------------------------------

  /// Calls `hook(module)` before each forward of this module, after the global pre-hooks
  /// (`module.register_forward_pre_hook`).
  RemovableHandle register_forward_pre_hook(ForwardPreHook hook);
  /// Calls `hook(module, output)` after each forward of this module returns, after the global
  /// hooks; with always_call, also when a pre-hook, forward or an earlier hook throws (with
  /// forward's output if it returned, else an undefined one) (`module.register_forward_hook(hook,
  /// always_call=...)`).
  RemovableHandle register_forward_hook(ForwardHook hook, bool always_call = false);

  // ---- saving and loading ---------------------------------------------------------------------

  /// Every parameter and persistent buffer by dotted name, detached (`module.state_dict()`): per
  /// module its parameters, then its persistent buffers, then its children's entries.
  StateDict state_dict() const;
  /// Copies the values of `state` into this module's parameters and persistent buffers
  /// (`load_state_dict`). Every name must match both ways (unless strict is false, which skips
  /// missing and unexpected names), and each tensor must have the shape and dtype of the one it
  /// replaces, and no name may appear twice. Throws std::invalid_argument listing every problem,
  /// before changing anything.
  void load_state_dict(const StateDict& state, bool strict = true);

 protected:
  /// What operator() does around forward, for subclasses whose call takes other arguments (the
  /// losses' `loss(input, target)`): runs the forward pre-hooks, `forward_call`, then the forward
  /// hooks, and adds this module's path to a standard exception escaping any of them (after the
  /// always_call hooks that had not run yet, as PyTorch 2's `_call_impl`).
  Tensor call_forward(const std::function<Tensor()>& forward_call);

 private:
  friend std::string to_string(const Module& module);

  void check_new_name(const std::string& name, const char* what) const;
  void add_child(const std::string& name, std::shared_ptr<Module> child);
  // Every module below this one with its dotted name, depth first, skipping any in `seen`.
  void descendants(const std::string& prefix, std::vector<std::pair<std::string, Module*>>& out,
                   std::unordered_set<const Module*>& seen) const;
  // The parameters (or buffers) of this module and, with recurse, of its descendants.
  void collect(bool recurse, bool buffers, NamedTensors& out) const;
  // state_dict() entries, not yet detached: the live tensors load_state_dict() writes into.
  void state_entries(const std::string& prefix, StateDict& out) const;
  // Throws `error` again as its own standard type, its message prefixed by describe().
  [[noreturn]] void rethrow_with_context(const std::exception& error) const;
  // How far the forward hooks of one call have got (module.cpp).
  struct HooksRun;
  // Run the global hooks, then this module's: the pre-hooks; the forward hooks, counting them in
  // `run`; after a throw, the always_call ones not yet started, dropping errors of their own so
  // that the first one goes on.
  void run_pre_hooks();
  void run_hooks(const Tensor& output, HooksRun& run);
  void run_hooks_after_throw(HooksRun& run) noexcept;
  // Makes this module the parent of the children whose parent was `previous` (after a move).
  void adopt_children(const Module* previous);
  // The children whose parent is this module forget it.
  void release_children();

  NamedTensors parameters_;
  // A deque, so that the references register_buffer returns stay valid as buffers are added.
  std::deque<std::pair<std::string, Tensor>> buffers_;
  std::unordered_set<std::string> non_persistent_;  // buffers left out of state_dict()
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  Module* parent_ = nullptr;                 // the module this one was first registered in; null for a root
  std::string key_;                          // the name it was registered under in parent_
  std::shared_ptr<detail::HookList> hooks_;  // this module's own hooks; null until one is registered
};

/// Part of every exception Module::operator() rethrows: catch `const nn::ModuleError&` to learn
/// which module's forward failed. The exception keeps its standard type as well.
class ModuleError {
 public:
  /// Remembers the failing module's path.
  explicit ModuleError(std::string module_path) : module_path_(std::move(module_path)) {}
  virtual ~ModuleError() = default;
  /// The innermost failing module's path() ("net.0"; "" for a root).
  const std::string& module_path() const { return module_path_; }

 private:
  std::string module_path_;
};

/// While alive, records the output of every module called through operator() on this thread, as
/// (its path(), the output detached), in the order the calls return: inner modules before the
/// modules that called them. It is a global forward hook (nn::register_module_forward_hook); the
/// parity trace (parity/parity.hpp) names activations with it. Recorders nest: only the innermost
/// one records.
class OutputRecorder {
 public:
  OutputRecorder();
  ~OutputRecorder();
  OutputRecorder(const OutputRecorder&) = delete;
  OutputRecorder& operator=(const OutputRecorder&) = delete;

  /// (path, output) per call so far; a module called twice appears twice.
  const NamedTensors& outputs() const { return outputs_; }

 private:
  NamedTensors outputs_;
  OutputRecorder* previous_;
  RemovableHandle hook_;
};

/// Prints the module tree in PyTorch's repr layout:
///   FeedForward(
///     (net): Sequential(
///       (0): Linear(in_features=128, out_features=512, bias=True)
///   ...
std::ostream& operator<<(std::ostream& os, const Module& module);
/// The same text as operator<< (`repr(module)`).
std::string to_string(const Module& module);

namespace detail {
/// A double as Python's repr prints it: 0.5 -> "0.5", 0.0 -> "0.0", 1e-05 -> "1e-05".
std::string python_repr(double value);
/// A C++ type's name without namespaces: "Linear" for minigrad::nn::Linear.
std::string short_type_name(const std::type_info& type);
/// The lines of a text, without their line breaks (nn/module_print.cpp).
std::vector<std::string> split_lines(const std::string& text);
/// The exception Module::operator() throws: of type E (std::invalid_argument, ...) and a ModuleError.
template <typename E>
class InModule : public E, public ModuleError {
 public:
  InModule(const std::string& message, std::string module_path)
      : E(message), ModuleError(std::move(module_path)) {}
};
}  // namespace detail

// ---- template definitions ----------------------------------------------------------------------

template <AnyModule M>
std::remove_cvref_t<M>& Module::register_module(const std::string& name, M&& module) {
  static_assert(!std::is_lvalue_reference_v<M>,
                "register_module: pass a new module (a temporary or std::move(m)), or a std::shared_ptr to "
                "share one");
  return register_module(name, std::make_shared<std::remove_cvref_t<M>>(std::move(module)));
}

template <AnyModule M>
M& Module::register_module(const std::string& name, std::shared_ptr<M> module) {
  add_child(name, module);  // checks the name and the pointer, and sets the child's parent
  return *module;
}

}  // namespace minigrad::nn
