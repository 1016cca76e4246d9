// Anomaly detection: inside DetectAnomalyGuard the first backward function that returns nan or inf
// throws, naming the op in PyTorch's words and where its forward ran; outside it nothing throws.
// The expected op names and output indices are PyTorch's (checked with torch.autograd.detect_anomaly
// on the same graphs, except the inf case, which PyTorch does not stop at), and the nan/inf values
// follow by hand: d(log x)/dx = 1/x is 0/0 = nan when x = 0 and the incoming gradient is 0.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/machinery/anomaly.hpp"
#include "autograd/ops.hpp"
#include "nn/linear.hpp"
#include "nn/module.hpp"
#include "nn/sequential.hpp"
#include "support.hpp"

using namespace minigrad;

namespace {

using minigrad_test::contains;

// The message of the std::runtime_error that backward() throws, or "" if it throws nothing.
std::string backward_error(const Tensor& loss) {
  try {
    loss.backward();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

struct NanCase {
  const char* name;
  std::function<Tensor()> loss;  // builds the graph (inside the guard) and returns a scalar
  const char* expected;          // the start of the message
};

// log: grad / x = 0 / 0 at x = 0, once the product with 0 has sent back a zero gradient.
Tensor log_of_zero_times_zero() {
  Tensor x = zeros({3}).requires_grad_();
  return (x.log() * 0.0).sum();
}

// b / a with a = 0: grad_b = 0 / a = nan is the 0th output, grad_a = -0 * b / a^2 = nan the 1th.
Tensor quotient_by_zero_times_zero(bool b_requires_grad) {
  Tensor a = tensor({0.0}).requires_grad_();
  Tensor b = tensor({2.0});
  if (b_requires_grad) b.requires_grad_();
  return (b / a * 0.0).sum();
}

// sqrt: grad / (2 sqrt(x)) = 1 / 0 = inf at x = 0 (PyTorch checks only nan; we stop at inf too).
Tensor sqrt_of_zero() {
  Tensor x = tensor({0.0, 4.0}).requires_grad_();
  return x.sqrt().sum();
}

// A module whose forward takes a log, to see the module path in the note.
struct LogLayer : nn::Module {
  Tensor forward(const Tensor& x) override { return x.log(); }
};

struct Outer : nn::Module {
  nn::Sequential& body;
  Outer() : body(register_module("body", nn::Sequential{nn::Identity(), LogLayer()})) {}
  Tensor forward(const Tensor& x) override { return body(x); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(anomaly)

BOOST_AUTO_TEST_CASE(first_backward_returning_nan_or_inf_throws_naming_the_op) {
  const std::vector<NanCase> cases = {
      {"log(0) * 0", log_of_zero_times_zero,
       "Function 'LogBackward0' returned nan values in its 0th output."},
      {"b / 0 * 0", [] { return quotient_by_zero_times_zero(true); },
       "Function 'DivBackward0' returned nan values in its 0th output."},
      {"b / 0 * 0, b constant", [] { return quotient_by_zero_times_zero(false); },
       "Function 'DivBackward0' returned nan values in its 1th output."},
      {"sqrt(0)", sqrt_of_zero, "Function 'SqrtBackward0' returned inf values in its 0th output."},
  };
  for (const NanCase& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      DetectAnomalyGuard anomaly;
      const std::string message = backward_error(c.loss());
      BOOST_TEST(message.rfind(c.expected, 0) == 0, "message: " << message);
    }
  }
}

BOOST_AUTO_TEST_CASE(without_the_guard_the_same_graphs_give_nan_without_throwing) {
  BOOST_TEST(!is_anomaly_enabled());
  Tensor x = zeros({3}).requires_grad_();
  Tensor loss = (x.log() * 0.0).sum();
  BOOST_CHECK_NO_THROW(loss.backward());
  for (float g : x.grad().to_vector<float>()) BOOST_TEST(std::isnan(g));

  BOOST_CHECK_NO_THROW(sqrt_of_zero().backward());
}

BOOST_AUTO_TEST_CASE(message_says_where_the_forward_ran_and_which_op_it_was) {
  DetectAnomalyGuard anomaly;
  Tensor x = zeros({3}).requires_grad_();
  Tensor loss = (x.log() * 0.0).sum();  // ops #1 log, #2 mul, #3 sum
  const std::string message = backward_error(loss);
  BOOST_TEST(contains(message,
                      "Forward call that created it (output shape [3]): op #1 recorded since anomaly "
                      "detection was turned on."),
             message);
}

BOOST_AUTO_TEST_CASE(message_names_the_module_path_when_the_op_ran_inside_a_module) {
  Outer model;
  DetectAnomalyGuard anomaly;
  Tensor x = zeros({2}).requires_grad_();
  Tensor loss = (model(x) * 0.0).sum();
  const std::string message = backward_error(loss);
  BOOST_TEST(message.rfind("Function 'LogBackward0' returned nan values in its 0th output.", 0) == 0,
             message);
  BOOST_TEST(contains(message,
                      "op #1 recorded since anomaly detection was turned on, in the forward of "
                      "body.1 (LogLayer)."),
             message);
}

BOOST_AUTO_TEST_CASE(forward_run_before_the_guard_is_reported_as_unknown) {
  Tensor x = zeros({3}).requires_grad_();
  Tensor loss = (x.log() * 0.0).sum();
  DetectAnomalyGuard anomaly;
  const std::string message = backward_error(loss);
  BOOST_TEST(message.rfind("Function 'LogBackward0' returned nan values in its 0th output.", 0) == 0,
             message);
  BOOST_TEST(contains(message, "unknown: it ran before anomaly detection was turned on"), message);
}

BOOST_AUTO_TEST_CASE(finite_gradients_pass_the_check_unchanged) {
  DetectAnomalyGuard anomaly;
  Tensor x = tensor({1.0, 4.0}).requires_grad_();
  (x.sqrt() * 2.0).sum().backward();  // d/dx 2 sqrt(x) = 1 / sqrt(x): 1 and 0.5
  BOOST_TEST(x.grad().to_vector<float>() == (std::vector<float>{1.0f, 0.5f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(guard_restores_the_previous_state_and_nests) {
  BOOST_TEST(!is_anomaly_enabled());
  {
    DetectAnomalyGuard outer;
    BOOST_TEST(is_anomaly_enabled());
    {
      DetectAnomalyGuard inner;
      BOOST_TEST(is_anomaly_enabled());
    }
    BOOST_TEST(is_anomaly_enabled());
  }
  BOOST_TEST(!is_anomaly_enabled());
  set_detect_anomaly(true);
  BOOST_TEST(is_anomaly_enabled());
  set_detect_anomaly(false);
  BOOST_TEST(!is_anomaly_enabled());
}

BOOST_AUTO_TEST_CASE(nodes_keep_no_note_while_detection_is_off) {
  Tensor x = tensor({1.0}).requires_grad_();
  BOOST_TEST((x * 2.0).grad_fn()->forward_trace.empty());
  DetectAnomalyGuard anomaly;
  BOOST_TEST((x * 2.0).grad_fn()->forward_trace == "op #1 recorded since anomaly detection was turned on");
}

BOOST_AUTO_TEST_SUITE_END()
