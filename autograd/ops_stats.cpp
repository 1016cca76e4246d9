// Statistics, scans and selections along dims: var and std, cumsum, topk, forward and backward.
//
// var and std first move the reduced dims to the end (a permuted copy), so each result element
// comes from one contiguous row of N elements: [2, 3, 4] over dims {0, 2} becomes rows [3, 8].
// cumsum and topk work along one dim, seen as lanes: the input as a block [outer, n, inner]
// around the dim, each lane n elements lying `inner` apart (as in ops_reduce.cpp).
#include <algorithm>
#include <cmath>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"

namespace minigrad {

using detail::check;

namespace {

// ---- var and std: rows of the reduced elements -------------------------------------------------

/// a's elements regrouped so that each result element summarises one row of `n` values.
struct Rows {
  Tensor data;                 ///< a permuted copy of a: the kept dims, then the reduced ones
  std::vector<int64_t> order;  ///< the permutation that made it (undone in backward)
  int64_t rows = 1, n = 1;     ///< [rows, n] is data's shape seen as a matrix
  Shape out_shape;             ///< the result's shape, with or without the reduced dims
};

/// Checks a and dims (empty = all dims) and regroups a's elements into rows; `op` names the caller.
Rows rows_of(const Tensor& a, std::vector<int64_t> dims, bool keepdim, const char* op) {
  detail::check_defined(a, op);
  check(a.is_floating_point(), op,
        ": only float32 and float64 are supported (as PyTorch's std and var), got ", dtype_name(a.dtype()));
  const int64_t ndim = a.dim();
  if (dims.empty())
    for (int64_t d = 0; d < ndim; ++d) dims.push_back(d);
  std::vector<bool> reduced(static_cast<size_t>(std::max<int64_t>(ndim, 1)), false);
  for (int64_t& d : dims) {
    d = detail::normalize_dim(d, a.shape(), op);
    check(!reduced[d], op, ": dim ", d, " appears more than once in the list of dims (shape ", a.shape(),
          ")");
    reduced[d] = true;
  }

  Rows r;
  for (int64_t d = 0; d < ndim; ++d) {
    if (reduced[d]) continue;
    r.order.push_back(d);
    r.rows *= a.size(d);
  }
  for (int64_t d = 0; d < ndim; ++d) {
    if (!reduced[d]) continue;
    r.order.push_back(d);
    r.n *= a.size(d);
  }
  for (int64_t d = 0; d < ndim; ++d) {
    if (!reduced[d]) r.out_shape.push_back(a.size(d));
    if (reduced[d] && keepdim) r.out_shape.push_back(1);
  }
  NoGradGuard no_grad;  // the copy is data for this op, not a recorded step
  r.data = ndim == 0 ? a.detach() : permute(a, r.order).detach();
  return r;
}

/// Per row: the mean, and the variance sum (x - mean)^2 / divisor, both in double (two passes:
/// the mean first, so the squares are of small deviations and nothing cancels).
template <typename T>
void row_moments(const T* x, int64_t rows, int64_t n, double divisor, std::vector<double>& means,
                 std::vector<double>& variances) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * n;
    double total = 0.0;
    for (int64_t j = 0; j < n; ++j) total += row[j];
    const double mean = total / static_cast<double>(n);
    double squares = 0.0;
    for (int64_t j = 0; j < n; ++j) squares += (row[j] - mean) * (row[j] - mean);
    means[r] = mean;
    variances[r] = squares / divisor;
  }
}

/// var (Sqrt = false) or std (Sqrt = true) over `dims` with `correction`, recorded as one node.
template <bool Sqrt>
Tensor moments_impl(const Tensor& a, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  const char* op = Sqrt ? "std" : "var";
  const Rows r = rows_of(a, dims, keepdim, op);
  const double divisor = std::max(static_cast<double>(r.n) - static_cast<double>(correction), 0.0);
  std::vector<double> means(r.rows), results(r.rows);
  Tensor out = detail::new_tensor(r.out_shape, a.dtype());
  dispatch_floating(a.dtype(), op, [&]<typename T>() {
    row_moments(r.data.data_ptr<T>(), r.rows, r.n, divisor, means, results);
    for (int64_t i = 0; i < r.rows; ++i) {
      if (Sqrt) results[i] = std::sqrt(results[i]);
      out.data_ptr<T>()[i] = static_cast<T>(results[i]);
    }
  });

  // var: grad_x = g * 2 (x - mean) / dof;  std: grad_x = g * (x - mean) / (dof * std), 0 in a row
  // whose std is 0 (PyTorch's std_backward masks those rows). dof = N - correction, not clamped at
  // 0 as the forward's divisor is: PyTorch's var_backward divides by it as it is, so a correction
  // past N gives an inf result but a finite gradient.
  const double dof = static_cast<double>(r.n) - static_cast<double>(correction);
  auto backward = [r, dof, means, results](const Tensor& grad, const std::vector<Tensor>&) {
    const Tensor g = detail::convert(grad, r.data.dtype());
    Tensor grad_rows = detail::new_tensor(r.data.shape(), r.data.dtype());
    dispatch_floating(g.dtype(), "var/std backward", [&]<typename T>() {
      const T *x = r.data.data_ptr<T>(), *gp = g.data_ptr<T>();
      T* y = grad_rows.data_ptr<T>();
      for (int64_t i = 0; i < r.rows; ++i) {
        const double scale =
            Sqrt ? (results[i] == 0.0 ? 0.0 : gp[i] / (dof * results[i])) : 2.0 * gp[i] / dof;
        for (int64_t j = 0; j < r.n; ++j)
          y[i * r.n + j] = static_cast<T>(scale * (x[i * r.n + j] - means[i]));
      }
    });
    if (r.order.empty()) return std::vector<Tensor>{grad_rows};
    std::vector<int64_t> inverse(r.order.size());
    for (size_t d = 0; d < r.order.size(); ++d) inverse[r.order[d]] = static_cast<int64_t>(d);
    return std::vector<Tensor>{permute(grad_rows, inverse)};
  };
  return detail::record(out, Sqrt ? "StdBackward0" : "VarBackward0", {a}, backward);
}

// ---- lanes along one dim (cumsum, topk) ------------------------------------------------------------

/// a seen as [outer, n, inner] around `dim`: element k of lane (o, i) sits at (o * n + k) * inner + i.
struct Lanes {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t first(int64_t o, int64_t i) const { return o * n * inner + i; }
};

Lanes lanes_around(const Shape& shape, int64_t dim) {
  Lanes lanes;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < dim) lanes.outer *= shape[d];
    if (d == dim) lanes.n = shape[d];
    if (d > dim) lanes.inner *= shape[d];
  }
  return lanes;
}

/// The running sum of each lane of x into y, front to back (Reverse = false) or back to front,
/// accumulated in Acc and rounded once per output, as PyTorch's cumsum (double for floats).
template <bool Reverse, typename Acc, typename T, typename Out>
void running_sums(const T* x, Out* y, const Lanes& lanes) {
  if (lanes.n == 0 || lanes.inner == 0) return;  // no element, however large outer is
  for (int64_t o = 0; o < lanes.outer; ++o) {
    for (int64_t i = 0; i < lanes.inner; ++i) {
      Acc total = 0;
      for (int64_t step = 0; step < lanes.n; ++step) {
        const int64_t k = Reverse ? lanes.n - 1 - step : step;
        const int64_t at = lanes.first(o, i) + k * lanes.inner;
        total = detail::wrapping_add(total, static_cast<Acc>(x[at]));  // int64 wraps, as PyTorch's
        y[at] = static_cast<Out>(total);
      }
    }
  }
}

// ---- topk --------------------------------------------------------------------------------------------

/// "x ranks before y" for topk: the larger first (largest) or the smaller first, nan before any
/// number; equal values are not ordered, and the selection algorithm decides their order.
template <typename V>
bool ranks_before(const std::pair<V, int64_t>& x, const std::pair<V, int64_t>& y, bool largest) {
  if constexpr (std::is_floating_point_v<V>) {
    const bool x_nan = std::isnan(x.first), y_nan = std::isnan(y.first);
    if (largest) return (x_nan && !y_nan) || x.first > y.first;
    return (!x_nan && y_nan) || x.first < y.first;
  }
  return largest ? x.first > y.first : x.first < y.first;
}

/// Puts the k best of `queue` at its front, in PyTorch's CPU order (TopKImpl.h, topk_impl_loop):
/// partial_sort for k * 64 <= n, otherwise nth_element, then a sort of the first k - 1 if sorted.
template <typename V>
void select_top(std::vector<std::pair<V, int64_t>>& queue, int64_t k, bool largest, bool sorted) {
  if (k == 0) return;
  auto before = [largest](const auto& x, const auto& y) { return ranks_before(x, y, largest); };
  const auto n = static_cast<int64_t>(queue.size());
  if (k * 64 <= n) {
    std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), before);
    return;
  }
  std::nth_element(queue.begin(), queue.begin() + (k - 1), queue.end(), before);
  if (sorted) std::sort(queue.begin(), queue.begin() + (k - 1), before);
}

}  // namespace

// ---- the public ops ------------------------------------------------------------------------------

Tensor var(const Tensor& a) { return moments_impl<false>(a, {}, 1, false); }

Tensor var(const Tensor& a, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  return moments_impl<false>(a, dims, correction, keepdim);
}

Tensor var(const Tensor& a, int64_t dim, bool unbiased, bool keepdim) {
  return moments_impl<false>(a, {dim}, unbiased ? 1 : 0, keepdim);
}

Tensor std(const Tensor& a) { return moments_impl<true>(a, {}, 1, false); }

Tensor std(const Tensor& a, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  return moments_impl<true>(a, dims, correction, keepdim);
}

Tensor std(const Tensor& a, int64_t dim, bool unbiased, bool keepdim) {
  return moments_impl<true>(a, {dim}, unbiased ? 1 : 0, keepdim);
}

Tensor cumsum(const Tensor& a, int64_t dim) {
  detail::check_defined(a, "cumsum");
  const Lanes lanes = lanes_around(a.shape(), detail::normalize_dim(dim, a.shape(), "cumsum"));
  const Dtype dtype = a.is_floating_point() ? a.dtype() : kInt64;
  Tensor out = detail::new_tensor(a.shape(), dtype);
  dispatch(a.dtype(), [&]<typename T>() {
    using Out = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    running_sums<false, Acc>(a.data_ptr<T>(), out.data_ptr<Out>(), lanes);
  });
  // grad_a_k = grad_k + ... + grad_(n-1): each input element feeds every output from its own on.
  return detail::record(out, "CumsumBackward0", {a}, [lanes](const Tensor& grad, const std::vector<Tensor>&) {
    Tensor grad_a = detail::new_tensor(grad.shape(), grad.dtype());
    dispatch_floating(grad.dtype(), "cumsum backward", [&]<typename T>() {
      running_sums<true, double>(grad.data_ptr<T>(), grad_a.data_ptr<T>(), lanes);
    });
    return std::vector<Tensor>{grad_a};
  });
}

std::tuple<Tensor, Tensor> topk(const Tensor& a, int64_t k, int64_t dim, bool largest, bool sorted) {
  detail::check_defined(a, "topk");
  check(a.dtype() != kBool,
        "topk: not implemented for bool tensors (as in PyTorch); convert first, e.g. x.to(kInt64)");
  const int64_t d = detail::normalize_dim(dim, a.shape(), "topk");
  const Lanes lanes = lanes_around(a.shape(), d);
  check(k >= 0, "topk: k must be non-negative, got ", k);
  check(k <= lanes.n, "topk: k = ", k, " is larger than dim ", d, " of size ", lanes.n, " (shape ", a.shape(),
        ")");

  Shape out_shape = a.shape();
  if (a.dim() > 0) out_shape[d] = k;
  // A 0-d tensor's result is 0-d, its one element, whether k is 0 or 1 (as PyTorch's, whose
  // outputs keep the input's shape there); k = 0 left the element unwritten.
  if (a.dim() == 0) k = 1;
  const Lanes out_lanes{lanes.outer, k, lanes.inner};
  Tensor values = detail::new_tensor(out_shape, a.dtype()), indices = detail::new_tensor(out_shape, kInt64);
  if (values.numel() > 0)
    dispatch(a.dtype(), [&]<typename T>() {
      using V = std::conditional_t<std::is_floating_point_v<T>, double, T>;  // PyTorch's accscalar_t
      std::vector<std::pair<V, int64_t>> queue(static_cast<size_t>(lanes.n));
      const T* x = a.data_ptr<T>();
      for (int64_t o = 0; o < lanes.outer; ++o) {
        for (int64_t i = 0; i < lanes.inner; ++i) {
          for (int64_t j = 0; j < lanes.n; ++j)
            queue[j] = {static_cast<V>(x[lanes.first(o, i) + j * lanes.inner]), j};
          select_top(queue, k, largest, sorted);
          for (int64_t j = 0; j < k; ++j) {
            const int64_t at = out_lanes.first(o, i) + j * lanes.inner;
            values.data_ptr<T>()[at] = static_cast<T>(queue[j].first);
            indices.data_ptr<int64_t>()[at] = queue[j].second;
          }
        }
      }
    });

  // grad_a = grad put back at each lane's chosen positions (distinct within a lane), 0 elsewhere.
  // The backward keeps its own copy of the indices: the caller may change the returned ones.
  auto backward = [lanes, k, positions = indices.clone()](const Tensor& grad, const std::vector<Tensor>& in) {
    Tensor grad_a = zeros(in[0].shape(), {.dtype = grad.dtype()});
    if (grad.numel() == 0) return std::vector<Tensor>{grad_a};
    dispatch_floating(grad.dtype(), "topk backward", [&]<typename T>() {
      const T* g = grad.data_ptr<T>();
      const int64_t* p = positions.data_ptr<int64_t>();
      for (int64_t o = 0; o < lanes.outer; ++o)
        for (int64_t i = 0; i < lanes.inner; ++i)
          for (int64_t j = 0; j < k; ++j) {
            const int64_t at = (o * k + j) * lanes.inner + i;
            grad_a.data_ptr<T>()[lanes.first(o, i) + p[at] * lanes.inner] = g[at];
          }
    });
    return std::vector<Tensor>{grad_a};
  };
  return {detail::record(values, "TopkBackward0", {a}, backward), indices};
}

}  // namespace minigrad
