// The lesson demo's whole output against PyTorch's: runs the built examples/feedforward_demo and
// compares every byte of what it prints with tests/fixtures/feedforward_demo.expected, the output
// of tools/reference/feedforward_lesson.py (the same program in PyTorch 1.13.1).
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

const std::string kDemo = std::string(MINIGRAD_BINARY_DIR) + "/examples/feedforward_demo";

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  BOOST_TEST_REQUIRE(static_cast<bool>(file), "cannot open " << path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// Runs `command` and returns what it wrote to stdout; `status` gets its exit status.
std::string run(const std::string& command, int& status) {
  FILE* pipe = popen(command.c_str(), "r");
  BOOST_TEST_REQUIRE(pipe != nullptr, "cannot run " << command);
  std::string output;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  status = pclose(pipe);
  return output;
}

BOOST_AUTO_TEST_SUITE(feedforward_demo)

BOOST_AUTO_TEST_CASE(the_demo_prints_exactly_what_pytorch_prints_for_the_lesson) {
  BOOST_TEST_REQUIRE(std::ifstream(kDemo).good(),
                     kDemo << " is not built (build the feedforward_demo target)");
  int status = -1;
  const std::string output = run(kDemo, status);
  BOOST_TEST(status == 0);
  const std::string expected = read_file(std::string(MINIGRAD_FIXTURES_DIR) + "/feedforward_demo.expected");
  BOOST_TEST(output == expected);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
