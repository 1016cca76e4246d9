// How a Module prints, as PyTorch's Module.__repr__: its name, its extra_repr line and its
// children indented below it; and the two helpers the layers' extra_repr use (their class name,
// a number as Python's repr writes it). Machinery beside module.cpp, not on the reading path.
#include <cxxabi.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <ostream>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "nn/module.hpp"

namespace minigrad::nn {

using detail::split_lines;

namespace {

// PyTorch's _addindent: every line but the first shifted right by `spaces`.
std::string add_indent(const std::string& text, int spaces) {
  const std::vector<std::string> lines = split_lines(text);
  std::string out = lines.empty() ? "" : lines[0];
  for (size_t i = 1; i < lines.size(); ++i) {
    out += '\n';
    out.append(spaces, ' ');
    out += lines[i];
  }
  return out;
}

}  // namespace

// As Module.__repr__: a one-liner `Name(extra)` when there are no children, otherwise the extra
// lines and one `(key): child` line per child, indented by two spaces, inside `Name(` ... `)`.
std::string to_string(const Module& module) {
  const std::string extra = module.extra_repr();
  const std::vector<std::string> extra_lines =
      extra.empty() ? std::vector<std::string>{} : split_lines(extra);
  std::vector<std::string> lines = extra_lines;
  for (const auto& [key, child] : module.children_)
    lines.push_back("(" + key + "): " + add_indent(to_string(*child), 2));

  std::string out = module.name() + "(";
  if (extra_lines.size() == 1 && module.children_.empty()) {
    out += extra_lines[0];
  } else if (!lines.empty()) {
    for (const std::string& line : lines) out += "\n  " + line;
    out += "\n";
  }
  return out + ")";
}

std::ostream& operator<<(std::ostream& os, const Module& module) { return os << to_string(module); }

namespace detail {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string short_type_name(const std::type_info& type) {
  // typeid gives the mangled C++ name; the ABI's demangler turns it into "minigrad::nn::Linear",
  // and we keep only the last part, as PyTorch prints the class name.
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  const std::string full = status == 0 && demangled ? demangled : type.name();
  std::free(demangled);
  const size_t last_scope = full.rfind("::", full.find('<'));
  return last_scope == std::string::npos ? full : full.substr(last_scope + 2);
}

std::string python_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // The shortest digits that read back as `value` (what Python's repr uses), as d.ddde±x.
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  const std::string text(buffer, result.ptr);
  const size_t e = text.find('e');
  const int exponent = std::stoi(text.substr(e + 1));
  const bool negative = text[0] == '-';
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e; ++i)
    if (text[i] != '.') digits += text[i];

  // Python switches to scientific notation below 1e-4 and from 1e16 on.
  std::string out;
  if (exponent < -4 || exponent >= 16) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += '.' + digits.substr(1);
    out += (exponent < 0 ? "e-" : "e+") + std::string(std::abs(exponent) < 10 ? "0" : "") +
           std::to_string(std::abs(exponent));
  } else if (exponent < 0) {
    out = "0." + std::string(-exponent - 1, '0') + digits;
  } else if (digits.size() <= static_cast<size_t>(exponent) + 1) {
    out = digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
  } else {
    out = digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
  }
  return (negative ? "-" : "") + out;
}

}  // namespace detail

}  // namespace minigrad::nn
