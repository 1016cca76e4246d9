// Printing the way the lecture's Python prints, for the lesson programs.
//
// Not part of minigrad: tensors already print as PyTorch prints them, so what is left is Python's
// spelling of a bool (True), of a float (0.0, shortest digits that read back the same), of a
// list of ints ([24, 43, 58]) and of a tuple of two tensors ((tensor(0.1469), tensor(0.8803))).
// A shape prints as `[4, 8, 2]` where Python shows `torch.Size([4, 8, 2])`: the PyTorch twins in
// tools/reference/lessons/ print list(shape), so the two outputs are the same text.
// Also the lessons' two argument helpers: --help, and a whole number read from the command line.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "autograd/tensor.hpp"

namespace lesson {

/// With -h or --help as the first argument, prints `usage` and exits with 0: a lesson's only
/// arguments are positional, as its Python twin's.
inline void help_if_asked(int argc, char** argv, const char* usage) {
  if (argc < 2) return;
  const std::string_view first = argv[1];
  if (first != "--help" && first != "-h") return;
  std::cout << usage << "\n";
  std::exit(0);
}

/// `text` as a whole number of at least 0; throws std::invalid_argument naming `name` otherwise.
inline int64_t whole_number(std::string_view text, const char* name) {
  int64_t value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0)
    throw std::invalid_argument(std::string(name) + " must be a whole number of at least 0, got '" +
                                std::string(text) + "'");
  return value;
}

/// Python's True / False.
inline std::string py(bool value) { return value ? "True" : "False"; }

/// Python's str(float): the shortest digits that read back the same, ".0" on whole numbers.
inline std::string py(double value) {
  char buffer[32];
  std::string text(buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr);
  return text.find_first_of(".en") == std::string::npos ? text + ".0" : text;
}

/// Python's str(list of ints): `[24, 43, 58]` (what `x.tolist()` prints for a 1-d int64 tensor).
inline std::string py(const std::vector<int64_t>& values) {
  std::ostringstream text;
  text << "[";
  for (size_t i = 0; i < values.size(); ++i) text << (i ? ", " : "") << values[i];
  text << "]";
  return text.str();
}

/// Python's repr of a pair of tensors, `(a, b)`: what a notebook cell `a, b` shows.
inline std::string py(const minigrad::Tensor& a, const minigrad::Tensor& b) {
  std::ostringstream text;
  text << "(" << a << ", " << b << ")";
  return text.str();
}

}  // namespace lesson
