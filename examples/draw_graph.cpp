// draw_graph: the autograd graph behind the lesson's FeedForward, drawn with Graphviz.
//
// One token goes through nn::FeedForward and an MSE loss, backward() fills the gradients, and
// to_dot writes the graph behind the loss to feedforward_graph.dot: one box per op with its
// output shape, the parameters under their names (net.0.weight [512, 128]), the token as
// "input [1, 128]", each box with the min/max/mean of its values and gradient. If Graphviz's
// `dot` is installed it renders feedforward_graph.svg too. In Python, torchviz draws the same:
// make_dot(loss, params=dict(ff.named_parameters())).
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "autograd/machinery/graph.hpp"
#include "autograd/random.hpp"
#include "nn/feedforward.hpp"
#include "nn/loss.hpp"

using namespace minigrad;

int main(int argc, char** argv) {
  CLI::App app{
      "draw_graph: writes the autograd graph behind the lesson's FeedForward to feedforward_graph.dot "
      "(and .svg when Graphviz is installed)",
      "draw_graph"};
  CLI11_PARSE(app, argc, argv);  // no flags but --help

  manual_seed(0);
  nn::FeedForward ff;  // n_embd = 128: Linear(128, 512), ReLU, Linear(512, 128)
  Tensor token = randn({1, 128});
  Tensor target = zeros({1, 128});
  Tensor loss = nn::functional::mse_loss(ff(token), target);
  loss.backward();

  // The parameters by name, and the target too, so that only the token is left to read "input".
  auto names = ff.named_parameters();
  names.emplace_back("target", target);
  const std::string dot = to_dot(loss, names, {.show_data = true, .show_grad = true});
  std::ofstream("feedforward_graph.dot") << dot;
  std::cout << "wrote feedforward_graph.dot (loss = " << loss.item<float>() << ")\n";

  // Render it when Graphviz is there (`command -v` asks the shell whether a program is on PATH).
  if (std::system("command -v dot > /dev/null 2>&1") != 0) {
    std::cout << "Graphviz's dot is not installed, so no SVG was made. Install it with\n"
                 "  sudo apt-get install graphviz\n"
                 "then render the graph with\n"
                 "  dot -Tsvg feedforward_graph.dot -o feedforward_graph.svg\n";
    return 0;
  }
  if (std::system("dot -Tsvg feedforward_graph.dot -o feedforward_graph.svg") != 0) {
    std::cerr << "dot could not render feedforward_graph.dot\n";
    return 1;
  }
  std::cout << "wrote feedforward_graph.svg: open it in a browser\n";
  return 0;
}
