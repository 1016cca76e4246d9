// nn::ModuleList: modules held in order and named by their position, as torch.nn.ModuleList.
//
// The course keeps an attention layer's heads in one: each head is a child named "0", "1", ...,
// so the parameters read `heads.0.key.weight`, as in PyTorch. Unlike Sequential it has no
// forward: the module that owns it decides how to call its members (the heads all see the same
// input and their outputs are concatenated):
//   nn::ModuleList heads;
//   for (int64_t i = 0; i < n_head; ++i) heads.append(Head(head_size));
//   for (nn::Module& head : heads) outputs.push_back(head(x));
#pragma once

#include <cstdint>
#include <memory>
#include <typeinfo>
#include <utility>
#include <vector>

#include "nn/module.hpp"

namespace minigrad::nn {

/// Modules in order, children named "0", "1", ... (`nn.ModuleList`). Build it with braces,
/// `nn::ModuleList{a, b}`, or append in a loop; index with `list[i]`, iterate as Module&.
/// Calling it throws std::logic_error, as PyTorch's has no forward.
class ModuleList : public Module {
 public:
  ModuleList() = default;
  /// The modules in order, each moved in (or shared, when given as a std::shared_ptr). Write
  /// `ModuleList{a, b, c}` (braces) so that a is built, and draws its weights, before b.
  template <typename First, typename... Rest>
  explicit ModuleList(First&& first, Rest&&... rest) {
    append(std::forward<First>(first));
    (append(std::forward<Rest>(rest)), ...);
  }

  /// Adds a module at the end, registered under the name str(size()) (`ModuleList.append`);
  /// returns *this.
  template <AnyModule M>
  ModuleList& append(M&& module) {
    modules_.push_back(&register_module(std::to_string(modules_.size()), std::forward<M>(module)));
    return *this;
  }
  /// The same for a module held by a std::shared_ptr, shared with whoever else holds it.
  template <AnyModule M>
  ModuleList& append(std::shared_ptr<M> module) {
    modules_.push_back(&register_module(std::to_string(modules_.size()), std::move(module)));
    return *this;
  }

  /// The module at `index`; negative indices count from the end, as in Python. Throws
  /// std::out_of_range naming the index and the size.
  Module& operator[](int64_t index) const;
  /// The module at `index` as its own type: `heads.at<Head>(0).key`. Throws std::out_of_range
  /// as operator[], std::invalid_argument if the module is another type.
  template <typename M>
  M& at(int64_t index) const;
  /// Number of modules (`len(heads)`).
  int64_t size() const { return static_cast<int64_t>(modules_.size()); }
  /// True when it holds no modules.
  bool empty() const { return modules_.empty(); }

  /// A forward iterator over the modules, as Module&, for `for (nn::Module& head : heads)`.
  class Iterator {
   public:
    ///@{
    /// Standard forward-iterator members.
    using value_type = Module;
    using difference_type = std::ptrdiff_t;
    Iterator() = default;
    explicit Iterator(std::vector<Module*>::const_iterator it) : it_(it) {}
    Module& operator*() const { return **it_; }
    Iterator& operator++() {
      ++it_;
      return *this;
    }
    Iterator operator++(int) { return Iterator(it_++); }
    bool operator==(const Iterator& other) const = default;
    ///@}

   private:
    std::vector<Module*>::const_iterator it_;
  };
  ///@{
  /// The modules in order, for a range-for loop (`for head in heads`).
  Iterator begin() const { return Iterator(modules_.begin()); }
  Iterator end() const { return Iterator(modules_.end()); }
  ///@}

 private:
  // Non-owning, in order: the registered children own the modules, on the heap, so these stay
  // valid when the list itself is moved into its parent.
  std::vector<Module*> modules_;

  // Throws std::invalid_argument for a module that is not an M.
  static void check_type(bool ok, int64_t index, const Module& module, const std::type_info& wanted);
};

template <typename M>
M& ModuleList::at(int64_t index) const {
  Module& module = (*this)[index];
  auto* typed = dynamic_cast<M*>(&module);
  check_type(typed != nullptr, index, module, typeid(M));
  return *typed;
}

}  // namespace minigrad::nn
