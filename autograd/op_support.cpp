// The shared op helpers: checks, recording into the graph, broadcasting strides.
#include "autograd/op_support.hpp"

#include <algorithm>

#include "autograd/ops.hpp"

namespace minigrad::detail {

int64_t normalize_dim(int64_t dim, const Shape& shape, const char* op) {
  const int64_t ndim = static_cast<int64_t>(shape.size());
  const int64_t rank = ndim == 0 ? 1 : ndim;  // a 0-d tensor accepts dim 0 and -1, as PyTorch
  check<std::out_of_range>(dim >= -rank && dim < rank, op, ": dim ", dim,
                           " is out of range for a tensor of shape ", shape, " (expected a dim in ", -rank,
                           "..", rank - 1, ")");
  return dim < 0 ? dim + rank : dim;
}

int64_t normalize_insert_dim(int64_t dim, const Shape& shape, const char* op) {
  const int64_t rank = static_cast<int64_t>(shape.size()) + 1;
  check<std::out_of_range>(dim >= -rank && dim < rank, op, ": dim ", dim,
                           " is out of range for a tensor of shape ", shape, " (expected a dim in ", -rank,
                           "..", rank - 1, ")");
  return dim < 0 ? dim + rank : dim;
}

void check_defined(const Tensor& t, const char* op) { check(t.defined(), op, ": got an undefined tensor"); }

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  // Multiplied as unsigned, which wraps: the product overflows int64 only for a shape with a 0
  // elsewhere ([0, 2^62, 2^62]), whose tensor has no element to address (PyTorch wraps there too).
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] =
        static_cast<int64_t>(static_cast<uint64_t>(strides[d + 1]) * static_cast<uint64_t>(shape[d + 1]));
  return strides;
}

bool repeats_over_leading_dims(const Shape& shape, const Shape& out) {
  size_t first = 0;
  while (first < shape.size() && shape[first] == 1) ++first;
  const size_t kept = shape.size() - first;
  return kept <= out.size() && std::equal(shape.begin() + static_cast<std::ptrdiff_t>(first), shape.end(),
                                          out.end() - static_cast<std::ptrdiff_t>(kept));
}

bool expandable(const Shape& shape, const Shape& out) {
  bool fits = shape.size() <= out.size();
  for (size_t i = 1; fits && i <= shape.size(); ++i)
    fits = shape[shape.size() - i] == 1 || shape[shape.size() - i] == out[out.size() - i];
  return fits;
}

std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out) {
  const auto own = contiguous_strides(shape);
  const size_t offset = out.size() - shape.size();
  std::vector<int64_t> strides(out.size(), 0);
  for (size_t d = 0; d < shape.size(); ++d) strides[offset + d] = shape[d] == 1 ? 0 : own[d];
  return strides;
}

namespace {

// Records the node (see record in op_support.hpp): reads[i] says whether the backward reads input
// i's data; saves_tensors whether it reads any data at all (Node::saves_tensors).
Tensor record_node(Tensor out, OpName name, std::vector<Tensor> inputs, std::vector<bool> reads,
                   bool saves_tensors, Node::BackwardFn backward) {
  if (!is_grad_enabled()) return out;
  check(reads.size() == inputs.size(), "record: ", name.text, " says what it reads of ", reads.size(),
        " inputs, not ", inputs.size());
  std::vector<bool> input_requires_grad;  // the edges of the node: PyTorch makes them now
  for (const Tensor& input : inputs) input_requires_grad.push_back(input.defined() && input.requires_grad());
  if (std::ranges::find(input_requires_grad, true) == input_requires_grad.end()) return out;

  auto node = std::make_shared<Node>();
  node->set_name(name);
  node->inputs = std::move(inputs);
  node->backward = std::move(backward);
  node->output_shape = out.shape();
  node->input_requires_grad = std::move(input_requires_grad);
  node->saves_tensors = saves_tensors;
  for (size_t i = 0; i < node->inputs.size(); ++i) {
    if (!node->inputs[i].defined()) continue;
    TensorImpl& input = *node->inputs[i].impl();
    if (reads[i]) input.data_read_by_graph.store(true, std::memory_order_release);
    input.graph_refs.fetch_add(1, std::memory_order_release);
  }
  if (node->saves_tensors) {  // else the backward reads no data that an in-place change could alter
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const Tensor& input = node->inputs[i];
      const bool read = input.defined() && reads[i];
      node->versions.emplace_back(read ? input.impl()->version : nullptr, read ? input.version() : 0);
    }
    // The output counts only when the op kept an alias of it for its backward (detail::saved(out)),
    // as exp and relu do: the alias shares its version counter, which then has a second owner.
    if (out.impl()->version.use_count() > 1) node->versions.emplace_back(out.impl()->version, out.version());
  }
  out.impl()->requires_grad = true;
  out.impl()->grad_fn = std::move(node);
  return out;
}

}  // namespace

Tensor record(Tensor out, OpName name, std::vector<Tensor> inputs, Node::BackwardFn backward) {
  return record(std::move(out), name, std::move(inputs), Saves::tensors, std::move(backward));
}

Tensor record(Tensor out, OpName name, std::vector<Tensor> inputs, Saves saves, Node::BackwardFn backward) {
  std::vector<bool> reads(inputs.size(), saves == Saves::tensors);
  return record_node(std::move(out), name, std::move(inputs), std::move(reads), saves == Saves::tensors,
                     std::move(backward));
}

Tensor record(Tensor out, OpName name, std::vector<Tensor> inputs, std::vector<bool> reads,
              Node::BackwardFn backward) {
  return record_node(std::move(out), name, std::move(inputs), std::move(reads), true, std::move(backward));
}

Tensor named_as(Tensor out, const Tensor& from, OpName name) {
  if (const auto node = out.grad_fn(); node && node != from.grad_fn()) node->set_name(name);
  return out;
}

Tensor saved(const Tensor& t) { return t.detach(); }

Tensor convert(const Tensor& t, Dtype dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = new_tensor(t.shape(), dtype);
  dispatch(t.dtype(), [&]<typename From>() {
    dispatch(dtype, [&]<typename To>() {
      const From* src = t.data_ptr<From>();
      To* dst = out.data_ptr<To>();
      const int64_t t_numel = t.numel();
      for (int64_t i = 0; i < t_numel; ++i) dst[i] = checked_cast<To>(src[i], "to");
    });
  });
  return out;
}

Tensor scalar_operand(const Tensor& a, Scalar s) {
  check_defined(a, "scalar op");
  // Written unchecked, not by fill_: x * 1e40 overflows to inf in float32, as PyTorch's does.
  Tensor out = new_tensor({}, result_type(a.dtype(), s.dtype()), "scalar op");
  dispatch(out.dtype(), [&]<typename T>() { *out.data_ptr<T>() = s.to<T>(); });
  return out;
}

}  // namespace minigrad::detail
