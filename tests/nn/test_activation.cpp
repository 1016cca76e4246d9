// Tests for the parameter-free layers: ReLU, Tanh, Sigmoid, GELU (and F::gelu), Dropout (and
// F::dropout), Identity, Flatten. GELU and dropout values and gradients come from PyTorch
// (tests/fixtures/nn_functional.json, tools/reference/nn_reference.py); gelu's backward is also
// gradchecked; the simple layers are compared with the ops they wrap, computed by hand.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "fixture_support.hpp"
#include "nn/activation.hpp"
#include "nn/dropout.hpp"
#include "nn/flatten.hpp"
#include "nn/functional.hpp"
#include "nn/linear.hpp"

namespace {

using namespace minigrad;
namespace F = minigrad::nn::functional;
using nn_test::check_close;
using nn_test::check_throws;
using nn_test::fixture;
using nn_test::from_json;
using nn_test::json;

const json& functional() { return fixture("nn_functional.json"); }

BOOST_AUTO_TEST_SUITE(activation)

BOOST_AUTO_TEST_CASE(relu_tanh_and_sigmoid_layers_apply_their_formula_elementwise) {
  const Tensor x = tensor({-2.0, -0.5, 0.0, 0.5, 2.0});
  const std::vector<double> v = {-2.0, -0.5, 0.0, 0.5, 2.0};
  std::vector<double> relu_values, tanh_values, sigmoid_values;
  for (double a : v) {
    relu_values.push_back(a > 0 ? a : 0.0);
    tanh_values.push_back(std::tanh(a));
    sigmoid_values.push_back(1 / (1 + std::exp(-a)));
  }
  check_close(nn::ReLU()(x), json(relu_values), 1e-7, "relu");
  check_close(nn::Tanh()(x), json(tanh_values), 1e-7, "tanh");
  check_close(nn::Sigmoid()(x), json(sigmoid_values), 1e-7, "sigmoid");
}

BOOST_AUTO_TEST_CASE(gelu_matches_pytorch_values_and_gradients_exact_and_tanh) {
  const json& g = functional()["gelu"];
  for (const std::string approximate : {"none", "tanh"}) {
    BOOST_TEST_CONTEXT("approximate=" << approximate) {
      Tensor x = from_json(g["x"], {static_cast<int64_t>(g["x"].size())}, kFloat64).requires_grad_();
      const Tensor out = nn::GELU(approximate)(x);
      check_close(out, g[approximate]["out"], 1e-12, "out");
      out.sum().backward();
      check_close(x.grad(), g[approximate]["grad"], 1e-12, "grad");
    }
  }
}

BOOST_AUTO_TEST_CASE(gelu_backward_matches_finite_differences) {
  Generator generator(3);
  for (const std::string approximate : {"none", "tanh"}) {
    BOOST_TEST_CONTEXT("approximate=" << approximate) {
      const Tensor x = randn({3, 5}, generator, {.dtype = kFloat64, .requires_grad = true}) * 2.0;
      BOOST_TEST(gradcheck([&](const std::vector<Tensor>& in) { return F::gelu(in[0], approximate); },
                           {x.detach().requires_grad_()}));
    }
  }
}

BOOST_AUTO_TEST_CASE(gelu_in_float32_agrees_with_float64) {
  const Tensor x64 = arange(-40, 41, 1, {.dtype = kFloat64}) / 10.0;
  const Tensor x32 = x64.to(kFloat32);
  for (const std::string approximate : {"none", "tanh"}) {
    BOOST_TEST_CONTEXT("approximate=" << approximate) {
      check_close(F::gelu(x32, approximate), json(F::gelu(x64, approximate).to_vector<double>()), 1e-6,
                  "float32");
    }
  }
}

BOOST_AUTO_TEST_CASE(dropout_draws_pytorchs_mask_and_scales_the_gradient) {
  const json& d = functional()["dropout"];
  const Shape shape = d["shape"].get<std::vector<int64_t>>();
  for (const json& c : d["cases"]) {
    BOOST_TEST_CONTEXT("seed " << c["seed"] << ", p = " << c["p"]) {
      manual_seed(c["seed"].get<uint64_t>());
      Tensor x = from_json(d["x"], shape).requires_grad_();
      const Tensor out = F::dropout(x, c["p"].get<double>(), /*training=*/true);
      out.sum().backward();
      const Tensor after = randn({3});
      check_close(out, c["out"], 1e-6, "out");
      check_close(x.grad(), c["grad"], 1e-6, "grad");
      check_close(after, c["randn_after"], 1e-6, "randn(3) after");
    }
  }
}

BOOST_AUTO_TEST_CASE(dropout_layer_drops_in_training_and_passes_through_in_eval) {
  const json& d = functional()["dropout"];
  const json& c = d["cases"][0];
  const Tensor x = from_json(d["x"], d["shape"].get<std::vector<int64_t>>());
  nn::Dropout layer(c["p"].get<double>());
  manual_seed(c["seed"].get<uint64_t>());
  check_close(layer(x), c["out"], 1e-6, "training");
  layer.eval();
  BOOST_TEST(layer(x).impl() == x.impl());  // the input itself, as PyTorch returns it
  BOOST_TEST(F::dropout(x, 0.0).impl() == x.impl());
}

// The reference dropout, written as PyTorch's CPU code computes it: a float mask from
// bernoulli_(1 - p), divided by 1 - p, multiplied in.
std::vector<float> reference_dropout(const std::vector<float>& x, double p, uint64_t seed) {
  Generator generator(seed);
  std::vector<float> mask(x.size());
  generator.bernoulli(mask.data(), static_cast<int64_t>(mask.size()), 1 - p);
  std::vector<float> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] * (mask[i] / static_cast<float>(1 - p));
  return out;
}

// Large enough to span many of the generator's blocks (and PyTorch's grain of 32,768 elements).
BOOST_AUTO_TEST_CASE(dropout_matches_the_plain_float_mask_version) {
  manual_seed(3);
  Tensor x = randn({80, 1000}, {.requires_grad = true});
  const Tensor g = randn({80, 1000});
  const std::vector<float> values = x.to_vector<float>(), grads = g.to_vector<float>();
  Generator generator(11);
  const Tensor out = F::dropout(x, 0.2, /*training=*/true, generator);
  out.backward(g);
  BOOST_TEST(out.to_vector<float>() == reference_dropout(values, 0.2, 11), boost::test_tools::per_element());
  BOOST_TEST(x.grad().to_vector<float>() == reference_dropout(grads, 0.2, 11),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(dropout_with_p_1_zeroes_everything_without_drawing) {
  manual_seed(4);
  const Tensor expected_next = randn({3});
  manual_seed(4);
  Tensor x = ones({2, 3}, {.requires_grad = true});
  const Tensor out = F::dropout(x, 1.0);
  out.sum().backward();
  BOOST_TEST(equal(out, zeros({2, 3})));
  BOOST_TEST(equal(x.grad(), zeros({2, 3})));
  BOOST_TEST(equal(randn({3}), expected_next));
}

BOOST_AUTO_TEST_CASE(identity_returns_its_input_and_flatten_merges_dims) {
  const Tensor x = randn({2, 3, 4, 5});
  BOOST_TEST(nn::Identity()(x).impl() == x.impl());
  BOOST_TEST(nn::Flatten()(x).shape() == Shape({2, 60}));
  BOOST_TEST(nn::Flatten(0, 2)(x).shape() == Shape({24, 5}));
  BOOST_TEST(nn::Flatten(-2, -1)(x).shape() == Shape({2, 3, 20}));
  BOOST_TEST(equal(nn::Flatten()(x).reshape({2, 3, 4, 5}), x));
}

BOOST_AUTO_TEST_CASE(bad_inputs_throw_naming_the_layer) {
  struct Case {
    std::string name;
    std::function<void()> call;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"an unknown GELU approximation",
       [] { nn::GELU("fast"); },
       {"GELU: approximate must be \"none\" or \"tanh\", got \"fast\""}},
      {"an unknown gelu approximation", [] { F::gelu(zeros({2}), "fast"); }, {"gelu:", "\"fast\""}},
      {"gelu of an integer tensor", [] { F::gelu(zeros({2}, {.dtype = kInt64})); }, {"gelu", "int64"}},
      {"a dropout probability above 1",
       [] {
         F::dropout(zeros({2, 3}), 1.5);
       },
       {"dropout: probability has to be between 0 and 1, but got 1.5", "[2, 3]"}},
      {"a negative Dropout probability", [] { nn::Dropout(-0.1); }, {"Dropout: probability", "-0.1"}},
      {"dropout of an integer tensor",
       [] { F::dropout(zeros({2}, {.dtype = kInt64}), 0.5); },
       {"dropout", "int64"}},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.name) { check_throws<std::invalid_argument>(c.call, c.fragments); }
  }
  check_throws<std::out_of_range>([] { nn::Flatten(1, 5)(zeros({2, 3})); }, {"flatten"});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
