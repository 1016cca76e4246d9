// The factories: full, zeros, ones, empty, eye, arange, linspace, tensor from values, and the random
// ones (rand, randn, randint, randperm), as torch's. Each makes a new tensor at version 0 and
// fills it; the in-place fills they call (fill_, normal_, ...) are in tensor.cpp, the draws in
// random.cpp.
#include <cmath>
#include <type_traits>

#include "autograd/op_support.hpp"
#include "autograd/random.hpp"
#include "autograd/tensor.hpp"

namespace minigrad {

using detail::check;
using detail::checked_cast;

namespace {
// Every factory ends here. Its new tensor starts at version 0, as PyTorch's do, whichever in-place
// fill (fill_, normal_, ...) made its values.
Tensor with_grad(Tensor t, const TensorOptions& options) {
  *t.impl()->version = 0;
  if (options.requires_grad) t.requires_grad_(true);
  return t;
}
}  // namespace

namespace {
// full, under the name of the factory called, for its errors ("zeros: out of memory ...").
Tensor filled(const Shape& shape, Scalar value, TensorOptions options, const char* op) {
  Tensor out = detail::new_tensor(shape, options.dtype, op);
  {
    NoGradGuard no_grad;
    out.fill_(value);
  }
  return with_grad(out, options);
}
}  // namespace

Tensor full(const Shape& shape, Scalar value, TensorOptions options) {
  return filled(shape, value, options, "full");
}

Tensor empty(const Shape& shape, TensorOptions options) { return filled(shape, 0, options, "empty"); }
Tensor zeros(const Shape& shape, TensorOptions options) { return filled(shape, 0, options, "zeros"); }
Tensor ones(const Shape& shape, TensorOptions options) { return filled(shape, 1, options, "ones"); }
Tensor scalar_tensor(Scalar value, TensorOptions options) { return full({}, value, options); }

Tensor eye(int64_t n, TensorOptions options) {
  check(n >= 0, "eye: n must be non-negative, got ", n);
  Tensor out = zeros({n, n}, {.dtype = options.dtype});
  dispatch(options.dtype, [&]<typename T>() {
    for (int64_t i = 0; i < n; ++i) out.data_ptr<T>()[i * n + i] = T(1);
  });
  return with_grad(out, options);
}

Tensor arange(Scalar end) { return arange(0, end, 1); }

Tensor arange(Scalar start, Scalar end, Scalar step) {
  const bool all_integers = start.dtype() != kFloat64 && end.dtype() != kFloat64 && step.dtype() != kFloat64;
  return arange(start, end, step, {.dtype = all_integers ? kInt64 : kFloat32});
}

namespace {
// arange of integers into int64, counted exactly: through a double, integers beyond 2^53 round
// (arange(2^62, 2^62 + 3) had no elements). Spans and values are computed on uint64_t, where they
// wrap instead of overflowing; every value lies between start and end, so it is exact.
Tensor integer_arange(int64_t start, int64_t end, int64_t step) {
  check(step != 0, "arange: step must be nonzero");
  check((step > 0 && end >= start) || (step < 0 && end <= start), "arange: the step ", step,
        " does not lead from ", start, " to ", end);
  const uint64_t span = step > 0 ? static_cast<uint64_t>(end) - static_cast<uint64_t>(start)
                                 : static_cast<uint64_t>(start) - static_cast<uint64_t>(end);
  const uint64_t stride = step > 0 ? static_cast<uint64_t>(step) : uint64_t{0} - static_cast<uint64_t>(step);
  const uint64_t count = span / stride + (span % stride != 0 ? 1 : 0);  // ceil(span / |step|)
  check(count <= (uint64_t{1} << 52), "arange: from ", start, " to ", end, " by ", step, " gives ", count,
        " elements, too many to allocate");
  const auto n = static_cast<int64_t>(count);
  Tensor out = detail::new_tensor({n}, kInt64);
  int64_t* data = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) data[i] = detail::wrapping_add(start, detail::wrapping_mul(i, step));
  return out;
}
}  // namespace

Tensor arange(Scalar start, Scalar end, Scalar step, TensorOptions options) {
  // An int64 arange converts start, end and step to int64 first (a float truncated toward zero,
  // refused if no int64 holds it), as PyTorch: arange(-5, 5, 2.5, int64) steps by 2.
  const auto as_int64 = [](Scalar v) {
    return v.dtype() == kFloat64 ? checked_cast<int64_t>(v.to_double(), "arange") : v.to_int64();
  };
  if (options.dtype == kInt64)
    return with_grad(integer_arange(as_int64(start), as_int64(end), as_int64(step)), options);

  const double a = start.to_double(), b = end.to_double(), s = step.to_double();
  check(s != 0, "arange: step must be nonzero");
  check(std::isfinite(a) && std::isfinite(b), "arange: start and end must be finite");
  check((s > 0 && b >= a) || (s < 0 && b <= a), "arange: the step ", s, " does not lead from ", a, " to ", b);
  const double count = std::ceil((b - a) / s);
  check(count <= static_cast<double>(int64_t{1} << 52), "arange: from ", a, " to ", b, " by ", s, " gives ",
        count, " elements, too many to allocate");
  const auto n = static_cast<int64_t>(count);
  Tensor out = detail::new_tensor({n}, options.dtype);
  dispatch(options.dtype, [&]<typename T>() {
    for (int64_t i = 0; i < n; ++i)
      out.data_ptr<T>()[i] = checked_cast<T>(a + static_cast<double>(i) * s, "arange");
  });
  return with_grad(out, options);
}

Tensor linspace(Scalar start, Scalar end, int64_t steps, TensorOptions options) {
  check(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  check(options.dtype != kBool,
        "linspace: not supported for bool (as in PyTorch); use float32, float64 or int64");
  if (options.dtype == kFloat32) {  // as PyTorch: linspace(0, 1e39, 3) was [nan, nan, nan]
    detail::check_fits_float32(start, "linspace");
    detail::check_fits_float32(end, "linspace");
  }
  Tensor out = detail::new_tensor({steps}, options.dtype);
  dispatch(options.dtype, [&]<typename T>() {
    // start and end in the result's dtype, the step in it too (double for integers), as PyTorch's
    // linspace_kernel (aten/src/ATen/native/cpu/RangeFactoriesKernel.cpp).
    using Step = std::conditional_t<std::is_floating_point_v<T>, T, double>;
    const auto first = static_cast<Step>(start.to<T>()), last = static_cast<Step>(end.to<T>());
    T* y = out.data_ptr<T>();
    if (steps == 1) y[0] = static_cast<T>(first);
    if (steps <= 1) return;
    const Step step = (last - first) / static_cast<Step>(steps - 1);
    const int64_t halfway = steps / 2;  // the second half counts back from end, so end is exact
    for (int64_t i = 0; i < steps; ++i) {
      const Step value =
          i < halfway ? first + step * static_cast<Step>(i) : last - step * static_cast<Step>(steps - i - 1);
      y[i] = static_cast<T>(value);
    }
  });
  return with_grad(out, options);
}

Tensor zeros_like(const Tensor& other) { return zeros(other.shape(), {.dtype = other.dtype()}); }
Tensor ones_like(const Tensor& other) { return ones(other.shape(), {.dtype = other.dtype()}); }
Tensor empty_like(const Tensor& other) { return empty(other.shape(), {.dtype = other.dtype()}); }
Tensor full_like(const Tensor& other, Scalar value) {
  return full(other.shape(), value, {.dtype = other.dtype()});
}

namespace {
template <typename Source>
Tensor from_values(const std::vector<Source>& data, const Shape& shape, const TensorOptions& options) {
  check(static_cast<int64_t>(data.size()) == shape_numel(shape), "tensor: ", data.size(),
        " values do not fill a tensor of shape ", shape, " (", shape_numel(shape), " elements)");
  Tensor out = detail::new_tensor(shape, options.dtype);
  dispatch(options.dtype, [&]<typename T>() {
    T* dst = out.data_ptr<T>();
    for (size_t i = 0; i < data.size(); ++i) dst[i] = checked_cast<T>(data[i], "tensor");
  });
  return with_grad(out, options);
}
}  // namespace

Tensor tensor(const std::vector<double>& data, const Shape& shape, TensorOptions options) {
  return from_values(data, shape, options);
}
Tensor tensor(const std::vector<float>& data, const Shape& shape, TensorOptions options) {
  return from_values(data, shape, options);
}
Tensor tensor(const std::vector<int64_t>& data, const Shape& shape, TensorOptions options) {
  return from_values(data, shape, options);
}
Tensor tensor(const std::vector<bool>& data, const Shape& shape, TensorOptions options) {
  return from_values(data, shape, options);
}

namespace {
// Appends the numbers of `list` to `flat` in row-major order; the first list seen at each depth
// fixes that dim's size in `shape`, and every later list at that depth must match it.
void flatten_nested(const NestedList& list, size_t depth, Shape& shape, std::vector<double>& flat) {
  if (list.is_number()) {
    check(depth == shape.size(), "tensor: ragged nesting (a number where a list of ", shape.size() - depth,
          " more levels was expected)");
    flat.push_back(list.value());
    return;
  }
  const auto size = static_cast<int64_t>(list.items().size());
  if (depth == shape.size()) {
    check(flat.empty(), "tensor: ragged nesting (a list where a number was expected)");
    shape.push_back(size);
  }
  check(shape[depth] == size, "tensor: ragged rows (", shape[depth], " and ", size, " values at depth ",
        depth, ")");
  for (const NestedList& item : list.items()) flatten_nested(item, depth + 1, shape, flat);
}
}  // namespace

Tensor tensor(const NestedList& values, TensorOptions options) {
  Shape shape;
  std::vector<double> flat;
  flatten_nested(values, 0, shape, flat);
  return from_values(flat, shape, options);
}

Tensor tensor(std::initializer_list<NestedList> values, TensorOptions options) {
  return tensor(NestedList(values), options);
}

// ---- random factories --------------------------------------------------------------------------

Tensor rand(const Shape& shape, TensorOptions options) { return rand(shape, default_generator(), options); }
Tensor rand(const Shape& shape, Generator& generator, TensorOptions options) {
  Tensor out = detail::new_tensor(shape, options.dtype, "rand");
  out.uniform_(0.0, 1.0, generator);
  return with_grad(out, options);
}

Tensor randn(const Shape& shape, TensorOptions options) { return randn(shape, default_generator(), options); }
Tensor randn(const Shape& shape, Generator& generator, TensorOptions options) {
  Tensor out = detail::new_tensor(shape, options.dtype, "randn");
  out.normal_(0.0, 1.0, generator);
  return with_grad(out, options);
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, TensorOptions options) {
  return randint(low, high, shape, default_generator(), options);
}
Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator& generator, TensorOptions options) {
  check(low < high, "randint: low (", low, ") must be less than high (", high, ")");
  if (options.dtype == kBool) {  // as PyTorch's range check; converting would map 2, 3, ... to true
    check(low >= 0, "randint: from (", low, ") is out of bounds for bool");
    check(high - 1 <= 1, "randint: to - 1 (", high - 1, ") is out of bounds for bool");
  }
  Tensor values = detail::new_tensor(shape, kInt64, "randint");
  generator.random_from_to(values.data_ptr<int64_t>(), values.numel(), low, high);
  return with_grad(detail::convert(values, options.dtype), options);
}

Tensor randperm(int64_t n, TensorOptions options) { return randperm(n, default_generator(), options); }
Tensor randperm(int64_t n, Generator& generator, TensorOptions options) {
  check(n >= 0, "randperm: n must be non-negative, got ", n);
  Tensor values = detail::new_tensor({n}, kInt64);
  generator.randperm(values.data_ptr<int64_t>(), n);
  return with_grad(detail::convert(values, options.dtype), options);
}

}  // namespace minigrad
