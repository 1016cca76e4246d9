// The backward engine: Tensor::backward walks the recorded graph once, in reverse topological
// order, and adds each leaf's gradient into leaf.grad().
//
// Why a topological order? Take `b = a + a; c = b + b`. A naive recursion from c would call b's
// backward twice (once per use) and push a's share through twice too: the wrong gradient.
// Ordering the nodes so that every tensor comes after all tensors that use it lets each node run
// exactly once, after all its uses have added their share of its gradient.
//
// Anomaly detection adds one check to each step (autograd/machinery/anomaly.cpp).
#include <atomic>
#include <cassert>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "autograd/machinery/anomaly.hpp"
#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"

namespace minigrad {

using detail::check;

namespace {

// Tensors reachable from `root` through grad_fn inputs that require grad (Node::gets_gradient), each listed
// after every tensor that uses it (a post-order DFS, reversed by the caller). Iterative, with an explicit
// stack, so a chain of 100,000 ops cannot overflow the call stack. Handles rather than raw pointers, so that
// a post-accumulate-grad hook can be given its leaf.
std::vector<Tensor> topological_order(const Tensor& root) {
  std::vector<Tensor> order;
  std::unordered_set<TensorImpl*> visited;
  std::vector<std::pair<Tensor, size_t>> stack;  // (tensor, next input to visit)
  stack.emplace_back(root, 0);
  visited.insert(root.impl());
  while (!stack.empty()) {
    auto& [tensor, next] = stack.back();
    const Node* node = tensor.impl()->grad_fn.get();
    if (node && next < node->inputs.size()) {
      const size_t i = next++;
      const Tensor& input = node->inputs[i];
      if (node->gets_gradient(i) && visited.insert(input.impl()).second) stack.emplace_back(input, 0);
      continue;
    }
    order.push_back(std::move(tensor));  // all inputs done: post-order
    stack.pop_back();
  }
  return order;
}

// A leaf's grad += g, allocating on first use (PyTorch's AccumulateGrad). The first gradient is
// copied, since a later in-place += must not write into another tensor's data, unless nothing
// else holds g or its storage: then g itself becomes the .grad, as AccumulateGrad steals a
// gradient nobody else references.
void accumulate(Tensor& grad, Tensor& g) {
  if (!grad.defined()) {
    const bool sole_owner = g.impl_ptr().use_count() == 1 && g.impl()->storage.use_count() == 1;
    grad = sole_owner ? std::move(g) : g.clone();
    return;
  }
  grad.add_(g);
}

// A retained non-leaf's grad: a new tensor each time, g's copy and then grad + g, never changed
// in place (PyTorch 1.13's retain_grad hook), so a .grad taken after one backward keeps its values.
void retain(Tensor& grad, const Tensor& g) { grad = grad.defined() ? add(grad, g) : g.clone(); }

// Throws if an input or the output of `node` was changed in place after the op ran: its backward
// would compute with the new values, silently. Message as PyTorch's, plus which tensor it was.
void check_versions(const Node& node) {
  for (size_t i = 0; i < node.versions.size(); ++i) {
    const auto& [counter, expected] = node.versions[i];
    if (counter == nullptr || *counter == expected) continue;
    const std::string which =
        i < node.inputs.size()
            ? detail::concat("input ", i, " of ", node.name(), " [", dtype_name(node.inputs[i].dtype()), " ",
                             node.inputs[i].shape(), "]")
            : detail::concat("the output of ", node.name(), " [shape ", node.output_shape, "]");
    throw std::runtime_error(detail::concat(
        "backward: one of the variables needed for gradient computation has been modified by an inplace "
        "operation: ",
        which, " is at version ", *counter, "; expected version ", expected,
        " instead. Change it after backward(), or compute a new tensor rather than changing it in place"));
  }
}

}  // namespace

Node::~Node() {
  // Freeing a graph recursively (this node's inputs free their nodes, which free theirs, ...) needs
  // one stack frame per op and overflows on deep graphs. Instead, every tensor this node held goes
  // onto a local list; a tensor that only the list holds gives up its grad_fn's inputs to the list
  // before it dies, so each node dies with no inputs left and no destructor nests in another.
  // A tensor still held elsewhere (by a node not yet freed: a residual connection, an input used
  // twice, or by the user) is only let go of here: whoever drops the last handle frees it the
  // same way.
  auto let_go = [](std::vector<Tensor>& held) {  // the graph no longer holds these (TensorImpl::graph_refs)
    for (const Tensor& t : held)
      if (t.defined()) t.impl()->graph_refs.fetch_sub(1, std::memory_order_release);
  };
  let_go(inputs);
  std::vector<Tensor> pending = std::move(inputs);
  while (!pending.empty()) {
    Tensor tensor = std::move(pending.back());
    pending.pop_back();
    if (!tensor.defined() || tensor.impl_ptr().use_count() != 1) continue;
    TensorImpl& impl = *tensor.impl();
    if (impl.grad.defined()) pending.push_back(std::move(impl.grad));
    std::shared_ptr<Node> node = std::move(impl.grad_fn);
    if (node == nullptr || node.use_count() != 1) continue;
    let_go(node->inputs);
    for (Tensor& input : node->inputs) pending.push_back(std::move(input));
    node->inputs.clear();
  }  // `node` and `tensor` die at the end of each pass, owning nothing deep
}

namespace {

// While a node's backward runs: for each of its inputs, the gradient its other uses have summed
// so far, if only the walk holds it (no other handle, no shared storage), so that the backward may
// add its share into it in place (detail::gradient_to_add_into); nullptr otherwise. None under
// anomaly detection, which checks each returned gradient.
thread_local std::vector<Tensor*> sums_to_add_into;
// And the incoming gradient itself, if only the walk holds it (detail::gradient_output).
thread_local const TensorImpl* gradient_to_write_over = nullptr;

bool held_by_walk_alone(const Tensor& t) {
  return t.impl_ptr().use_count() == 1 && t.impl()->storage.use_count() == 1;
}

struct OfferSums {
  OfferSums(const Node& node, std::unordered_map<TensorImpl*, Tensor>& pending, const Tensor& grad) {
    gradient_to_write_over = !detail::anomaly_enabled && held_by_walk_alone(grad) ? grad.impl() : nullptr;
    sums_to_add_into.assign(node.inputs.size(), nullptr);
    for (size_t i = 0; i < node.inputs.size() && !detail::anomaly_enabled; ++i) {
      // only an input the walk will give this share to: the backward adds it into the sum itself
      auto found = node.gets_gradient(i) ? pending.find(node.inputs[i].impl()) : pending.end();
      if (found != pending.end() && held_by_walk_alone(found->second)) sums_to_add_into[i] = &found->second;
    }
  }
  ~OfferSums() {
    sums_to_add_into.clear();
    gradient_to_write_over = nullptr;
  }
};

// The seed of the walk: the caller's gradient for the output, or 1 for a scalar output.
Tensor backward_seed(const Tensor& output, const Tensor& gradient) {
  check<std::runtime_error>(output.defined(), "backward: called on an undefined tensor");
  check<std::runtime_error>(
      output.requires_grad(), "backward: this tensor (shape ", output.shape(),
      ") does not require grad and has no grad_fn; did you forget requires_grad_() on a "
      "leaf, or compute it under NoGradGuard?");
  if (!gradient.defined()) {
    check<std::runtime_error>(output.numel() == 1,
                              "backward: grad can be implicitly created only for scalar "
                              "outputs; this tensor has shape ",
                              output.shape(), ", so pass backward(gradient)");
    return ones_like(output);
  }
  check(gradient.shape() == output.shape(), "backward: gradient of shape ", gradient.shape(),
        " does not match the tensor's shape ", output.shape());
  return detail::convert(gradient, output.dtype());
}

// One tensor's turn in the walk: `grad` is the whole gradient flowing into it (all its uses have
// added their share). A leaf (or a tensor that retains its grad) adds it into .grad; a tensor made
// by an op runs the op's backward and hands each input its share in `pending`.
void backward_step(TensorImpl& tensor, Tensor& grad, std::unordered_map<TensorImpl*, Tensor>& pending,
                   bool retain_graph) {
  // A leaf's gradient goes nowhere else, so it may become the .grad itself; a retained
  // non-leaf's gradient still flows on into its node below.
  if (!tensor.grad_fn)
    accumulate(tensor.grad, grad);
  else if (tensor.retains_grad)
    retain(tensor.grad, grad);
  Node* node = tensor.grad_fn.get();
  if (!node) return;
  check<std::runtime_error>(static_cast<bool>(node->backward),
                            "backward: trying to backward through the graph "
                            "a second time (through ",
                            node->name(),
                            "); its saved data was freed by the first "
                            "backward. Pass retain_graph = true to the first call if you need to do this.");
  check_versions(*node);

  std::vector<Tensor> input_grads;
  {
    const OfferSums offer(*node, pending, grad);
    input_grads = node->backward(grad, node->inputs);
  }
  assert(input_grads.size() == node->inputs.size());
  if (detail::anomaly_enabled) detail::check_backward_result(*node, input_grads);  // nan or inf: throw here
  for (size_t i = 0; i < node->inputs.size(); ++i) {
    const Tensor& input = node->inputs[i];
    if (!node->gets_gradient(i) || !input_grads[i].defined()) continue;
    assert(input_grads[i].shape() == input.shape());
    // A gradient has its input's dtype (float64 * float32 sends float64 back to the float32 side).
    Tensor g = detail::convert(input_grads[i], input.dtype());
    auto [slot, inserted] = pending.try_emplace(input.impl(), g);
    if (!inserted) slot->second = add(slot->second, g);
  }
  if (!retain_graph && node->saves_tensors) node->backward = nullptr;  // frees what the lambda saved
}

// The leaf's grad() now holds this backward's whole gradient. A copy of the list, so a hook may
// remove itself (or register another, which runs from the next backward on).
void run_post_accumulate_grad_hooks(Tensor leaf) {
  const auto hooks = leaf.impl()->post_accumulate_grad_hooks;
  for (const auto& [id, hook] : hooks) hook(leaf);
}

}  // namespace

Tensor* detail::gradient_to_add_into(size_t i) {
  return i < sums_to_add_into.size() ? sums_to_add_into[i] : nullptr;
}

Tensor detail::gradient_output(const Tensor& grad) {
  if (grad.defined() && grad.impl() == gradient_to_write_over) {
    gradient_to_write_over = nullptr;  // once
    return grad;
  }
  return new_tensor(grad.shape(), grad.dtype());
}

// As micrograd's backward: order the tensors, seed the output, then visit each tensor once,
// outputs before inputs.
void Tensor::backward(const Tensor& gradient, bool retain_graph) const {
  const Tensor seed = backward_seed(*this, gradient);
  NoGradGuard no_grad;  // backward functions compute on data; nothing they do is recorded
  const std::vector<Tensor> order = topological_order(*this);

  std::unordered_map<TensorImpl*, Tensor> pending;  // gradient of each tensor still to be consumed
  pending[impl()] = seed;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    auto found = pending.find(it->impl());
    if (found == pending.end()) continue;  // nothing flowed here
    Tensor grad = std::move(found->second);
    pending.erase(found);
    backward_step(*it->impl(), grad, pending, retain_graph);
    if (!it->impl()->post_accumulate_grad_hooks.empty()) run_post_accumulate_grad_hooks(*it);  // leaves only
  }
}

RemovableHandle Tensor::register_post_accumulate_grad_hook(PostAccumulateGradHook hook) {
  check<std::runtime_error>(defined() && requires_grad(),
                            "register_post_accumulate_grad_hook: cannot register a "
                            "hook on a tensor that does not require grad");
  if (!is_leaf())
    throw std::runtime_error(
        detail::concat("register_post_accumulate_grad_hook: post accumulate grad hooks cannot be "
                       "registered on non-leaf tensors (this one was made by ",
                       grad_fn()->name(), ")"));
  static std::atomic<int64_t> next_id = 0;
  const int64_t id = next_id++;
  impl_->post_accumulate_grad_hooks.emplace_back(id, std::move(hook));
  return RemovableHandle(impl_, id);
}

void RemovableHandle::remove() {
  const std::shared_ptr<TensorImpl> tensor = tensor_.lock();
  if (!tensor) return;
  std::erase_if(tensor->post_accumulate_grad_hooks, [this](const auto& entry) { return entry.first == id_; });
}

}  // namespace minigrad
