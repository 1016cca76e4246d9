// Helpers every op file uses: argument checks with clear messages, recording an op in the graph,
// and walking two broadcast operands. Internal to the library (namespace detail): an op reads as
//   check inputs -> compute the forward on raw data -> record(out, name, inputs, backward).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "autograd/machinery/parallel.hpp"
#include "autograd/tensor.hpp"

namespace minigrad::detail {

/// Joins the parts into one message; Shapes print as `[2, 3]`.
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

/// The one checking helper: throws Exception(message) when `ok` is false. Messages start with the
/// op's name and give the shapes involved: `matmul: cannot multiply [2, 3] by [4, 5] (...)`.
template <typename Exception = std::invalid_argument, typename... Parts>
void check(bool ok, const Parts&... parts) {
  if (!ok) throw Exception(concat(parts...));
}

/// `value` as a T, where a plain cast would be undefined behaviour or change the number silently:
/// a float that no integer T holds (nan, inf, beyond its range; it is truncated toward zero
/// otherwise) or an integer outside T's range throws std::invalid_argument naming `op`, as
/// PyTorch's "value cannot be converted to type int64_t without overflow". Bool and float targets
/// convert as usual.
template <typename T, typename S>
T checked_cast(S value, const char* op) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    bool fits = true;
    if constexpr (std::is_floating_point_v<S>) {
      // T holds [lo, hi): -2^31 to 2^31 for int, -2^63 to 2^63 for int64_t, 0 to 2^64 for uint64_t
      const double hi = std::ldexp(1.0, std::numeric_limits<T>::digits), lo = std::is_signed_v<T> ? -hi : 0.0;
      fits = static_cast<double>(value) >= lo && static_cast<double>(value) < hi;  // false for nan
    } else if constexpr (!std::is_same_v<S, bool>) {
      fits = std::in_range<T>(value);
    }
    check(fits, op, ": value ", value, " cannot be converted to an integer of ", sizeof(T) * 8,
          " bits without overflow");
  }
  return static_cast<T>(value);
}

/// a + b, a - b, a * b, -a and a^n on element type T. On int64 they wrap around in two's
/// complement on overflow, as PyTorch's integer kernels give (INT64_MAX + 1 == INT64_MIN):
/// computed on uint64_t, since signed overflow is undefined behaviour in C++. Other types compute
/// as usual, so float loops still vectorise.
///@{
template <typename T>
constexpr bool wraps = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T>
T wrapping_add(T a, T b) {
  if constexpr (wraps<T>)
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else
    return static_cast<T>(a + b);
}
template <typename T>
T wrapping_sub(T a, T b) {
  if constexpr (wraps<T>)
    return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  else
    return static_cast<T>(a - b);
}
template <typename T>
T wrapping_mul(T a, T b) {
  if constexpr (wraps<T>)
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else
    return static_cast<T>(a * b);
}
template <typename T>
T wrapping_neg(T a) {
  if constexpr (wraps<T>)
    return static_cast<T>(uint64_t{0} - static_cast<uint64_t>(a));
  else
    return static_cast<T>(-a);
}
/// a^n by repeated squaring, exact up to the wrap-around (not through a double, which rounds
/// 7^21 to 558545864083284032).
inline int64_t wrapping_pow(int64_t a, uint64_t n) {
  uint64_t result = 1, base = static_cast<uint64_t>(a);
  for (; n > 0; n >>= 1) {
    if (n & 1) result *= base;
    base *= base;
  }
  return static_cast<int64_t>(result);
}
///@}

/// Turns a possibly negative dim into 0..ndim-1. Throws std::out_of_range naming op and shape.
int64_t normalize_dim(int64_t dim, const Shape& shape, const char* op);
/// As normalize_dim, for a position where a new dim is inserted (0..ndim).
int64_t normalize_insert_dim(int64_t dim, const Shape& shape, const char* op);

/// Throws std::invalid_argument unless the tensor is defined; every op calls it on its inputs.
void check_defined(const Tensor& t, const char* op);

/// Row-major strides of a contiguous shape: [2, 3, 4] -> [12, 4, 1].
std::vector<int64_t> contiguous_strides(const Shape& shape);

/// What an op's backward reads besides the incoming gradient: tensors (its inputs' or its output's
/// data, PyTorch's saved tensors), or nothing but shapes, dtypes and numbers it captured (add,
/// sum, reshape, cat, ...: PyTorch saves no tensor for them either).
enum class Saves { tensors, nothing };

/// Records `out` as the result of op `name` when grad mode is on and some input requires grad:
/// out gets requires_grad and a grad_fn holding the inputs and the backward function.
/// Returns `out` either way.
Tensor record(Tensor out, OpName name, std::vector<Tensor> inputs, Node::BackwardFn backward);
/// The same, saying what the backward reads. With Saves::nothing the node survives a backward
/// without retain_graph and its inputs may change in place afterwards, as in PyTorch
/// (Node::saves_tensors).
Tensor record(Tensor out, OpName name, std::vector<Tensor> inputs, Saves saves, Node::BackwardFn backward);
/// The same, saying per input whether the backward reads its data (true) or only its shape,
/// dtype and whether it requires grad (false); what the backward captured itself, such as an
/// alias of the output (detail::saved), it reads too. An input no backward reads has its data
/// freed once only the graph holds it, and is not checked for in-place changes.
Tensor record(Tensor out, OpName name, std::vector<Tensor> inputs, std::vector<bool> reads,
              Node::BackwardFn backward);

/// `out`, the result of the op of ops.hpp that a composite (split, a stepped slice, ...) applied to
/// `from`, with its node renamed `name`, as PyTorch names the composite's ("SplitBackward0"). Only
/// a node of out's own is renamed, never from's (an op may return its input as it is). Returns out.
Tensor named_as(Tensor out, const Tensor& from, OpName name);

/// The same data under a new, unrecorded handle: what a backward lambda captures when it needs
/// an op's output (never the output itself, which would own the node that owns the lambda).
Tensor saved(const Tensor& t);

/// While an op's backward runs: the gradient that the other uses of its input `i` have already
/// summed, when the backward may add its own share into it in place and return an undefined
/// tensor for that input instead (a matrix product's grad_input as C += A @ B saves a separate
/// add over the whole gradient); nullptr otherwise, and always outside a backward. Set by the
/// backward engine for a sum that nothing but the walk holds, of the input's dtype and shape.
Tensor* gradient_to_add_into(size_t i);

/// While an op's backward runs, for an elementwise result computed from its incoming gradient
/// `grad`: grad itself, if nothing but the walk holds it (the result is written over it, each
/// element read before it is written), else a new tensor of grad's shape and dtype. grad is handed
/// out once per backward; outside a backward, and under anomaly detection, always a new tensor.
Tensor gradient_output(const Tensor& grad);

/// Data converted to dtype (or the tensor itself if it already has it). Not recorded.
Tensor convert(const Tensor& t, Dtype dtype);

/// One matrix product on raw row-major data: c = x @ y, or c += x @ y with `accumulate`.
/// c is [rows, cols]; x is [rows, inner], or stored [inner, rows] and read transposed when trans_x;
/// y is [inner, cols], or stored [cols, inner] and read transposed when trans_y (the BLAS
/// transpose flags: no transposed copy is made). T is float or double (cblas_sgemm, cblas_dgemm)
/// or int64_t (a plain loop). Zero sizes are handled here and never reach the BLAS; each size
/// must be at most INT_MAX (the caller checks, naming its shapes). Defined in machinery/gemm.cpp.
template <typename T>
void gemm(bool trans_x, bool trans_y, int64_t rows, int64_t cols, int64_t inner, const T* x, const T* y,
          bool accumulate, T* c);

/// Whether OpenBLAS's core `core` (as openblas_get_corename() names it) has the small-matrix
/// kernels that gemm's routes count on: SkylakeX, Cooperlake and SapphireRapids, in any case. A
/// build with DYNAMIC_ARCH (Debian's) spells them "SkylakeX"; a build for one CPU spells them as
/// its TARGET, "SKYLAKEX" (OpenBLAS's getarch). Defined in machinery/gemm.cpp.
bool has_small_matrix_kernels(std::string_view core);

/// Whether gemm takes its routes for a BLAS with small-matrix kernels: has_small_matrix_kernels of
/// the running OpenBLAS's core (false with BLIS), unless set_small_matrix_kernels forced it.
bool small_matrix_kernels();

/// For tests: gemm takes its routes as if the BLAS had (true) or lacked (false) small-matrix
/// kernels, whatever core OpenBLAS runs on; std::nullopt goes back to the core's own answer. The
/// setting is the whole process's; set it while no product runs. Every route computes the same
/// product, within float rounding (only speed is the reason to choose), so one machine can reach
/// both sets of routes in one process. With BLIS the routes are the same either way.
void set_small_matrix_kernels(std::optional<bool> forced);

/// The route gemm<float> takes for these sizes and transpose flags, for tests: "gemv_rows" (a
/// matrix-vector product per row of c), "gemv_column" (one, for a single column), "ger" (a rank-1
/// update per term of the inner sum), "gemm" (the BLAS's GEMM) or "gemm_row_blocks" (x @ y^T as
/// the GEMM of x and a copy of y^T in blocks of rows that OpenBLAS's small-matrix kernels take;
/// on one thread the bits of its one GEMM, on the cores where it has those kernels). double takes
/// the same routes but never "gemm_row_blocks".
std::string_view gemm_route(bool trans_x, bool trans_y, int64_t rows, int64_t cols, int64_t inner);

/// Products up to this many multiply-adds (rows x cols x inner) run on one thread: OpenBLAS's own
/// threshold for threads (65,536 x 4 in interface/gemm.c of OpenBLAS 0.3.21). Larger ones are split
/// over the threads (machinery/gemm.cpp); a batch of smaller ones is split by matrices (matmul):
/// the attention's [64, 32] @ [32, 64] products are 131,072.
constexpr int64_t kOneCoreProduct = 262144;

/// Calls f(i_out, i_a, i_b) for every element of the broadcast result `out_shape`, with the
/// offsets of the matching elements of a (shape a_shape) and b (shape b_shape).
template <typename F>
void for_each_broadcast(const Shape& out_shape, const Shape& a_shape, const Shape& b_shape, F&& f);

/// The strides of `shape` seen from the broadcast shape `out` (0 along stretched dims).
std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out);

/// True when `shape` broadcasts to `out` itself (`expand`'s rule): aligned at the right, each of
/// its sizes out's or 1, and no more dims than out.
bool expandable(const Shape& shape, const Shape& out);

/// True when `shape` is out's trailing dims (leading 1s of shape aside), so that it repeats
/// unchanged over out's leading dims: a bias [C] of [B, T, C], a causal mask [T, T] of [B, T, T].
bool repeats_over_leading_dims(const Shape& shape, const Shape& out);

/// for_each_broadcast split over the threads, for an f that writes output element i and nothing
/// that another i writes (an elementwise forward, never a sum into a shared element). The fast
/// cases (equal shapes, a single number, a side repeating over the leading dims) run in pieces of
/// whole repeats; the general case runs on the calling thread.
template <typename F>
void parallel_for_each_broadcast(const Shape& out_shape, const Shape& a_shape, const Shape& b_shape, F&& f);

/// The loops of for_each_broadcast; with Split, the fast cases run in pieces over the threads.
template <bool Split, typename F>
void broadcast_loops(const Shape& out_shape, const Shape& a_shape, const Shape& b_shape, F&& f) {
  const int64_t n = shape_numel(out_shape);
  if (n == 0) return;
  // loop(items, item_size, body): body(begin, end) over [0, items), in pieces when Split. Each
  // piece calls its own copy of f: what f captured by value is then local to the piece, and the
  // compiler keeps it in registers (the pieces' context is passed to other threads, so stores to
  // the output might otherwise change f's own copy, for all the compiler knows).
  auto loop = [](int64_t items, int64_t item_size, auto&& body) {
    if constexpr (Split)
      parallel_for(items, grain_for(item_size), body);
    else
      call_vectorised(body, int64_t{0}, items);
  };
  const bool a_same = a_shape == out_shape, b_same = b_shape == out_shape;
  const bool a_one = shape_numel(a_shape) == 1, b_one = shape_numel(b_shape) == 1;
  // Fast paths: equal shapes, one side a single number, or one side repeating.
  // One loop per case, so that each loop's offsets are plain and the compiler vectorises it.
  if (a_same && b_same) {
    loop(n, 1, [&](int64_t begin, int64_t end) {
      auto g = f;
      for (int64_t i = begin; i < end; ++i) g(i, i, i);
    });
    return;
  }
  if ((a_same || a_one) && (b_same || b_one)) {
    loop(n, 1, [&](int64_t begin, int64_t end) {
      auto g = f;
      if (a_same)
        for (int64_t i = begin; i < end; ++i) g(i, i, 0);
      else if (b_same)
        for (int64_t i = begin; i < end; ++i) g(i, 0, i);
      else
        for (int64_t i = begin; i < end; ++i) g(i, 0, 0);
    });
    return;
  }
  // One side the whole shape, the other repeating over its leading dims: blocks of the short
  // side's size, that side read from its start in each.
  if (a_same && repeats_over_leading_dims(b_shape, out_shape)) {
    const int64_t period = shape_numel(b_shape);
    loop(n / period, period, [&](int64_t first, int64_t last) {
      auto g = f;
      for (int64_t base = first * period; base < last * period; base += period)
        for (int64_t k = 0; k < period; ++k) g(base + k, base + k, k);
    });
    return;
  }
  if (b_same && repeats_over_leading_dims(a_shape, out_shape)) {
    const int64_t period = shape_numel(a_shape);
    loop(n / period, period, [&](int64_t first, int64_t last) {
      auto g = f;
      for (int64_t base = first * period; base < last * period; base += period)
        for (int64_t k = 0; k < period; ++k) g(base + k, k, base + k);
    });
    return;
  }
  // General case: an odometer over the output index, advancing each input's offset by its stride.
  const auto sa = broadcast_strides(a_shape, out_shape), sb = broadcast_strides(b_shape, out_shape);
  const int64_t ndim = static_cast<int64_t>(out_shape.size());
  const int64_t inner = out_shape.back(), inner_a = sa.back(), inner_b = sb.back();
  std::vector<int64_t> index(ndim, 0);
  int64_t ia = 0, ib = 0;
  for (int64_t i = 0; i < n; i += inner) {
    for (int64_t k = 0; k < inner; ++k) f(i + k, ia + k * inner_a, ib + k * inner_b);
    for (int64_t d = ndim - 2; d >= 0; --d) {  // carry into the outer dims
      ++index[d];
      ia += sa[d];
      ib += sb[d];
      if (index[d] < out_shape[d]) break;
      ia -= sa[d] * out_shape[d];
      ib -= sb[d] * out_shape[d];
      index[d] = 0;
    }
  }
}

template <typename F>
void for_each_broadcast(const Shape& out_shape, const Shape& a_shape, const Shape& b_shape, F&& f) {
  broadcast_loops<false>(out_shape, a_shape, b_shape, f);
}

template <typename F>
void parallel_for_each_broadcast(const Shape& out_shape, const Shape& a_shape, const Shape& b_shape, F&& f) {
  broadcast_loops<true>(out_shape, a_shape, b_shape, f);
}

}  // namespace minigrad::detail
