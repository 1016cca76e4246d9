// Forward hooks: functions called around a module's forward, as torch.nn.Module's
// register_forward_pre_hook and register_forward_hook.
//
// A hook is attached to one module (`module.register_forward_hook(...)`) or to every module
// (`nn::register_module_forward_hook(...)`, PyTorch's global hooks). Registering returns a
// RemovableHandle; `handle.remove()` detaches the hook again. minigrad's own cross-cutting
// features use the global hooks: anomaly mode names the module whose forward recorded an op, and
// OutputRecorder (the parity trace's source) collects every module's output.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "autograd/tensor.hpp"

namespace minigrad::nn {

class Module;

/// Called before forward with the module about to run (`hook(module, args)` in PyTorch; ours
/// does not see or replace the input).
using ForwardPreHook = std::function<void(Module& module)>;
/// Called after forward with the module and its output (`hook(module, args, output)` in PyTorch;
/// ours does not see the input or replace the output).
using ForwardHook = std::function<void(Module& module, const Tensor& output)>;

namespace detail {
/// The hooks of one module, or the global ones, in registration order. Thread-safe.
struct HookList;
}  // namespace detail

/// What registering a hook returns (`torch.utils.hooks.RemovableHandle`): remove() detaches the
/// hook; calling it twice, or after the module is gone, does nothing. Dropping the handle keeps
/// the hook.
class RemovableHandle {
 public:
  RemovableHandle() = default;
  /// Detaches the hook this handle was returned for.
  void remove();

 private:
  friend struct detail::HookList;
  RemovableHandle(std::weak_ptr<detail::HookList> list, int64_t id) : list_(std::move(list)), id_(id) {}
  std::weak_ptr<detail::HookList> list_;
  int64_t id_ = -1;
};

/// Calls `hook` before the forward of every module, on every thread, before the module's own
/// pre-hooks (`torch.nn.modules.module.register_module_forward_pre_hook`).
RemovableHandle register_module_forward_pre_hook(ForwardPreHook hook);
/// Calls `hook` after the forward of every module returns, on every thread, before the module's
/// own hooks; with always_call, also when a pre-hook, forward or an earlier forward hook throws
/// (with forward's output if it returned, else an undefined one), once, as PyTorch's `always_call=True`
/// (`torch.nn.modules.module.register_module_forward_hook`).
RemovableHandle register_module_forward_hook(ForwardHook hook, bool always_call = false);

namespace detail {

struct HookList : std::enable_shared_from_this<HookList> {
  struct Entry {
    int64_t id;
    ForwardPreHook pre;  // set for a pre-hook
    ForwardHook post;    // set for a forward hook
    bool always_call = false;
  };

  RemovableHandle add(Entry entry);
  void remove(int64_t id);
  /// The entries as they are now; adding or removing a hook while they run replaces the list
  /// and leaves this one as it was.
  std::shared_ptr<const std::vector<Entry>> snapshot() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const std::vector<Entry>> entries_ = std::make_shared<const std::vector<Entry>>();
  int64_t next_id_ = 0;
};

/// The hooks of every module.
HookList& global_hooks();

}  // namespace detail

}  // namespace minigrad::nn
