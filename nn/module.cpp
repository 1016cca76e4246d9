// nn::Module: registration, the walks over the module tree, training mode and state dicts (the
// PyTorch-style printout is in module_print.cpp).
//
// Every walk follows torch/nn/modules/module.py: a module's own entries first, in registration
// order, then each child's, depth first, names joined with dots. named_parameters() and modules()
// list a shared tensor or module once (PyTorch's memo set); state_dict() lists it under every name.
// operator() wraps forward: it names the module in errors and runs the forward hooks, through
// which anomaly notes and the output recorder see each module.
#include "nn/module.hpp"

#include <map>
#include <memory>
#include <stdexcept>
#include <typeinfo>
#include <unordered_set>

#include "autograd/machinery/anomaly.hpp"
#include "autograd/op_support.hpp"

namespace minigrad::nn {

using minigrad::detail::check;

// ---- lifetime: children point back at their parent -------------------------------------------------

Module::~Module() { release_children(); }

Module::Module(Module&& other) noexcept
    : parameters_(std::move(other.parameters_)),
      buffers_(std::move(other.buffers_)),
      non_persistent_(std::move(other.non_persistent_)),
      children_(std::move(other.children_)),
      training_(other.training_),
      hooks_(std::move(other.hooks_)) {
  adopt_children(&other);
}

Module& Module::operator=(Module&& other) noexcept {
  if (this == &other) return *this;
  release_children();
  parameters_ = std::move(other.parameters_);
  buffers_ = std::move(other.buffers_);
  non_persistent_ = std::move(other.non_persistent_);
  children_ = std::move(other.children_);
  training_ = other.training_;
  hooks_ = std::move(other.hooks_);
  adopt_children(&other);
  return *this;
}

void Module::adopt_children(const Module* previous) {
  for (auto& [key, child] : children_)
    if (child->parent_ == previous) child->parent_ = this;
}

void Module::release_children() {
  for (auto& [key, child] : children_)
    if (child->parent_ == this) child->parent_ = nullptr;
}

// ---- what a subclass defines -------------------------------------------------------------------

Tensor Module::forward(const Tensor&) {
  throw std::logic_error("Module [" + name() + "] is missing the required \"forward\" function");
}

std::string Module::name() const { return detail::short_type_name(typeid(*this)); }

// ---- calling forward: hooks around it, the module's path in errors --------------------------

Tensor Module::operator()(const Tensor& input) {
  return call_forward([&] { return forward(input); });
}

// The global hook list and this module's as they were when the forward hooks started, and how
// many of their entries (the global ones first) have been started: after a throw, the
// always_call hooks among the rest run, and none twice. Counting needs no allocation per call.
struct Module::HooksRun {
  std::shared_ptr<const std::vector<detail::HookList::Entry>> lists[2];
  size_t started = 0;
  Tensor output;  // forward's, once it has returned (undefined if it threw)
};

Tensor Module::call_forward(const std::function<Tensor()>& forward_call) {
  HooksRun run;
  try {
    run_pre_hooks();
    Tensor output = forward_call();
    run_hooks(output, run);
    return output;
  } catch (const ModuleError&) {
    run_hooks_after_throw(run);
    throw;  // an inner module has already put its path in front: say it once
  } catch (const std::exception& error) {
    run_hooks_after_throw(run);
    rethrow_with_context(error);
  } catch (...) {
    run_hooks_after_throw(run);
    throw;
  }
}

void Module::run_pre_hooks() {
  for (const auto& list : {&detail::global_hooks(), hooks_.get()}) {
    if (list == nullptr) continue;
    for (const auto& entry : *list->snapshot())
      if (entry.pre) entry.pre(*this);
  }
}

void Module::run_hooks(const Tensor& output, HooksRun& run) {
  run.output = output;
  run.lists[0] = detail::global_hooks().snapshot();
  if (hooks_) run.lists[1] = hooks_->snapshot();
  for (const auto& list : run.lists) {
    if (!list) continue;
    for (const auto& entry : *list) {
      ++run.started;
      if (entry.post) entry.post(*this, output);
    }
  }
}

void Module::run_hooks_after_throw(HooksRun& run) noexcept {
  if (!run.lists[0]) {  // a pre-hook or forward threw: no forward hook has started
    run.lists[0] = detail::global_hooks().snapshot();
    if (hooks_) run.lists[1] = hooks_->snapshot();
  }
  size_t index = 0;
  for (const auto& list : run.lists) {
    if (!list) continue;
    for (const auto& entry : *list) {
      if (index++ < run.started || !entry.post || !entry.always_call) continue;
      try {
        entry.post(*this, run.output);
      } catch (...) {  // PyTorch warns and goes on: the error in flight is the one to report
      }
    }
  }
}

RemovableHandle Module::register_forward_pre_hook(ForwardPreHook hook) {
  if (!hooks_) hooks_ = std::make_shared<detail::HookList>();
  return hooks_->add({.id = 0, .pre = std::move(hook), .post = {}});
}

RemovableHandle Module::register_forward_hook(ForwardHook hook, bool always_call) {
  if (!hooks_) hooks_ = std::make_shared<detail::HookList>();
  return hooks_->add({.id = 0, .pre = {}, .post = std::move(hook), .always_call = always_call});
}

// Anomaly mode notes the module whose forward recorded each op: a global pre-hook opens the
// module's scope and an always-called forward hook closes it, also when forward throws.
namespace {
thread_local std::vector<std::unique_ptr<minigrad::detail::AnomalyModuleScope>> anomaly_scopes;  // null: off

const bool anomaly_hooks_registered = [] {
  register_module_forward_pre_hook([](Module& module) {
    anomaly_scopes.push_back(minigrad::detail::anomaly_enabled
                                 ? std::make_unique<minigrad::detail::AnomalyModuleScope>(module.describe())
                                 : nullptr);
  });
  register_module_forward_hook([](Module&, const Tensor&) { anomaly_scopes.pop_back(); },
                               /*always_call=*/true);
  return true;
}();
}  // namespace

// Only the standard types are rebuilt (each is constructible from a message); anything else,
// a learner's own exception type included, is rethrown untouched rather than sliced.
void Module::rethrow_with_context(const std::exception& error) const {
  const std::string message = describe() + ": " + error.what();
  const std::type_info& type = typeid(error);
  if (type == typeid(std::invalid_argument)) throw detail::InModule<std::invalid_argument>(message, path());
  if (type == typeid(std::out_of_range)) throw detail::InModule<std::out_of_range>(message, path());
  if (type == typeid(std::runtime_error)) throw detail::InModule<std::runtime_error>(message, path());
  if (type == typeid(std::logic_error)) throw detail::InModule<std::logic_error>(message, path());
  if (type == typeid(std::domain_error)) throw detail::InModule<std::domain_error>(message, path());
  if (type == typeid(std::length_error)) throw detail::InModule<std::length_error>(message, path());
  if (type == typeid(std::range_error)) throw detail::InModule<std::range_error>(message, path());
  if (type == typeid(std::overflow_error)) throw detail::InModule<std::overflow_error>(message, path());
  if (type == typeid(std::underflow_error)) throw detail::InModule<std::underflow_error>(message, path());
  throw;  // called from a catch block: the exception in flight goes on as it was
}

std::string Module::describe() const {
  std::string config = name();
  const std::vector<std::string> extra = detail::split_lines(extra_repr());
  for (size_t i = 0; i < extra.size(); ++i) config += (i == 0 ? " " : ", ") + extra[i];
  const std::string where = path();
  return where.empty() ? "(" + config + ")" : where + " (" + config + ")";
}

std::string Module::path() const {
  std::vector<const Module*> chain;  // this module, its parent, ..., up to the root
  std::unordered_set<const Module*> seen;
  for (const Module* m = this; m != nullptr && seen.insert(m).second; m = m->parent_) chain.push_back(m);
  std::string out;
  for (size_t i = chain.size(); i-- > 0;) {
    if (chain[i]->parent_ == nullptr) continue;  // the root has no name
    if (!out.empty()) out += '.';
    out += chain[i]->key_;
  }
  return out;
}

// Recorders nest per thread: the hook of each records only while its recorder is the innermost
// one of the thread that made it.
namespace {
thread_local OutputRecorder* current_recorder = nullptr;
}  // namespace

OutputRecorder::OutputRecorder() : previous_(current_recorder) {
  current_recorder = this;
  hook_ = register_module_forward_hook([this](Module& module, const Tensor& output) {
    if (current_recorder == this) outputs_.emplace_back(module.path(), output.detach());
  });
}

OutputRecorder::~OutputRecorder() {
  hook_.remove();
  current_recorder = previous_;
}

// ---- registration -------------------------------------------------------------------------------

void Module::check_new_name(const std::string& name, const char* what) const {
  check(!name.empty(), what, ": the name must not be empty (in ", this->name(), ")");
  check(name.find('.') == std::string::npos, what, ": the name \"", name, "\" must not contain '.' (in ",
        this->name(), "); to number modules as PyTorch's heads.0, put them in an nn::ModuleList");
  const char* used_by = nullptr;
  for (const auto& [key, value] : parameters_)
    if (key == name) used_by = "a parameter";
  for (const auto& [key, value] : buffers_)
    if (key == name) used_by = "a buffer";
  for (const auto& [key, value] : children_)
    if (key == name) used_by = "a child module";
  check(used_by == nullptr, what, ": ", this->name(), " already has a member named \"", name, "\" (",
        used_by ? used_by : "", ")");
}

Tensor Module::register_parameter(const std::string& name, Tensor tensor) {
  check_new_name(name, "register_parameter");
  check(tensor.defined(), "register_parameter: \"", name, "\" is an undefined tensor");
  check(tensor.is_floating_point(), "register_parameter: \"", name, "\" has dtype ",
        dtype_name(tensor.dtype()), "; only float32 and float64 tensors can be trained");
  tensor.requires_grad_(true);
  tensor.impl()->is_parameter = true;  // it prints as an nn.Parameter does; its detach() does not
  parameters_.emplace_back(name, tensor);
  return tensor;
}

Tensor& Module::register_buffer(const std::string& name, Tensor tensor, bool persistent) {
  check_new_name(name, "register_buffer");
  check(tensor.defined(), "register_buffer: \"", name, "\" is an undefined tensor");
  check(!tensor.requires_grad(), "register_buffer: \"", name,
        "\" requires grad, but a buffer is not trained; register t.detach(), or use register_parameter");
  if (!persistent) non_persistent_.insert(name);
  return buffers_.emplace_back(name, tensor).second;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> child) {
  check_new_name(name, "register_module");
  check(child != nullptr, "register_module: \"", name, "\" is a null pointer");
  check(child.get() != this, "register_module: ", this->name(), " cannot be its own child \"", name, "\"");
  // A module may be shared, but never sit below itself: every walk of the tree (parameters(),
  // printing, forward) would then go round forever.
  std::vector<std::pair<std::string, Module*>> below;
  std::unordered_set<const Module*> seen;
  child->descendants("", below, seen);
  check(!seen.contains(this), "register_module: ", this->name(), " is already inside the module given as \"",
        name, "\"; adding it would make a cycle");
  if (child->parent_ == nullptr) {  // a module shared by two parents keeps its first path
    child->parent_ = this;
    child->key_ = name;
  }
  children_.emplace_back(name, std::move(child));
}

// ---- walking the tree -----------------------------------------------------------------------------

void Module::descendants(const std::string& prefix, std::vector<std::pair<std::string, Module*>>& out,
                         std::unordered_set<const Module*>& seen) const {
  for (const auto& [key, child] : children_) {
    if (!seen.insert(child.get()).second) continue;
    const std::string name = prefix.empty() ? key : prefix + "." + key;
    out.emplace_back(name, child.get());
    child->descendants(name, out, seen);
  }
}

void Module::collect(bool recurse, bool buffers, NamedTensors& out) const {
  std::vector<std::pair<std::string, const Module*>> modules{{"", this}};
  if (recurse) {
    std::vector<std::pair<std::string, Module*>> below;
    std::unordered_set<const Module*> seen{this};
    descendants("", below, seen);
    modules.insert(modules.end(), below.begin(), below.end());
  }
  std::unordered_set<const TensorImpl*> memo;  // a tensor shared by two modules is listed once
  for (const auto& entry : modules) {
    const std::string& prefix = entry.first;  // a reference, not a binding: the lambda captures it
    const Module* module = entry.second;
    const auto add = [&](const std::string& key, const Tensor& tensor) {
      if (memo.insert(tensor.impl()).second)
        out.emplace_back(prefix.empty() ? key : prefix + "." + key, tensor);
    };
    if (buffers) {
      for (const auto& [key, tensor] : module->buffers_) add(key, tensor);
    } else {
      for (const auto& [key, tensor] : module->parameters_) add(key, tensor);
    }
  }
}

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors out;
  collect(recurse, false, out);
  return out;
}

NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors out;
  collect(recurse, true, out);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (const auto& [name, tensor] : named_parameters(recurse)) out.push_back(tensor);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (const auto& [name, tensor] : named_buffers(recurse)) out.push_back(tensor);
  return out;
}

NamedModules Module::named_children() {
  NamedModules out;
  std::unordered_set<const Module*> seen;  // a child registered under two names is listed once
  for (const auto& [key, child] : children_)
    if (seen.insert(child.get()).second) out.emplace_back(key, *child);
  return out;
}

std::vector<std::reference_wrapper<Module>> Module::children() {
  std::vector<std::reference_wrapper<Module>> out;
  for (const auto& [name, child] : named_children()) out.push_back(child);
  return out;
}

NamedModules Module::named_modules() {
  std::vector<std::pair<std::string, Module*>> below;
  std::unordered_set<const Module*> seen{this};
  descendants("", below, seen);
  NamedModules out{{"", *this}};
  for (const auto& [name, module] : below) out.emplace_back(name, *module);
  return out;
}

std::vector<std::reference_wrapper<Module>> Module::modules() {
  std::vector<std::reference_wrapper<Module>> out;
  for (const auto& [name, module] : named_modules()) out.push_back(module);
  return out;
}

Module& Module::apply(const std::function<void(Module&)>& fn) {
  for (Module& child : children()) child.apply(fn);
  fn(*this);
  return *this;
}

// ---- dtype ----------------------------------------------------------------------------------------

namespace {

// As `t.data = t.data.to(dtype)` in PyTorch's Module._apply: the same TensorImpl gets converted
// storage, so every handle to it sees the new dtype; its gradient is converted too.
void convert_in_place(const Tensor& t, Dtype dtype) {
  if (!t.is_floating_point() || t.dtype() == dtype) return;
  TensorImpl& impl = *t.impl();
  impl.storage = minigrad::detail::convert(t, dtype).impl()->storage;
  impl.dtype = dtype;
  if (impl.grad.defined()) impl.grad = minigrad::detail::convert(impl.grad, dtype);
  minigrad::detail::bump_version(t);
}

}  // namespace

Module& Module::to(Dtype dtype) {
  check(is_floating_point(dtype), "Module::to: only float32 and float64 are accepted, got ",
        dtype_name(dtype), " (as nn.Module.to, which converts floating-point parameters and buffers)");
  for (Module& module : modules()) {
    for (const auto& [key, tensor] : module.parameters_) convert_in_place(tensor, dtype);
    for (const auto& [key, tensor] : module.buffers_) convert_in_place(tensor, dtype);
  }
  return *this;
}

// ---- training state ---------------------------------------------------------------------------------

Module& Module::train(bool on) {
  training_ = on;
  for (const auto& [key, child] : children_) child->train(on);
  return *this;
}

void Module::zero_grad(bool set_to_none) {
  for (Tensor& parameter : parameters()) {
    if (!parameter.grad().defined()) continue;
    if (set_to_none) {
      parameter.set_grad(Tensor());
    } else {
      parameter.grad().zero_();  // grad() is a handle: this zeroes the stored gradient
    }
  }
}

// ---- saving and loading -------------------------------------------------------------------------------

void Module::state_entries(const std::string& prefix, StateDict& out) const {
  for (const auto& [key, tensor] : parameters_) out.emplace_back(prefix + key, tensor);
  for (const auto& [key, tensor] : buffers_)
    if (!non_persistent_.contains(key)) out.emplace_back(prefix + key, tensor);
  for (const auto& [key, child] : children_) child->state_entries(prefix + key + ".", out);
}

StateDict Module::state_dict() const {
  StateDict out;
  state_entries("", out);
  for (auto& [name, tensor] : out) tensor = tensor.detach();
  return out;
}

void Module::load_state_dict(const StateDict& state, bool strict) {
  StateDict own;
  state_entries("", own);
  // Check everything first, so a bad state dict leaves the module as it was.
  std::vector<std::string> problems;
  std::map<std::string, Tensor> given;
  for (const auto& [name, tensor] : state) {
    // A name given twice has no one value to load (a map would silently keep the first).
    if (!given.emplace(name, tensor).second) problems.push_back("the key \"" + name + "\" is given twice");
  }
  std::map<std::string, bool> known;
  for (const auto& [name, tensor] : own) {
    known[name] = true;
    auto found = given.find(name);
    if (found == given.end()) {
      if (strict) problems.push_back("missing key \"" + name + "\"");
      continue;
    }
    const Tensor& source = found->second;
    if (!source.defined()) {
      problems.push_back("\"" + name + "\" is an undefined tensor");
    } else if (source.shape() != tensor.shape()) {
      problems.push_back(minigrad::detail::concat("size mismatch for \"", name, "\": ", source.shape(),
                                                  " in the state dict, ", tensor.shape(), " in the module"));
    } else if (source.dtype() != tensor.dtype()) {
      problems.push_back("dtype mismatch for \"" + name + "\": " + dtype_name(source.dtype()) +
                         " in the state dict, " + dtype_name(tensor.dtype()) + " in the module");
    }
  }
  for (const auto& [name, tensor] : state)
    if (strict && !known.count(name)) problems.push_back("unexpected key \"" + name + "\"");

  std::string message = "load_state_dict: cannot load the state dict into " + name() + ": ";
  for (size_t i = 0; i < problems.size(); ++i) message += (i ? "; " : "") + problems[i];
  check(problems.empty(), message);

  NoGradGuard no_grad;  // parameters are leaves that require grad: write them outside the graph
  for (auto& [name, tensor] : own) {
    auto found = given.find(name);
    if (found != given.end()) tensor.copy_(found->second);
  }
}

}  // namespace minigrad::nn
