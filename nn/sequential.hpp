// nn::Sequential: layers applied one after another, out = layer_n(... layer_1(layer_0(x))).
//
// Built in one expression, as in Python, with braces:
//   nn::Sequential net{nn::Linear(128, 512), nn::ReLU(), nn::Linear(512, 128)};
// Braces, because each Linear draws its weights when it is built: C++ evaluates the elements of
// a braced list left to right, but leaves the order of parenthesised arguments open (GCC builds
// them last to first), which would draw the layers in the reverse of PyTorch's order.
// Each layer is registered as a child named by its position ("0", "1", "2"), which is where the
// dotted parameter names `net.0.weight` come from. `net[0](x)` runs the first layer alone, as
// the lesson does, and `for (nn::Module& layer : net)` visits them in order (`nn.Sequential`).
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "nn/module.hpp"

namespace minigrad::nn {

/// Layers applied in order, out = layer_n(... layer_0(x)) (`nn.Sequential`); layers are children
/// named "0", "1", ... Build it with braces: `nn::Sequential net{nn::Linear(4, 8), nn::ReLU()};`.
class Sequential : public Module {
 public:
  Sequential() = default;
  /// The layers in order, each moved in (or shared, when given as a std::shared_ptr). Write
  /// `Sequential{a, b, c}` (braces) so that a is built, and draws its weights, before b.
  template <typename First, typename... Rest>
  explicit Sequential(First&& first, Rest&&... rest) {
    push_back(std::forward<First>(first));
    (push_back(std::forward<Rest>(rest)), ...);
  }

  /// Appends a layer, registered under the name str(size()) (`Sequential.append`).
  template <AnyModule M>
  void push_back(M&& layer) {
    layers_.push_back(&register_module(std::to_string(layers_.size()), std::forward<M>(layer)));
  }
  /// The same for a layer held by a std::shared_ptr, shared with whoever else holds it.
  template <AnyModule M>
  void push_back(std::shared_ptr<M> layer) {
    layers_.push_back(&register_module(std::to_string(layers_.size()), std::move(layer)));
  }

  /// The layer at `index`; negative indices count from the end, as in Python. Throws
  /// std::out_of_range naming the index and the size.
  Module& operator[](int64_t index) const;
  /// The layer at `index` as its own type, to reach its members: `net.at<nn::Linear>(0).weight`.
  /// Throws std::out_of_range as operator[], std::invalid_argument if the layer is another type.
  template <typename M>
  M& at(int64_t index) const;
  /// Number of layers (`len(net)`).
  int64_t size() const { return static_cast<int64_t>(layers_.size()); }
  /// True when it holds no layers.
  bool empty() const { return layers_.empty(); }

  /// Each layer's output is the next one's input; an empty Sequential returns its input.
  Tensor forward(const Tensor& input) override;

  /// Iteration yields Module&, in order.
  class Iterator {
   public:
    ///@{
    /// A forward iterator over the layers, as Module&, for `for (nn::Module& layer : net)`.
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
  /// The layers in order, for a range-for loop (`for layer in net`).
  Iterator begin() const { return Iterator(layers_.begin()); }
  Iterator end() const { return Iterator(layers_.end()); }
  ///@}

 private:
  // The layers in order: non-owning, the registered children own them. A layer lives on the
  // heap behind its shared_ptr, so these stay valid when the Sequential itself is moved.
  std::vector<Module*> layers_;

  // Throws std::invalid_argument for a layer that is not an M.
  static void check_type(bool ok, int64_t index, const Module& layer, const std::type_info& wanted);
};

template <typename M>
M& Sequential::at(int64_t index) const {
  Module& layer = (*this)[index];
  auto* typed = dynamic_cast<M*>(&layer);
  check_type(typed != nullptr, index, layer, typeid(M));
  return *typed;
}

}  // namespace minigrad::nn
