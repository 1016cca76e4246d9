// The README's snippets compile and do what the README says they do.
#include <boost/test/unit_test.hpp>
#include <sstream>

#include "minigrad.hpp"

using namespace minigrad;

namespace {

// README, "Your own module": the same lines.
struct TwoLayerNet : nn::Module {
  nn::Linear& hidden;
  nn::Linear& output;

  TwoLayerNet(int64_t in, int64_t width, int64_t classes)
      : hidden(register_module("hidden", nn::Linear(in, width))),
        output(register_module("output", nn::Linear(width, classes))) {}

  Tensor forward(const Tensor& x) override { return output(hidden(x).relu()); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(readme)

BOOST_AUTO_TEST_CASE(custom_module_registers_and_names_its_parameters_as_the_readme_says) {
  TwoLayerNet net(64, 128, 10);
  std::ostringstream names;
  for (auto& [name, p] : net.named_parameters()) names << name << " " << p.shape() << ", ";
  BOOST_TEST(names.str() ==
             "hidden.weight [128, 64], hidden.bias [128], output.weight [10, 128], output.bias [10], ");

  std::ostringstream printed;
  printed << net;
  BOOST_TEST(printed.str() ==
             "TwoLayerNet(\n"
             "  (hidden): Linear(in_features=64, out_features=128, bias=True)\n"
             "  (output): Linear(in_features=128, out_features=10, bias=True)\n"
             ")");
  BOOST_TEST((net(zeros({5, 64})).shape() == Shape{5, 10}));
}

BOOST_AUTO_TEST_SUITE_END()
