// The checks the examples' flags share, on top of CLI11 (the flag parser): a number above 0, a
// whole number of at least n.
// CLI11's own PositiveNumber says "not in range 0.000000 to 1.8e308" in full; this says
// "--lr: -0.1 is not a finite number above 0".
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <exception>
#include <string>

namespace support {

/// Accepts a finite number above 0 (`->check(support::positive)`); CLI11 then converts it to the
/// option's type and refuses what does not fit (2.5 for an integer). inf and 1e400 are refused:
/// a learning rate of inf trains on nan.
inline const CLI::Validator positive(
    [](std::string& text) {
      double value = 0;
      const bool number = CLI::detail::lexical_cast(text, value);
      return number && value > 0 && std::isfinite(value) ? std::string()
                                                         : text + " is not a finite number above 0";
    },
    "POSITIVE");

/// A flag's check: a whole number of at least `least` ("--n-embd: needs a whole number of at
/// least 1, got 0").
inline CLI::Validator at_least(int64_t least) {
  return CLI::Validator(
      [least](std::string& text) -> std::string {
        try {
          size_t used = 0;
          if (std::stoll(text, &used) >= least && used == text.size()) return "";
        } catch (const std::exception&) {
        }
        return "needs a whole number of at least " + std::to_string(least) + ", got '" + text + "'";
      },
      ">=" + std::to_string(least));
}

}  // namespace support
