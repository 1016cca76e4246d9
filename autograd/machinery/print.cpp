// Printing a tensor exactly as PyTorch 1.13 prints it (torch/_tensor_str.py, default options), so a
// learner can put our output beside the lesson's Python output and compare them character by character.
//
// Three steps, as in PyTorch: pick the elements to show (all of them, or only the first and last 3
// along every dim once the tensor has more than 1000 elements); let a Formatter look at those once
// to choose one style for all (`1.` when every float is a whole number, `0.1234`, or `1.2340e-05`)
// and one column width; then lay out the nested brackets, wrapping rows at 80 columns, and append
// the suffixes PyTorch adds (`dtype=torch.float64`, `requires_grad=True`, `grad_fn=<AddBackward0>`).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "autograd/op_support.hpp"
#include "autograd/tensor.hpp"

namespace minigrad {
namespace {

// PyTorch's default print options (`torch.set_printoptions(profile="default")`).
constexpr int kPrecision = 4;         // digits after the decimal point
constexpr int64_t kThreshold = 1000;  // more elements than this are summarised
constexpr int64_t kEdgeItems = 3;     // elements kept at each end of a summarised dim
constexpr int64_t kLineWidth = 80;    // rows wrap before this column
constexpr int64_t kEllipsis = -1;     // marks the `...` in a list of shown indices

// The indices shown along a dim of `size`: all of them, or, when summarising a dim longer than
// 2 * kEdgeItems, the first and last kEdgeItems with kEllipsis between (as get_summarized_data).
std::vector<int64_t> shown_indices(int64_t size, bool summarize) {
  std::vector<int64_t> indices;
  if (summarize && size > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) indices.push_back(i);
    indices.push_back(kEllipsis);
    for (int64_t i = size - kEdgeItems; i < size; ++i) indices.push_back(i);
  } else {
    for (int64_t i = 0; i < size; ++i) indices.push_back(i);
  }
  return indices;
}

// A double as Python's `"{:.{precision}{style}}".format(value)` spells it: style 'f' or 'e', and
// "nan", "inf", "-inf" for the non-finite values (C's printf would write "-nan" for some NaNs).
std::string python_format(double value, char style, int precision) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  const char* format = style == 'e' ? "%.*e" : "%.*f";
  const int length = std::snprintf(nullptr, 0, format, precision, value);
  std::string text(static_cast<size_t>(length) + 1, '\0');
  std::snprintf(text.data(), text.size(), format, precision, value);
  text.pop_back();  // the terminating '\0'
  return text;
}

// PyTorch's _Formatter: looks at every shown element once, then formats each one in a common
// style, right-aligned to a common width. T is the element type (bool, int64_t, float, double).
template <typename T>
struct Formatter {
  bool int_mode = true;   // floats that are all whole numbers print as `3.`
  bool sci_mode = false;  // floats print as `1.0000e-05`
  size_t max_width = 1;

  explicit Formatter(const std::vector<T>& shown) {
    if constexpr (std::is_floating_point_v<T>) {
      choose_float_style(shown);
    } else {
      for (T value : shown) max_width = std::max(max_width, text(value).size());
    }
  }

  // The style is chosen from the nonzero finite values only: scientific when they span more than
  // three orders of magnitude, exceed 1e8, or (for non-integers) go below 1e-4.
  void choose_float_style(const std::vector<T>& shown) {
    std::vector<double> finite;
    for (T value : shown)
      if (std::isfinite(value) && value != 0) finite.push_back(static_cast<double>(value));
    if (finite.empty()) return;  // zeros, nan and inf only: `0.`, `nan`, `inf` at width 1

    double min_abs = std::abs(finite[0]), max_abs = min_abs;
    for (double value : finite) {
      min_abs = std::min(min_abs, std::abs(value));
      max_abs = std::max(max_abs, std::abs(value));
      if (value != std::ceil(value)) int_mode = false;
    }
    sci_mode = max_abs / min_abs > 1000.0 || max_abs > 1.0e8 || (!int_mode && min_abs < 1.0e-4);

    // Widths come from the nonzero finite values; a longer `nan` or `-0.` simply sticks out.
    for (double value : finite) max_width = std::max(max_width, text(static_cast<T>(value)).size());
  }

  // The element's text before padding.
  std::string text(T value) const {
    if constexpr (std::is_same_v<T, bool>) {
      return value ? "True" : "False";
    } else if constexpr (std::is_integral_v<T>) {
      return std::to_string(value);
    } else {
      if (sci_mode) return python_format(value, 'e', kPrecision);
      if (!int_mode) return python_format(value, 'f', kPrecision);
      std::string whole = python_format(value, 'f', 0);
      return std::isfinite(value) ? whole + "." : whole;  // the dot says "this is a float"
    }
  }

  std::string format(T value) const {
    const std::string body = text(value);
    return std::string(max_width > body.size() ? max_width - body.size() : 0, ' ') + body;
  }
};

// Lays out the nested brackets of a non-empty tensor with row-major data, as
// _tensor_str_with_formatter: `indent` is the column the current bracket's contents start at.
template <typename T>
struct Layout {
  const T* data;
  Shape shape;
  std::vector<int64_t> strides;
  bool summarize;

  // The elements that will be shown, in order (what PyTorch's get_summarized_data keeps).
  void collect(size_t dim, int64_t offset, std::vector<T>& out) const {
    if (dim == shape.size()) {
      out.push_back(data[offset]);
      return;
    }
    for (int64_t i : shown_indices(shape[dim], summarize))
      if (i != kEllipsis) collect(dim + 1, offset + i * strides[dim], out);
  }

  // One bracket level: sub-blocks separated by a comma, a newline per remaining dim (so 3-d
  // blocks get a blank line between them) and the indent of the next level.
  std::string block(size_t dim, int64_t offset, int64_t indent, const Formatter<T>& formatter) const {
    if (shape.empty()) return formatter.format(data[0]);
    if (dim + 1 == shape.size()) return row(offset, indent, formatter);

    const std::string separator =
        "," + std::string(shape.size() - dim - 1, '\n') + std::string(static_cast<size_t>(indent + 1), ' ');
    std::string out = "[";
    bool first = true;
    for (int64_t i : shown_indices(shape[dim], summarize)) {
      if (!first) out += separator;
      first = false;
      out += i == kEllipsis ? "..." : block(dim + 1, offset + i * strides[dim], indent + 1, formatter);
    }
    return out + "]";
  }

  // The last dim: as many elements per line as fit in kLineWidth (at least one), the following
  // lines indented to sit under the first element (as _vector_str).
  std::string row(int64_t offset, int64_t indent, const Formatter<T>& formatter) const {
    const int64_t element_length = static_cast<int64_t>(formatter.max_width) + 2;  // with ", "
    const int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / element_length);

    std::string out = "[";
    int64_t on_line = 0;
    for (int64_t i : shown_indices(shape.back(), summarize)) {
      if (on_line == per_line) {
        out += ",\n" + std::string(static_cast<size_t>(indent + 1), ' ');
        on_line = 0;
      } else if (on_line > 0) {
        out += ", ";
      }
      out += i == kEllipsis ? " ..." : formatter.format(data[offset + i * strides.back()]);
      ++on_line;
    }
    return out + "]";
  }
};

// The bracketed contents of a non-empty tensor, starting at column `indent`.
std::string contents(const Tensor& t, int64_t indent) {
  return dispatch(t.dtype(), [&]<typename T>() {
    const Layout<T> layout{t.data_ptr<T>(), t.shape(), detail::contiguous_strides(t.shape()),
                           t.numel() > kThreshold};
    std::vector<T> shown;
    layout.collect(0, 0, shown);
    return layout.block(0, 0, indent, Formatter<T>(shown));
  });
}

// A shape as a Python tuple: `(0, 3)`, `(0,)`.
std::string python_tuple(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// What PyTorch appends after the contents. float32 (the default dtype), int64 and bool show in
// the numbers themselves (`1.`, `1`, `True`), so only float64 is named; an empty tensor has no
// numbers, so it names every dtype but float32, and its size unless it is 1-d.
std::vector<std::string> suffixes(const Tensor& t) {
  std::vector<std::string> out;
  if (t.numel() == 0 && t.dim() != 1) out.push_back("size=" + python_tuple(t.shape()));
  const bool names_dtype = t.numel() == 0 ? t.dtype() != kFloat32 : t.dtype() == kFloat64;
  if (names_dtype) out.push_back("dtype=torch." + dtype_name(t.dtype()));

  if (t.grad_fn()) {
    out.push_back("grad_fn=<" + std::string(t.grad_fn()->name()) + ">");
  } else if (t.requires_grad()) {
    out.push_back("requires_grad=True");
  }
  return out;
}

// Appends each suffix after ", ", or on a new line at `indent` when it would pass kLineWidth
// (as _add_suffixes).
std::string add_suffixes(std::string text, const std::vector<std::string>& suffixes, int64_t indent) {
  // PyTorch counts the last line's length plus 2, and only `indent + suffix` after a new line.
  const size_t newline = text.rfind('\n');
  const size_t last_line = newline == std::string::npos ? text.size() : text.size() - newline - 1;
  int64_t line_length = static_cast<int64_t>(last_line) + 2;
  for (const std::string& suffix : suffixes) {
    const int64_t length = static_cast<int64_t>(suffix.size());
    if (line_length + length + 2 > kLineWidth) {
      text += ",\n" + std::string(static_cast<size_t>(indent), ' ') + suffix;
      line_length = indent + length;
    } else {
      text += ", " + suffix;
      line_length += length + 2;
    }
  }
  return text + ")";
}

}  // namespace

std::string to_string(const Tensor& tensor) {
  if (!tensor.defined()) return "None";  // what Python prints for x.grad before any backward()
  const std::string prefix = "tensor(";
  const int64_t indent = static_cast<int64_t>(prefix.size());
  const std::string body = tensor.numel() == 0 ? "[]" : contents(tensor, indent);
  // A module's parameter prints as PyTorch prints an nn.Parameter: its repr above the tensor's.
  const std::string parameter = tensor.impl()->is_parameter ? "Parameter containing:\n" : "";
  return parameter + add_suffixes(prefix + body, suffixes(tensor), indent);
}

std::ostream& operator<<(std::ostream& os, const Tensor& tensor) { return os << to_string(tensor); }

}  // namespace minigrad
