// Reductions: sum, mean, max, min, argmax, and the two softmaxes, forward and backward.
//
// Every op here sees its input as a block [outer, n, inner] around the reduced dim: shape
// [2, 3, 4] reduced over dim 1 is outer 2, n 3, inner 4; over dim 0 it is [1, 2, 12]; over all
// elements it is [1, 24, 1]. Each output element then comes from one "lane" of n input elements
// lying `inner` apart, so every op below is the same loop over lanes (for_each_lane) with its own
// body, and no op works out strides for itself.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "autograd/machinery/parallel.hpp"
#include "autograd/machinery/vector_math.hpp"
#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"

namespace minigrad {

using detail::check;

namespace {

// ---- lanes: a tensor as [outer, n, inner] around the reduced dim ------------------------------

/// Element k of the lane that starts at `first` sits at first + k * inner.
struct Lanes {
  int64_t outer = 1;  ///< product of the sizes before the dim
  int64_t n = 1;      ///< size of the dim: elements per lane
  int64_t inner = 1;  ///< product of the sizes after it: the distance between a lane's elements
};

/// The lanes of `shape` around `dim` (already normalised; a 0-d shape is one lane of one element).
Lanes lanes_around(const Shape& shape, int64_t dim) {
  Lanes lanes;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < dim) lanes.outer *= shape[d];
    if (d == dim) lanes.n = shape[d];
    if (d > dim) lanes.inner *= shape[d];
  }
  return lanes;
}

/// All elements as a single lane.
Lanes one_lane(const Tensor& a) { return {.outer = 1, .n = a.numel(), .inner = 1}; }

/// Calls f(lane, first) once per lane: `lane` is the index of its output element (the output is
/// the block [outer, inner], in row-major order), `first` the offset of its first input element.
template <typename F>
void for_each_lane(const Lanes& lanes, F&& f) {
  if (lanes.inner == 0) return;  // no lanes, however large outer is (a [2^40, 2, 0] input)
  for (int64_t o = 0; o < lanes.outer; ++o)
    for (int64_t i = 0; i < lanes.inner; ++i) f(o * lanes.inner + i, o * lanes.n * lanes.inner + i);
}

/// for_each_lane with the blocks of `outer` split over the threads (a piece holds PyTorch's grain
/// of elements or more): for ops where each lane writes only its own elements.
template <typename F>
void for_each_lane_parallel(const Lanes& lanes, F&& f) {
  if (lanes.inner == 0) return;
  const int64_t block = std::max<int64_t>(lanes.n * lanes.inner, 1);
  detail::parallel_for(lanes.outer, detail::grain_for(block), [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o)
      for (int64_t i = 0; i < lanes.inner; ++i) f(o * lanes.inner + i, o * lanes.n * lanes.inner + i);
  });
}

/// A reduction over one dim: the normalised dim, its lanes, and the output shape ([2, 3, 4] over
/// dim 1 gives [2, 4], or [2, 1, 4] with keepdim; a 0-d input stays 0-d, as PyTorch).
struct DimReduction {
  int64_t dim;
  Lanes lanes;
  Shape out_shape;
};

/// Checks a and dim (std::out_of_range naming `op`, the dim and the shape) and describes the reduction.
DimReduction reduce_dim(const Tensor& a, int64_t dim, bool keepdim, const char* op) {
  detail::check_defined(a, op);
  const int64_t d = detail::normalize_dim(dim, a.shape(), op);
  Shape out_shape = a.shape();
  if (a.dim() > 0 && keepdim) out_shape[d] = 1;
  if (a.dim() > 0 && !keepdim) out_shape.erase(out_shape.begin() + d);
  return {d, lanes_around(a.shape(), d), out_shape};
}

/// `grad` (converted to `dtype`) with each lane's value written to all n elements of the lane,
/// divided by `divisor`: the backward of sum (divisor 1) and mean (divisor n). Undoes a reduction
/// the way sum_to undoes broadcasting.
Tensor spread_lanes(const Tensor& grad, const Shape& shape, Dtype dtype, const Lanes& lanes, double divisor) {
  const Tensor g = detail::convert(grad, dtype);
  Tensor out = detail::new_tensor(shape, dtype);
  if (out.numel() == 0) return out;
  dispatch_floating(dtype, "backward of a reduction", [&]<typename T>() {
    const T* gp = g.data_ptr<T>();
    T* y = out.data_ptr<T>();
    for_each_lane(lanes, [&](int64_t lane, int64_t first) {
      const auto value = static_cast<T>(static_cast<double>(gp[lane]) / divisor);
      for (int64_t k = 0; k < lanes.n; ++k) y[first + k * lanes.inner] = value;
    });
  });
  return out;
}

// ---- sum and mean ------------------------------------------------------------------------------

/// PyTorch's result dtype of sum: floats keep theirs; bool and int64 count in int64.
Dtype sum_dtype(Dtype dtype) { return is_floating_point(dtype) ? dtype : kInt64; }

/// Sum of n values at stride 1 in Acc. `Parts` independent partial sums instead of one running
/// total: each add no longer waits for the one before it, and the compiler turns them into vector
/// adds (a single total made sum [2048, 512] sixteen times slower than PyTorch's). A sum of the
/// whole tensor takes 32, which keep an AVX-512 CPU's adders busy (sum [2048, 512] 115 -> 98 us
/// there); the sums of rows keep 8, as their 32 parts would cost more to add up than they save,
/// and so does softmax, whose AVX2 kernel (vector_math.cpp) repeats this order bit for bit.
template <typename Acc, int Parts = 8, typename T>
Acc sum_contiguous(const T* x, int64_t n) {
  Acc part[Parts] = {};
  int64_t k = 0;
  for (; k + Parts <= n; k += Parts)
    for (int j = 0; j < Parts; ++j) part[j] += static_cast<Acc>(x[k + j]);
  Acc total = 0;
  for (int j = 0; j < Parts; ++j) total += part[j];
  for (; k < n; ++k) total += static_cast<Acc>(x[k]);
  return total;
}

/// sum of x[k] * y[k] over n values at stride 1, in double, in eight parts as sum_contiguous.
template <typename T>
double dot_contiguous(const T* x, const T* y, int64_t n) {
  double part[8] = {};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) part[j] += static_cast<double>(x[k + j]) * y[k + j];
  double total = 0;
  for (int j = 0; j < 8; ++j) total += part[j];
  for (; k < n; ++k) total += static_cast<double>(x[k]) * y[k];
  return total;
}

/// One sum per lane. Floats accumulate in double and round once at the end, so a float32 sum is
/// as close to the exact sum as float32 allows. PyTorch's cascade sums float32 in float32: the two
/// can differ in the last bit, and by more where terms cancel ([1e8, 1, -1e8] sums to 1 here, to
/// 0 in PyTorch; the README lists it among the differences). Integers accumulate in uint64_t, so
/// overflow wraps around as in PyTorch instead of being undefined behaviour. Lanes of stride 1
/// (the last dim, or everything) go through sum_contiguous; strided lanes are summed a row at a
/// time, so memory is read in order.
Tensor sum_lanes(const Tensor& a, const Lanes& lanes, const Shape& out_shape) {
  Tensor out = detail::new_tensor(out_shape, sum_dtype(a.dtype()));
  if (out.numel() == 0) return out;  // no lanes: nothing to loop over, however large a dim is
  dispatch(a.dtype(), [&]<typename T>() {
    constexpr bool floating = std::is_floating_point_v<T>;
    using Acc = std::conditional_t<floating, double, uint64_t>;
    using Out = std::conditional_t<floating, T, int64_t>;
    const T* x = a.data_ptr<T>();
    Out* y = out.data_ptr<Out>();
    if (lanes.outer == 1 && lanes.inner == 1) {  // one long lane: a partial sum per piece, added in order
      const int64_t pieces = detail::parallel_pieces(lanes.n, detail::kGrainSize);
      std::vector<Acc> partial(static_cast<size_t>(pieces));
      detail::parallel_pieces_for(lanes.n, pieces, [&](int64_t piece, int64_t begin, int64_t end) {
        partial[static_cast<size_t>(piece)] = sum_contiguous<Acc, 32>(x + begin, end - begin);
      });
      Acc total = 0;
      for (const Acc p : partial) total += p;
      y[0] = static_cast<Out>(total);
      return;
    }
    if (lanes.inner == 1) {                              // one sum per row, the rows split over the threads
      const int64_t grain = detail::grain_for(lanes.n);  // rows per piece
      detail::parallel_for(lanes.outer, grain, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o)
          y[o] = static_cast<Out>(sum_contiguous<Acc>(x + o * lanes.n, lanes.n));
      });
      return;
    }
    std::vector<Acc> totals(static_cast<size_t>(lanes.inner));
    for (int64_t o = 0; o < lanes.outer; ++o) {
      std::fill(totals.begin(), totals.end(), Acc(0));
      const T* block = x + o * lanes.n * lanes.inner;
      for (int64_t k = 0; k < lanes.n; ++k)
        for (int64_t i = 0; i < lanes.inner; ++i) totals[i] += static_cast<Acc>(block[k * lanes.inner + i]);
      for (int64_t i = 0; i < lanes.inner; ++i) y[o * lanes.inner + i] = static_cast<Out>(totals[i]);
    }
  });
  return out;
}

/// sum over `lanes`, recorded: grad_a = grad copied to every element of its lane.
Tensor sum_impl(const Tensor& a, const Lanes& lanes, const Shape& out_shape, detail::OpName node) {
  Tensor out = sum_lanes(a, lanes, out_shape);
  return detail::record(
      out, node, {a}, detail::Saves::nothing, [lanes](const Tensor& grad, const std::vector<Tensor>& inputs) {
        return std::vector<Tensor>{spread_lanes(grad, inputs[0].shape(), inputs[0].dtype(), lanes, 1.0)};
      });
}

/// mean over `lanes`, recorded: the lane sums divided by n (0 / 0 = nan for an empty lane, as
/// PyTorch); grad_a = grad / n copied to every element of its lane.
Tensor mean_impl(const Tensor& a, const Lanes& lanes, const Shape& out_shape, detail::OpName node) {
  check(a.is_floating_point(), "mean: expected a floating-point tensor, got ", dtype_name(a.dtype()),
        " (convert it first, e.g. x.to(kFloat32).mean())");
  Tensor out = sum_lanes(a, lanes, out_shape);
  const auto n = static_cast<double>(lanes.n);
  dispatch_floating(out.dtype(), "mean", [&]<typename T>() {
    T* y = out.data_ptr<T>();
    const int64_t out_numel = out.numel();
    for (int64_t i = 0; i < out_numel; ++i) y[i] = static_cast<T>(static_cast<double>(y[i]) / n);
  });
  return detail::record(
      out, node, {a}, detail::Saves::nothing,
      [lanes, n](const Tensor& grad, const std::vector<Tensor>& inputs) {
        return std::vector<Tensor>{spread_lanes(grad, inputs[0].shape(), inputs[0].dtype(), lanes, n)};
      });
}

// ---- max, min, argmax ----------------------------------------------------------------------------

enum class Extreme { Max, Min };

const char* name_of(Extreme e) { return e == Extreme::Max ? "max" : "min"; }

/// Does x beat the best so far? NaN beats every number (PyTorch's max and min propagate NaN), and
/// an equal value does not, so ties keep the first occurrence.
template <Extreme E, typename T>
bool beats(T x, T best) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(best)) return false;
    if (std::isnan(x)) return true;
  }
  return E == Extreme::Max ? x > best : x < best;
}

/// For each lane, the position (0..n-1) of its largest (Max) or smallest (Min) element, int64.
/// `dim` is the reduced dim, or nullopt for all elements. Every lane must be non-empty: an empty
/// lane has no extreme, so `op` throws, as PyTorch.
template <Extreme E>
Tensor extreme_positions(const Tensor& a, const Lanes& lanes, const Shape& out_shape,
                         std::optional<int64_t> dim, const char* op) {
  if (!dim) {
    check(a.numel() > 0, op, ": cannot reduce an empty tensor (shape ", a.shape(),
          ") over all elements; give a dim to reduce over instead");
  } else {
    check(lanes.n > 0, op, ": cannot reduce dim ", *dim, " of shape ", a.shape(), " because it has size 0");
  }
  Tensor positions = detail::new_tensor(out_shape, kInt64);
  int64_t* p = positions.data_ptr<int64_t>();
  dispatch(a.dtype(), [&]<typename T>() {
    const T* x = a.data_ptr<T>();
    for_each_lane(lanes, [&](int64_t lane, int64_t first) {
      int64_t best = 0;
      for (int64_t k = 1; k < lanes.n; ++k)
        if (beats<E>(x[first + k * lanes.inner], x[first + best * lanes.inner])) best = k;
      p[lane] = best;
    });
  });
  return positions;
}

/// The element of each lane at `positions` (same dtype as a).
Tensor pick(const Tensor& a, const Lanes& lanes, const Tensor& positions) {
  Tensor out = detail::new_tensor(positions.shape(), a.dtype());
  const int64_t* p = positions.data_ptr<int64_t>();
  dispatch(a.dtype(), [&]<typename T>() {
    const T* x = a.data_ptr<T>();
    T* y = out.data_ptr<T>();
    for_each_lane(lanes, [&](int64_t lane, int64_t first) { y[lane] = x[first + p[lane] * lanes.inner]; });
  });
  return out;
}

/// Backward of max() / min() over all elements: grad / count at each of the `count` elements of x
/// equal to `result` (the NaN elements if it is NaN), 0 elsewhere. Tied elements share the gradient
/// evenly, as PyTorch's evenly_distribute_backward does.
Tensor share_among_ties(const Tensor& grad, const Tensor& x, const Tensor& result) {
  Tensor grad_a = zeros_like(x);
  dispatch_floating(x.dtype(), "max/min backward", [&]<typename T>() {
    const T r = result.data_ptr<T>()[0];
    const T* xp = x.data_ptr<T>();
    auto is_result = [&](T v) { return std::isnan(r) ? std::isnan(v) : v == r; };
    int64_t count = 0;
    const int64_t x_numel = x.numel();
    for (int64_t i = 0; i < x_numel; ++i) count += is_result(xp[i]) ? 1 : 0;

    const double share = detail::convert(grad, kFloat64).item<double>() / static_cast<double>(count);
    T* g = grad_a.data_ptr<T>();
    for (int64_t i = 0; i < x_numel; ++i)
      if (is_result(xp[i])) g[i] = static_cast<T>(share);
  });
  return grad_a;
}

/// Backward of max(dim) / min(dim): each lane's grad at the lane's returned position, 0 elsewhere.
Tensor scatter_to_positions(const Tensor& grad, const Tensor& x, const Lanes& lanes,
                            const Tensor& positions) {
  const Tensor g = detail::convert(grad, x.dtype());
  Tensor grad_a = zeros_like(x);
  const int64_t* p = positions.data_ptr<int64_t>();
  dispatch_floating(x.dtype(), "max/min backward", [&]<typename T>() {
    const T* gp = g.data_ptr<T>();
    T* y = grad_a.data_ptr<T>();
    for_each_lane(lanes, [&](int64_t lane, int64_t first) { y[first + p[lane] * lanes.inner] = gp[lane]; });
  });
  return grad_a;
}

/// max() / min() over all elements -> 0-d;  grad_a = grad shared evenly among the tied extremes.
template <Extreme E>
Tensor extreme_all(const Tensor& a, detail::OpName node) {
  const char* op = name_of(E);
  detail::check_defined(a, op);
  const Lanes lanes = one_lane(a);
  Tensor out = pick(a, lanes, extreme_positions<E>(a, lanes, {}, std::nullopt, op));
  auto backward = [result = detail::saved(out)](const Tensor& grad, const std::vector<Tensor>& inputs) {
    return std::vector<Tensor>{share_among_ties(grad, inputs[0], result)};
  };
  return detail::record(out, node, {a}, backward);
}

/// max(dim) / min(dim) -> (values, indices);  grad_a = grad at the returned index (the first one
/// on ties), 0 elsewhere.
template <Extreme E>
std::tuple<Tensor, Tensor> extreme_dim(const Tensor& a, int64_t dim, bool keepdim, detail::OpName node) {
  const char* op = name_of(E);
  const DimReduction r = reduce_dim(a, dim, keepdim, op);
  Tensor indices = extreme_positions<E>(a, r.lanes, r.out_shape, r.dim, op);
  Tensor values = pick(a, r.lanes, indices);
  // The backward keeps its own copy of the positions: the caller may change the returned indices.
  auto backward = [lanes = r.lanes, positions = indices.clone()](const Tensor& grad,
                                                                 const std::vector<Tensor>& inputs) {
    return std::vector<Tensor>{scatter_to_positions(grad, inputs[0], lanes, positions)};
  };
  return {detail::record(values, node, {a}, backward), indices};
}

void check_argmax_dtype(const Tensor& a) {
  detail::check_defined(a, "argmax");
  check(a.dtype() != kBool,
        "argmax: not implemented for bool tensors (as in PyTorch); convert first, e.g. "
        "x.to(kInt64).argmax()");
}

// ---- softmax and log_softmax -------------------------------------------------------------------

/// The largest of x[0, n), n >= 1. Eight running maxima, as the eight sums of sum_contiguous, so
/// the loop vectorises; the max of a set is exact whatever the order. (With a nan in the lane the
/// max may differ from a left-to-right scan, but every softmax output of that lane is nan anyway.)
template <typename T>
T max_contiguous(const T* x, int64_t n) {
  T part[8];
  std::fill(part, part + 8, x[0]);
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) part[j] = x[k + j] > part[j] ? x[k + j] : part[j];
  T m = part[0];
  for (int j = 1; j < 8; ++j) m = part[j] > m ? part[j] : m;
  for (; k < n; ++k) m = x[k] > m ? x[k] : m;
  return m;
}

/// softmax (Log = false) or log_softmax (Log = true) of one lane, x[0, n) into y[0, n), n >= 1.
/// Stable: with m the lane's max, e^(x - m) / sum e^(x - m) is the same value as e^x / sum e^x but
/// never overflows, and log_softmax = x - m - log(sum e^(x - m)) never takes the log of 0 or inf.
/// A -inf element gets probability 0; an all -inf lane gives nan ((-inf) - (-inf)), as PyTorch.
/// `Step` is the distance between the lane's elements; the usual lane, the last dim, has step 1.
template <bool Log, typename T>
void softmax_lane(const T* x, T* y, int64_t n, int64_t step) {
  if constexpr (!Log && std::is_same_v<T, float>) {
    if (step == 1 && detail::has_avx2()) return detail::softmax_contiguous(x, y, n);  // the same, faster
  }
  auto at = [step](int64_t k) { return k * step; };
  // e^(x - m) once per element, in T as PyTorch computes it, into y; the sum in double.
  double total = 0;
  T m = x[0];
  if (step == 1) {  // the vector exp and max, and eight partial sums
    m = max_contiguous(x, n);
    for (int64_t k = 0; k < n; ++k) y[k] = x[k] - m;
    detail::exp_contiguous(y, y, n);
    total = sum_contiguous<double>(y, n);
  } else {
    for (int64_t k = 1; k < n; ++k) m = x[at(k)] > m ? x[at(k)] : m;
    for (int64_t k = 0; k < n; ++k) {
      y[at(k)] = std::exp(x[at(k)] - m);
      total += y[at(k)];
    }
  }
  if constexpr (Log) {  // y held e^(x - m) only to be summed
    const double log_total = std::log(total);
    for (int64_t k = 0; k < n; ++k) y[at(k)] = static_cast<T>(static_cast<double>(x[at(k)] - m) - log_total);
  } else {
    const double inverse = 1.0 / total;  // one division per lane, then products (as PyTorch)
    for (int64_t k = 0; k < n; ++k) y[at(k)] = static_cast<T>(y[at(k)] * inverse);
  }
}

/// softmax_lane for every lane of a (x) into out (y), the lanes split over the threads.
template <bool Log, typename T>
void softmax_lanes(const T* x, T* y, const Lanes& lanes) {
  for_each_lane_parallel(
      lanes, [&](int64_t, int64_t first) { softmax_lane<Log>(x + first, y + first, lanes.n, lanes.inner); });
}

/// The backward of one lane: softmax (Log = false): grad_a = out * (grad - sum(grad * out));
/// log_softmax (Log = true): grad_a = grad - e^out * sum(grad). Sums in double; a lane of step 1
/// sums in eight parts, as sum_contiguous, so that its loops vectorise.
template <bool Log, typename T>
void softmax_backward_lane(const T* g, const T* y, T* ga, int64_t n, int64_t step) {
  if constexpr (!Log && std::is_same_v<T, float>) {
    if (step == 1 && detail::has_avx2()) return detail::softmax_backward_contiguous(g, y, ga, n);
  }
  auto at = [step](int64_t k) { return k * step; };
  double total = 0;  // softmax: sum(grad * out); log_softmax: sum(grad)
  if (step == 1) {
    total = Log ? sum_contiguous<double>(g, n) : dot_contiguous(g, y, n);
  } else {
    for (int64_t k = 0; k < n; ++k) total += Log ? g[at(k)] : static_cast<double>(g[at(k)]) * y[at(k)];
  }
  for (int64_t k = 0; k < n; ++k) {
    const double gk = g[at(k)], yk = y[at(k)];
    ga[at(k)] = static_cast<T>(Log ? gk - std::exp(yk) * total : yk * (gk - total));
  }
}

/// softmax_backward_lane for every lane, the lanes split over the threads.
template <bool Log>
Tensor softmax_backward(const Tensor& grad, const Tensor& out, const Lanes& lanes) {
  const Tensor g = detail::convert(grad, out.dtype());
  Tensor grad_a = detail::gradient_output(g);  // each lane is read before it is written
  dispatch_floating(out.dtype(), Log ? "log_softmax backward" : "softmax backward", [&]<typename T>() {
    const T* gp = g.data_ptr<T>();
    const T* y = out.data_ptr<T>();
    T* ga = grad_a.data_ptr<T>();
    for_each_lane_parallel(lanes, [&](int64_t, int64_t first) {
      softmax_backward_lane<Log>(gp + first, y + first, ga + first, lanes.n, lanes.inner);
    });
  });
  return grad_a;
}

/// softmax or log_softmax along `dim`: the output keeps a's shape; the backward above, per lane.
template <bool Log>
Tensor softmax_impl(const Tensor& a, int64_t dim) {
  const char* op = Log ? "log_softmax" : "softmax";
  const DimReduction r = reduce_dim(a, dim, /*keepdim=*/true, op);
  Tensor out = detail::new_tensor(a.shape(), a.dtype());
  dispatch_floating(a.dtype(), op, [&]<typename T>() {
    if (a.numel() > 0) softmax_lanes<Log>(a.data_ptr<T>(), out.data_ptr<T>(), r.lanes);
  });
  const detail::OpName node =
      Log ? detail::OpName("LogSoftmaxBackward0") : detail::OpName("SoftmaxBackward0");
  auto backward = [lanes = r.lanes, result = detail::saved(out)](const Tensor& grad,
                                                                 const std::vector<Tensor>&) {
    return std::vector<Tensor>{softmax_backward<Log>(grad, result, lanes)};
  };
  return detail::record(out, node, {a}, /*reads=*/{false}, backward);  // only its own output
}

}  // namespace

// ---- the public ops ------------------------------------------------------------------------------

Tensor sum(const Tensor& a) {
  detail::check_defined(a, "sum");
  return sum_impl(a, one_lane(a), {}, "SumBackward0");
}

Tensor sum(const Tensor& a, int64_t dim, bool keepdim) {
  const DimReduction r = reduce_dim(a, dim, keepdim, "sum");
  return sum_impl(a, r.lanes, r.out_shape, "SumBackward1");
}

Tensor mean(const Tensor& a) {
  detail::check_defined(a, "mean");
  return mean_impl(a, one_lane(a), {}, "MeanBackward0");
}

Tensor mean(const Tensor& a, int64_t dim, bool keepdim) {
  const DimReduction r = reduce_dim(a, dim, keepdim, "mean");
  return mean_impl(a, r.lanes, r.out_shape, "MeanBackward1");
}

// PyTorch numbers the nodes the other way round here: max() records MaxBackward1, max(dim) MaxBackward0.
Tensor max(const Tensor& a) { return extreme_all<Extreme::Max>(a, "MaxBackward1"); }

std::tuple<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim) {
  return extreme_dim<Extreme::Max>(a, dim, keepdim, "MaxBackward0");
}

Tensor min(const Tensor& a) { return extreme_all<Extreme::Min>(a, "MinBackward1"); }

std::tuple<Tensor, Tensor> min(const Tensor& a, int64_t dim, bool keepdim) {
  return extreme_dim<Extreme::Min>(a, dim, keepdim, "MinBackward0");
}

Tensor argmax(const Tensor& a) {
  check_argmax_dtype(a);
  return extreme_positions<Extreme::Max>(a, one_lane(a), {}, std::nullopt, "argmax");
}

Tensor argmax(const Tensor& a, int64_t dim, bool keepdim) {
  check_argmax_dtype(a);
  const DimReduction r = reduce_dim(a, dim, keepdim, "argmax");
  return extreme_positions<Extreme::Max>(a, r.lanes, r.out_shape, r.dim, "argmax");
}

Tensor softmax(const Tensor& a, int64_t dim) { return softmax_impl<false>(a, dim); }

Tensor log_softmax(const Tensor& a, int64_t dim) { return softmax_impl<true>(a, dim); }

}  // namespace minigrad
