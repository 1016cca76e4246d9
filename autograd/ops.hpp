// Every op of minigrad, and the derivative cheat sheet.
//
// Each differentiable op is one free function whose forward and backward live side by side in
// its .cpp file. The comment line above each declaration gives the forward formula and the local
// derivatives, so this header read top to bottom is the table of derivatives the engine uses.
// `grad` is the gradient flowing in from the op's output (d loss / d out).
//
// Binary ops broadcast as NumPy and PyTorch do: shapes are aligned at the right, and a size-1 (or
// missing) dimension stretches to match. Their backward sums the gradient back to each input's
// shape (sum_to). Mixed dtypes are promoted with promote_types (see dtype.hpp).
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
Tensor sum_to(const Tensor& grad, const Shape& shape);

// ---- elementwise arithmetic (any dtype but bool; result dtype by promotion) ------------------

// add: out = a + b;  grad_a = grad,  grad_b = grad
Tensor add(const Tensor& a, const Tensor& b);
// sub: out = a - b;  grad_a = grad,  grad_b = -grad
Tensor sub(const Tensor& a, const Tensor& b);
// mul: out = a * b;  grad_a = grad * b,  grad_b = grad * a
Tensor mul(const Tensor& a, const Tensor& b);
// div: out = a / b;  grad_a = grad / b,  grad_b = -grad * a / b^2   (int / int gives float32, as PyTorch)
Tensor div(const Tensor& a, const Tensor& b);
// neg: out = -a;  grad_a = -grad
Tensor neg(const Tensor& a);

// With a plain number on either side: the number becomes a 0-d tensor of the dtype PyTorch
// would use (result_type) and the tensor op above runs; the number itself needs no gradient.
namespace detail {
Tensor scalar_operand(const Tensor& a, Scalar s);
}
inline Tensor add(const Tensor& a, Scalar s) { return add(a, detail::scalar_operand(a, s)); }
inline Tensor sub(const Tensor& a, Scalar s) { return sub(a, detail::scalar_operand(a, s)); }
inline Tensor mul(const Tensor& a, Scalar s) { return mul(a, detail::scalar_operand(a, s)); }
inline Tensor div(const Tensor& a, Scalar s) { return div(a, detail::scalar_operand(a, s)); }
inline Tensor rsub(const Tensor& a, Scalar s) { return sub(detail::scalar_operand(a, s), a); }
inline Tensor rdiv(const Tensor& a, Scalar s) { return div(detail::scalar_operand(a, s), a); }

// pow: out = a^p (p a number);  grad_a = grad * p * a^(p-1)
Tensor pow(const Tensor& a, double exponent);

// ---- elementwise functions (floating dtypes; int64 input is promoted to float32) ------------

// exp: out = e^a;  grad_a = grad * out
Tensor exp(const Tensor& a);
// log: out = ln a;  grad_a = grad / a
Tensor log(const Tensor& a);
// sqrt: out = sqrt(a);  grad_a = grad / (2 * out)
Tensor sqrt(const Tensor& a);
// abs: out = |a|;  grad_a = grad * sign(a)   (sign(0) = 0, as PyTorch)
Tensor abs(const Tensor& a);
// relu: out = max(a, 0);  grad_a = grad * (a > 0)   (gradient 0 at exactly 0, as PyTorch)
Tensor relu(const Tensor& a);
// tanh: out = tanh(a);  grad_a = grad * (1 - out^2)
Tensor tanh(const Tensor& a);
// sigmoid: out = 1 / (1 + e^-a);  grad_a = grad * out * (1 - out)
Tensor sigmoid(const Tensor& a);
// clamp: out = min(max(a, lo), hi);  grad_a = grad where lo <= a <= hi, else 0
Tensor clamp(const Tensor& a, std::optional<double> min, std::optional<double> max = std::nullopt);
// where: out = cond ? a : b (cond bool, all three broadcast);  grad_a = grad where cond, grad_b = grad elsewhere
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
// masked_fill: out = mask ? value : a (mask bool, broadcast to a);  grad_a = grad where !mask
Tensor masked_fill(const Tensor& a, const Tensor& mask, Scalar value);

// ---- matrix product (float32/float64 through the BLAS; int64 by a plain loop) ------------------

// matmul: out = a @ b, as torch.matmul: [D]@[D] -> [], [N,D]@[D,M] -> [N,M], [D]@[D,M] -> [M],
// [N,D]@[D] -> [N], and batched [...,N,D]@[...,D,M] -> [...,N,M] with broadcast batch dims.
//   grad_a = grad @ b^T,  grad_b = a^T @ grad   (summed over broadcast batch dims)
// Both operands must have the same dtype, not bool (no promotion, as torch.matmul). Throws
// std::invalid_argument: `matmul: cannot multiply [2, 3] by [4, 5] (inner dimensions 3 and 4 differ)`,
// likewise for batch dims that do not broadcast, for a 0-d operand, a dtype mismatch or bool.
Tensor matmul(const Tensor& a, const Tensor& b);

// ---- reductions --------------------------------------------------------------------------------
// Over all elements the result is 0-d; over `dim` that dim is removed (kept as size 1 with keepdim).
// Result dtypes as PyTorch: sum of bool or int64 gives int64 (so `(x < 0).sum().item<int64_t>()`
// counts), sum of floats keeps the dtype (accumulated in double, rounded once); max/min keep the
// input's dtype. A dim out of range throws std::out_of_range naming the dim and the shape.

// sum: out = sum of all elements (or over `dim`);  grad_a = grad broadcast back to a's shape
Tensor sum(const Tensor& a);
Tensor sum(const Tensor& a, int64_t dim, bool keepdim = false);
// mean: out = sum / count;  grad_a = grad / count, broadcast back
// (floating dtypes only: std::invalid_argument for int64/bool; the mean of an empty tensor is nan)
Tensor mean(const Tensor& a);
Tensor mean(const Tensor& a, int64_t dim, bool keepdim = false);
// max: out = largest element (or per `dim`, with its int64 index);  grad_a = grad at the argmax, 0 elsewhere
// (over all elements, ties share the gradient equally, as PyTorch's max() does; nan wins).
// Throws std::invalid_argument for an empty tensor or an empty reduced dim.
Tensor max(const Tensor& a);
std::tuple<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim = false);
// min: as max, for the smallest element
Tensor min(const Tensor& a);
std::tuple<Tensor, Tensor> min(const Tensor& a, int64_t dim, bool keepdim = false);
/// Index of the largest element (of the flattened tensor, or along `dim`), int64; the first one
/// on ties (`torch.argmax`). Not differentiable. Throws for bool and empty inputs.
Tensor argmax(const Tensor& a);
Tensor argmax(const Tensor& a, int64_t dim, bool keepdim = false);

// softmax: out_i = e^(a_i - max) / sum_j e^(a_j - max) along dim (subtracting the max cannot
// change the result but keeps e^x from overflowing);  grad_a = out * (grad - sum(grad * out))
Tensor softmax(const Tensor& a, int64_t dim);
// log_softmax: out_i = a_i - max - log(sum_j e^(a_j - max));  grad_a = grad - e^out * sum(grad)
Tensor log_softmax(const Tensor& a, int64_t dim);

// ---- shapes (any dtype; these move data, they do no arithmetic) -------------------------------

// reshape: same elements, new shape (one size may be -1);  grad_a = grad reshaped back
Tensor reshape(const Tensor& a, const Shape& shape);
// view: as reshape (storage is always contiguous here, so every reshape is a view)
Tensor view(const Tensor& a, const Shape& shape);
// flatten: dims start_dim..end_dim merged into one;  grad_a = grad reshaped back
Tensor flatten(const Tensor& a, int64_t start_dim = 0, int64_t end_dim = -1);
// unsqueeze: a size-1 dim inserted at `dim`;  grad_a = grad reshaped back
Tensor unsqueeze(const Tensor& a, int64_t dim);
// squeeze: size-1 dims removed (all, or only `dim`);  grad_a = grad reshaped back
Tensor squeeze(const Tensor& a);
Tensor squeeze(const Tensor& a, int64_t dim);
// permute: out.shape[i] = a.shape[dims[i]];  grad_a = grad permuted by the inverse of dims
Tensor permute(const Tensor& a, const std::vector<int64_t>& dims);
// transpose: dims dim0 and dim1 swapped;  grad_a = grad with them swapped back
Tensor transpose(const Tensor& a, int64_t dim0, int64_t dim1);
// t: transpose of a matrix (a 0-d or 1-d tensor is returned as is);  grad_a = grad^T
Tensor t(const Tensor& a);
// cat: tensors joined along an existing dim;  grad of each input = its slice of grad
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
// stack: tensors joined along a new dim;  grad of each input = grad.select(dim, i)
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// select: out = a[..., index, ...] at `dim`, the dim removed;  grad_a = zeros with grad put back at index
Tensor select(const Tensor& a, int64_t dim, int64_t index);
// slice: indices start..end-1 of `dim` (clamped to the size, negatives from the end, as Python's
// a[start:end]);  grad_a = zeros with grad put back in that range
Tensor slice(const Tensor& a, int64_t dim, int64_t start, int64_t end);

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

Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, Scalar s);   ///< `(hidden < 0)` from the lesson
Tensor operator<=(const Tensor& a, Scalar s);
Tensor operator>(const Tensor& a, Scalar s);
Tensor operator>=(const Tensor& a, Scalar s);
Tensor operator==(const Tensor& a, Scalar s);
Tensor operator!=(const Tensor& a, Scalar s);

}  // namespace minigrad
