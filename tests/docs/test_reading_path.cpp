// The README's "Read the core in this order" table stays true: each file exists, its code-line
// count is the one printed beside it, the total is their sum, and the whole path stays within
// 3,000 code lines. A code line is neither blank nor only a comment (tools/reading_path.sh counts
// the same way and prints the figures to copy).
#include <boost/test/unit_test.hpp>
#include <regex>
#include <string>
#include <vector>

#include "docs/docs_support.hpp"

using namespace docs_support;

namespace {

int64_t code_lines(const std::string& text) {
  int64_t n = 0;
  for (const std::string& line : split_lines(text)) {
    const std::string body = trim(line);
    if (!body.empty() && !starts_with(body, "//")) ++n;
  }
  return n;
}

struct PathRow {
  std::string file;
  int64_t lines;
};

// The rows between the README's marker comments, and the total its last line states.
std::pair<std::vector<PathRow>, int64_t> readme_reading_path() {
  std::vector<PathRow> rows;
  int64_t total = -1;
  bool on = false;
  const std::regex row(R"(^\| `([^`]+)` \| (\d+) \|.*)");
  const std::regex total_line(R"(^\| \*\*total\*\* \| \*\*(\d+)\*\* \|.*)");
  for (const std::string& line : split_lines(read_text(kSource / "README.md"))) {
    if (line == "<!-- reading path -->") on = true;
    if (line == "<!-- end of reading path -->") on = false;
    std::smatch m;
    if (on && std::regex_match(line, m, row)) rows.push_back({m[1], std::stoll(m[2])});
    if (on && std::regex_match(line, m, total_line)) total = std::stoll(m[1]);
  }
  return {rows, total};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reading_path)

BOOST_AUTO_TEST_CASE(readme_counts_the_code_lines_of_each_file_on_the_reading_path) {
  const auto [rows, total] = readme_reading_path();
  BOOST_TEST_REQUIRE(rows.size() >= 10u, "README: no reading path table between the marker comments");
  int64_t sum = 0;
  for (const PathRow& r : rows) {
    BOOST_TEST_CONTEXT(r.file) {
      BOOST_TEST_REQUIRE(fs::exists(kSource / r.file),
                         "README's reading path names a missing file " << r.file);
      BOOST_TEST(code_lines(read_text(kSource / r.file)) == r.lines,
                 r.file << " changed: run `bash tools/reading_path.sh` and update the README's table");
    }
    sum += r.lines;
  }
  BOOST_TEST(total == sum);
  BOOST_TEST(sum <= 3000, "the reading path has grown past 3,000 code lines: " << sum);
}

BOOST_AUTO_TEST_CASE(code_lines_leave_out_blank_and_comment_lines) {
  BOOST_TEST(code_lines("// a comment\n/// a doc line\n\n   \nint x = 1;  // counted\n  }\n") == 2);
}

BOOST_AUTO_TEST_SUITE_END()
