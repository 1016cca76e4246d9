// to_dot: the DOT text of small graphs, written out by hand box by box and arrow by arrow (the
// walk numbers boxes t0 = root, then each op's inputs in order, depth first), plus the lesson's
// FeedForward labelled with its parameter names, a 100,000-op chain, and the bad inputs.
#include <boost/test/unit_test.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/machinery/graph.hpp"
#include "autograd/ops.hpp"
#include "nn/feedforward.hpp"
#include "support.hpp"

using namespace minigrad;

namespace {

const std::string kHeader =
    "digraph autograd {\n"
    "  // Drawn by minigrad::to_dot. Render: dot -Tsvg this.dot -o this.svg\n"
    "  node [shape=box, fontname=\"Helvetica\", fontsize=11];\n";

// How many lines of the text contain `part`.
int count_lines(const std::string& text, const std::string& part) {
  int n = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (text.substr(start, end - start).find(part) != std::string::npos) ++n;
    start = end + 1;
  }
  return n;
}

using minigrad_test::contains;

}  // namespace

BOOST_AUTO_TEST_SUITE(graph)

BOOST_AUTO_TEST_CASE(small_graph_has_one_box_per_tensor_and_one_arrow_per_input) {
  // y = sum(w * x + b): 3 ops, 3 leaves (w and b named, x an unnamed input), 5 arrows.
  Tensor w = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor b = tensor({0.5, 0.5, 0.5}).requires_grad_();
  Tensor x = tensor({4.0, 5.0, 6.0});
  Tensor y = (w * x + b).sum();
  const std::string expected =
      kHeader +
      "  t0 [label=\"SumBackward0 []\", style=filled, fillcolor=darkolivegreen1, penwidth=2];\n"
      "  t1 [label=\"AddBackward0 [3]\", style=filled, fillcolor=lightgray];\n"
      "  t2 [label=\"MulBackward0 [3]\", style=filled, fillcolor=lightgray];\n"
      "  t3 [label=\"b [3]\", style=filled, fillcolor=lightblue];\n"
      "  t4 [label=\"w [3]\", style=filled, fillcolor=lightblue];\n"
      "  t5 [label=\"input [3]\"];\n"
      "  t1 -> t0;\n"
      "  t2 -> t1;\n"
      "  t3 -> t1;\n"
      "  t4 -> t2;\n"
      "  t5 -> t2;\n"
      "}\n";
  BOOST_TEST(to_dot(y, {{"w", w}, {"b", b}}) == expected);
}

BOOST_AUTO_TEST_CASE(tensor_used_twice_gets_two_arrows_and_one_box) {
  // The engine's example: b = a + a; c = b + b. Boxes a, b, c; two arrows into each op.
  Tensor a = tensor({3.0}).requires_grad_();
  Tensor b = a + a;
  Tensor c = b + b;
  const std::string dot = to_dot(c, {{"a", a}});
  BOOST_TEST(count_lines(dot, "[label=") == 3);
  BOOST_TEST(count_lines(dot, "t1 -> t0;") == 2);
  BOOST_TEST(count_lines(dot, "t2 -> t1;") == 2);
  BOOST_TEST(count_lines(dot, " -> ") == 4);
}

BOOST_AUTO_TEST_CASE(number_in_the_code_is_drawn_as_a_scalar) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  const std::string dot = to_dot((x * 0.5).sum());
  BOOST_TEST(contains(dot, "  t2 [label=\"input [2]\", style=filled, fillcolor=lightblue];\n"));
  BOOST_TEST(contains(dot, "  t3 [label=\"scalar 0.5\"];\n"));
}

BOOST_AUTO_TEST_CASE(data_and_grad_summaries_give_min_max_mean) {
  // loss = sum(w * w) with w = [1, 2, 3]: grad = 2w = [2, 4, 6]; loss = 14.
  Tensor w = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor loss = (w * w).sum();
  loss.backward();
  const std::string dot = to_dot(loss, {{"w", w}}, {.show_data = true, .show_grad = true});
  BOOST_TEST(contains(dot, "t0 [label=\"SumBackward0 []\\ndata min=14 max=14 mean=14\""));
  BOOST_TEST(contains(dot, "t1 [label=\"MulBackward0 [3]\\ndata min=1 max=9 mean=4.667\""));
  BOOST_TEST(contains(dot, "t2 [label=\"w [3]\\ndata min=1 max=3 mean=2\\ngrad min=2 max=6 mean=4\""));
  BOOST_TEST(count_lines(dot, " -> ") == 3);  // w -> mul twice, mul -> sum
}

BOOST_AUTO_TEST_CASE(feedforward_leaves_carry_their_parameter_names) {
  // The lesson's block at n_embd 2: input [1, 2] -> Linear(2, 8) -> ReLU -> Linear(8, 2), then mean.
  nn::FeedForward ff(2);
  Tensor token = ones({1, 2});
  Tensor loss = ff(token).mean();
  const std::string dot = to_dot(loss, ff.named_parameters());
  const std::vector<std::string> labels = {
      "t0 [label=\"MeanBackward0 []\"",     "t1 [label=\"AddmmBackward0 [1, 2]\"",
      "t2 [label=\"ReluBackward0 [1, 8]\"", "t3 [label=\"net.2.weight [2, 8]\"",
      "t4 [label=\"net.2.bias [2]\"",       "t5 [label=\"AddmmBackward0 [1, 8]\"",
      "t6 [label=\"input [1, 2]\"]",        "t7 [label=\"net.0.weight [8, 2]\"",
      "t8 [label=\"net.0.bias [8]\"",
  };
  for (const std::string& label : labels) BOOST_TEST(contains(dot, label), label);
  BOOST_TEST(count_lines(dot, "[label=") == 9);
  BOOST_TEST(count_lines(dot, " -> ") == 8);
  for (const std::string arrow :
       {"t1 -> t0", "t2 -> t1", "t3 -> t1", "t4 -> t1", "t5 -> t2", "t6 -> t5", "t7 -> t5", "t8 -> t5"})
    BOOST_TEST(contains(dot, "  " + arrow + ";\n"), arrow);
}

BOOST_AUTO_TEST_CASE(named_intermediate_tensor_gets_its_name_under_the_op) {
  Tensor x = tensor({1.0}).requires_grad_();
  Tensor hidden = x.relu();
  const std::string dot = to_dot(hidden.sum(), {{"hidden", hidden}, {"x", x}});
  BOOST_TEST(contains(dot, "t1 [label=\"ReluBackward0 [1]\\nhidden\""));
  BOOST_TEST(contains(dot, "t2 [label=\"x [1]\""));
}

BOOST_AUTO_TEST_CASE(leaf_root_is_one_highlighted_box) {
  Tensor w = tensor({1.0}).requires_grad_();
  BOOST_TEST(to_dot(w, {{"w", w}}) ==
             kHeader + "  t0 [label=\"w [1]\", style=filled, fillcolor=darkolivegreen1, penwidth=2];\n}\n");
}

BOOST_AUTO_TEST_CASE(names_with_quotes_are_escaped) {
  Tensor w = tensor({1.0}).requires_grad_();
  BOOST_TEST(contains(to_dot(w, {{"say \"hi\"", w}}), "label=\"say \\\"hi\\\" [1]\""));
}

BOOST_AUTO_TEST_CASE(chain_of_100000_ops_draws_without_overflowing_the_stack) {
  Tensor x = tensor({1.0}).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = -y;
  const std::string dot = to_dot(y);
  BOOST_TEST(count_lines(dot, "[label=\"NegBackward0 [1]\"") == 100000);
  BOOST_TEST(count_lines(dot, " -> ") == 100000);
  BOOST_TEST(contains(dot, "  t100000 [label=\"input [1]\", style=filled, fillcolor=lightblue];\n"));
}

BOOST_AUTO_TEST_CASE(bad_input_throws_invalid_argument_naming_to_dot) {
  Tensor w = tensor({1.0});
  BOOST_CHECK_EXCEPTION(to_dot(Tensor()), std::invalid_argument, [](const std::invalid_argument& e) {
    return std::string(e.what()) == "to_dot: got an undefined tensor to draw";
  });
  BOOST_CHECK_EXCEPTION(to_dot(w, {{"grad", w.grad()}}), std::invalid_argument,
                        [](const std::invalid_argument& e) {
                          return std::string(e.what()) == "to_dot: the tensor named \"grad\" is undefined";
                        });
}

BOOST_AUTO_TEST_SUITE_END()
