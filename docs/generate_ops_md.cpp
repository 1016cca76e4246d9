// generate_ops_md SOURCE_DIR: rewrites SOURCE_DIR/docs/ops.md, replacing the part between its
// marker lines with the table made from the headers and the tests (docs/ops_table.hpp). Run it
// through the build: `cmake --build --preset release --target ops_md`.
#include <cstdio>
#include <exception>
#include <fstream>

#include "docs/ops_table.hpp"

int main(int argc, char** argv) try {
  using namespace minigrad_docs;
  if (argc != 2) {
    std::fprintf(stderr, "usage: generate_ops_md SOURCE_DIR\n");
    return 2;
  }
  const fs::path source = argv[1];
  const fs::path file = source / "docs" / "ops.md";
  const std::string doc = read_text(file);
  const size_t begin = doc.find(kBegin), end = doc.find(kEnd);
  if (begin == std::string::npos || end == std::string::npos || end < begin) {
    std::fprintf(stderr, "generate_ops_md: %s lacks the marker lines\n", file.c_str());
    return 1;
  }
  const std::string updated = doc.substr(0, begin) + ops_tables(source) + doc.substr(end + kEnd.size());
  if (updated != doc) std::ofstream(file, std::ios::binary) << updated;
  std::printf("%s %s\n", file.c_str(), updated == doc ? "was up to date" : "rewritten");
  return 0;
} catch (const std::exception& error) {
  std::fprintf(stderr, "generate_ops_md: %s\n", error.what());
  return 1;
}
