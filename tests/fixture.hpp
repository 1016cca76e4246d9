// Reading the PyTorch fixtures in tests/fixtures/ (each written by a script in tools/reference/),
// shared by every test executable that compares with them.
#pragma once

#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace minigrad_test {

/// tests/fixtures/<name>, parsed once per test executable. Throws std::runtime_error naming the
/// path when the file cannot be opened.
inline const nlohmann::json& read_fixture(const std::string& name) {
  static std::map<std::string, nlohmann::json> cache;
  auto found = cache.find(name);
  if (found != cache.end()) return found->second;
  const std::string path = std::string(MINIGRAD_FIXTURES_DIR) + "/" + name;
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot open fixture " + path);
  return cache.emplace(name, nlohmann::json::parse(file)).first->second;
}

/// A fixture number as a double. JSON has no inf or nan, so the scripts write those as the strings
/// "inf", "-inf" and "nan"; bools read as 1 and 0. Throws std::runtime_error for any other string.
inline double fixture_number(const nlohmann::json& value) {
  if (value.is_boolean()) return value.get<bool>() ? 1.0 : 0.0;
  if (!value.is_string()) return value.get<double>();
  const std::string text = value.get<std::string>();
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  throw std::runtime_error("fixture: unexpected value " + text);
}

}  // namespace minigrad_test
