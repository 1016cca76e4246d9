// Every op of minigrad, and the derivative cheat sheet.
//
// Each differentiable op is one free function whose forward and backward live side by side in
// its .cpp file. The comment line above each declaration gives the forward formula and the local
// derivatives, so this header read top to bottom is the table of derivatives the engine uses.
// `grad` is the gradient flowing in from the op's output (d loss / d out).
//
// Binary ops broadcast as NumPy and PyTorch do: shapes are aligned at the right, and a size-1 (or
// missing) dimension stretches to match. Their backward sums the gradient back to each input's
// shape (sum_to). Mixed dtypes are promoted with result_type (see dtype.hpp): promote_types, but a
// 0-d tensor beside one with dims counts only by its category, as a number does.
//
// Shape letters: N rows, D features; "..." any leading dimensions.
#pragma once

#include <optional>
#include <tuple>
#include <vector>

#include "autograd/tensor.hpp"

namespace minigrad {

// ---- broadcasting ----------------------------------------------------------------------------

/// The shape two operands broadcast to (`torch.broadcast_shapes`). Throws std::invalid_argument
/// naming `op` and both shapes when they are incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast_shapes");

/// Sums `grad` down to `shape` over the dimensions broadcasting stretched (PyTorch's `sum_to`).
/// The one place that undoes broadcasting; every binary op's backward calls it. Not recorded.
/// Throws std::invalid_argument unless `shape` broadcasts to grad's (`sum_to_size`'s rule).
Tensor sum_to(const Tensor& grad, const Shape& shape);

// ---- elementwise arithmetic (any dtype but bool; result dtype by promotion) ------------------

// add: out = a + b;  grad_a = grad,  grad_b = grad
/// Elementwise a + b with broadcasting (`torch.add`, Python's `a + b`). Any dtypes but two bools; the
/// result has the broadcast shape and dtype result_type(a, b) (dtype.hpp). Throws std::invalid_argument
/// naming both shapes when they do not broadcast, and for bool + bool. int64 wraps around on
/// overflow (two's complement: INT64_MAX + 1 is INT64_MIN), as PyTorch's; so do sub, mul and neg.
Tensor add(const Tensor& a, const Tensor& b);
// sub: out = a - b;  grad_a = grad,  grad_b = -grad
/// Elementwise a - b with broadcasting (`torch.sub`, `a - b`). Shapes, dtypes and errors as add;
/// also throws std::invalid_argument when either side is bool (as PyTorch, which refuses 1 - mask).
Tensor sub(const Tensor& a, const Tensor& b);
// mul: out = a * b;  grad_a = grad * b,  grad_b = grad * a
/// Elementwise a * b with broadcasting (`torch.mul`, `a * b`). Shapes, dtypes and errors as add.
Tensor mul(const Tensor& a, const Tensor& b);
// div: out = a / b;  grad_a = grad / b,  grad_b = -grad * ((a / b) / b)   (int / int gives float32, as
// PyTorch)
/// Elementwise true division a / b with broadcasting (`torch.div`, `a / b`): integer operands give
/// float32, as Python's `/`. Shapes and errors as add. grad_b is computed as PyTorch's
/// div_tensor_other_backward, (a / b) / b, not a / b^2, where b^2 would underflow or overflow.
Tensor div(const Tensor& a, const Tensor& b);
// neg: out = -a;  grad_a = -grad
/// Elementwise -a (`torch.neg`, `-a`), same shape and dtype. Throws std::invalid_argument for bool.
Tensor neg(const Tensor& a);

// With a plain number on either side: the number becomes a 0-d tensor of the dtype PyTorch
// would use (result_type) and the tensor op above runs; the number itself needs no gradient.
namespace detail {
Tensor scalar_operand(const Tensor& a, Scalar s);
}
///@{
/// With a plain number: `add(x, 2)` is x + 2, as `torch.add(x, 2)`; sub, mul and div likewise,
/// rsub(x, s) is s - x (`torch.rsub`, recorded as RsubBackward1) and rdiv(x, s) is s / x computed as
/// Python's `s / x` computes it, reciprocal(x) * s (two roundings: 3 / x can differ from
/// div(full_like(x, 3), x) in the last bit). The number becomes a 0-d tensor of the dtype PyTorch
/// would use (result_type: an int64 tensor * 2 stays int64, * 2.5 becomes float32) and needs no
/// gradient. Errors as the tensor versions.
inline Tensor add(const Tensor& a, Scalar s) { return add(a, detail::scalar_operand(a, s)); }
inline Tensor sub(const Tensor& a, Scalar s) { return sub(a, detail::scalar_operand(a, s)); }
inline Tensor mul(const Tensor& a, Scalar s) { return mul(a, detail::scalar_operand(a, s)); }
inline Tensor div(const Tensor& a, Scalar s) { return div(a, detail::scalar_operand(a, s)); }
Tensor rsub(const Tensor& a, Scalar s);
Tensor rdiv(const Tensor& a, Scalar s);
///@}

// pow: out = a^p (p a number);  grad_a = grad * (p * a^(p-1))
/// Each element to the power `exponent` (`torch.pow`, `a ** p`), same shape. Floating inputs keep
/// their dtype, with PyTorch's CPU kernel's bits for the exponents 2, 3 and -2 (products), 0.5,
/// -0.5 (sqrt, 1 / sqrt) and -1 (1 / x); others go through std::pow. int64 stays int64 for a whole exponent
/// in [0, 2^63), computed exactly (wrapping around on overflow, as PyTorch: 7^21 is 558545864083284007), and
/// becomes float32 otherwise (an exponent of inf gives inf for 2, as PyTorch's int ** float). Throws
/// std::invalid_argument for bool with a whole exponent >= 0.
Tensor pow(const Tensor& a, double exponent);

// ---- elementwise functions (floating dtypes; int64 input is promoted to float32) ------------

// exp: out = e^a;  grad_a = grad * out
/// e^a elementwise (`torch.exp`), same shape; float32/float64 keep their dtype, int64 and bool
/// become float32.
Tensor exp(const Tensor& a);
// log: out = ln a;  grad_a = grad / a
/// Natural logarithm elementwise (`torch.log`): -inf at 0, nan below. Shape and dtypes as exp.
Tensor log(const Tensor& a);
// sqrt: out = sqrt(a);  grad_a = grad / (2 * out)
/// Square root elementwise (`torch.sqrt`): nan below 0. Shape and dtypes as exp.
Tensor sqrt(const Tensor& a);
// reciprocal: out = 1 / a;  grad_a = -grad * (out * out)
/// 1 / a elementwise (`torch.reciprocal`): inf at 0. Shape and dtypes as exp.
Tensor reciprocal(const Tensor& a);
// abs: out = |a|;  grad_a = grad * sign(a)   (sign(0) = 0, as PyTorch)
/// |a| elementwise (`torch.abs`), same shape and dtype. Throws std::invalid_argument for bool.
Tensor abs(const Tensor& a);
// relu: out = max(a, 0);  grad_a = grad * (a > 0)   (gradient 0 at exactly 0, as PyTorch)
/// max(a, 0) elementwise (`torch.relu`), same shape and dtype; nan stays nan. Throws
/// std::invalid_argument for bool.
Tensor relu(const Tensor& a);
// tanh: out = tanh(a);  grad_a = grad * (1 - out^2)
/// Hyperbolic tangent elementwise, in (-1, 1) (`torch.tanh`). Shape and dtypes as exp.
Tensor tanh(const Tensor& a);
// sigmoid: out = 1 / (1 + e^-a);  grad_a = grad * out * (1 - out)
/// Logistic function elementwise, in [0, 1] (`torch.sigmoid`), computed as PyTorch's CPU kernel
/// computes it, 1 / (1 + e^-a): where e^-a overflows to inf the result is 0 (float32 below about
/// -88), where it underflows 1. Shape and dtypes as exp.
Tensor sigmoid(const Tensor& a);
// sin: out = sin(a);  grad_a = grad * cos(a)
/// Sine elementwise, a in radians (`torch.sin`). Shape and dtypes as exp.
Tensor sin(const Tensor& a);
// cos: out = cos(a);  grad_a = -grad * sin(a)
/// Cosine elementwise, a in radians (`torch.cos`). Shape and dtypes as exp.
Tensor cos(const Tensor& a);
// clamp: out = min(max(a, lo), hi);  grad_a = grad where lo <= a <= hi, else 0
/// Each element limited to [min, max], as min(max(a, min), max): with min > max all become max;
/// either bound may be std::nullopt (`torch.clamp`). Same shape; the dtype is a's, unless a bound
/// is of a higher category, as for `a + number` (int64 clamped to [-0.5, 2.7] is float32). Bounds
/// are rounded to the dtype before comparing (int64 ones compared as integers, exact up to
/// INT64_MAX); nan stays nan; with both bounds a nan one makes every element nan, a single nan
/// bound changes nothing (and passes no gradient), as PyTorch 1.13. Throws std::invalid_argument
/// when neither bound is given, and for bool.
Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
// where: out = cond ? a : b (cond bool, all three broadcast);  grad_a = grad where cond, grad_b = grad
// elsewhere
/// Picks a where `condition` holds, else b (`torch.where`). condition must be bool; the three shapes
/// broadcast together, the dtype is result_type(a, b) (dtype.hpp). Throws std::invalid_argument for a
/// non-bool condition or shapes that do not broadcast (naming them).
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
// masked_fill: out = mask ? value : a (mask and a broadcast);  grad_a = grad where !mask, summed to a's shape
/// A copy of a with `value` wherever the bool `mask` is true (`Tensor.masked_fill`); a's dtype, the
/// shape both broadcast to (a mask larger than a repeats a, as PyTorch's out-of-place masked_fill).
/// Throws std::invalid_argument for a non-bool mask or shapes that do not broadcast.
Tensor masked_fill(const Tensor& a, const Tensor& mask, Scalar value);

// ---- matrix product (float32/float64 through the BLAS; int64 by a plain loop) ------------------

// matmul: out = a @ b, as torch.matmul: [D]@[D] -> [], [N,D]@[D,M] -> [N,M], [D]@[D,M] -> [M],
// [N,D]@[D] -> [N], and batched [...,N,D]@[...,D,M] -> [...,N,M] with broadcast batch dims.
//   grad_a = grad @ b^T,  grad_b = a^T @ grad   (summed over broadcast batch dims)
// Both operands must have the same dtype, not bool (no promotion, as torch.matmul). Throws
// std::invalid_argument: `matmul: cannot multiply [2, 3] by [4, 5] (inner dimensions 3 and 4 differ)`,
// likewise for batch dims that do not broadcast, for a 0-d operand, a dtype mismatch or bool.
/// Matrix product with torch.matmul's rules for 1-d, 2-d and batched operands, listed above
/// (`torch.matmul`, Python's `a @ b`).
Tensor matmul(const Tensor& a, const Tensor& b);

// ---- reductions --------------------------------------------------------------------------------
// Over all elements the result is 0-d; over `dim` that dim is removed (kept as size 1 with keepdim).
// Result dtypes as PyTorch: sum of bool or int64 gives int64 (so `(x < 0).sum().item<int64_t>()`
// counts), sum of floats keeps the dtype (accumulated in double, rounded once); max/min keep the
// input's dtype. A dim out of range throws std::out_of_range naming the dim and the shape.

// sum: out = sum of all elements (or over `dim`);  grad_a = grad broadcast back to a's shape
///@{
/// Sum of all elements (0-d result), or over `dim` (`torch.sum`). float32/float64 keep their dtype,
/// int64 and bool give int64. Throws std::out_of_range for a dim the tensor lacks.
Tensor sum(const Tensor& a);
Tensor sum(const Tensor& a, int64_t dim, bool keepdim = false);
///@}
// mean: out = sum / count;  grad_a = grad / count, broadcast back
// (floating dtypes only: std::invalid_argument for int64/bool; the mean of an empty tensor is nan)
///@{
/// Mean of all elements, or over `dim` (`torch.mean`); float32/float64 only, kept. Throws
/// std::invalid_argument for int64 and bool, std::out_of_range for a dim the tensor lacks.
Tensor mean(const Tensor& a);
Tensor mean(const Tensor& a, int64_t dim, bool keepdim = false);
///@}
// max: out = largest element (or per `dim`, with its int64 index);  grad_a = grad at the argmax, 0 elsewhere
// (over all elements, ties share the gradient equally, as PyTorch's max() does; nan wins).
// Throws std::invalid_argument for an empty tensor or an empty reduced dim.
///@{
/// Largest element (0-d), or per `dim` the largest values and their int64 indices, as
/// `values, indices = torch.max(a, dim)` (`torch.max`); values keep a's dtype. Throws
/// std::invalid_argument for an empty tensor or dim, std::out_of_range for a dim the tensor lacks.
Tensor max(const Tensor& a);
std::tuple<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim = false);
///@}
// min: as max, for the smallest element
///@{
/// Smallest element, or per `dim` the smallest values and their indices (`torch.min`); as max.
Tensor min(const Tensor& a);
std::tuple<Tensor, Tensor> min(const Tensor& a, int64_t dim, bool keepdim = false);
///@}
///@{
/// Index of the largest element (of the flattened tensor, or along `dim`), int64; the first one
/// on ties (`torch.argmax`). Not differentiable. Throws for bool and empty inputs.
Tensor argmax(const Tensor& a);
Tensor argmax(const Tensor& a, int64_t dim, bool keepdim = false);
///@}

// softmax: out_i = e^(a_i - max) / sum_j e^(a_j - max) along dim (subtracting the max cannot
// change the result but keeps e^x from overflowing);  grad_a = out * (grad - sum(grad * out))
/// Probabilities along `dim`, each lane summing to 1 (`torch.softmax`), same shape and dtype.
/// float32/float64 only (std::invalid_argument otherwise); std::out_of_range for a bad dim.
Tensor softmax(const Tensor& a, int64_t dim);
// log_softmax: out_i = a_i - max - log(sum_j e^(a_j - max));  grad_a = grad - e^out * sum(grad)
/// log(softmax(a, dim)) computed without overflow or log(0) (`torch.log_softmax`). Shape, dtypes
/// and errors as softmax.
Tensor log_softmax(const Tensor& a, int64_t dim);

// ---- statistics, scans and selections along dims (ops_stats.cpp) --------------------------------
// var and std reduce over a list of dims (empty: all of them); the result keeps the other dims in
// order, and with keepdim the reduced ones as size 1. N counts the elements behind each result
// element; the divisor is max(N - correction, 0): correction 1 (unbiased, the default) is Bessel's
// correction, 0 the plain mean of the squared deviations. Float32/float64 only.

// var: out = sum (a - mean)^2 / max(N - correction, 0) over the dims;
//   grad_a = grad * 2 (a - mean) / max(N - correction, 0)
///@{
/// Variance over all elements, over the list `dims`, or over one dim, as
/// `torch.var(a, dims, correction=c, keepdim=k)` and `torch.var(a, dim, unbiased, keepdim)`
/// (`torch.var`); a's dtype. A divisor of 0 gives inf or nan, as PyTorch. Throws
/// std::invalid_argument for int64 and bool or a dim listed twice, std::out_of_range for a dim the
/// tensor lacks. C++ reads a braced list of one number as that number: `var(x, {1}, 0)` is the
/// one-dim overload (its 0, unbiased = false, means the same) and `var(x, {})` is over dim 0, so
/// write `var(x)` for all dims and `var(x, std::vector<int64_t>{1}, 2)` for a larger correction.
Tensor var(const Tensor& a);
Tensor var(const Tensor& a, const std::vector<int64_t>& dims, int64_t correction = 1, bool keepdim = false);
Tensor var(const Tensor& a, int64_t dim, bool unbiased = true, bool keepdim = false);
///@}
// std: out = sqrt(var);  grad_a = grad * (a - mean) / (max(N - correction, 0) * out), 0 where out = 0
///@{
/// Standard deviation, the square root of var, with var's arguments, dtypes and errors
/// (`torch.std`): `minigrad::std(x, 1)` or `x.std(1)`. The function named std never hides the
/// namespace std (`std::vector` still means the standard one, also after `using namespace
/// minigrad`), but after that using-directive a bare `std(x)` is ambiguous: qualify it.
Tensor std(const Tensor& a);
Tensor std(const Tensor& a, const std::vector<int64_t>& dims, int64_t correction = 1, bool keepdim = false);
Tensor std(const Tensor& a, int64_t dim, bool unbiased = true, bool keepdim = false);
///@}
// cumsum: out_i = a_0 + ... + a_i along dim;  grad_a_i = grad_i + ... + grad_(n-1) (the running sum taken
// backwards)
/// Running sums along `dim` (`torch.cumsum`), same shape. Floating dtypes keep theirs, int64 and
/// bool give int64, as sum. Throws std::out_of_range for a dim the tensor lacks.
Tensor cumsum(const Tensor& a, int64_t dim);
// topk: values = the k largest (or smallest) entries along dim, indices = their positions;
//   grad_a = grad put back at the indices, 0 elsewhere
/// The k largest entries along `dim` (the k smallest with largest = false) and their int64 indices,
/// as `values, indices = torch.topk(a, k, dim, largest, sorted)` (`torch.topk`): dim's size
/// becomes k; nan counts as larger than any number. Ties come out in PyTorch's CPU order: the same
/// selection runs on the same (value, index) list as in PyTorch's aten/src/ATen/native/TopKImpl.h
/// (partial_sort when k * 64 <= n, else nth_element and, if sorted, a sort of the first k - 1).
/// Any dtype but bool; values keep it. Throws std::invalid_argument for bool, k < 0 or k above the
/// dim's size (`topk: k = 7 is larger than dim 1 of size 5 (shape [2, 5])`), std::out_of_range
/// for a dim the tensor lacks.
std::tuple<Tensor, Tensor> topk(const Tensor& a, int64_t k, int64_t dim = -1, bool largest = true,
                                bool sorted = true);

// ---- shapes (any dtype; these move data, they do no arithmetic) -------------------------------

// reshape: same elements, new shape (one size may be -1);  grad_a = grad reshaped back
/// The same elements in a new shape, sharing storage; one size may be -1, inferred (`torch.reshape`).
/// Any dtype. Throws std::invalid_argument naming both shapes when the element counts differ.
Tensor reshape(const Tensor& a, const Shape& shape);
// view: as reshape (storage is always contiguous here, so every reshape is a view)
/// Same as reshape (`Tensor.view`): storage is always contiguous here.
Tensor view(const Tensor& a, const Shape& shape);
// flatten: dims start_dim..end_dim merged into one;  grad_a = grad reshaped back
/// Dims start_dim..end_dim merged into one (`torch.flatten`); all of them by default, so [2, 3, 4]
/// becomes [24]. Throws std::out_of_range for a dim the tensor lacks, std::invalid_argument when
/// start_dim comes after end_dim.
Tensor flatten(const Tensor& a, int64_t start_dim = 0, int64_t end_dim = -1);
// unsqueeze: a size-1 dim inserted at `dim`;  grad_a = grad reshaped back
/// A size-1 dim inserted at position `dim`, 0..a.dim() or negative (`torch.unsqueeze`): [3] becomes
/// [1, 3] at 0, [3, 1] at -1. Throws std::out_of_range for a position out of range.
Tensor unsqueeze(const Tensor& a, int64_t dim);
// squeeze: size-1 dims removed (all, or only `dim`);  grad_a = grad reshaped back
///@{
/// Size-1 dims removed: all of them, or only `dim` when it has size 1 (`torch.squeeze`). Throws
/// std::out_of_range for a dim the tensor lacks.
Tensor squeeze(const Tensor& a);
Tensor squeeze(const Tensor& a, int64_t dim);
///@}
// permute: out.shape[i] = a.shape[dims[i]];  grad_a = grad permuted by the inverse of dims
/// Dims reordered: out.shape[i] = a.shape[dims[i]] (`torch.permute`); a copy. Throws
/// std::invalid_argument unless dims is a permutation of a's dims, std::out_of_range for a bad dim.
Tensor permute(const Tensor& a, const std::vector<int64_t>& dims);
// transpose: dims dim0 and dim1 swapped;  grad_a = grad with them swapped back
/// Dims dim0 and dim1 swapped (`torch.transpose`); a copy. Throws std::out_of_range for a bad dim.
Tensor transpose(const Tensor& a, int64_t dim0, int64_t dim1);
// t: transpose of a matrix (a 0-d or 1-d tensor is returned as is);  grad_a = grad^T
/// Transpose of a matrix; a 0-d or 1-d tensor comes back as it is (`torch.t`). Throws
/// std::invalid_argument for more than 2 dims (use transpose).
Tensor t(const Tensor& a);
// cat: tensors joined along an existing dim;  grad of each input = its slice of grad
/// Tensors joined along the existing dim `dim` (`torch.cat`); their dtypes promote. Throws
/// std::invalid_argument for an empty list, a 0-d tensor, or sizes that differ outside `dim`
/// (naming both shapes); std::out_of_range for a bad dim.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
// stack: tensors joined along a new dim;  grad of each input = grad.select(dim, i)
/// Tensors of one shape joined along a new dim inserted at `dim` (`torch.stack`): n tensors [3]
/// become [n, 3] at dim 0. Throws std::invalid_argument for an empty list or shapes that differ.
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// select: out = a[..., index, ...] at `dim`, the dim removed;  grad_a = zeros with grad put back at index
/// Entry `index` of dim `dim`, that dim removed (`torch.select`; `x[i]` is select(x, 0, i)); a copy.
/// Negative indices count from the end. Throws std::out_of_range for an index or dim out of range,
/// std::invalid_argument for a 0-d tensor.
Tensor select(const Tensor& a, int64_t dim, int64_t index);
// slice: indices start, start+step, ... below end of `dim` (clamped to the size, negatives from the
// end, as Python's a[start:end:step]);  grad_a = zeros with grad put back in those places
/// Entries start..end-1 of dim `dim`, every step-th, as Python's `a[start:end:step]` along that dim
/// (`torch.narrow` with clamping and a step; libtorch's `x.slice(dim, start, end, step)`); a copy. A missing
/// start or end (std::nullopt) means the beginning or the end; negative ones count from the end, and bounds
/// beyond the size are clamped, so `slice(x, 1, -T)` is `x[:, -T:]`. With step 1 it is recorded as
/// SliceBackward0; a larger step goes through index_select. Throws std::out_of_range for a dim out
/// of range, std::invalid_argument for a 0-d tensor or a step <= 0.
Tensor slice(const Tensor& a, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);

// ---- comparisons (not differentiable; bool results; operands broadcast) ----------------------

Tensor lt(const Tensor& a, const Tensor& b);  ///< a < b  (`torch.lt`)
Tensor le(const Tensor& a, const Tensor& b);  ///< a <= b
Tensor gt(const Tensor& a, const Tensor& b);  ///< a > b
Tensor ge(const Tensor& a, const Tensor& b);  ///< a >= b
Tensor eq(const Tensor& a, const Tensor& b);  ///< a == b (elementwise)
Tensor ne(const Tensor& a, const Tensor& b);  ///< a != b
/// Same shape and every element equal (`torch.equal`); false for different shapes, never throws.
bool equal(const Tensor& a, const Tensor& b);
/// |a - b| <= atol + rtol * |b| everywhere, after broadcasting (`torch.allclose`); nan != nan.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8);

// ---- operators: one-line forwards to the named functions --------------------------------------

///@{
/// Arithmetic operators, as in Python: `a + b` is add(a, b), `a - b` sub, `a * b` mul, `a / b` div,
/// `-a` neg; a plain number may stand on either side (`x * 2`, `1 - x`, `3 / x`). Shapes, dtypes
/// and errors as the named ops.
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }
inline Tensor operator+(const Tensor& a, Scalar s) { return add(a, s); }
inline Tensor operator+(Scalar s, const Tensor& a) { return add(a, s); }
inline Tensor operator-(const Tensor& a, Scalar s) { return sub(a, s); }
inline Tensor operator-(Scalar s, const Tensor& a) { return rsub(a, s); }
inline Tensor operator*(const Tensor& a, Scalar s) { return mul(a, s); }
inline Tensor operator*(Scalar s, const Tensor& a) { return mul(a, s); }
inline Tensor operator/(const Tensor& a, Scalar s) { return div(a, s); }
inline Tensor operator/(Scalar s, const Tensor& a) { return rdiv(a, s); }
///@}

///@{
/// Elementwise comparisons, as Python's `a < b`: lt, le, gt, ge, eq, ne as operators, with a
/// tensor or a plain number on the right (`x < 0`). Bool results, not recorded.
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, Scalar s);  ///< `(hidden < 0)` from the lesson
Tensor operator<=(const Tensor& a, Scalar s);
Tensor operator>(const Tensor& a, Scalar s);
Tensor operator>=(const Tensor& a, Scalar s);
Tensor operator==(const Tensor& a, Scalar s);
Tensor operator!=(const Tensor& a, Scalar s);
///@}

}  // namespace minigrad
