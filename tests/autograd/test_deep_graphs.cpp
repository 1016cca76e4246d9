// Deep graphs of every shape: a chain that uses its input twice, a residual ladder (each tensor
// used by two ops) and a diamond (two branches that meet again), 200,000 ops each, freed with and
// without a backward first. Freeing must not nest one destructor per op (a stack overflow near
// 30,000 ops before); the gradients are checked against the same recurrence run on plain doubles.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/ops.hpp"

using namespace minigrad;

namespace {

constexpr int kOps = 200000;

// One graph shape: a step that adds `ops_per_step` recorded ops, and the same step on doubles
// giving the new value and the step's derivative d(new)/d(old).
struct GraphShape {
  std::string name;
  int ops_per_step;
  std::function<Tensor(const Tensor&)> step;
  std::function<void(double& value, double& derivative)> reference;
};

const std::vector<GraphShape> kShapes = {
    {"chain using its input twice", 2, [](const Tensor& y) { return (y + y) * 0.5; },
     [](double& v, double& d) {
       v = (v + v) * 0.5;
       d = 1.0;
     }},
    {"residual ladder", 3, [](const Tensor& y) { return y + 0.01 * y.tanh(); },
     [](double& v, double& d) {
       const double t = std::tanh(v);
       v = v + 0.01 * t;
       d = 1.0 + 0.01 * (1.0 - t * t);
     }},
    {"diamond", 3, [](const Tensor& y) { return y * 0.25 + y.sigmoid() * 0.75; },
     [](double& v, double& d) {
       const double s = 1.0 / (1.0 + std::exp(-v));
       v = v * 0.25 + s * 0.75;
       d = 0.25 + 0.75 * s * (1.0 - s);
     }},
};

}  // namespace

BOOST_AUTO_TEST_SUITE(deep_graphs)

BOOST_AUTO_TEST_CASE(graphs_of_200000_ops_of_every_shape_are_freed_without_overflowing_the_stack) {
  for (const GraphShape& shape : kShapes) {
    for (const bool run_backward : {false, true}) {
      BOOST_TEST_CONTEXT(shape.name << (run_backward ? ", after backward" : ", without backward")) {
        Tensor x = tensor({0.5}, {.dtype = kFloat64}).requires_grad_();
        double value = 0.5, derivative = 1.0;
        Tensor y = x;
        for (int ops = 0; ops < kOps; ops += shape.ops_per_step) {
          y = shape.step(y);
          double step_derivative = 0.0;
          shape.reference(value, step_derivative);
          derivative *= step_derivative;
        }
        BOOST_TEST(y.item<double>() == value, boost::test_tools::tolerance(1e-9));
        if (run_backward) {
          y.backward();
          BOOST_TEST(x.grad().item<double>() == derivative, boost::test_tools::tolerance(1e-9));
        }
        y = Tensor();                               // frees the whole graph
        BOOST_TEST(x.impl_ptr().use_count() == 1);  // no node of it is left holding the leaf
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_graph_kept_alive_by_a_node_handle_is_freed_with_the_handle) {
  // The user may hold a grad_fn after dropping every tensor: the graph dies with that handle.
  Tensor x = tensor({1.0}, {.dtype = kFloat64}).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < kOps; ++i) y = y * y;
  std::shared_ptr<Node> node = y.grad_fn();
  y = Tensor();
  BOOST_TEST(node->inputs.size() == 2u);
  BOOST_TEST(x.impl_ptr().use_count() == 3);  // x, and twice by the first MulBackward0
  node.reset();
  BOOST_TEST(x.impl_ptr().use_count() == 1);
}

BOOST_AUTO_TEST_SUITE_END()
