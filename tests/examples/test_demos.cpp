// The demos print what their PyTorch twins print: each program's whole output is compared with
// the output of the matching script in tools/reference/, committed in tests/fixtures/.
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "support.hpp"

namespace {

std::string run(const std::string& program) {
  const std::string path = std::string(MINIGRAD_BINARY_DIR) + "/examples/" + program;
  const minigrad_test::CommandResult finished = minigrad_test::run_command(path);
  BOOST_REQUIRE_MESSAGE(finished.exit_code == 0, program + " did not exit with status 0");
  return finished.output;
}

std::string read_fixture(const std::string& name) {
  std::ifstream file(std::string(MINIGRAD_FIXTURES_DIR) + "/" + name);
  BOOST_REQUIRE_MESSAGE(file.good(), "missing fixture " + name);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(demos)

BOOST_AUTO_TEST_CASE(autograd_demo_prints_what_pytorch_prints) {
  BOOST_TEST(run("autograd_demo") == read_fixture("autograd_demo.expected"));
}

BOOST_AUTO_TEST_SUITE_END()
