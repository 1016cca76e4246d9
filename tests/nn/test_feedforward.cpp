// Tests for nn::FeedForward, the lesson's class, against PyTorch (tests/fixtures/nn_feedforward.json
// from tools/reference/nn_reference.py). At the course width after manual_seed(0): parameter
// names and order, the printout, the count 131,712, every parameter (sums over all elements, the
// first 16 and every 97th value), the token randn(1, 128) and the outputs, all within 1e-5. At
// width 8: every value and gradient on a 3-d input, loss = sum(out^2).
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "fixture_support.hpp"
#include "nn/activation.hpp"
#include "nn/feedforward.hpp"
#include "nn/linear.hpp"

namespace {

using namespace minigrad;
using nn_test::check_close;
using nn_test::fixture;
using nn_test::from_json;
using nn_test::json;

const json& course() { return fixture("nn_feedforward.json")["course"]; }
const json& small() { return fixture("nn_feedforward.json")["small"]; }

BOOST_AUTO_TEST_SUITE(feedforward)

BOOST_AUTO_TEST_CASE(named_parameters_are_pytorchs_names_in_pytorchs_order) {
  nn::FeedForward ff;
  std::vector<std::string> names;
  for (const auto& [name, parameter] : ff.named_parameters()) names.push_back(name);
  BOOST_TEST(names == course()["names"].get<std::vector<std::string>>(), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(it_prints_as_pytorchs_repr) {
  BOOST_TEST(to_string(nn::FeedForward()) == course()["repr"].get<std::string>());
}

BOOST_AUTO_TEST_CASE(it_holds_131712_parameters_at_the_course_width) {
  nn::FeedForward ff;
  int64_t count = 0;
  for (const Tensor& p : ff.parameters()) count += p.numel();
  BOOST_TEST(count == course()["parameter_count"].get<int64_t>());
  BOOST_TEST(count == 128 * 512 + 512 + 512 * 128 + 128);
}

BOOST_AUTO_TEST_CASE(its_net_is_linear_relu_linear_widening_by_widen) {
  nn::FeedForward ff(16, 3);
  BOOST_TEST(ff.net.size() == 3);
  BOOST_TEST(ff.net.at<nn::Linear>(0).in_features == 16);
  BOOST_TEST(ff.net.at<nn::Linear>(0).out_features == 48);
  BOOST_TEST(ff.net[1].name() == "ReLU");
  BOOST_TEST(ff.net.at<nn::Linear>(2).in_features == 48);
  BOOST_TEST(ff.net.at<nn::Linear>(2).out_features == 16);
  BOOST_TEST(&ff.named_children()[0].second.get() == &ff.net);  // the member is the registered child
}

BOOST_AUTO_TEST_CASE(weights_and_biases_equal_pytorchs_after_manual_seed_0) {
  manual_seed(course()["seed"].get<uint64_t>());
  nn::FeedForward ff;
  const int64_t stride = course()["stride"].get<int64_t>();
  for (const auto& [name, parameter] : ff.named_parameters()) {
    const json& expected = course()["parameters"][name];
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST(parameter.shape() == Shape(expected["shape"].get<std::vector<int64_t>>()));
      const std::vector<double> values = parameter.to_vector<double>();
      double sum = 0.0, abs_sum = 0.0;
      for (double v : values) {
        sum += v;
        abs_sum += std::abs(v);
      }
      // Sums over up to 65,536 values: within 1e-5 per value on average.
      const double n = static_cast<double>(values.size());
      check_close(std::vector<double>{sum, abs_sum}, json({expected["sum"], expected["abs_sum"]}), 1e-5 * n,
                  "sums");
      check_close(std::vector<double>(values.begin(), values.begin() + 16), expected["first"], 1e-5,
                  "first 16");
      std::vector<double> strided;
      for (size_t i = 0; i < values.size(); i += static_cast<size_t>(stride)) strided.push_back(values[i]);
      check_close(strided, expected["strided"], 1e-5, "every 97th value");
    }
  }
}

BOOST_AUTO_TEST_CASE(the_lessons_token_and_outputs_equal_pytorchs) {
  manual_seed(course()["seed"].get<uint64_t>());
  nn::FeedForward ff;
  const Tensor token = randn({1, 128});
  const Tensor hidden = ff.net[0](token);
  check_close(token, course()["token"], 1e-5, "token");
  check_close(hidden, course()["hidden"], 1e-5, "hidden");
  check_close(ff(token), course()["out"], 1e-5, "out");
  BOOST_TEST((hidden < 0).sum().item<int64_t>() == course()["negatives_before_relu"].get<int64_t>());
}

BOOST_AUTO_TEST_CASE(a_narrow_feedforward_equals_pytorch_value_for_value_with_gradients) {
  manual_seed(small()["seed"].get<uint64_t>());
  nn::FeedForward ff(small()["n_embd"].get<int64_t>(), small()["widen"].get<int64_t>());
  Tensor x = randn(small()["x_shape"].get<std::vector<int64_t>>()).requires_grad_();
  for (const auto& [name, parameter] : ff.named_parameters())
    check_close(parameter, small()["parameters"][name], 1e-6, name);
  check_close(x, small()["x"], 1e-6, "x");

  const Tensor out = ff(x);
  BOOST_TEST(out.shape() == x.shape());
  check_close(out, small()["out"], 1e-5, "out");
  (out * out).sum().backward();
  check_close(x.grad(), small()["grad_x"], 1e-5, "grad_x");
  for (const auto& [name, parameter] : ff.named_parameters())
    check_close(parameter.grad(), small()["grads"][name], 1e-5, "grad of " + name);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
