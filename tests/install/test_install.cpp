// `cmake --install` gives a package an outside project can use: install this build into a
// temporary prefix, build a tiny project with find_package(minigrad), run it.
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <string>

BOOST_AUTO_TEST_SUITE(install)

BOOST_AUTO_TEST_CASE(outside_project_builds_against_the_installed_package_and_runs) {
  const std::string command = std::string("bash ") + MINIGRAD_SOURCE_DIR + "/tests/install/check_install.sh " +
                              MINIGRAD_BINARY_DIR + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  BOOST_REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  BOOST_TEST_INFO(output);
  BOOST_TEST(status == 0);
  BOOST_TEST(output == "tensor([ 2., -4.,  1.])\n");  // 2x, printed as PyTorch prints it
}

BOOST_AUTO_TEST_SUITE_END()
