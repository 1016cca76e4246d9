// Shape ops: reshape, view, flatten, unsqueeze, squeeze, permute, transpose, t, cat, stack, select,
// slice. They move elements and do no arithmetic, so every dtype works the same way, and each
// backward only moves the gradient back to where its input's elements came from.
//
// Storage is always contiguous and row-major. The ops that keep the elements in row-major order
// (reshape, view, flatten, unsqueeze, squeeze) return the same storage under a new shape; the others
// copy into a new contiguous tensor through one of two kernels: strided_copy (permute, transpose, t)
// and copy_along_dim (select, slice, cat, stack).
#include <algorithm>
#include <cassert>
#include <cstring>
#include <numeric>
#include <optional>
#include <type_traits>

#include "autograd/machinery/parallel.hpp"
#include "autograd/machinery/vector_math.hpp"
#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"
#include "autograd/ops_index.hpp"

namespace minigrad {

using detail::check;
using detail::check_defined;
using detail::normalize_dim;
using detail::record;

namespace {

// ---- kernels (not recorded) --------------------------------------------------------------------

/// Product of shape[from], ..., shape[to - 1] (1 for an empty range).
int64_t numel_between(const Shape& shape, int64_t from, int64_t to) {
  return shape_numel(Shape(shape.begin() + from, shape.begin() + to));
}

/// The same storage under another shape with as many elements: a write through one handle is seen
/// through the other (a new TensorImpl, as Tensor::detach makes).
Tensor with_shape(const Tensor& t, const Shape& shape) {
  assert(shape_numel(shape) == t.numel());
  Tensor out = t.detach();
  out.impl()->shape = shape;
  return out;
}

/// A new contiguous tensor of shape `out_shape` whose element (i_0, ..., i_k) is the element of a's
/// storage at offset i_0 * strides[0] + ... + i_k * strides[k].
Tensor strided_copy(const Tensor& a, const Shape& out_shape, const std::vector<int64_t>& strides) {
  Tensor out = detail::new_tensor(out_shape, a.dtype());
  const int64_t ndim = static_cast<int64_t>(out_shape.size());
  dispatch(a.dtype(), [&]<typename T>() {
    const T* src = a.data_ptr<T>();
    T* dst = out.data_ptr<T>();
    // An odometer over the output index, moving the source offset by each dim's stride.
    std::vector<int64_t> index(ndim, 0);
    int64_t offset = 0;
    const int64_t out_numel = out.numel();
    for (int64_t i = 0; i < out_numel; ++i) {
      dst[i] = src[offset];
      for (int64_t d = ndim - 1; d >= 0; --d) {  // carry into the outer dims
        ++index[d];
        offset += strides[d];
        if (index[d] < out_shape[d]) break;
        offset -= strides[d] * out_shape[d];
        index[d] = 0;
      }
    }
  });
  return out;
}

/// permuted_copy's fast path for a permutation that only swaps the last two dims, as attention's
/// k.transpose(-2, -1) does: each [rows, cols] matrix of the batch is transposed in 16 x 16 tiles,
/// so that both the reads and the writes stay in cache. strided_copy computes the same elements.
Tensor transposed_matrices(const Tensor& a, const Shape& out_shape) {
  Tensor out = detail::new_tensor(out_shape, a.dtype());
  const int64_t rows = a.shape()[a.dim() - 2], cols = a.shape()[a.dim() - 1], size = rows * cols;
  const int64_t batch = size == 0 ? 0 : a.numel() / size;
  constexpr int64_t kTile = 16;
  dispatch(a.dtype(), [&]<typename T>() {
    const T* from = a.data_ptr<T>();
    T* to = out.data_ptr<T>();
    detail::parallel_for(batch, detail::grain_for(size), [&](int64_t begin, int64_t end) {
      for (int64_t m = begin; m < end; ++m) {
        const T* src = from + m * size;
        T* dst = to + m * size;
        if constexpr (std::is_same_v<T, float>) {
          if (detail::has_avx2()) {  // the same values, in AVX2 blocks
            detail::transpose_contiguous(src, dst, rows, cols);
            continue;
          }
        }
        for (int64_t i0 = 0; i0 < rows; i0 += kTile)
          for (int64_t j0 = 0; j0 < cols; j0 += kTile)
            for (int64_t i = i0; i < std::min(i0 + kTile, rows); ++i)
              for (int64_t j = j0; j < std::min(j0 + kTile, cols); ++j) dst[j * rows + i] = src[i * cols + j];
      }
    });
  });
  return out;
}

/// a's elements with its dims reordered: out.shape[i] = a.shape[dims[i]] (dims already checked).
Tensor permuted_copy(const Tensor& a, const std::vector<int64_t>& dims) {
  const auto ndim = static_cast<int64_t>(dims.size());
  Shape out_shape;
  for (int64_t d : dims) out_shape.push_back(a.shape()[d]);
  // Nothing to copy; and the dims of an empty tensor may multiply past int64 ([0, 2^63 - 1, 2^63 - 1]).
  if (a.numel() == 0) return detail::new_tensor(out_shape, a.dtype());
  bool last_two_swapped = ndim >= 2 && dims[ndim - 2] == ndim - 1 && dims[ndim - 1] == ndim - 2;
  for (int64_t d = 0; d + 2 < ndim && last_two_swapped; ++d) last_two_swapped = dims[d] == d;
  if (last_two_swapped) {  // tiles pay off from 8 elements; [.., 1, n] keeps its order anyway
    const int64_t rows = a.shape()[ndim - 2], cols = a.shape()[ndim - 1];
    last_two_swapped = rows > 1 && cols > 1 && rows * cols >= 8;
  }
  const std::vector<int64_t> a_strides = detail::contiguous_strides(a.shape());
  std::vector<int64_t> strides;
  for (int64_t d : dims) strides.push_back(a_strides[d]);
  return last_two_swapped ? transposed_matrices(a, out_shape) : strided_copy(a, out_shape, strides);
}

/// Copies `length` entries along `dim` from src (from index src_start) into dst (from dst_start);
/// the shapes agree except along dim, and so do the dtypes. Seen as [outer, size, inner], each of
/// the `outer` blocks is one contiguous run of length * inner elements, copied as bytes.
void copy_along_dim(const Tensor& src, int64_t src_start, const Tensor& dst, int64_t dst_start, int64_t dim,
                    int64_t length) {
  assert(src.dtype() == dst.dtype());
  const Shape& shape = src.shape();
  const int64_t outer = numel_between(shape, 0, dim);
  const int64_t inner = numel_between(shape, dim + 1, static_cast<int64_t>(shape.size()));
  const int64_t src_size = shape[dim], dst_size = dst.shape()[dim];
  const auto bytes = static_cast<int64_t>(element_size(src.dtype()));
  const auto* from = static_cast<const std::byte*>(src.impl()->data());
  auto* to = static_cast<std::byte*>(dst.impl()->data());
  // Nothing to copy, however many blocks there are; and length * inner could overflow int64 only
  // when there are none ([0, 2^63 - 1, 2^63 - 1] sliced along dim 1).
  if (outer == 0 || length == 0 || inner == 0) return;
  const int64_t run = length * inner;  // elements per block
  detail::parallel_for(outer, detail::grain_for(run), [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o)
      std::memcpy(to + (o * dst_size + dst_start) * inner * bytes,
                  from + (o * src_size + src_start) * inner * bytes, static_cast<size_t>(run * bytes));
  });
}

/// a's entries start, ..., start + length - 1 along dim, as a new tensor (the narrow kernel).
Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length) {
  Shape shape = a.shape();
  shape[dim] = length;
  Tensor out = detail::new_tensor(shape, a.dtype());
  copy_along_dim(a, start, out, 0, dim, length);
  return out;
}

// ---- recorded building blocks --------------------------------------------------------------------

/// `a` under a new shape with as many elements, sharing its storage; recorded as `name`.
Tensor reshaped(const Tensor& a, const Shape& shape, detail::OpName name) {
  const Shape input_shape = a.shape();
  return record(with_shape(a, shape), name, {a}, detail::Saves::nothing,
                [input_shape](const Tensor& grad, const std::vector<Tensor>&) {
                  return std::vector<Tensor>{with_shape(grad, input_shape)};
                });
}

/// a's dims reordered by `dims` (already checked); the backward reorders grad by the inverse.
Tensor permuted(const Tensor& a, const std::vector<int64_t>& dims, detail::OpName name) {
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[dims[i]] = static_cast<int64_t>(i);
  return record(permuted_copy(a, dims), name, {a}, detail::Saves::nothing,
                [inverse](const Tensor& grad, const std::vector<Tensor>&) {
                  return std::vector<Tensor>{permuted_copy(grad, inverse)};
                });
}

/// Dims dim0 and dim1 of `a` swapped; `op` names the caller in range errors.
Tensor swapped(const Tensor& a, int64_t dim0, int64_t dim1, const char* op, detail::OpName name) {
  const int64_t d0 = normalize_dim(dim0, a.shape(), op), d1 = normalize_dim(dim1, a.shape(), op);
  std::vector<int64_t> dims(a.shape().size());
  std::iota(dims.begin(), dims.end(), 0);
  if (!dims.empty()) std::swap(dims[d0], dims[d1]);  // a 0-d tensor has nothing to swap
  return permuted(a, dims, name);
}

/// The entries start, ..., start + length - 1 of a along dim, given the shape `out_shape` (the
/// narrowed shape for slice; without the dim for select). The backward puts grad back into zeros.
Tensor narrowed(const Tensor& a, int64_t dim, int64_t start, int64_t length, const Shape& out_shape,
                detail::OpName name) {
  const Tensor part = narrow(a, dim, start, length);
  const Shape part_shape = part.shape(), input_shape = a.shape();
  auto backward = [part_shape, input_shape, dim, start](const Tensor& grad, const std::vector<Tensor>&) {
    Tensor grad_a = zeros(input_shape, {.dtype = grad.dtype()});
    copy_along_dim(with_shape(grad, part_shape), 0, grad_a, start, dim, part_shape[dim]);
    return std::vector<Tensor>{grad_a};
  };
  return record(with_shape(part, out_shape), name, {a}, detail::Saves::nothing, backward);
}

/// `shape` with its -1 (if any) replaced by the size that makes `numel` elements.
Shape infer_size(const Shape& shape, int64_t numel, const char* op) {
  Shape out = shape;
  std::optional<size_t> inferred;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      check(!inferred, op, ": only one dimension can be inferred (-1), got shape ", shape);
      inferred = d;
      out[d] = 1;
    }
    check(out[d] >= 0, op, ": invalid size ", shape[d], " in shape ", shape);
  }
  const int64_t known = shape_numel(out);
  if (inferred) {
    check(known != 0 || numel != 0, op, ": cannot reshape a tensor of 0 elements into shape ", shape,
          " (the -1 could be any size)");
    check(known != 0 && numel % known == 0, op, ": shape ", shape, " is invalid for input of size ", numel);
    out[*inferred] = numel / known;
  }
  check(shape_numel(out) == numel, op, ": shape ", shape, " is invalid for input of size ", numel);
  return out;
}

/// True when a and b have the same number of dims and the same sizes, except along `dim`.
bool same_except(const Shape& a, const Shape& b, int64_t dim) {
  if (a.size() != b.size()) return false;
  for (size_t d = 0; d < a.size(); ++d) {
    if (static_cast<int64_t>(d) != dim && a[d] != b[d]) return false;
  }
  return true;
}

/// A Python index (negative counts from the end) clamped to 0..size, as a[start:end] does.
int64_t clamp_index(int64_t index, int64_t size) {
  if (index < 0) index += size;
  return std::clamp<int64_t>(index, 0, size);
}

}  // namespace

// ---- same storage, new shape ---------------------------------------------------------------------

Tensor reshape(const Tensor& a, const Shape& shape) {
  check_defined(a, "reshape");
  // PyTorch 1.13's reshape returns an alias with its own node name, even for the same shape.
  return reshaped(a, infer_size(shape, a.numel(), "reshape"), "ReshapeAliasBackward0");
}

Tensor view(const Tensor& a, const Shape& shape) {
  check_defined(a, "view");
  return reshaped(a, infer_size(shape, a.numel(), "view"), "ViewBackward0");
}

Tensor flatten(const Tensor& a, int64_t start_dim, int64_t end_dim) {
  check_defined(a, "flatten");
  const Shape& shape = a.shape();
  const int64_t start = normalize_dim(start_dim, shape, "flatten");
  const int64_t end = normalize_dim(end_dim, shape, "flatten");
  check(start <= end, "flatten: start_dim ", start_dim, " comes after end_dim ", end_dim, " for shape ",
        shape);
  // flatten is a reshape in PyTorch, named as one; a 0-d tensor flattens to [1].
  if (shape.empty()) return reshaped(a, {1}, "ReshapeAliasBackward0");
  if (start == end) return a;  // nothing to merge: PyTorch returns the tensor itself

  Shape out(shape.begin(), shape.begin() + start);
  out.push_back(numel_between(shape, start, end + 1));
  out.insert(out.end(), shape.begin() + end + 1, shape.end());
  return reshaped(a, out, "ReshapeAliasBackward0");
}

Tensor unsqueeze(const Tensor& a, int64_t dim) {
  check_defined(a, "unsqueeze");
  const int64_t d = detail::normalize_insert_dim(dim, a.shape(), "unsqueeze");
  Shape shape = a.shape();
  shape.insert(shape.begin() + d, 1);
  return reshaped(a, shape, "UnsqueezeBackward0");
}

Tensor squeeze(const Tensor& a) {
  check_defined(a, "squeeze");
  Shape shape;
  for (int64_t size : a.shape()) {
    if (size != 1) shape.push_back(size);
  }
  return reshaped(a, shape, "SqueezeBackward0");
}

Tensor squeeze(const Tensor& a, int64_t dim) {
  check_defined(a, "squeeze");
  const int64_t d = normalize_dim(dim, a.shape(), "squeeze");
  Shape shape = a.shape();
  // Only a size-1 dim goes; squeezing any other size changes nothing, as in PyTorch.
  if (!shape.empty() && shape[d] == 1) shape.erase(shape.begin() + d);
  return reshaped(a, shape, "SqueezeBackward1");
}

// ---- reordered dims (copies) ---------------------------------------------------------------------

Tensor permute(const Tensor& a, const std::vector<int64_t>& dims) {
  check_defined(a, "permute");
  check(dims.size() == a.shape().size(), "permute: got ", dims.size(), " dims ", Shape(dims),
        " for a tensor of shape ", a.shape(), " (expected one per dim)");
  std::vector<int64_t> normalized;
  std::vector<bool> seen(dims.size(), false);
  for (int64_t dim : dims) {
    const int64_t d = normalize_dim(dim, a.shape(), "permute");
    check(!seen[d], "permute: dims ", Shape(dims), " are not a permutation of the dims of shape ", a.shape(),
          " (dim ", d, " appears twice)");
    seen[d] = true;
    normalized.push_back(d);
  }
  return permuted(a, normalized, "PermuteBackward0");
}

Tensor transpose(const Tensor& a, int64_t dim0, int64_t dim1) {
  check_defined(a, "transpose");
  return swapped(a, dim0, dim1, "transpose", "TransposeBackward0");
}

Tensor t(const Tensor& a) {
  check_defined(a, "t");
  check(a.dim() <= 2, "t: expects a tensor with at most 2 dims, got shape ", a.shape(),
        "; use transpose(dim0, dim1)");
  return swapped(a, 0, -1, "t", "TBackward0");  // dims 0 and -1 are the same dim below 2-d
}

// ---- joining ---------------------------------------------------------------------------------------

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  check(!tensors.empty(), "cat: expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    check_defined(tensors[i], "cat");
    check(tensors[i].dim() > 0, "cat: tensor ", i, " is 0-d and cannot be concatenated (use stack)");
  }
  // PyTorch skips 1-d empty tensors (shape [0]) whatever the other shapes, a rule kept from its
  // early versions so that `torch.cat([torch.tensor([]), x])` works as a running accumulator. They
  // still take part in the dtype; the shape comes from the first tensor that is not skipped.
  auto skipped = [](const Tensor& t) { return t.shape() == Shape{0}; };
  size_t reference = 0;
  while (reference + 1 < tensors.size() && skipped(tensors[reference])) ++reference;
  const Shape& first = tensors[reference].shape();
  const int64_t d = normalize_dim(dim, first, "cat");

  Shape out_shape = first;
  out_shape[d] = 0;
  Dtype dtype = tensors[0].dtype();
  for (size_t i = 0; i < tensors.size(); ++i) {
    dtype = promote_types(dtype, tensors[i].dtype());
    if (skipped(tensors[i]) && i != reference) continue;
    const Shape& shape = tensors[i].shape();
    check(same_except(shape, first, d), "cat: sizes of tensors must match except in dim ", d, "; tensor ",
          reference, " has shape ", first, " but tensor ", i, " has shape ", shape);
    out_shape[d] += shape[d];
  }

  Tensor out = detail::new_tensor(out_shape, dtype);
  std::vector<int64_t> starts;  // where each input begins along d; -1 for a skipped one
  int64_t start = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (skipped(tensors[i]) && i != reference) {
      starts.push_back(-1);
      continue;
    }
    starts.push_back(start);
    copy_along_dim(detail::convert(tensors[i], dtype), 0, out, start, d, tensors[i].shape()[d]);
    start += tensors[i].shape()[d];
  }
  auto backward = [d, starts](const Tensor& grad, const std::vector<Tensor>& inputs) {
    std::vector<Tensor> grads(inputs.size());  // each input's slice of grad; empty for a skipped one
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].requires_grad()) continue;
      grads[i] = starts[i] < 0 ? zeros({0}, {.dtype = grad.dtype()})
                               : narrow(grad, d, starts[i], inputs[i].shape()[d]);
    }
    return grads;
  };
  return record(out, "CatBackward0", tensors, detail::Saves::nothing, backward);
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  check(!tensors.empty(), "stack: expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    check_defined(tensors[i], "stack");
    check(tensors[i].shape() == tensors[0].shape(),
          "stack: expects tensors of equal shape, but tensor 0 has shape ", tensors[0].shape(),
          " and tensor ", i, " has shape ", tensors[i].shape());
  }
  const int64_t d = detail::normalize_insert_dim(dim, tensors[0].shape(), "stack");
  // The inputs with a size-1 dim at d, joined along it: one StackBackward0 node straight on the
  // inputs (as PyTorch), its backward the matching slice of grad without that dim.
  Tensor out;
  {
    NoGradGuard no_grad;
    std::vector<Tensor> unsqueezed;
    for (const Tensor& input : tensors) unsqueezed.push_back(unsqueeze(input, d));
    out = cat(unsqueezed, d);
  }
  auto backward = [d](const Tensor& grad, const std::vector<Tensor>& inputs) {
    std::vector<Tensor> grads(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].requires_grad())
        grads[i] = reshape(narrow(grad, d, static_cast<int64_t>(i), 1), inputs[i].shape());
    }
    return grads;
  };
  return record(out, "StackBackward0", tensors, detail::Saves::nothing, backward);
}

// ---- picking entries along one dim (copies) -------------------------------------------------------

Tensor select(const Tensor& a, int64_t dim, int64_t index) {
  check_defined(a, "select");
  check(a.dim() > 0, "select: cannot select from a 0-d tensor");
  const int64_t d = normalize_dim(dim, a.shape(), "select");
  const int64_t size = a.shape()[d];
  check<std::out_of_range>(index >= -size && index < size, "select: index ", index,
                           " is out of range for dim ", d, " (size ", size, ") of a tensor of shape ",
                           a.shape());
  Shape out_shape = a.shape();
  out_shape.erase(out_shape.begin() + d);
  return narrowed(a, d, index < 0 ? index + size : index, 1, out_shape, "SelectBackward0");
}

Tensor slice(const Tensor& a, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
             int64_t step) {
  check_defined(a, "slice");
  check(a.dim() > 0, "slice: cannot slice a 0-d tensor");
  check(step > 0, "slice: step must be greater than zero, got ", step);
  const int64_t d = normalize_dim(dim, a.shape(), "slice");
  const int64_t size = a.shape()[d];
  const int64_t from = start ? clamp_index(*start, size) : 0;
  const int64_t to = std::max(from, end ? clamp_index(*end, size) : size);  // start >= end: an empty dim
  if (step > 1) return detail::named_as(index_select(a, d, arange(from, to, step)), a, "SliceBackward0");
  Shape out_shape = a.shape();
  out_shape[d] = to - from;
  return narrowed(a, d, from, to - from, out_shape, "SliceBackward0");
}

}  // namespace minigrad
