// `cmake --install` gives a package an outside project can use: install this build into a
// temporary prefix, build a tiny project with find_package(minigrad), run it.
#include <boost/test/unit_test.hpp>
#include <minigrad/nn/linear.hpp>  // the installed spelling, inside the tree
#include <string>

#include "support.hpp"

BOOST_AUTO_TEST_SUITE(install)

BOOST_AUTO_TEST_CASE(outside_projects_of_the_readme_lines_build_against_the_installed_package_and_run) {
  const std::string command = std::string("bash ") + MINIGRAD_SOURCE_DIR +
                              "/tests/install/check_install.sh " + MINIGRAD_BINARY_DIR + " 2>&1";
  const auto [exit_code, output] = minigrad_test::run_command(command);
  BOOST_TEST_INFO(output);
  BOOST_TEST(exit_code == 0);
  // 2x, printed as PyTorch prints it; then the template's closing line.
  BOOST_TEST(output ==
             "tensor([ 2., -4.,  1.])\n"
             "wrote train_template.safetensors, train_template_loss.csv and train_template_loss.svg\n");
}

BOOST_AUTO_TEST_CASE(the_installed_include_spelling_works_inside_the_tree) {
  const minigrad::nn::Linear layer(3, 2);
  BOOST_TEST((layer.weight.shape() == minigrad::Shape{2, 3}));
}

BOOST_AUTO_TEST_SUITE_END()
