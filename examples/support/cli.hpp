// One check the examples' flags share, on top of CLI11 (the flag parser): a number above 0.
// CLI11's own PositiveNumber says "not in range 0.000000 to 1.8e308" in full; this says
// "--lr: -0.1 is not a number above 0".
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace support {

/// Accepts a number above 0 (`->check(support::positive)`); CLI11 then converts it to the
/// option's type and refuses what does not fit (2.5 for an integer).
inline const CLI::Validator positive(
    [](std::string& text) {
      double value = 0;
      const bool number = CLI::detail::lexical_cast(text, value);
      return number && value > 0 ? std::string() : text + " is not a number above 0";
    },
    "POSITIVE");

}  // namespace support
