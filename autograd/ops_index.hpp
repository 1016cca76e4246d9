// Indexing ops: picking entries by an int64 index tensor (embedding, index_select, gather,
// x[idx]), adding into entries picked that way (index_add, scatter_add), and the shape ops the
// GPT course needs beside them (tril/triu, one_hot, split/chunk), and the entries of Python's
// `x[:, -T:]` as libtorch spells them (`x.index({Slice(), Slice(-T, None)})`, namespace indexing).
//
// Picking and adding are each other's backward: the gradient of a pick adds `grad` back into
// zeros at the picked places, and an index that appears twice gets both shares (it is added,
// never overwritten). Index tensors are int64, as PyTorch's are (it also takes int32; we have no
// int32). Shape letters: V rows of a table (vocabulary), D features, "..." any dims.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "autograd/tensor.hpp"

namespace minigrad {

/// Python's indexing spelled as libtorch's (`torch::indexing`): `using namespace minigrad::indexing;`
/// then `x.index({Slice(), Slice(None, 2), -1})` for `x[:, :2, -1]`.
namespace indexing {

/// "No bound": `Slice(None, 2)` is Python's `:2`; as an index entry, a new size-1 dim (`x[None]`).
inline constexpr std::nullopt_t None = std::nullopt;

/// `...` in Python: as many full slices as the other entries leave dims.
struct EllipsisIndexType {};
/// The value to write for `...`: `x.index({Ellipsis, -1})` is `x[..., -1]`.
inline constexpr EllipsisIndexType Ellipsis;

/// Python's `start:stop:step`; a missing bound is None: `Slice()` is `:`, `Slice(-T, None)` is
/// `-T:`. Bounds may be negative (from the end) or beyond the size (clamped), as in Python.
struct Slice {
  /// All three optional, as Python's slice; step None means 1.
  Slice(std::optional<int64_t> start = None, std::optional<int64_t> stop = None,
        std::optional<int64_t> step = None)
      : start(start), stop(stop), step(step) {}
  std::optional<int64_t> start;  ///< first entry; None for the beginning (or the end, if step < 0)
  std::optional<int64_t> stop;   ///< one past the last entry; None for the end
  std::optional<int64_t> step;   ///< None for 1; must be positive, as in PyTorch
};

/// One entry of Tensor::index's list: an integer, a Slice, None, Ellipsis or an int64 tensor.
class TensorIndex {
 public:
  /// What the entry is.
  enum class Kind {
    Integer,   ///< selects one entry, removing the dim
    Slice,     ///< keeps the dim, cut to a range
    None,      ///< inserts a size-1 dim
    Ellipsis,  ///< stands for the dims no other entry names
    Tensor     ///< picks entries by an int64 tensor
  };
  // Implicit, as libtorch's, so that `{Slice(), -1}` reads as in Python.
  TensorIndex(int64_t integer) : kind_(Kind::Integer), integer_(integer) {}        ///< `x[i]`  // NOLINT
  TensorIndex(int integer) : TensorIndex(static_cast<int64_t>(integer)) {}         ///< `x[i]`  // NOLINT
  TensorIndex(Slice slice) : kind_(Kind::Slice), slice_(slice) {}                  ///< `x[a:b]`  // NOLINT
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}                               ///< `x[None]`  // NOLINT
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}                        ///< `x[...]`  // NOLINT
  TensorIndex(Tensor tensor) : kind_(Kind::Tensor), tensor_(std::move(tensor)) {}  ///< `x[idx]`  // NOLINT

  Kind kind() const { return kind_; }               ///< which of the five it is
  int64_t integer() const { return integer_; }      ///< for Kind::Integer
  const Slice& slice() const { return slice_; }     ///< for Kind::Slice
  const Tensor& tensor() const { return tensor_; }  ///< for Kind::Tensor

 private:
  Kind kind_;
  int64_t integer_ = 0;
  Slice slice_;
  Tensor tensor_;
};

}  // namespace indexing

// ---- picking entries by index ------------------------------------------------------------------

// embedding: out[..., :] = weight[indices[...], :];  grad_weight[v] = sum of grad[...] where
// indices == v (repeats add up; the padding_idx row gets none)
/// The rows of the table `weight` [V, D] (float32/float64) picked by `indices` (int64, any shape):
/// indices [...] -> out [..., D], as `torch.embedding(weight, indices, padding_idx)` (the op under
/// `F.embedding` and `nn.Embedding`). A padding_idx in -V..V-1 (negatives count from the end) names
/// a row whose gradient stays 0. Throws std::out_of_range for an index outside 0..V-1
/// (`embedding: index 70 is out of range for 65 embeddings`) or a padding_idx outside -V..V-1;
/// std::invalid_argument for non-int64 indices or a weight that is not 2-d.
Tensor embedding(const Tensor& weight, const Tensor& indices,
                 std::optional<int64_t> padding_idx = std::nullopt);

// index_select: out = a with dim `dim` replaced by a's entries index[0], index[1], ...;
// grad_a = zeros with grad added back at each index (repeats add up)
/// a's entries along `dim` at the positions in `index` (int64, 1-d or 0-d), in that order: a
/// [N, D] with dim 0 and 3 indices gives [3, D] (`torch.index_select`). Any dtype. Throws
/// std::invalid_argument for a non-int64 index or one with more than 1 dim, std::out_of_range for
/// an index outside 0..size-1 (PyTorch takes no negative index here either) or a bad dim.
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index);

// index: out[i..., :] = a[index[i...], :] (advanced indexing on dim 0);  grad_a = zeros with grad added back
/// `a[index]` in Python for an int64 tensor `index` of any shape: a [N, ...] gives
/// [index.shape..., ...], negative indices counting from the end (PyTorch's advanced indexing
/// on dim 0, `Tensor.__getitem__`; also Tensor::operator[](const Tensor&)). Any dtype of a.
/// Throws std::invalid_argument for a non-int64 index or a 0-d a, std::out_of_range for an
/// index outside -N..N-1.
Tensor index(const Tensor& a, const Tensor& indices);

// gather: out[i][j] = a[index[i][j]][j] (dim 0; likewise for any dim);  grad_a = zeros,
// scatter_add of grad at index (repeats add up)
/// Along `dim`, each position of `index` (int64, as many dims as a, each size at most a's except
/// along dim) picks the entry of a at index[pos] (`torch.gather`); the result has index's shape
/// and a's dtype. Throws std::invalid_argument for a non-int64 index, one with another number of
/// dims than a ("gather: index has 1 dims but the input has 2"), or a size larger than a's;
/// std::out_of_range for an index outside 0..a.size(dim)-1.
Tensor gather(const Tensor& a, int64_t dim, const Tensor& index);

// ---- adding into entries picked by index ----------------------------------------------------------

// index_add: out = a, then out[index[i]] += alpha * source[i] along dim;  grad_a = grad,
// grad_source = alpha * index_select(grad, dim, index)
/// A copy of a with alpha * source's entries added along `dim` at the positions `index` (int64,
/// 1-d or 0-d; repeats add up), as `torch.index_add(a, dim, index, source, alpha=alpha)`. source
/// has a's shape but index.numel() along dim, and a's dtype (float32, float64 or int64). Throws
/// std::invalid_argument for other shapes, dtypes or a non-int64 index; std::out_of_range for an
/// index outside 0..a.size(dim)-1.
Tensor index_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1);

// scatter_add: out = a, then out[index[i][j]][j] += src[i][j] (dim 0; likewise for any dim);
// grad_a = grad,  grad_src = gather(grad, dim, index) (0 where index does not reach)
/// A copy of a with each entry of src added at the place `index` names along `dim` (repeats add
/// up), as `torch.scatter_add`. index (int64) has as many dims as a and src, each size at most
/// src's and, except along dim, at most a's; src has a's dtype (float32, float64 or int64).
/// Throws std::invalid_argument for other shapes or dtypes, std::out_of_range for an index
/// outside 0..a.size(dim)-1.
Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src);

// ---- triangles, one-hot ---------------------------------------------------------------------------

// tril: out[..., r, c] = a[..., r, c] where c - r <= diagonal, else 0;  grad_a = tril(grad, diagonal)
/// The lower triangle of each matrix in the last two dims, the rest zeroed (`torch.tril`): with
/// diagonal 0 the main diagonal is kept, 1 keeps one more above it, -1 drops it. Any dtype, same
/// shape. The course's causal mask is `tril(ones({T, T}))`. Throws std::invalid_argument for
/// fewer than 2 dims.
Tensor tril(const Tensor& a, int64_t diagonal = 0);
// triu: out[..., r, c] = a[..., r, c] where c - r >= diagonal, else 0;  grad_a = triu(grad, diagonal)
/// The upper triangle of each matrix in the last two dims, the rest zeroed (`torch.triu`); as tril.
Tensor triu(const Tensor& a, int64_t diagonal = 0);

/// indices [...] (int64, each in 0..num_classes-1) -> int64 [..., num_classes] holding 1 at each
/// index and 0 elsewhere (`F.one_hot`); num_classes -1 means max(indices) + 1. Not differentiable.
/// Throws std::invalid_argument for non-int64 indices, a negative one, one >= num_classes, or
/// num_classes -1 with no indices to infer it from (PyTorch's rules).
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);

// ---- cutting into pieces (each piece is a slice, with slice's backward) ----------------------------

/// a cut along `dim` into pieces of split_size entries, the last one smaller if the size does not
/// divide (`torch.split`); each piece is slice(a, dim, ...), a copy with slice's backward, its
/// node named SplitBackward0 as PyTorch's (SplitWithSizesBackward0 for the list form; PyTorch's
/// pieces share one node, ours have one each). A split_size larger than the size gives one piece.
/// Throws std::invalid_argument for a negative split_size, or 0 on a dim of nonzero size.
std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim = 0);
/// a cut along `dim` into pieces of the given sizes, which must add up to a.size(dim)
/// (`torch.split` with a list, `torch.split_with_sizes`). Throws std::invalid_argument otherwise.
std::vector<Tensor> split(const Tensor& a, const std::vector<int64_t>& split_sizes, int64_t dim = 0);
/// a cut along `dim` into `chunks` pieces of ceil(size / chunks) entries, so there may be fewer
/// pieces than asked for (`torch.chunk`: 5 entries in 4 chunks gives sizes 2, 2, 1). Throws
/// std::invalid_argument unless chunks > 0.
std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim = 0);

}  // namespace minigrad
