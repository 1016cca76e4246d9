// Small text and file helpers shared by the docs tests (tests/docs/test_*.cpp): reading a file of
// the repository, splitting and trimming lines, running code in another working directory.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace docs_support {

namespace fs = std::filesystem;

/// The repository's root folder.
inline const fs::path kSource = MINIGRAD_SOURCE_DIR;

/// The whole text of a file; throws std::runtime_error naming it when it cannot be read.
inline std::string read_text(const fs::path& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

/// The lines of a text, without their line ends.
inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// Without the spaces and tabs at both ends.
inline std::string trim(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") + 1 - first);
}

// Runs of spaces become one space, so a table cell matches code however it is laid out.
inline std::string squeeze_spaces(const std::string& s) {
  return trim(std::regex_replace(s, std::regex(R"(\s+)"), " "));
}

/// True when s begins with prefix.
inline bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Runs the enclosed code with `dir` as the working directory, as a script run from there would.
struct InDirectory {
  fs::path previous = fs::current_path();
  explicit InDirectory(const fs::path& dir) { fs::current_path(dir); }
  ~InDirectory() { fs::current_path(previous); }
};

// A new empty folder for the files one test case writes.
inline fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("minigrad_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace docs_support
