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

#include "docs/ops_table.hpp"

namespace docs_support {

namespace fs = std::filesystem;

/// The repository's root folder.
inline const fs::path kSource = MINIGRAD_SOURCE_DIR;

// The text helpers of docs/ops_table.hpp: read_text, split_lines, trim, squeeze_spaces, starts_with.
using minigrad_docs::read_text;
using minigrad_docs::split_lines;
using minigrad_docs::squeeze_spaces;
using minigrad_docs::starts_with;
using minigrad_docs::trim;

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
