// Python's x[...] (Tensor::index with integers, Slice, None, Ellipsis and a tensor), split and
// chunk. They record no node of their own: each entry or piece is one of the ops of ops.hpp and
// ops_index.hpp (select, slice, unsqueeze, index, permute), so their backward is those ops'; the
// node of a piece or of a tensor index is named as PyTorch names it (SplitBackward0, IndexBackward0).
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"
#include "autograd/ops_index.hpp"

namespace minigrad {

using detail::check;
using detail::check_defined;
using detail::normalize_dim;

// ---- Python's x[...] -----------------------------------------------------------------------------------

namespace {
/// `a[:, ..., idx]` with idx at dim d: a's dim d replaced by idx's dims, as PyTorch's advanced
/// indexing with one tensor. Moves dim d to the front, picks there, moves the picked dims back.
Tensor index_along(const Tensor& a, int64_t d, const Tensor& idx) {
  // PyTorch records a 0-d index as a select, and any other as an index
  const detail::OpName name =
      idx.dim() == 0 ? detail::OpName("SelectBackward0") : detail::OpName("IndexBackward0");
  if (d == 0) return detail::named_as(minigrad::index(a, idx), a, name);
  std::vector<int64_t> order{d};
  for (int64_t k = 0; k < a.dim(); ++k) {
    if (k != d) order.push_back(k);
  }
  const Tensor picked = minigrad::index(minigrad::permute(a, order), idx);
  // picked is [idx dims..., dims before d..., dims after d...]
  const int64_t k_idx = idx.dim();
  std::vector<int64_t> back;
  for (int64_t k = 0; k < d; ++k) back.push_back(k_idx + k);
  for (int64_t k = 0; k < k_idx; ++k) back.push_back(k);
  for (int64_t k = k_idx + d; k < picked.dim(); ++k) back.push_back(k);
  return detail::named_as(minigrad::permute(picked, back), a, name);
}
}  // namespace

Tensor Tensor::index(std::initializer_list<indexing::TensorIndex> indices) const {
  return index(std::vector<indexing::TensorIndex>(indices));
}

Tensor Tensor::index(const std::vector<indexing::TensorIndex>& indices) const {
  using Kind = indexing::TensorIndex::Kind;
  check_defined(*this, "index");
  // How many of this tensor's dims the entries name; Ellipsis stands for the rest.
  int64_t named = 0, ellipses = 0, tensors = 0;
  for (const auto& entry : indices) {
    named += entry.kind() == Kind::Integer || entry.kind() == Kind::Slice || entry.kind() == Kind::Tensor;
    ellipses += entry.kind() == Kind::Ellipsis;
    tensors += entry.kind() == Kind::Tensor;
  }
  check(ellipses <= 1, "index: an index can only have a single ellipsis (...)");
  check(tensors <= 1, "index: at most one tensor entry is supported, got ", tensors);
  check<std::out_of_range>(named <= dim(), "index: too many indices (", named, ") for a tensor of shape ",
                           shape());

  // Each entry applied in turn; d is the dim of `out` the next entry acts on.
  Tensor out = *this;
  int64_t d = 0;
  for (const auto& entry : indices) {
    switch (entry.kind()) {
      case Kind::Integer:
        out = minigrad::select(out, d, entry.integer());
        break;
      case Kind::None:
        out = minigrad::unsqueeze(out, d++);
        break;
      case Kind::Ellipsis:
        d += dim() - named;
        break;
      case Kind::Slice: {
        const indexing::Slice& s = entry.slice();
        out = minigrad::slice(out, d++, s.start, s.stop, s.step.value_or(1));
        break;
      }
      case Kind::Tensor: {
        const Tensor& idx = entry.tensor();
        out = index_along(out, d, idx);
        d += idx.dim();
        break;
      }
    }
  }
  return out;
}

// ---- writing into x[...] -------------------------------------------------------------------------------

namespace {
/// The flat offset into x's (contiguous) data of each element x.index(indices) reads, as int64 in
/// the selection's shape. Built one dim of x at a time, from arange(size) * stride picked by that
/// dim's entry, so it takes memory for the selection only. The entries must be valid for x.
Tensor offsets_of(const Tensor& x, const std::vector<indexing::TensorIndex>& indices) {
  using Kind = indexing::TensorIndex::Kind;
  const std::vector<int64_t> strides = detail::contiguous_strides(x.shape());
  int64_t named = 0;
  for (const auto& entry : indices)
    named += entry.kind() == Kind::Integer || entry.kind() == Kind::Slice || entry.kind() == Kind::Tensor;
  Tensor offsets = zeros({}, {.dtype = kInt64});
  int64_t k = 0;  // the dim of x the next entry names
  // offsets gains the dims of `picked` (positions along dim k) after its own
  const auto add = [&](const Tensor& picked) {
    Shape shape = offsets.shape();
    shape.resize(shape.size() + static_cast<size_t>(picked.dim()), 1);
    offsets = offsets.reshape(shape) + picked * strides[static_cast<size_t>(k++)];
  };
  const auto positions = [&] { return arange(x.shape()[static_cast<size_t>(k)]); };
  for (const auto& entry : indices) {
    switch (entry.kind()) {
      case Kind::Integer:
        add(select(positions(), 0, entry.integer()));
        break;
      case Kind::None:
        offsets = offsets.unsqueeze(-1);
        break;
      case Kind::Ellipsis:
        for (int64_t n = x.dim() - named; n > 0; --n) add(positions());
        break;
      case Kind::Slice: {
        const indexing::Slice& s = entry.slice();
        add(slice(positions(), 0, s.start, s.stop, s.step.value_or(1)));
        break;
      }
      case Kind::Tensor:
        add(minigrad::index(positions(), entry.tensor()));
        break;
    }
  }
  while (k < x.dim()) add(positions());
  return offsets;
}
}  // namespace

Tensor& Tensor::index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& values) {
  detail::check_inplace(*this, "index_put_");
  detail::check_defined(values, "index_put_");
  check<std::runtime_error>(!is_grad_enabled() || !values.requires_grad(), "index_put_: the values (shape ",
                            values.shape(),
                            ") require grad, but in-place changes are not recorded, so backward would "
                            "miss them; build the tensor with cat, stack or where instead, or detach() "
                            "the values");
  Shape target;
  Tensor offsets;
  {
    NoGradGuard no_grad;
    try {
      target = index(indices).shape();  // index's own checks, and its errors, named as index_put_'s
    } catch (const std::out_of_range& error) {
      throw std::out_of_range(std::string("index_put_: ") + error.what());
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument(std::string("index_put_: ") + error.what());
    }
    offsets = offsets_of(*this, indices);
  }
  // PyTorch fills a selection of several elements from a 0-d value with fill_, which refuses a
  // float64 number beyond float32's range (x[0] = torch.tensor(1e40, dtype=torch.float64) raises);
  // into a single element it copies, and the number overflows to inf.
  if (values.dim() == 0 && !target.empty() && dtype() == kFloat32 && values.dtype() == kFloat64)
    detail::check_fits_float32(values.item<double>(), "index_put_");
  // As PyTorch, leading 1s of the values beyond the selection's dims are dropped: x[0] = ones(1, 3).
  Tensor v = values;
  while (v.dim() > static_cast<int64_t>(target.size()) && v.shape()[0] == 1) v = v.squeeze(0);
  check(detail::expandable(v.shape(), target), "index_put_: shape mismatch: value tensor of shape ",
        values.shape(), " cannot be broadcast to indexing result of shape ", target);
  v = v.to(dtype());
  if (v.impl()->storage == impl_->storage) v = v.clone();  // x.index_put_({perm}, x) reads x as it was
  dispatch(dtype(), [&]<typename T>() {
    T* out = data_ptr<T>();
    const T* in = v.data_ptr<T>();
    const int64_t* at = offsets.data_ptr<int64_t>();
    detail::for_each_broadcast(target, v.shape(), target,
                               [&](int64_t, int64_t i_in, int64_t i_at) { out[at[i_at]] = in[i_in]; });
  });
  detail::bump_version(*this);
  return *this;
}

Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& values) {
  return index_put_(std::vector<indexing::TensorIndex>(indices), values);
}

Tensor& Tensor::index_put_(const std::vector<indexing::TensorIndex>& indices, Scalar value) {
  return index_put_(indices,
                    zeros({}, {.dtype = dtype()}).fill_(value));  // fill_ refuses overflow, as PyTorch
}

Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, Scalar value) {
  return index_put_(std::vector<indexing::TensorIndex>(indices), value);
}

// ---- cutting into pieces ------------------------------------------------------------------------------

namespace {

// The pieces of dim d of the given sizes (checked), each node named `name`.
std::vector<Tensor> pieces_of(const Tensor& a, const std::vector<int64_t>& sizes, int64_t d,
                              detail::OpName name) {
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t size : sizes) {
    pieces.push_back(detail::named_as(slice(a, d, start, start + size), a, name));
    start += size;
  }
  return pieces;
}

}  // namespace

std::vector<Tensor> split(const Tensor& a, const std::vector<int64_t>& split_sizes, int64_t dim) {
  check_defined(a, "split");
  check(a.dim() > 0, "split: cannot split a 0-d tensor");
  const int64_t d = normalize_dim(dim, a.shape(), "split");
  const int64_t dim_size = a.shape()[d];
  int64_t total = 0;
  for (int64_t size : split_sizes) {
    check(size >= 0, "split: split_sizes must be non-negative, got ", Shape(split_sizes));
    check(size <= dim_size - total, "split: split_sizes ", Shape(split_sizes), " add up to more than dim ", d,
          " of shape ", a.shape(), " has (", dim_size, ")");  // checked before adding: no overflow
    total += size;
  }
  check(total == a.shape()[d], "split: split_sizes ", Shape(split_sizes), " add up to ", total, " but dim ",
        d, " of shape ", a.shape(), " has size ", a.shape()[d]);
  return pieces_of(a, split_sizes, d, "SplitWithSizesBackward0");
}

std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim) {
  check_defined(a, "split");
  check(a.dim() > 0, "split: cannot split a 0-d tensor");
  const int64_t d = normalize_dim(dim, a.shape(), "split");
  const int64_t size = a.shape()[d];
  check(split_size >= 0, "split: split_size must be non-negative, got ", split_size);
  check(split_size > 0 || size == 0, "split: split_size can only be 0 if dim ", d, " has size 0, but shape ",
        a.shape(), " has size ", size, " there");
  if (size == 0) return pieces_of(a, {0}, d, "SplitBackward0");  // one empty piece, as PyTorch
  std::vector<int64_t> sizes;
  for (int64_t start = 0; start < size; start += split_size)
    sizes.push_back(std::min(split_size, size - start));
  return pieces_of(a, sizes, d, "SplitBackward0");
}

std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim) {
  check_defined(a, "chunk");
  check(chunks > 0, "chunk: chunks must be greater than 0, got ", chunks);
  check(a.dim() > 0, "chunk: cannot chunk a 0-d tensor");
  const int64_t d = normalize_dim(dim, a.shape(), "chunk");
  const int64_t size = a.shape()[d];
  if (size == 0) return split(a, std::vector<int64_t>(static_cast<size_t>(chunks), 0), d);  // as PyTorch
  return split(a, size / chunks + (size % chunks != 0 ? 1 : 0), d);  // ceil(size / chunks), without overflow
}

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const {
  return minigrad::split(*this, split_size, dim);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const {
  return minigrad::chunk(*this, chunks, dim);
}

}  // namespace minigrad
