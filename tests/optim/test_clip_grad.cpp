// Tests for nn::utils::clip_grad_norm_ and clip_grad_value_ against torch.nn.utils' (PyTorch 1.13).
// Each fixture case gives the gradients (or null: that parameter has none) and max_norm and the
// norm type, or clip_value; PyTorch's returned total norm and the clipped gradients are compared,
// then a few cases worked by hand and every bad-input throw.
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "optim/clip_grad.hpp"
#include "optim/optim_fixture.hpp"

namespace {

using namespace optim_test;
using minigrad::nn::utils::clip_grad_norm_;
using minigrad::nn::utils::clip_grad_value_;

// Zero parameters of the case's shapes and dtype, holding its gradients (null: none).
std::vector<Tensor> zero_params_with_grads(const json& c) {
  std::vector<Tensor> params;
  for (const json& shape : c["shapes"])
    params.push_back(
        minigrad::zeros(shape.get<Shape>(), {.dtype = dtype_named(c["dtype"]), .requires_grad = true}));
  set_grads(params, c["grads"]);
  return params;
}

double norm_type_of(const json& c) {
  if (c["norm_type"] == "inf") return std::numeric_limits<double>::infinity();
  return c["norm_type"].get<double>();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(clip_grad)

BOOST_AUTO_TEST_CASE(total_norm_and_clipped_gradients_match_pytorch) {
  std::set<std::string> expected_cases = {"clip_scales_gradients_whose_norm_exceeds_max_norm",
                                          "clip_leaves_gradients_below_max_norm",
                                          "clip_with_the_one_norm_in_float64",
                                          "clip_with_the_infinity_norm",
                                          "clip_with_the_three_norm_skips_a_missing_grad",
                                          "clip_in_float32_a_gradient_norm_past_the_float_range_is_inf",
                                          "clip_in_float32_finite_gradient_norms_whose_norm_overflows",
                                          "clip_in_float64_the_same_gradients_keep_a_finite_norm"};
  std::set<std::string> seen;
  for (const json& c : fixture()["clip_grad_norm"]) {
    seen.insert(c["name"].get<std::string>());
    BOOST_TEST_CONTEXT(c["name"].get<std::string>()) {
      const Dtype dtype = dtype_named(c["dtype"]);
      const std::vector<Tensor> params = zero_params_with_grads(c);

      const double total_norm = clip_grad_norm_(params, c["max_norm"].get<double>(), norm_type_of(c));
      if (c["total_norm"] == "inf")
        BOOST_TEST(total_norm == std::numeric_limits<double>::infinity());
      else
        check_close({total_norm}, dtype, json::array({c["total_norm"]}), "total norm");
      for (size_t i = 0; i < params.size(); ++i) {
        if (c["clipped"][i].is_null()) {
          BOOST_TEST(!params[i].grad().defined());
        } else {
          check_close(params[i].grad(), c["clipped"][i], "gradient " + std::to_string(i));
        }
      }
    }
  }
  BOOST_TEST(seen == expected_cases, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_three_four_gradient_is_scaled_to_length_one) {
  // |(3, 4)| = 5; clip_coef = 1 / (5 + 1e-6), so the gradient becomes (0.6, 0.8) up to 1e-6.
  // PyTorch computes max_norm / t as t.reciprocal() * max_norm, then multiplies each gradient by it.
  Tensor p = minigrad::zeros({2}, {.dtype = minigrad::kFloat64, .requires_grad = true});
  p.set_grad(minigrad::tensor({3.0, 4.0}, {.dtype = minigrad::kFloat64}));
  BOOST_TEST(clip_grad_norm_({p}, 1.0) == 5.0);
  const double clip_coef = (1.0 / (5.0 + 1e-6)) * 1.0;
  BOOST_TEST(p.grad().at({0}) == 3.0 * clip_coef);
  BOOST_TEST(p.grad().at({1}) == 4.0 * clip_coef);
}

// Regression: under the infinity norm a nan was replaced by the next larger |g|, so the norm came out
// 3 and the gradients were scaled as if finite. PyTorch's infinity norm of a set holding nan is nan,
// and every gradient is then multiplied by a nan coefficient.
BOOST_AUTO_TEST_CASE(a_nan_gradient_makes_the_infinity_norm_nan) {
  Tensor a = minigrad::zeros({2}, {.requires_grad = true}), b = minigrad::zeros({1}, {.requires_grad = true});
  a.set_grad(minigrad::tensor({std::nan(""), 3.0}));
  b.set_grad(minigrad::tensor({2.0}));
  BOOST_TEST(std::isnan(clip_grad_norm_({a, b}, 1.0, INFINITY)));
  for (const Tensor& p : {a, b})
    for (float g : p.grad().to_vector<float>()) BOOST_TEST(std::isnan(g));
}

// Regression: the norm was summed in double whatever the dtype, so float32 gradients of 1e30 gave
// a finite norm of 1.4e30 and were scaled to 0.707 each, where PyTorch's float32 norm is inf and
// multiplies them by 0 (the fixture cases above hold PyTorch's numbers for such gradients).
// error_if_nonfinite turns that into an error and leaves the gradients alone, as in PyTorch.
BOOST_AUTO_TEST_CASE(error_if_nonfinite_refuses_an_infinite_norm_and_leaves_the_gradients) {
  Tensor p = minigrad::zeros({2}, {.requires_grad = true});
  p.set_grad(minigrad::tensor({1e30, 1e30}));
  const std::string expected =
      "clip_grad_norm_: the total norm of order 2 for gradients from `parameters` is non-finite, so it "
      "cannot be "
      "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
      "error_if_nonfinite = false";
  BOOST_CHECK_EXCEPTION(clip_grad_norm_({p}, 1.0, 2.0, /*error_if_nonfinite=*/true), std::runtime_error,
                        [&](const std::runtime_error& e) { return std::string(e.what()) == expected; });
  BOOST_TEST(p.grad().to_vector<float>() == (std::vector<float>{1e30f, 1e30f}),
             boost::test_tools::per_element());
  BOOST_TEST(clip_grad_norm_({p}, 1.0) == std::numeric_limits<double>::infinity());
  BOOST_TEST(p.grad().to_vector<float>() == (std::vector<float>{0.0f, 0.0f}),
             boost::test_tools::per_element());
}

// Regression, from a review: the float32 norm was a double sum cut off at FLT_MAX, and its squares
// were taken in double. A float32 sum rounds to the nearest float, so a sum of squares just past
// FLT_MAX (2^128 - 2^105 plus 3e31 here) still rounds to FLT_MAX: PyTorch gives the norm
// 1.8446742974197924e19 = 2^64 - 2^40 and scales the gradient to [1, 2.99e-4]. And 1e-23
// squared is below float32's smallest subnormal (1.4e-45): PyTorch's norm is 0 and nothing is
// scaled (PyTorch 1.13 printed these values).
BOOST_AUTO_TEST_CASE(float32_norms_round_and_underflow_as_float32_squares_do) {
  Tensor p = minigrad::zeros({2}, {.requires_grad = true});
  p.set_grad(minigrad::tensor({1.8446742974197924e19, 5515760210280448.0}));
  BOOST_TEST(clip_grad_norm_({p}, 1.0) == std::ldexp(1.0, 64) - std::ldexp(1.0, 40));
  const std::vector<float> scaled = p.grad().to_vector<float>();
  BOOST_TEST(scaled[0] == 1.0f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(scaled[1] == 0.0002990099892485887f, boost::test_tools::tolerance(1e-6f));

  Tensor q = minigrad::zeros({100}, {.requires_grad = true});
  q.set_grad(minigrad::full({100}, 1e-23));
  BOOST_TEST(clip_grad_norm_({q}, 1.0) == 0.0);
  BOOST_TEST(q.grad().to_vector<float>()[0] == 1e-23f);
}

BOOST_AUTO_TEST_CASE(no_gradient_at_all_gives_a_total_norm_of_zero) {
  Tensor p = minigrad::zeros({2}, {.requires_grad = true});
  BOOST_TEST(clip_grad_norm_({p}, 1.0) == 0.0);
  BOOST_TEST(clip_grad_norm_({}, 1.0) == 0.0);
  BOOST_TEST(!p.grad().defined());
}

BOOST_AUTO_TEST_CASE(bad_arguments_throw_naming_clip_grad_norm_and_the_value) {
  Tensor p = minigrad::zeros({2}, {.requires_grad = true});
  p.set_grad(minigrad::ones({2}));
  check_throws([&] { clip_grad_norm_({p}, -1.0); }, "clip_grad_norm_: max_norm must be >= 0, got -1");
  check_throws([&] { clip_grad_norm_({p}, std::numeric_limits<double>::quiet_NaN()); },
               "clip_grad_norm_: max_norm must be >= 0, got nan");
  check_throws([&] { clip_grad_norm_({p}, 1.0, 0.0); },
               "clip_grad_norm_: norm_type must be > 0 (or infinity), got 0");
  check_throws([&] { clip_grad_norm_({p}, 1.0, -2.0); },
               "clip_grad_norm_: norm_type must be > 0 (or infinity), got -2");
  check_throws([&] { clip_grad_norm_({p, Tensor()}, 1.0); }, "clip_grad_norm_: parameter 1 is undefined");
  BOOST_TEST(p.grad().to_vector<double>() == (std::vector<double>{1, 1}), boost::test_tools::per_element());
}

// A clamped element is either itself or the bound rounded to the dtype: equal to PyTorch's exactly.
BOOST_AUTO_TEST_CASE(clip_grad_value_matches_pytorch) {
  std::set<std::string> expected_cases = {
      "clip_value_caps_both_signs",      "clip_value_rounds_the_bound_to_float32",
      "clip_value_in_float64",           "clip_value_above_every_gradient_changes_nothing",
      "clip_value_skips_a_missing_grad", "clip_value_negative_sets_every_element_to_it"};
  std::set<std::string> seen;
  for (const json& c : fixture()["clip_grad_value"]) {
    seen.insert(c["name"].get<std::string>());
    BOOST_TEST_CONTEXT(c["name"].get<std::string>()) {
      const Dtype dtype = dtype_named(c["dtype"]);
      const std::vector<Tensor> params = zero_params_with_grads(c);
      clip_grad_value_(params, c["clip_value"].get<double>());
      for (size_t i = 0; i < params.size(); ++i) {
        if (c["clipped"][i].is_null()) {
          BOOST_TEST(!params[i].grad().defined());
        } else {
          BOOST_TEST(params[i].grad().dtype() == dtype);
          BOOST_TEST(params[i].grad().to_vector<double>() == c["clipped"][i].get<std::vector<double>>(),
                     boost::test_tools::per_element());
        }
      }
    }
  }
  BOOST_TEST(seen == expected_cases, boost::test_tools::per_element());
}

// torch.clamp keeps a nan element nan and turns every element into nan for a nan bound (PyTorch
// 1.13: clip_grad_value_ of [-3, 0.5, nan, 2] by 1 gives [-1, 0.5, nan, 1], by nan all nan); the
// gradient is changed in place, so a handle taken before sees the clipped values.
BOOST_AUTO_TEST_CASE(clip_grad_value_keeps_nan_and_changes_the_gradient_in_place) {
  Tensor p = minigrad::zeros({4}, {.requires_grad = true});
  p.set_grad(minigrad::tensor({-3.0, 0.5, std::nan(""), 2.0}));
  const Tensor handle = p.grad();
  clip_grad_value_({p}, 1.0);
  const std::vector<float> clipped = handle.to_vector<float>();
  BOOST_TEST(clipped[0] == -1.0f);
  BOOST_TEST(clipped[1] == 0.5f);
  BOOST_TEST(std::isnan(clipped[2]));
  BOOST_TEST(clipped[3] == 1.0f);

  clip_grad_value_({p}, std::numeric_limits<double>::quiet_NaN());
  for (float g : p.grad().to_vector<float>()) BOOST_TEST(std::isnan(g));
}

BOOST_AUTO_TEST_CASE(clip_grad_value_skips_parameters_without_a_gradient_and_refuses_undefined_ones) {
  Tensor p = minigrad::zeros({2}, {.requires_grad = true});
  clip_grad_value_({p}, 1.0);
  BOOST_TEST(!p.grad().defined());
  clip_grad_value_({}, 1.0);
  p.set_grad(minigrad::full({2}, 5.0));
  check_throws([&] { clip_grad_value_({p, Tensor()}, 1.0); }, "clip_grad_value_: parameter 1 is undefined");
  BOOST_TEST(p.grad().to_vector<double>() == (std::vector<double>{5, 5}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
