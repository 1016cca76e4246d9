// Tests for F::linear and nn::Linear: values and gradients against PyTorch (float64 fixtures from
// tools/reference/nn_reference.py, within 1e-10) on 1-d, 2-d, 3-d and empty inputs; gradcheck
// against finite differences; PyTorch's initialisation after a seed; position independence (the
// lesson's point: the same row at two positions gives the same output); bad inputs.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "fixture_support.hpp"
#include "nn/dropout.hpp"
#include "nn/feedforward.hpp"
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

BOOST_AUTO_TEST_SUITE(linear)

BOOST_AUTO_TEST_CASE(functional_linear_matches_pytorch_values_and_gradients_on_1d_2d_3d_inputs) {
  const json& data = fixture("nn_functional.json")["linear"];
  for (const json& c : data["cases"]) {
    const Shape shape = c["x_shape"].get<std::vector<int64_t>>();
    BOOST_TEST_CONTEXT("input " << shape << (c["bias"].get<bool>() ? " with bias" : " without bias")) {
      Tensor x = from_json(c["x"], shape, kFloat64).requires_grad_();
      Tensor w = from_json(data["weight"], {3, 4}, kFloat64).requires_grad_();
      Tensor b =
          c["bias"].get<bool>() ? from_json(data["bias_values"], {3}, kFloat64).requires_grad_() : Tensor();
      const Tensor out = F::linear(x, w, b);
      BOOST_TEST(out.shape() == Shape(c["out_shape"].get<std::vector<int64_t>>()));
      check_close(out, c["out"], 1e-10, "out");

      (out * out).sum().backward();
      check_close(x.grad(), c["grad_x"], 1e-10, "grad_x");
      check_close(w.grad(), c["grad_weight"], 1e-10, "grad_weight");
      if (b.defined()) check_close(b.grad(), c["grad_bias"], 1e-10, "grad_bias");
    }
  }
}

BOOST_AUTO_TEST_CASE(linear_backward_matches_finite_differences) {
  struct Case {
    Shape x_shape;
    bool bias;
    bool x_grad;
  };
  const std::vector<Case> cases = {
      {{4}, true, true},     {{3, 4}, true, true},  {{2, 3, 4}, true, true}, {{2, 1, 3, 4}, true, true},
      {{3, 4}, false, true}, {{3, 4}, true, false},  // weight and bias only, as for a first layer
  };
  Generator generator(7);
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT("input " << c.x_shape << (c.bias ? " with bias" : " without bias")) {
      Tensor x = randn(c.x_shape, generator, {.dtype = kFloat64});
      if (c.x_grad) x.requires_grad_();
      Tensor w = randn({5, 4}, generator, {.dtype = kFloat64, .requires_grad = true});
      Tensor b = c.bias ? randn({5}, generator, {.dtype = kFloat64, .requires_grad = true}) : Tensor();
      std::vector<Tensor> inputs = {x, w};
      if (c.bias) inputs.push_back(b);
      BOOST_TEST(gradcheck(
          [](const std::vector<Tensor>& in) {
            return F::linear(in[0], in[1], in.size() > 2 ? in[2] : Tensor());
          },
          inputs));
    }
  }
}

BOOST_AUTO_TEST_CASE(linear_records_pytorch_grad_fn_names) {
  const Tensor w = ones({2, 3}, {.requires_grad = true});
  BOOST_TEST(F::linear(ones({4, 3}), w, zeros({2})).grad_fn()->name() == "AddmmBackward0");
  BOOST_TEST(F::linear(ones({4, 3}), w).grad_fn()->name() == "MmBackward0");
  BOOST_TEST(F::linear(ones({4, 3}), ones({2, 3})).grad_fn() == nullptr);  // nothing requires grad
}

BOOST_AUTO_TEST_CASE(linear_layer_init_matches_pytorch_seed_3) {
  const json& data = fixture("nn_init.json")["linear"];
  manual_seed(data["seed"].get<uint64_t>());
  std::vector<nn::Linear> layers;
  layers.reserve(data["layers"].size());
  for (const json& l : data["layers"])
    layers.emplace_back(l["in_features"].get<int64_t>(), l["out_features"].get<int64_t>(),
                        l["bias"].get<bool>());
  const Tensor after = randn({3});  // where the generator was left: every layer drew exactly as PyTorch

  for (size_t i = 0; i < layers.size(); ++i) {
    const json& l = data["layers"][i];
    BOOST_TEST_CONTEXT("layer " << i) {
      BOOST_TEST(layers[i].weight.shape() ==
                 Shape({l["out_features"].get<int64_t>(), l["in_features"].get<int64_t>()}));
      check_close(layers[i].weight, l["weight"], 1e-7, "weight");
      BOOST_TEST(layers[i].bias.defined() == l["bias"].get<bool>());
      if (layers[i].bias.defined()) check_close(layers[i].bias, l["bias_values"], 1e-7, "bias");
    }
  }
  check_close(after, data["randn_after"], 1e-6, "randn after the layers");
}

// Linear and Dropout drew only from the default generator, so two threads training their own
// models raced on it. Given a generator, they draw from it alone, the numbers PyTorch draws
// after manual_seed with the same seed, and the default generator is left where it was.
BOOST_AUTO_TEST_CASE(linear_and_dropout_draw_from_a_generator_of_their_own) {
  const json& data = fixture("nn_init.json")["linear"];
  manual_seed(123);
  const Tensor default_next = randn({4});
  manual_seed(123);
  Generator generator(data["seed"].get<uint64_t>());
  for (size_t i = 0; i < data["layers"].size(); ++i) {
    const json& l = data["layers"][i];
    BOOST_TEST_CONTEXT("layer " << i) {
      nn::Linear layer(l["in_features"].get<int64_t>(), l["out_features"].get<int64_t>(),
                       l["bias"].get<bool>(), generator);
      check_close(layer.weight, l["weight"], 1e-7, "weight");
      if (layer.bias.defined()) check_close(layer.bias, l["bias_values"], 1e-7, "bias");
    }
  }
  check_close(randn({3}, generator), data["randn_after"], 1e-6, "randn after the layers");

  Generator mask_generator(7), reference(7);
  nn::Dropout dropout(0.5, mask_generator);
  const Tensor kept = dropout(ones({64}));
  const Tensor expected = F::dropout(ones({64}), 0.5, true, reference);
  BOOST_TEST(kept.to_vector<float>() == expected.to_vector<float>(), boost::test_tools::per_element());
  BOOST_TEST(randn({4}).to_vector<float>() == default_next.to_vector<float>(),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(threads_building_models_from_their_own_generators_get_the_numbers_of_a_single_thread) {
  // Each thread: Linear(16, 8) and Dropout(0.3) from Generator(seed), one training-mode forward.
  auto run = [](uint64_t seed) {
    Generator generator(seed);
    nn::Linear layer(16, 8, true, generator);
    nn::Dropout dropout(0.3, generator);
    NoGradGuard no_grad;
    return dropout(layer(ones({4, 16}))).to_vector<float>();
  };
  const std::vector<float> alone_1 = run(1), alone_2 = run(2);
  for (int round = 0; round < 20; ++round) {
    std::vector<float> got_1, got_2;
    std::thread first([&] { got_1 = run(1); });
    std::thread second([&] { got_2 = run(2); });
    first.join();
    second.join();
    BOOST_TEST(got_1 == alone_1, boost::test_tools::per_element());
    BOOST_TEST(got_2 == alone_2, boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(linear_layer_maps_the_last_dim_of_1d_2d_3d_inputs) {
  manual_seed(0);
  nn::Linear layer(6, 4);
  const Tensor w_t = layer.weight.detach().t();
  for (const Shape& shape : {Shape{6}, Shape{5, 6}, Shape{2, 3, 6}, Shape{0, 6}}) {
    BOOST_TEST_CONTEXT("input " << shape) {
      const Tensor x = randn(shape);
      const Tensor out = layer(x);
      Shape expected_shape = shape;
      expected_shape.back() = 4;
      BOOST_TEST(out.shape() == expected_shape);
      // The same map written with matmul and a broadcast add.
      const Tensor by_ops = matmul(x, w_t) + layer.bias.detach();
      BOOST_TEST(allclose(out, by_ops, 1e-5, 1e-6));
    }
  }
}

// The lesson's check: one vector entered twice, as the two rows of one batch, gives two
// bit-identical output rows; here as a 2-d [2, 128] batch and as 3-d [2, 1, 128] and [1, 2, 128].
BOOST_AUTO_TEST_CASE(two_copies_of_one_row_give_bit_identical_outputs_in_2d_and_3d_batches) {
  manual_seed(0);
  nn::FeedForward ff;
  const Tensor token = randn({1, 128});
  const Tensor pair = cat({token, token}, 0);
  for (const Shape& shape : {Shape{2, 128}, Shape{2, 1, 128}, Shape{1, 2, 128}}) {
    BOOST_TEST_CONTEXT("batch " << shape) {
      const Tensor out = ff(pair.reshape(shape)).reshape({2, 128});
      BOOST_TEST(equal(out[0], out[1]));
    }
  }
}

// Any position of a large batch: the same numbers go through the same arithmetic, but the BLAS
// computes rows in tiles, and a row on a tile's edge may sum its products in another order, so
// the last bit can differ. PyTorch does the same: with 1.13.1 on OpenBLAS, 136 of 256 copies of
// one row differ from the first in the last bits. So here: equal within float rounding, in a
// 2-d batch and in the course's 3-d (B, T, C) layout, and a different row is clearly different.
BOOST_AUTO_TEST_CASE(the_same_row_anywhere_in_a_large_batch_gives_the_same_output_up_to_rounding) {
  manual_seed(0);
  nn::FeedForward ff;
  const Tensor token = randn({128});
  Tensor x = randn({4, 64, 128});
  float* data = x.data_ptr<float>();
  const float* t = token.data_ptr<float>();
  const std::vector<int64_t> rows = {0, 1 * 64 + 17, 3 * 64 + 63};  // (0, 0), (1, 17), (3, 63)
  for (const int64_t row : rows)
    for (int64_t c = 0; c < 128; ++c) data[row * 128 + c] = t[c];

  const Tensor alone = ff(token);
  for (const Tensor& out : {ff(x).reshape({256, 128}), ff(x.reshape({256, 128}))}) {
    for (const int64_t row : rows) {
      BOOST_TEST_CONTEXT("row " << row << " of " << out.shape()) {
        BOOST_TEST(allclose(out[row], alone, 1e-5, 1e-6));
      }
    }
    BOOST_TEST(!allclose(out[1], alone, 1e-2, 1e-2));
  }
}

BOOST_AUTO_TEST_CASE(bad_inputs_throw_naming_linear_and_the_shapes) {
  struct Case {
    std::string name;
    std::function<void()> call;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"an input of the wrong width",
       [] {
         nn::Linear(128, 512)(zeros({2, 64}));
       },
       {"linear: input has 64 features but the weight expects 128 (input [2, 64], weight [512, 128])"}},
      {"a 1-d input of the wrong width",
       [] { nn::Linear(128, 512)(zeros({64})); },
       {"linear: input has 64 features but the weight expects 128 (input [64], weight [512, 128])"}},
      {"a 0-d input",
       [] {
         F::linear(scalar_tensor(1.0), zeros({2, 1}));
       },
       {"linear:", "0-d"}},
      {"a 1-d weight",
       [] {
         F::linear(zeros({2, 3}), zeros({3}));
       },
       {"linear:", "2-d", "[3]"}},
      {"a bias of the wrong size",
       [] {
         F::linear(zeros({2, 3}), zeros({4, 3}), zeros({3}));
       },
       {"linear: the bias has shape [3] but the weight [4, 3] needs [4]"}},
      {"mixed dtypes",
       [] {
         F::linear(zeros({2, 3}, {.dtype = kFloat64}), zeros({4, 3}));
       },
       {"linear:", "input float64, weight float32"}},
      {"integer tensors",
       [] {
         F::linear(zeros({2, 3}, {.dtype = kInt64}), zeros({4, 3}, {.dtype = kInt64}));
       },
       {"linear:", "float32 or float64", "int64"}},
      {"an undefined input",
       [] {
         F::linear(Tensor(), zeros({4, 3}));
       },
       {"linear:", "undefined"}},
      {"a negative size", [] { nn::Linear(-1, 3); }, {"Linear:", "in_features=-1"}},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.name) { check_throws<std::invalid_argument>(c.call, c.fragments); }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
