// Elementwise ops: arithmetic with broadcasting, the usual functions, comparisons.
//
// Each op computes its forward with a plain loop over raw data and records a backward lambda
// right below it. Binary ops share one broadcasting kernel (binary_kernel) and undo broadcasting
// in their backward with sum_to, the one place that knows how.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "autograd/machinery/parallel.hpp"
#include "autograd/machinery/vector_math.hpp"
#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"

namespace minigrad {

using detail::check;
using detail::check_defined;

// ---- broadcasting ----------------------------------------------------------------------------

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t ndim = std::max(a.size(), b.size());
  Shape out(ndim, 1);
  for (size_t i = 0; i < ndim; ++i) {  // align at the right
    const int64_t sa = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t sb = i < b.size() ? b[b.size() - 1 - i] : 1;
    check(sa == sb || sa == 1 || sb == 1, op, ": shapes ", a, " and ", b, " cannot be broadcast (size ", sa,
          " vs ", sb, " at dim ", static_cast<int64_t>(ndim - 1 - i), ")");
    out[ndim - 1 - i] = sa == 1 ? sb : sa;
  }
  return out;
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  check_defined(grad, "sum_to");
  if (grad.shape() == shape) return grad;
  check(detail::expandable(shape, grad.shape()), "sum_to: size ", shape, " is not expandable to size ",
        grad.shape(), " (the gradient's shape)");
  Tensor out = zeros(shape, {.dtype = grad.dtype()});
  dispatch(grad.dtype(), [&]<typename T>() {
    const T* g = grad.data_ptr<T>();
    T* o = out.data_ptr<T>();
    // Walk the gradient (the broadcast shape) and add each element into the input element it came from.
    detail::for_each_broadcast(grad.shape(), grad.shape(), shape, [&](int64_t i, int64_t, int64_t j) {
      o[j] = detail::wrapping_add(o[j], g[i]);
    });
  });
  return out;
}

namespace {

// out[i] = f(a[i'], b[i'']) over the broadcast shape, both operands first converted to `compute`;
// the result has dtype `result` (the same, or bool for comparisons).
template <typename F>
Tensor binary_kernel(const Tensor& a, const Tensor& b, const char* op, Dtype compute, Dtype result, F f) {
  check_defined(a, op);
  check_defined(b, op);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  const Tensor ca = detail::convert(a, compute), cb = detail::convert(b, compute);
  Tensor out = detail::new_tensor(shape, result, op);
  dispatch(compute, [&]<typename T>() {
    dispatch(result, [&]<typename R>() {
      const T* x = ca.data_ptr<T>();
      const T* y = cb.data_ptr<T>();
      R* o = out.data_ptr<R>();
      const auto apply = [=](int64_t i, int64_t ia, int64_t ib) { o[i] = static_cast<R>(f(x[ia], y[ib])); };
      detail::parallel_for_each_broadcast(shape, a.shape(), b.shape(), apply);
    });
  });
  return out;
}

// torch.result_type for two tensors: a 0-d operand does not widen a float32 tensor to float64.
Dtype operands_dtype(const Tensor& a, const Tensor& b) {
  return result_type(a.dtype(), a.dim() == 0, b.dtype(), b.dim() == 0);
}

Dtype arithmetic_dtype(const Tensor& a, const Tensor& b, const char* op) {
  const Dtype dtype = operands_dtype(a, b);
  check(dtype != kBool, op,
        ": arithmetic on two bool tensors is not supported; convert with .to(kInt64) first");
  return dtype;
}

// out[i] = f(a[i]) in a's dtype (after `promote_to_float` lifts int64/bool to float32, as PyTorch
// does for exp, log, ...).
template <typename F>
Tensor unary_kernel(const Tensor& a, const char* op, bool promote_to_float, F f) {
  check_defined(a, op);
  const Dtype dtype = promote_to_float && !a.is_floating_point() ? kFloat32 : a.dtype();
  check(dtype != kBool, op, ": not supported for bool tensors");
  const Tensor x = detail::convert(a, dtype);
  Tensor out = detail::new_tensor(a.shape(), dtype, op);
  dispatch_numeric(dtype, op, [&]<typename T>() {
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    detail::parallel_for(a.numel(), detail::kGrainSize, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = static_cast<T>(f(in[i]));
    });
  });
  return out;
}

// grad_a[i] = f(grad[i], saved[i]): the shape of most unary backwards (saved is the input or the
// output, same shape and dtype as grad).
template <typename F>
Tensor backward_map(const Tensor& grad, const Tensor& saved, F f) {
  Tensor out = detail::gradient_output(grad);  // grad itself when only the walk holds it
  const Tensor s = detail::convert(saved, grad.dtype());
  dispatch_floating(grad.dtype(), "backward", [&]<typename T>() {
    const T* g = grad.data_ptr<T>();
    const T* x = s.data_ptr<T>();
    T* o = out.data_ptr<T>();
    detail::parallel_for(grad.numel(), detail::kGrainSize, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = static_cast<T>(f(g[i], x[i]));
    });
  });
  return out;
}

}  // namespace

// ---- arithmetic --------------------------------------------------------------------------------

Tensor add(const Tensor& a, const Tensor& b) {
  Tensor out = binary_kernel(a, b, "add", arithmetic_dtype(a, b, "add"), arithmetic_dtype(a, b, "add"),
                             [](auto x, auto y) { return detail::wrapping_add(x, y); });
  return detail::record(
      out, "AddBackward0", {a, b}, detail::Saves::nothing,
      [](const Tensor& grad, const std::vector<Tensor>& in) {
        return std::vector<Tensor>{sum_to(grad, in[0].shape()), sum_to(grad, in[1].shape())};
      });
}

Tensor sub(const Tensor& a, const Tensor& b) {
  check_defined(a, "sub");
  check_defined(b, "sub");
  check(a.dtype() != kBool && b.dtype() != kBool,  // as PyTorch, which also refuses 1 - mask
        "sub: subtraction with a bool tensor is not supported; to invert a mask, write mask == false "
        "(PyTorch's ~mask)");
  Tensor out = binary_kernel(a, b, "sub", arithmetic_dtype(a, b, "sub"), arithmetic_dtype(a, b, "sub"),
                             [](auto x, auto y) { return detail::wrapping_sub(x, y); });
  return detail::record(
      out, "SubBackward0", {a, b}, detail::Saves::nothing,
      [](const Tensor& grad, const std::vector<Tensor>& in) {
        return std::vector<Tensor>{sum_to(grad, in[0].shape()), sum_to(neg(grad), in[1].shape())};
      });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = binary_kernel(a, b, "mul", arithmetic_dtype(a, b, "mul"), arithmetic_dtype(a, b, "mul"),
                             [](auto x, auto y) { return detail::wrapping_mul(x, y); });
  // a's gradient reads b, b's reads a: each is read only if the other required grad when the op ran
  // (x * 0.5 reads neither x nor its data, as PyTorch's MulBackward0 saves only what it needs).
  const bool grad_a = a.requires_grad(), grad_b = b.requires_grad();
  return detail::record(out, "MulBackward0", {a, b}, /*reads=*/{grad_b, grad_a},
                        [grad_a, grad_b](const Tensor& grad, const std::vector<Tensor>& in) {
                          return std::vector<Tensor>{
                              grad_a ? sum_to(mul(grad, in[1]), in[0].shape()) : Tensor(),
                              grad_b ? sum_to(mul(grad, in[0]), in[1].shape()) : Tensor()};
                        });
}

Tensor div(const Tensor& a, const Tensor& b) {
  // True division, as Python's `/`: integers are divided as float32.
  const Dtype dtype = is_floating_point(operands_dtype(a, b)) ? operands_dtype(a, b) : kFloat32;
  Tensor out = binary_kernel(a, b, "div", dtype, dtype, [](auto x, auto y) { return x / y; });
  return detail::record(out, "DivBackward0", {a, b}, [](const Tensor& grad, const std::vector<Tensor>& in) {
    const Tensor& a = in[0];
    const Tensor& b = in[1];
    return std::vector<Tensor>{
        a.requires_grad() ? sum_to(div(grad, b), a.shape()) : Tensor(),
        b.requires_grad() ? sum_to(mul(neg(grad), div(div(a, b), b)), b.shape()) : Tensor()};
  });
}

// s - x as torch.rsub(x, s): the values of sub, the node of its own name.
Tensor rsub(const Tensor& a, Scalar s) {
  Tensor out;
  {
    NoGradGuard no_grad;
    out = sub(detail::scalar_operand(a, s), a);
  }
  return detail::record(
      out, "RsubBackward1", {a}, detail::Saves::nothing,
      [](const Tensor& grad, const std::vector<Tensor>&) { return std::vector<Tensor>{neg(grad)}; });
}

// s / x as Python's Tensor.__rdiv__ computes it: self.reciprocal() * other (torch/_tensor.py).
Tensor rdiv(const Tensor& a, Scalar s) {
  const Tensor r = reciprocal(a);
  return mul(r, detail::scalar_operand(r, s));
}

Tensor neg(const Tensor& a) {
  Tensor out =
      unary_kernel(a, "neg", false, [](auto x) { return detail::wrapping_neg(x); });  // -INT64_MIN wraps
  return detail::record(
      out, "NegBackward0", {a}, detail::Saves::nothing,
      [](const Tensor& grad, const std::vector<Tensor>&) { return std::vector<Tensor>{neg(grad)}; });
}

namespace {
// x^p for a float x as PyTorch's CPU kernel computes the common exponents: products, sqrt and
// quotients (aten/src/ATen/native/cpu/PowKernel.cpp), which round differently from std::pow
// (x^3 rounds twice) and differ at -0 and -inf (sqrt(-0) = -0 where pow(-0, 0.5) = +0).
template <typename T>
T float_pow(T x, double p) {
  if (p == 2) return x * x;
  if (p == 3) return x * x * x;
  if (p == 0.5) return std::sqrt(x);
  if (p == -0.5) return T(1) / std::sqrt(x);
  if (p == -1) return T(1) / x;
  if (p == -2) return T(1) / (x * x);
  return std::pow(x, static_cast<T>(p));
}
}  // namespace

Tensor pow(const Tensor& a, double exponent) {
  // An integer tensor stays one for a whole exponent in [0, 2^63), computed exactly; any other
  // exponent (negative, fractional, inf, nan, huge) makes it float32, as PyTorch's int ** float.
  const bool integer_power = exponent == std::floor(exponent) && exponent >= 0 && exponent < 0x1p63;
  Tensor out = unary_kernel(a, "pow", !integer_power, [exponent](auto x) {
    if constexpr (detail::wraps<decltype(x)>) {
      return detail::wrapping_pow(x, static_cast<uint64_t>(exponent));
    } else {
      return float_pow(x, exponent);
    }
  });
  // grad * (p * x^(p-1)), grouped as PyTorch's pow_backward: (grad * p) * ... overflows elsewhere.
  return detail::record(out, "PowBackward0", {a},
                        [exponent](const Tensor& grad, const std::vector<Tensor>& in) {
                          if (exponent == 0.0)
                            return std::vector<Tensor>{zeros_like(grad)};  // d/da a^0 = 0, even at a = 0
                          return std::vector<Tensor>{backward_map(grad, in[0], [exponent](auto g, auto x) {
                            using T = decltype(x);
                            return g * (static_cast<T>(exponent) * float_pow(x, exponent - 1));
                          })};
                        });
}

// ---- functions -----------------------------------------------------------------------------------

Tensor exp(const Tensor& a) {
  check_defined(a, "exp");
  Tensor out;
  if (a.dtype() == kFloat32) {  // the common case, eight at a time (autograd/machinery/vector_math.cpp)
    out = detail::new_tensor(a.shape(), kFloat32);
    const float* x = a.data_ptr<float>();
    float* y = out.data_ptr<float>();
    detail::parallel_for(a.numel(), detail::kGrainSize, [&](int64_t begin, int64_t end) {
      detail::exp_contiguous(x + begin, y + begin, end - begin);
    });
  } else {
    out = unary_kernel(a, "exp", true, [](auto x) { return std::exp(x); });
  }
  return detail::record(
      out, "ExpBackward0", {a}, [saved = detail::saved(out)](const Tensor& grad, const std::vector<Tensor>&) {
        return std::vector<Tensor>{backward_map(grad, saved, [](auto g, auto y) { return g * y; })};
      });
}

Tensor log(const Tensor& a) {
  Tensor out = unary_kernel(a, "log", true, [](auto x) { return std::log(x); });
  return detail::record(out, "LogBackward0", {a}, [](const Tensor& grad, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{backward_map(grad, in[0], [](auto g, auto x) { return g / x; })};
  });
}

Tensor sqrt(const Tensor& a) {
  Tensor out = unary_kernel(a, "sqrt", true, [](auto x) { return std::sqrt(x); });
  return detail::record(
      out, "SqrtBackward0", {a},
      [saved = detail::saved(out)](const Tensor& grad, const std::vector<Tensor>&) {
        return std::vector<Tensor>{backward_map(grad, saved, [](auto g, auto y) { return g / (2 * y); })};
      });
}

Tensor reciprocal(const Tensor& a) {
  Tensor out = unary_kernel(a, "reciprocal", true, [](auto x) { return decltype(x)(1) / x; });
  return detail::record(
      out, "ReciprocalBackward0", {a},
      [saved = detail::saved(out)](const Tensor& grad, const std::vector<Tensor>&) {
        return std::vector<Tensor>{backward_map(grad, saved, [](auto g, auto y) { return -g * (y * y); })};
      });
}

Tensor abs(const Tensor& a) {
  Tensor out = unary_kernel(a, "abs", false, [](auto x) {
    if constexpr (detail::wraps<decltype(x)>) {
      return x < 0 ? detail::wrapping_neg(x) : x;  // |INT64_MIN| wraps to INT64_MIN, as PyTorch
    } else {
      return std::abs(x);  // |-0.0| is +0.0
    }
  });
  return detail::record(out, "AbsBackward0", {a}, [](const Tensor& grad, const std::vector<Tensor>& in) {
    // grad * sign(x), as PyTorch: an infinite or nan grad at x = 0 gives nan; sign(nan) is 0.
    return std::vector<Tensor>{backward_map(grad, in[0], [](auto g, auto x) {
      using T = decltype(x);
      return g * static_cast<T>((x > 0) - (x < 0));
    })};
  });
}

Tensor relu(const Tensor& a) {
  Tensor out =
      unary_kernel(a, "relu", false, [](auto x) { return x <= 0 ? decltype(x)(0) : x; });  // nan stays nan
  return detail::record(out, "ReluBackward0", {a}, /*reads=*/{false},
                        [saved = detail::saved(out)](const Tensor& grad, const std::vector<Tensor>&) {
                          return std::vector<Tensor>{backward_map(
                              grad, saved, [](auto g, auto y) { return y <= 0 ? decltype(g)(0) : g; })};
                        });
}

Tensor tanh(const Tensor& a) {
  Tensor out = unary_kernel(a, "tanh", true, [](auto x) { return std::tanh(x); });
  return detail::record(
      out, "TanhBackward0", {a},
      [saved = detail::saved(out)](const Tensor& grad, const std::vector<Tensor>&) {
        return std::vector<Tensor>{backward_map(grad, saved, [](auto g, auto y) { return g * (1 - y * y); })};
      });
}

Tensor sigmoid(const Tensor& a) {
  // 1 / (1 + e^-x), as PyTorch's CPU kernel: below about -88 in float32 e^-x is inf and the
  // result 0 (the per-sign e^x / (1 + e^x) would keep a subnormal there, and log(sigmoid) finite).
  Tensor out = unary_kernel(a, "sigmoid", true, [](auto x) {
    using T = decltype(x);
    return T(1) / (T(1) + std::exp(-x));
  });
  return detail::record(
      out, "SigmoidBackward0", {a},
      [saved = detail::saved(out)](const Tensor& grad, const std::vector<Tensor>&) {
        return std::vector<Tensor>{backward_map(grad, saved, [](auto g, auto y) { return g * y * (1 - y); })};
      });
}

Tensor sin(const Tensor& a) {
  Tensor out = unary_kernel(a, "sin", true, [](auto x) { return std::sin(x); });
  return detail::record(out, "SinBackward0", {a}, [](const Tensor& grad, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{backward_map(grad, in[0], [](auto g, auto x) { return g * std::cos(x); })};
  });
}

Tensor cos(const Tensor& a) {
  Tensor out = unary_kernel(a, "cos", true, [](auto x) { return std::cos(x); });
  return detail::record(out, "CosBackward0", {a}, [](const Tensor& grad, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{backward_map(grad, in[0], [](auto g, auto x) { return -g * std::sin(x); })};
  });
}

namespace {
// A bound of clamp in the floating type T, rounded once from the number as written (an int64 one
// straight to T, as PyTorch's Scalar::to<T>); `absent` when not given. A finite bound beyond T's
// range throws std::invalid_argument, as PyTorch's "value cannot be converted" error.
template <typename T>
T bound_as(const std::optional<Scalar>& bound, T absent) {
  if (!bound) return absent;
  if (bound->dtype() != kFloat64) return static_cast<T>(bound->to_int64());
  const double value = bound->to_double();
  check(!std::isfinite(value) || (value >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
                                  value <= static_cast<double>(std::numeric_limits<T>::max())),
        "clamp: value ", value, " cannot be converted to type ", sizeof(T) == 4 ? "float" : "double",
        " without overflow");
  return static_cast<T>(value);
}
}  // namespace

Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max) {
  check(min || max, "clamp: at least one of min and max must be given");
  check_defined(a, "clamp");
  check(a.dtype() != kBool, "clamp: not supported for bool tensors");
  // The bounds take part in the result dtype as numbers do: an int64 tensor clamped to [-0.5, 2.7]
  // becomes float32, as in PyTorch; clamped to [-1, 2] it stays int64.
  Dtype dtype = a.dtype();
  if (min) dtype = result_type(dtype, min->dtype());
  if (max) dtype = result_type(dtype, max->dtype());
  // The bounds in the result's dtype: compared there, forward and backward (0.7f is below the
  // double 0.7 but equal to the bound as a float, so its gradient passes). An int64 result has
  // integer bounds, compared as integers: through a double, INT64_MAX would round up to 2^63.
  const bool as_float = dtype == kFloat32;
  const float lo_f = as_float ? bound_as<float>(min, -INFINITY) : 0,
              hi_f = as_float ? bound_as<float>(max, INFINITY) : 0;
  const double lo_d = bound_as<double>(min, -INFINITY), hi_d = bound_as<double>(max, INFINITY);
  const int64_t lo_int = min ? min->to_int64() : std::numeric_limits<int64_t>::min();
  const int64_t hi_int = max ? max->to_int64() : std::numeric_limits<int64_t>::max();
  auto bounds = [=]<typename T>() {
    if constexpr (std::is_same_v<T, float>)
      return std::pair{lo_f, hi_f};
    else
      return std::pair{static_cast<T>(lo_d), static_cast<T>(hi_d)};  // double (the only other floating type)
  };
  // With both bounds, a nan one makes every element nan; a single nan bound changes nothing
  // (std::max(x, nan) is x), as PyTorch 1.13's clamp_out and clamp_min/clamp_max kernels.
  const bool nan_bounds = min && max && (std::isnan(lo_d) || std::isnan(hi_d));

  // min(max(x, lo), hi), as std::min and std::max compare: nan stays nan, and with lo > hi every
  // element becomes hi, as torch.clamp gives.
  Tensor out = unary_kernel(detail::convert(a, dtype), "clamp", false, [=](auto x) {
    using T = decltype(x);
    if constexpr (detail::wraps<T>) {
      const T y = x < lo_int ? lo_int : x;
      return y > hi_int ? hi_int : y;
    } else {
      if (nan_bounds) return std::numeric_limits<T>::quiet_NaN();
      const auto [lo, hi] = bounds.template operator()<T>();
      const T y = x < lo ? lo : x;
      return hi < y ? hi : y;
    }
  });
  // The gradient passes where lo <= x <= hi, 0 at nan.
  return detail::record(out, "ClampBackward1", {a},
                        [bounds](const Tensor& grad, const std::vector<Tensor>& in) {
                          return std::vector<Tensor>{backward_map(grad, in[0], [bounds](auto g, auto x) {
                            using T = decltype(x);
                            const auto [lo, hi] = bounds.template operator()<T>();
                            return x >= lo && x <= hi ? g : T(0);
                          })};
                        });
}

namespace {
// `t` copied out to `shape` (which it broadcasts to); not recorded.
Tensor expand_copy(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  Tensor out = detail::new_tensor(shape, t.dtype());
  dispatch(t.dtype(), [&]<typename T>() {
    const T* src = t.data_ptr<T>();
    T* dst = out.data_ptr<T>();
    detail::for_each_broadcast(shape, t.shape(), t.shape(),
                               [&](int64_t i, int64_t j, int64_t) { dst[i] = src[j]; });
  });
  return out;
}

void check_mask(const Tensor& mask, const char* op) {
  check_defined(mask, op);
  check(mask.dtype() == kBool, op, ": the mask must be a bool tensor, got ", dtype_name(mask.dtype()),
        " (make one with a comparison such as x < 0)");
}

// out[i] = mask[i] ? fill : x[i] over one shape; the heart of where, masked_fill and their backwards.
Tensor select_by_mask(const Tensor& mask, const Tensor& fill, const Tensor& x) {
  Tensor out = detail::new_tensor(x.shape(), x.dtype());
  const Tensor f = detail::convert(fill, x.dtype());
  dispatch(x.dtype(), [&]<typename T>() {
    const bool* m = mask.data_ptr<bool>();
    const T* a = f.data_ptr<T>();
    const T* b = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    const bool one_fill = f.numel() == 1;
    const int64_t x_numel = x.numel();
    for (int64_t i = 0; i < x_numel; ++i) o[i] = m[i] ? a[one_fill ? 0 : i] : b[i];
  });
  return out;
}
}  // namespace

// The mask a backward keeps, broadcast to `shape`: its own copy, so that changing `condition` in
// place after the forward cannot change the gradient.
Tensor own_mask(const Tensor& condition, const Shape& shape) {
  Tensor mask = expand_copy(condition, shape);
  return mask.impl() == condition.impl() ? condition.clone() : mask;
}

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  check_mask(condition, "where");
  check_defined(a, "where");
  check_defined(b, "where");
  const Shape shape =
      broadcast_shapes(broadcast_shapes(condition.shape(), a.shape(), "where"), b.shape(), "where");
  const Dtype dtype = operands_dtype(a, b);
  const Tensor mask = own_mask(condition, shape);
  Tensor out = select_by_mask(mask, expand_copy(detail::convert(a, dtype), shape),
                              expand_copy(detail::convert(b, dtype), shape));
  return detail::record(
      out, "WhereBackward0", {a, b}, [mask](const Tensor& grad, const std::vector<Tensor>& in) {
        const Tensor zero = zeros({}, {.dtype = grad.dtype()});
        return std::vector<Tensor>{
            sum_to(select_by_mask(mask, grad, expand_copy(zero, grad.shape())), in[0].shape()),
            sum_to(select_by_mask(mask, zero, grad), in[1].shape())};
      });
}

namespace {

/// x with `value` (a 0-d tensor of x's dtype) wherever the mask (broadcast to x's shape) is true,
/// written into `out` (x's shape and dtype; x itself is allowed). The mask is read in place through
/// for_each_broadcast, never expanded.
Tensor fill_by_mask(const Tensor& x, const Tensor& mask, const Tensor& value, Tensor out) {
  dispatch(x.dtype(), [&]<typename T>() {
    const auto* m = reinterpret_cast<const uint8_t*>(mask.data_ptr<bool>());  // bytes: vectorised loads
    const T v = value.data_ptr<T>()[0];
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    detail::parallel_for_each_broadcast(
        x.shape(), x.shape(), mask.shape(), [=](int64_t i, int64_t ix, int64_t im) {
          const T element = in[ix];  // read whatever the mask says: a select, not a branch
          o[i] = m[im] != 0 ? v : element;
        });
  });
  return out;
}

}  // namespace

Tensor masked_fill(const Tensor& a, const Tensor& mask, Scalar value) {
  check_defined(a, "masked_fill");
  check_mask(mask, "masked_fill");
  // Both broadcast, as PyTorch's out-of-place masked_fill: a [3] tensor under a [2, 3] mask gives
  // [2, 3], and its gradient sums back over the new dim.
  const Shape shape = broadcast_shapes(a.shape(), mask.shape(), "masked_fill");
  const Tensor kept = mask.clone();  // the backward's own copy, at the mask's size
  Tensor out = fill_by_mask(expand_copy(a, shape), kept, scalar_tensor(value, {.dtype = a.dtype()}),
                            detail::new_tensor(shape, a.dtype()));
  return detail::record(out, "MaskedFillBackward0", {a}, /*reads=*/{false},
                        [kept](const Tensor& grad, const std::vector<Tensor>& in) {
                          const Tensor zero = zeros({}, {.dtype = grad.dtype()});
                          return std::vector<Tensor>{sum_to(
                              fill_by_mask(grad, kept, zero, detail::gradient_output(grad)), in[0].shape())};
                        });
}

// ---- comparisons -----------------------------------------------------------------------------------

namespace {
template <typename F>
Tensor compare(const Tensor& a, const Tensor& b, const char* op, F f) {
  check_defined(a, op);
  check_defined(b, op);
  return binary_kernel(a, b, op, operands_dtype(a, b), kBool, f);
}
}  // namespace

Tensor lt(const Tensor& a, const Tensor& b) {
  return compare(a, b, "lt", [](auto x, auto y) { return x < y; });
}
Tensor le(const Tensor& a, const Tensor& b) {
  return compare(a, b, "le", [](auto x, auto y) { return x <= y; });
}
Tensor gt(const Tensor& a, const Tensor& b) {
  return compare(a, b, "gt", [](auto x, auto y) { return x > y; });
}
Tensor ge(const Tensor& a, const Tensor& b) {
  return compare(a, b, "ge", [](auto x, auto y) { return x >= y; });
}
Tensor eq(const Tensor& a, const Tensor& b) {
  return compare(a, b, "eq", [](auto x, auto y) { return x == y; });
}
Tensor ne(const Tensor& a, const Tensor& b) {
  return compare(a, b, "ne", [](auto x, auto y) { return x != y; });
}

Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, Scalar s) { return lt(a, detail::scalar_operand(a, s)); }
Tensor operator<=(const Tensor& a, Scalar s) { return le(a, detail::scalar_operand(a, s)); }
Tensor operator>(const Tensor& a, Scalar s) { return gt(a, detail::scalar_operand(a, s)); }
Tensor operator>=(const Tensor& a, Scalar s) { return ge(a, detail::scalar_operand(a, s)); }
Tensor operator==(const Tensor& a, Scalar s) { return eq(a, detail::scalar_operand(a, s)); }
Tensor operator!=(const Tensor& a, Scalar s) { return ne(a, detail::scalar_operand(a, s)); }

bool equal(const Tensor& a, const Tensor& b) {
  check_defined(a, "equal");
  check_defined(b, "equal");
  if (a.shape() != b.shape()) return false;
  const Tensor same = eq(a, b);
  const bool* s = same.data_ptr<bool>();
  const int64_t same_numel = same.numel();
  for (int64_t i = 0; i < same_numel; ++i)
    if (!s[i]) return false;
  return true;
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  check_defined(a, "allclose");
  check_defined(b, "allclose");
  const Tensor close = binary_kernel(a, b, "allclose", kFloat64, kBool, [rtol, atol](double x, double y) {
    if (x == y) return true;  // also equal infinities
    return std::abs(x - y) <= atol + rtol * std::abs(y);
  });
  const bool* c = close.data_ptr<bool>();
  const int64_t close_numel = close.numel();
  for (int64_t i = 0; i < close_numel; ++i)
    if (!c[i]) return false;
  return true;
}

}  // namespace minigrad
