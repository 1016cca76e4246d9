// Element types of a tensor, and PyTorch's rules for mixing them.
//
// A tensor holds one of four dtypes, as in PyTorch: float32 (the default), float64 (for gradcheck
// and learners who want it), int64 (labels, indices, counts) and bool (comparison results).
// Binary ops promote mixed operands with PyTorch's `torch.promote_types`; a Scalar (a plain C++
// number) or a 0-d tensor beside a tensor with dims only changes the result's category, never
// widens a float32 tensor to float64 (`torch.result_type`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace minigrad {

/// The element type of a tensor (PyTorch's `torch.dtype`).
enum class Dtype { Bool, Int64, Float32, Float64 };

///@{
/// Short names of the dtypes, as PyTorch's C++ `torch::kFloat32`, `torch::kInt64`, ...; kFloat,
/// kDouble and kLong are the aliases torch::kFloat, torch::kDouble and torch::kLong.
inline constexpr Dtype kBool = Dtype::Bool;
inline constexpr Dtype kInt64 = Dtype::Int64;
inline constexpr Dtype kFloat32 = Dtype::Float32;
inline constexpr Dtype kFloat64 = Dtype::Float64;
inline constexpr Dtype kFloat = Dtype::Float32;
inline constexpr Dtype kDouble = Dtype::Float64;
inline constexpr Dtype kLong = Dtype::Int64;
///@}

/// "float32", "float64", "int64" or "bool" (PyTorch's names without the `torch.` prefix).
std::string dtype_name(Dtype dtype);

/// Prints dtype_name(dtype).
std::ostream& operator<<(std::ostream& os, Dtype dtype);

/// Bytes per element: 4, 8, 8 or 1.
std::size_t element_size(Dtype dtype);

/// True for float32 and float64 (`torch.is_floating_point`).
constexpr bool is_floating_point(Dtype dtype) { return dtype == kFloat32 || dtype == kFloat64; }

/// The dtype two tensor operands are computed in (`torch.promote_types`):
/// bool < int64 < float32 < float64, the larger wins.
constexpr Dtype promote_types(Dtype a, Dtype b) { return a > b ? a : b; }

///@{
/// The C++ element type stored for each dtype, and back.
template <typename T>
constexpr Dtype dtype_of();
template <>
constexpr Dtype dtype_of<bool>() {
  return kBool;
}
template <>
constexpr Dtype dtype_of<int64_t>() {
  return kInt64;
}
template <>
constexpr Dtype dtype_of<float>() {
  return kFloat32;
}
template <>
constexpr Dtype dtype_of<double>() {
  return kFloat64;
}
///@}

/// Calls `f.template operator()<T>()` with T the C++ type of `dtype`, so one generic lambda
/// serves every dtype: `dispatch(t.dtype(), [&]<typename T>() { ... });`.
template <typename F>
decltype(auto) dispatch(Dtype dtype, F&& f) {
  switch (dtype) {
    case kBool:
      return f.template operator()<bool>();
    case kInt64:
      return f.template operator()<int64_t>();
    case kFloat32:
      return f.template operator()<float>();
    case kFloat64:
      break;
  }
  return f.template operator()<double>();
}

/// Like `dispatch`, for the two floating dtypes only; `op` names the caller in the error.
/// Throws std::invalid_argument for int64 and bool.
template <typename F>
decltype(auto) dispatch_floating(Dtype dtype, const std::string& op, F&& f) {
  if (dtype == kFloat32) return f.template operator()<float>();
  if (dtype != kFloat64)
    throw std::invalid_argument(op + ": expected a float32 or float64 tensor, got " + dtype_name(dtype));
  return f.template operator()<double>();
}

/// Like `dispatch`, for int64, float32 and float64; throws std::invalid_argument for bool.
template <typename F>
decltype(auto) dispatch_numeric(Dtype dtype, const std::string& op, F&& f) {
  if (dtype == kInt64) return f.template operator()<int64_t>();
  if (dtype == kBool) throw std::invalid_argument(op + ": not supported for bool tensors");
  return dispatch_floating(dtype, op, std::forward<F>(f));
}

/// A plain number used as an operand (PyTorch's `c10::Scalar`): `x * 2`, `x + 0.5`.
/// It remembers whether it was written as an integer, a floating-point number or a bool,
/// because that decides the result dtype: int64 tensor * 2 stays int64, * 2.5 becomes float32.
class Scalar {
 public:
  /// Any C++ number converts implicitly: `x * 2`, `x + 0.5`, `x.fill_(true)`.
  template <typename T>
  requires std::is_arithmetic_v<T> Scalar(
      T value) {  // NOLINT(google-explicit-constructor): implicit, as c10::Scalar
    if constexpr (std::is_same_v<T, bool>) {
      dtype_ = kBool;
      value_ = value ? 1.0 : 0.0;
      int_ = value ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
      dtype_ = kInt64;
      value_ = static_cast<double>(value);
      int_ = static_cast<int64_t>(value);
    } else {
      dtype_ = kFloat64;
      value_ = static_cast<double>(value);
      int_ = fits_int64(value_) ? static_cast<int64_t>(value_) : 0;  // casting nan or 1e30 is undefined
    }
  }

  /// kBool, kInt64 or kFloat64: the category the number was written in.
  Dtype dtype() const { return dtype_; }
  /// The value as a double.
  double to_double() const { return value_; }
  /// The value as an int64 (truncated toward zero if written as a float).
  int64_t to_int64() const { return int_; }

  /// The value converted to the element type T (exact for integers, as PyTorch; a float is
  /// truncated toward zero for an integer T). Throws std::invalid_argument when a float does not
  /// fit an int64 (nan, inf, beyond +-2^63), as PyTorch's "value cannot be converted" error.
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
      // an integer is rounded once, straight to T: through a double, 2^62 + 2^38 + 1 would round twice
      return dtype_ == kFloat64 ? static_cast<T>(value_) : static_cast<T>(int_);
    } else if constexpr (std::is_same_v<T, bool>) {
      return value_ != 0.0;
    } else {
      if (dtype_ == kFloat64 && !fits_int64(value_)) {
        char text[32];  // "1e+300", where std::to_string wrote out all 301 digits
        std::snprintf(text, sizeof text, "%g", value_);
        throw std::invalid_argument(std::string("Scalar: ") + text +
                                    " cannot be converted to int64 without overflow");
      }
      return static_cast<T>(int_);
    }
  }

  /// True when `value` truncated toward zero is an int64: finite and within [-2^63, 2^63).
  static constexpr bool fits_int64(double value) { return value >= -0x1p63 && value < 0x1p63; }

 private:
  Dtype dtype_;
  double value_;
  int64_t int_;
};

/// Result dtype of `tensor op scalar`: the tensor's dtype, unless the scalar is of a higher
/// category (a float scalar with an int64 or bool tensor gives float32, PyTorch's default dtype;
/// an integer scalar with a bool tensor gives int64).
constexpr Dtype result_type(Dtype tensor, Dtype scalar) {
  if (is_floating_point(scalar) && !is_floating_point(tensor)) return kFloat32;
  if (scalar == kInt64 && tensor == kBool) return kInt64;
  return tensor;
}

/// Whether an in-place op may write a `from` result into a `to` tensor (`torch.can_cast`): not a
/// floating result into an integer tensor, nor a non-bool result into a bool tensor.
constexpr bool can_cast(Dtype from, Dtype to) {
  if (is_floating_point(from) && !is_floating_point(to)) return false;
  return !(from != kBool && to == kBool);
}

/// The dtype a binary op on two tensors computes in (`torch.result_type(a, b)`): promote_types(a,
/// b), except that a 0-d tensor beside a tensor with dims counts only by its category (bool <
/// integer < floating), as a number does. float32 [2] + float64 [] is float32; int64 [2] +
/// float64 [] is float64 (the 0-d operand's dtype, its category being higher); two 0-d tensors,
/// or two with dims, promote as usual.
constexpr Dtype result_type(Dtype a, bool a_is_0d, Dtype b, bool b_is_0d) {
  if (a_is_0d == b_is_0d) return promote_types(a, b);
  const Dtype with_dims = a_is_0d ? b : a, zero_dim = a_is_0d ? a : b;
  auto category = [](Dtype d) { return is_floating_point(d) ? 2 : (d == kInt64 ? 1 : 0); };
  return category(zero_dim) > category(with_dims) ? zero_dim : with_dims;
}

}  // namespace minigrad
