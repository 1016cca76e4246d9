// Indexing ops: picks by an int64 index (embedding, index_select, index, gather), adds at
// picked places (index_add, scatter_add), triangles and one_hot. Python's x[...] (Tensor::index),
// split and chunk, which only combine other ops, are in indexing.cpp.
//
// Two pairs of kernels do all the work. Along one dim, seen as [outer, size, inner]:
// pick_rows copies the rows index[0], index[1], ... and add_rows adds rows back at those
// places. Position by position (gather/scatter_add): for_each_indexed walks every position of
// the index tensor, and the op reads or adds at the place it names. Each pick's backward is the
// matching add into zeros, so a repeated index collects every share of the gradient.
#include "autograd/ops_index.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>

#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"

namespace minigrad {

using detail::check;
using detail::check_defined;
using detail::normalize_dim;
using detail::record;

namespace {

// ---- checks ------------------------------------------------------------------------------------

/// Throws std::invalid_argument unless `index` is a defined int64 tensor.
void check_index_dtype(const Tensor& index, const char* op, const char* what = "index") {
  check_defined(index, op);
  check(index.dtype() == kInt64, op, ": ", what, " must be an int64 tensor, got ", dtype_name(index.dtype()));
}

/// The index values, each checked to lie in 0..size-1 (or -size..size-1 with allow_negative,
/// then made non-negative). `describe` completes the message: "for dim 0 of size 2 (...)".
std::vector<int64_t> checked_indices(const Tensor& index, int64_t size, bool allow_negative, const char* op,
                                     const std::string& describe) {
  std::vector<int64_t> out(index.data_ptr<int64_t>(), index.data_ptr<int64_t>() + index.numel());
  for (int64_t& i : out) {
    const bool ok = (i >= 0 || (allow_negative && i >= -size)) && i < size;
    check<std::out_of_range>(ok, op, ": index ", i, " is out of range ", describe);
    if (i < 0) i += size;
  }
  return out;
}

std::string dim_description(int64_t dim, const Shape& shape) {
  return detail::concat("for dim ", dim, " of size ", shape[dim], " (tensor of shape ", shape, ")");
}

// ---- along one dim: [outer, size, inner] ---------------------------------------------------------

int64_t outer_of(const Shape& shape, int64_t dim) {
  return shape_numel(Shape(shape.begin(), shape.begin() + dim));
}
int64_t inner_of(const Shape& shape, int64_t dim) {
  return shape_numel(Shape(shape.begin() + dim + 1, shape.end()));
}

/// A new tensor of `out_shape` (a's elements: [outer, n, inner] with n = rows.size()) holding
/// a's rows rows[0], rows[1], ... along dim.
Tensor pick_rows(const Tensor& a, int64_t dim, const std::vector<int64_t>& rows, const Shape& out_shape) {
  Tensor out = detail::new_tensor(out_shape, a.dtype());
  if (out.numel() == 0) return out;  // nothing to copy (and an empty tensor may have no storage)
  const int64_t outer = outer_of(a.shape(), dim), inner = inner_of(a.shape(), dim), size = a.shape()[dim];
  const auto n = static_cast<int64_t>(rows.size());
  const auto bytes = static_cast<int64_t>(element_size(a.dtype()));
  const auto* from = static_cast<const std::byte*>(a.impl()->data());
  auto* to = static_cast<std::byte*>(out.impl()->data());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n; ++j) {
      std::memcpy(to + (o * n + j) * inner * bytes, from + (o * size + rows[j]) * inner * bytes,
                  static_cast<size_t>(inner * bytes));
    }
  }
  return out;
}

/// dst[rows[j]] += alpha * src[j] along dim, for every j (src is [outer, n, inner] with dst's outer
/// and inner; dtypes equal). A row listed in `skip` gets nothing (embedding's padding row).
void add_rows(Tensor dst, int64_t dim, const std::vector<int64_t>& rows, const Tensor& src, Scalar alpha,
              std::optional<int64_t> skip = std::nullopt) {
  assert(dst.dtype() == src.dtype());
  const int64_t outer = outer_of(dst.shape(), dim), inner = inner_of(dst.shape(), dim),
                size = dst.shape()[dim];
  const auto n = static_cast<int64_t>(rows.size());
  dispatch_numeric(dst.dtype(), "index_add", [&]<typename T>() {
    T* d = dst.data_ptr<T>();
    const T* s = src.data_ptr<T>();
    const T a = alpha.to<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < n; ++j) {
        if (skip && rows[j] == *skip) continue;
        T* row = d + (o * size + rows[j]) * inner;
        const T* add = s + (o * n + j) * inner;
        for (int64_t k = 0; k < inner; ++k) {
          if constexpr (detail::wraps<T>)  // int64 wraps on overflow, as PyTorch's
            row[k] = detail::wrapping_add(row[k], detail::wrapping_mul(a, add[k]));
          else
            row[k] = static_cast<T>(row[k] + a * add[k]);
        }
      }
    }
  });
}

/// pick_rows recorded as `name`: the backward adds grad back into zeros of a's shape (skipping
/// the row `skip`).
Tensor picked(const Tensor& a, int64_t dim, std::vector<int64_t> rows, const Shape& out_shape,
              detail::OpName name, std::optional<int64_t> skip = std::nullopt) {
  Tensor out = pick_rows(a, dim, rows, out_shape);
  const Shape input_shape = a.shape();
  return record(out, name, {a},
                [input_shape, dim, rows, skip](const Tensor& grad, const std::vector<Tensor>&) {
                  Tensor grad_a = zeros(input_shape, {.dtype = grad.dtype()});
                  add_rows(grad_a, dim, rows, grad, 1, skip);
                  return std::vector<Tensor>{grad_a};
                });
}

/// index_select's index: int64 and at most 1-d.
void check_vector_index(const Tensor& index, const char* op) {
  check_index_dtype(index, op);
  check(index.dim() <= 1, op, ": index must be 1-d (or 0-d), got shape ", index.shape());
}

// ---- position by position (gather, scatter_add) --------------------------------------------------

/// For every position p of `index` (row-major, i counting them), calls
/// f(i, offset in `other` of p, offset in `target` of p with p[dim] replaced by index[p]).
/// target and other have index's number of dims; their shapes are at least index's (target's
/// except along dim), and the index values are already checked against target.shape()[dim].
template <typename F>
void for_each_indexed(const Tensor& index, int64_t dim, const Shape& target, const Shape& other, F&& f) {
  const Shape& shape = index.shape();
  const auto ndim = static_cast<int64_t>(shape.size());
  const auto st = detail::contiguous_strides(target), so = detail::contiguous_strides(other);
  const int64_t* idx = index.data_ptr<int64_t>();
  std::vector<int64_t> pos(ndim, 0);
  int64_t off_t = 0, off_o = 0;  // offsets of pos in target (without dim) and in other
  for (int64_t i = 0; i < index.numel(); ++i) {
    f(i, off_o, off_t + idx[i] * (ndim ? st[dim] : 0));
    for (int64_t d = ndim - 1; d >= 0; --d) {  // carry into the outer dims
      ++pos[d];
      off_o += so[d];
      if (d != dim) off_t += st[d];
      if (pos[d] < shape[d]) break;
      off_o -= so[d] * shape[d];
      if (d != dim) off_t -= st[d] * shape[d];
      pos[d] = 0;
    }
  }
}

/// Checks shared by gather and scatter_add: index is int64 with a's number of dims, each size at
/// most a's except along dim (and at most `src`'s everywhere, when given); values in range.
void check_positional(const Tensor& a, int64_t dim, const Tensor& index, const Tensor* src, const char* op) {
  check_index_dtype(index, op);
  check(index.dim() == a.dim(), op, ": index has ", index.dim(), " dims but the input has ", a.dim(),
        " (index ", index.shape(), ", input ", a.shape(), "); they must have the same number of dims");
  for (int64_t d = 0; d < a.dim(); ++d) {
    check(d == dim || index.shape()[d] <= a.shape()[d], op, ": index ", index.shape(),
          " is larger than input ", a.shape(), " in dim ", d);
    if (src)
      check(index.shape()[d] <= src->shape()[d], op, ": index ", index.shape(), " is larger than src ",
            src->shape(), " in dim ", d);
  }
  const int64_t size = a.dim() == 0 ? 1 : a.shape()[dim];
  checked_indices(index, size, false, op, a.dim() == 0 ? "for a 0-d input" : dim_description(dim, a.shape()));
}

/// The gather kernel: out (index's shape) [p] = a[p with dim replaced by index[p]].
Tensor gather_kernel(const Tensor& a, int64_t dim, const Tensor& index) {
  Tensor out = detail::new_tensor(index.shape(), a.dtype());
  dispatch(a.dtype(), [&]<typename T>() {
    const T* src = a.data_ptr<T>();
    T* dst = out.data_ptr<T>();
    for_each_indexed(index, dim, a.shape(), index.shape(),
                     [&](int64_t i, int64_t, int64_t at) { dst[i] = src[at]; });
  });
  return out;
}

/// The scatter_add kernel, in place: dst[p with dim replaced by index[p]] += src[p] (src's own offset).
void scatter_add_kernel(Tensor dst, int64_t dim, const Tensor& index, const Tensor& src) {
  dispatch_numeric(dst.dtype(), "scatter_add", [&]<typename T>() {
    T* d = dst.data_ptr<T>();
    const T* s = src.data_ptr<T>();
    for_each_indexed(index, dim, dst.shape(), src.shape(), [&](int64_t, int64_t from, int64_t at) {
      d[at] = detail::wrapping_add(d[at], s[from]);
    });
  });
}

}  // namespace

// ---- picking entries by index ----------------------------------------------------------------------

Tensor embedding(const Tensor& weight, const Tensor& indices, std::optional<int64_t> padding_idx) {
  check_defined(weight, "embedding");
  check_defined(indices, "embedding");
  check(indices.dtype() == kInt64 || weight.dtype() != kInt64,
        "embedding: the weight is int64 and the indices ", dtype_name(indices.dtype()),
        ": were they swapped? minigrad::embedding takes (weight, indices), as "
        "torch.embedding; F::embedding takes (input, weight), as F.embedding");
  check_index_dtype(indices, "embedding", "indices");
  check(weight.dim() == 2, "embedding: weight must be 2-d [num_embeddings, embedding_dim], got shape ",
        weight.shape());
  const int64_t rows = weight.shape()[0];
  if (padding_idx) {
    check<std::out_of_range>(*padding_idx >= -rows && *padding_idx < rows, "embedding: padding_idx ",
                             *padding_idx, " is out of range for ", rows, " embeddings");
    if (*padding_idx < 0) *padding_idx += rows;
  }
  std::vector<int64_t> picks(indices.data_ptr<int64_t>(), indices.data_ptr<int64_t>() + indices.numel());
  for (int64_t i : picks) {
    check<std::out_of_range>(i >= 0 && i < rows, "embedding: index ", i, " is out of range for ", rows,
                             " embeddings");
  }
  Shape out_shape = indices.shape();
  out_shape.push_back(weight.shape()[1]);
  return picked(weight, 0, std::move(picks), out_shape, "EmbeddingBackward0", padding_idx);
}

Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index) {
  check_defined(a, "index_select");
  check_vector_index(index, "index_select");
  const int64_t d = normalize_dim(dim, a.shape(), "index_select");
  if (a.dim() == 0) {  // a 0-d input has one entry, as if it were [1]
    checked_indices(index, 1, false, "index_select", "for a 0-d input");
    return reshape(a, {}).clone();
  }
  std::vector<int64_t> rows =
      checked_indices(index, a.shape()[d], false, "index_select", dim_description(d, a.shape()));
  Shape out_shape = a.shape();
  out_shape[d] = static_cast<int64_t>(rows.size());
  return picked(a, d, std::move(rows), out_shape, "IndexSelectBackward0");
}

Tensor index(const Tensor& a, const Tensor& indices) {
  check_defined(a, "index");
  check_index_dtype(indices, "index", "an index tensor");
  check(a.dim() > 0, "index: cannot index a 0-d tensor with a tensor");
  std::vector<int64_t> rows =
      checked_indices(indices, a.shape()[0], true, "index", dim_description(0, a.shape()));
  Shape out_shape = indices.shape();
  out_shape.insert(out_shape.end(), a.shape().begin() + 1, a.shape().end());
  return picked(a, 0, std::move(rows), out_shape, "IndexBackward0");
}

Tensor gather(const Tensor& a, int64_t dim, const Tensor& index) {
  check_defined(a, "gather");
  const int64_t d = normalize_dim(dim, a.shape(), "gather");
  check_positional(a, d, index, nullptr, "gather");
  const Tensor own_index = index.clone();  // the backward's copy: a later change to index cannot reach it
  const Shape input_shape = a.shape();
  return record(gather_kernel(a, d, index), "GatherBackward0", {a},
                [input_shape, d, own_index](const Tensor& grad, const std::vector<Tensor>&) {
                  Tensor grad_a = zeros(input_shape, {.dtype = grad.dtype()});
                  scatter_add_kernel(grad_a, d, own_index, grad);
                  return std::vector<Tensor>{grad_a};
                });
}

// ---- adding into entries picked by index ----------------------------------------------------------

namespace {
/// index_add's checks; returns the checked, non-negative dim and the index values.
std::pair<int64_t, std::vector<int64_t>> check_index_add(const Tensor& a, int64_t dim, const Tensor& index,
                                                         const Tensor& source, const char* op) {
  check_defined(a, op);
  check_defined(source, op);
  check_vector_index(index, op);
  check(a.dtype() != kBool, op, ": bool tensors are not supported");
  check(source.dtype() == a.dtype(), op, ": the tensor (", dtype_name(a.dtype()), ") and source (",
        dtype_name(source.dtype()), ") must have the same dtype");
  const int64_t d = normalize_dim(dim, a.shape(), op);
  check(a.dim() > 0, op, ": cannot add into a 0-d tensor along a dim");
  Shape expected = a.shape();
  expected[d] = index.numel();
  check(source.shape() == expected, op, ": source of shape ", source.shape(), " does not match: with ",
        index.numel(), " indices into a tensor of shape ", a.shape(), " along dim ", d, " it must be ",
        expected);
  return {d, checked_indices(index, a.shape()[d], false, op, dim_description(d, a.shape()))};
}
}  // namespace

Tensor index_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha) {
  const auto checked = check_index_add(a, dim, index, source, "index_add");
  const auto d = checked.first;  // named copies, not structured bindings: the lambda below captures them
  const auto rows = checked.second;
  Tensor out = a.detach().clone();
  add_rows(out, d, rows, source, alpha);
  const Shape source_shape = source.shape();
  return record(out, "IndexAddBackward0", {a, source},
                [d, rows, alpha, source_shape](const Tensor& grad, const std::vector<Tensor>& in) {
                  Tensor grad_source;
                  if (in[1].requires_grad()) grad_source = mul(pick_rows(grad, d, rows, source_shape), alpha);
                  return std::vector<Tensor>{grad, grad_source};
                });
}

Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha) {
  detail::check_inplace(*this, "index_add_");
  auto [d, rows] = check_index_add(*this, dim, index, source, "index_add_");
  add_rows(*this, d, rows, source, alpha);
  detail::bump_version(*this);
  return *this;
}

Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src) {
  check_defined(a, "scatter_add");
  check_defined(src, "scatter_add");
  check(src.dtype() == a.dtype(), "scatter_add: the tensor (", dtype_name(a.dtype()), ") and src (",
        dtype_name(src.dtype()), ") must have the same dtype");
  check(src.dim() == a.dim(), "scatter_add: src has ", src.dim(), " dims but the input has ", a.dim());
  const int64_t d = normalize_dim(dim, a.shape(), "scatter_add");
  check_positional(a, d, index, &src, "scatter_add");
  Tensor out = a.detach().clone();
  scatter_add_kernel(out, d, index, src);
  const Tensor own_index = index.clone();
  const Shape src_shape = src.shape();
  return record(out, "ScatterAddBackward0", {a, src},
                [d, own_index, src_shape](const Tensor& grad, const std::vector<Tensor>& in) {
                  Tensor grad_src;
                  if (in[1].requires_grad()) {
                    // grad_src[p] = grad[p with dim replaced by index[p]]; 0 where index does not reach
                    grad_src = zeros(src_shape, {.dtype = grad.dtype()});
                    dispatch_floating(grad.dtype(), "scatter_add", [&]<typename T>() {
                      const T* g = grad.data_ptr<T>();
                      T* out_grad = grad_src.data_ptr<T>();
                      for_each_indexed(own_index, d, grad.shape(), src_shape,
                                       [&](int64_t, int64_t to, int64_t at) { out_grad[to] = g[at]; });
                    });
                  }
                  return std::vector<Tensor>{grad, grad_src};
                });
}

// ---- triangles, one-hot -----------------------------------------------------------------------------

namespace {
/// a with every entry (r, c) of each matrix in the last two dims zeroed unless keep(c - r).
template <typename Keep>
Tensor triangle_kernel(const Tensor& a, Keep keep) {
  Tensor out = a.detach().clone();
  const int64_t rows = a.shape()[a.dim() - 2], cols = a.shape()[a.dim() - 1];
  const int64_t matrices = rows * cols == 0 ? 0 : a.numel() / (rows * cols);
  dispatch(a.dtype(), [&]<typename T>() {
    T* data = out.data_ptr<T>();
    for (int64_t m = 0; m < matrices; ++m) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          if (!keep(c - r)) data[(m * rows + r) * cols + c] = T(0);
        }
      }
    }
  });
  return out;
}

Tensor triangle(const Tensor& a, int64_t diagonal, bool lower, const char* op, detail::OpName name) {
  check_defined(a, op);
  check(a.dim() >= 2, op, ": expects a tensor with at least 2 dims (a matrix or a batch of them), got shape ",
        a.shape());
  auto keep = [diagonal, lower](int64_t offset) { return lower ? offset <= diagonal : offset >= diagonal; };
  return record(triangle_kernel(a, keep), name, {a}, [keep](const Tensor& grad, const std::vector<Tensor>&) {
    return std::vector<Tensor>{triangle_kernel(grad, keep)};
  });
}
}  // namespace

Tensor tril(const Tensor& a, int64_t diagonal) {
  return triangle(a, diagonal, true, "tril", "TrilBackward0");
}
Tensor triu(const Tensor& a, int64_t diagonal) {
  return triangle(a, diagonal, false, "triu", "TriuBackward0");
}

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  check_index_dtype(indices, "one_hot", "indices");
  const int64_t* idx = indices.data_ptr<int64_t>();
  const int64_t n = indices.numel();
  if (num_classes == -1) {
    check(n > 0, "one_hot: cannot infer the number of classes from an empty tensor (give num_classes)");
    const int64_t largest = *std::max_element(idx, idx + n);
    check(largest < std::numeric_limits<int64_t>::max(), "one_hot: class value ", largest,
          " leaves no number of classes (largest + 1) an int64 can hold");
    num_classes = largest + 1;
  }
  check(num_classes >= 0, "one_hot: num_classes must be -1 or non-negative, got ", num_classes);
  Shape shape = indices.shape();
  shape.push_back(num_classes);
  Tensor out = zeros(shape, {.dtype = kInt64});
  int64_t* data = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    check(idx[i] >= 0, "one_hot: class values must be non-negative, got ", idx[i]);
    check(idx[i] < num_classes, "one_hot: class value ", idx[i], " must be smaller than num_classes ",
          num_classes);
    data[i * num_classes + idx[i]] = 1;
  }
  return out;
}

// ---- Tensor methods ----------------------------------------------------------------------------------

Tensor Tensor::operator[](const Tensor& index) const { return minigrad::index(*this, index); }
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return minigrad::index_select(*this, dim, index);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index) const { return minigrad::gather(*this, dim, index); }
Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha) const {
  return minigrad::index_add(*this, dim, index, source, alpha);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return minigrad::scatter_add(*this, dim, index, src);
}
Tensor Tensor::tril(int64_t diagonal) const { return minigrad::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return minigrad::triu(*this, diagonal); }

}  // namespace minigrad
