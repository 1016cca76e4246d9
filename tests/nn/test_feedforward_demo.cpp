// The lesson demo's whole output against PyTorch's: runs the built examples/feedforward_demo and
// compares every byte of what it prints with tests/fixtures/feedforward_demo.expected, the output
// of tools/reference/feedforward_lesson.py (the same program in PyTorch 1.13.1).
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "support.hpp"

namespace {

const std::string kDemo = std::string(MINIGRAD_BINARY_DIR) + "/examples/feedforward_demo";

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  BOOST_TEST_REQUIRE(static_cast<bool>(file), "cannot open " << path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

BOOST_AUTO_TEST_SUITE(feedforward_demo)

BOOST_AUTO_TEST_CASE(the_demo_prints_exactly_what_pytorch_prints_for_the_lesson) {
  BOOST_TEST_REQUIRE(std::ifstream(kDemo).good(),
                     kDemo << " is not built (build the feedforward_demo target)");
  const minigrad_test::CommandResult demo = minigrad_test::run_command(kDemo);
  BOOST_TEST(demo.exit_code == 0);
  const std::string expected = read_file(std::string(MINIGRAD_FIXTURES_DIR) + "/feedforward_demo.expected");
  BOOST_TEST(demo.output == expected);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
