// Forward hooks: the lists behind register_forward_pre_hook and register_forward_hook, and the
// global ones. A list is replaced, never changed in place, so a forward in flight keeps
// calling the hooks it started with.
#include "nn/hooks.hpp"

#include <algorithm>

namespace minigrad::nn {

namespace detail {

RemovableHandle HookList::add(Entry entry) {
  std::lock_guard lock(mutex_);
  entry.id = next_id_++;
  auto next = std::make_shared<std::vector<Entry>>(*entries_);
  next->push_back(std::move(entry));
  entries_ = std::move(next);
  return RemovableHandle(weak_from_this(), next_id_ - 1);
}

void HookList::remove(int64_t id) {
  std::lock_guard lock(mutex_);
  auto next = std::make_shared<std::vector<Entry>>(*entries_);
  std::erase_if(*next, [id](const Entry& e) { return e.id == id; });
  entries_ = std::move(next);
}

std::shared_ptr<const std::vector<HookList::Entry>> HookList::snapshot() const {
  std::lock_guard lock(mutex_);
  return entries_;
}

HookList& global_hooks() {
  static const auto* list = new std::shared_ptr<HookList>(std::make_shared<HookList>());  // never destroyed
  return **list;
}

}  // namespace detail

void RemovableHandle::remove() {
  if (auto list = list_.lock()) list->remove(id_);
  list_.reset();
}

RemovableHandle register_module_forward_pre_hook(ForwardPreHook hook) {
  return detail::global_hooks().add({.id = 0, .pre = std::move(hook), .post = {}});
}

RemovableHandle register_module_forward_hook(ForwardHook hook, bool always_call) {
  return detail::global_hooks().add(
      {.id = 0, .pre = {}, .post = std::move(hook), .always_call = always_call});
}

}  // namespace minigrad::nn
