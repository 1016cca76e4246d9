// Tests for optim::SGD, Adam and AdamW against numbers from real PyTorch 1.13.
// The fixture tests/fixtures/optim.json comes from tools/reference/optim_reference.py: each case
// gives initial parameters, the gradient of every step (or null: no gradient that step) and the
// parameters PyTorch had after each step. Here each case replays those steps and compares:
// float64 within 1e-12 relative, float32 within a few float32 roundings (see optim_fixture.hpp).
// Further cases check a step worked by hand, zero_grad, the default options, and every bad-input
// throw with its message. state_dict has its own file, test_state_dict.cpp.
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/ops.hpp"
#include "nn/linear.hpp"
#include "optim/optim_fixture.hpp"

namespace {

using namespace optim_test;

// Replays a case step by step, comparing every parameter after every step with PyTorch's.
void check_optimizer_case(const std::string& name) {
  const json& c = find_case("optimizers", name);
  std::vector<Tensor> params = make_params(c);
  auto optimizer = make_optimizer(c, params);
  for (size_t step = 0; step < c["grads"].size(); ++step) {
    replay(c, params, *optimizer, step, step + 1);
    for (size_t i = 0; i < params.size(); ++i) {
      check_close(params[i], c["expected"][step][i],
                  "step " + std::to_string(step + 1) + ", parameter " + std::to_string(i));
    }
  }
}

// All steps of a case on fresh parameters; returns the parameters at the end.
std::vector<Tensor> run_case(const json& c) {
  std::vector<Tensor> params = make_params(c);
  auto optimizer = make_optimizer(c, params);
  replay(c, params, *optimizer, 0, c["grads"].size());
  return params;
}

// The names of the fixture cases that have a test below, filled before main() runs.
std::set<std::string>& covered_cases() {
  static std::set<std::string> names;
  return names;
}

}  // namespace

// One test per fixture case, named after it; each name is also listed for the coverage test.
#define PYTORCH_CASE(name)                                             \
  const bool name##_is_covered = covered_cases().insert(#name).second; \
  BOOST_AUTO_TEST_CASE(name) { check_optimizer_case(#name); }

BOOST_AUTO_TEST_SUITE(optimizers)

BOOST_AUTO_TEST_CASE(every_fixture_case_is_checked_by_a_test) {
  for (const json& c : fixture()["optimizers"]) {
    BOOST_TEST(covered_cases().contains(c["name"].get<std::string>()), c["name"] << " has no test");
  }
}

PYTORCH_CASE(sgd_plain_steps_against_the_gradient)
PYTORCH_CASE(sgd_momentum_first_step_uses_the_gradient_as_buffer)
PYTORCH_CASE(sgd_momentum_with_dampening_over_three_steps)
PYTORCH_CASE(sgd_nesterov_over_three_steps)
PYTORCH_CASE(sgd_weight_decay_with_momentum)
PYTORCH_CASE(sgd_nesterov_in_float64)
PYTORCH_CASE(sgd_momentum_skips_missing_grads)
PYTORCH_CASE(adam_bias_correction_over_three_steps_with_two_parameters)
PYTORCH_CASE(adam_on_a_larger_tensor)
PYTORCH_CASE(adam_in_float64)
PYTORCH_CASE(adam_amsgrad_keeps_the_largest_second_moment)
PYTORCH_CASE(adam_amsgrad_in_float64)
PYTORCH_CASE(adam_l2_weight_decay)
PYTORCH_CASE(adamw_decoupled_weight_decay)
PYTORCH_CASE(adamw_decoupled_weight_decay_in_float64)
PYTORCH_CASE(adamw_amsgrad)
PYTORCH_CASE(adam_counts_steps_per_parameter_and_skips_missing_grads)

BOOST_AUTO_TEST_CASE(sgd_momentum_first_step_equals_plain_sgd_worked_by_hand) {
  // b_1 = g, so the first step is param - lr * g whatever the momentum and dampening.
  Tensor p = minigrad::tensor({1.0, -2.0}, {.dtype = minigrad::kFloat64, .requires_grad = true});
  optim::SGD sgd({p}, {.lr = 0.5, .momentum = 0.9, .dampening = 0.3});
  p.set_grad(minigrad::tensor({0.25, 4.0}, {.dtype = minigrad::kFloat64}));
  sgd.step();
  BOOST_TEST(p.to_vector<double>() == (std::vector<double>{1.0 - 0.5 * 0.25, -2.0 - 0.5 * 4.0}),
             boost::test_tools::per_element());
  // Second step: b_2 = 0.9 * 0.25 + 0.7 * 0.25 = 0.4, param = 0.875 - 0.5 * 0.4 = 0.675.
  p.set_grad(minigrad::tensor({0.25, 0.0}, {.dtype = minigrad::kFloat64}));
  sgd.step();
  BOOST_TEST(std::abs(p.at({0}) - 0.675) < 1e-15);
}

BOOST_AUTO_TEST_CASE(adam_l2_decay_and_adamw_decoupled_decay_give_different_parameters) {
  // Same initial parameters, gradients, lr and weight decay in both fixture cases.
  const json& adam = find_case("optimizers", "adam_l2_weight_decay");
  const json& adamw = find_case("optimizers", "adamw_decoupled_weight_decay");
  BOOST_TEST_REQUIRE(adam["initial"] == adamw["initial"]);
  BOOST_TEST_REQUIRE(adam["grads"] == adamw["grads"]);
  const std::vector<Tensor> with_l2 = run_case(adam), decoupled = run_case(adamw);
  double largest_difference = 0;
  for (size_t i = 0; i < with_l2.size(); ++i) {
    const std::vector<double> a = with_l2[i].to_vector<double>(), b = decoupled[i].to_vector<double>();
    for (size_t k = 0; k < a.size(); ++k)
      largest_difference = std::max(largest_difference, std::abs(a[k] - b[k]));
  }
  BOOST_TEST(largest_difference > 1e-4);  // far above float32 rounding: the rules really differ
}

BOOST_AUTO_TEST_CASE(option_defaults_match_pytorch) {
  const json& defaults = fixture()["defaults"];
  const optim::SGDOptions sgd;
  BOOST_TEST(std::isnan(sgd.lr));  // required: PyTorch's SGD has no default lr
  BOOST_TEST(sgd.momentum == defaults["SGD"]["momentum"].get<double>());
  BOOST_TEST(sgd.dampening == defaults["SGD"]["dampening"].get<double>());
  BOOST_TEST(sgd.weight_decay == defaults["SGD"]["weight_decay"].get<double>());
  BOOST_TEST(sgd.nesterov == defaults["SGD"]["nesterov"].get<bool>());
  const optim::AdamOptions adam;
  const optim::AdamWOptions adamw;
  for (const auto& [name, lr, betas, eps, weight_decay, amsgrad] :
       {std::tuple{"Adam", adam.lr, adam.betas, adam.eps, adam.weight_decay, adam.amsgrad},
        std::tuple{"AdamW", adamw.lr, adamw.betas, adamw.eps, adamw.weight_decay, adamw.amsgrad}}) {
    const json& d = defaults[name];
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST(lr == d["lr"].get<double>());
      BOOST_TEST(betas.first == d["betas"][0].get<double>());
      BOOST_TEST(betas.second == d["betas"][1].get<double>());
      BOOST_TEST(eps == d["eps"].get<double>());
      BOOST_TEST(weight_decay == d["weight_decay"].get<double>());
      BOOST_TEST(amsgrad == d["amsgrad"].get<bool>());
    }
  }
}

BOOST_AUTO_TEST_CASE(step_runs_updates_under_no_grad_and_skips_parameters_without_a_gradient) {
  // An optimizer that only records what step() hands to update().
  struct Recorder : optim::Optimizer {
    explicit Recorder(std::vector<Tensor> params) : Optimizer(std::move(params), 0.1, "Recorder") {}
    void update(Tensor& param, const Tensor& grad, optim::ParamState&) override {
      grad_mode.push_back(minigrad::is_grad_enabled());
      updated.push_back(param.impl());
      grad_dtypes.push_back(grad.dtype());
    }
    std::map<std::string, Tensor> hyperparameters() const override { return {}; }
    std::vector<std::string> state_names() const override { return {}; }
    std::vector<bool> grad_mode;
    std::vector<minigrad::TensorImpl*> updated;
    std::vector<Dtype> grad_dtypes;
  };
  Tensor a = parameter({2}), b = parameter({3}), c = parameter({1});
  a.set_grad(minigrad::ones({2}));
  c.set_grad(minigrad::ones({1}));
  Recorder recorder({a, b, c});
  recorder.step();
  BOOST_TEST(minigrad::is_grad_enabled());  // restored afterwards
  BOOST_TEST(recorder.grad_mode == (std::vector<bool>{false, false}), boost::test_tools::per_element());
  BOOST_TEST_REQUIRE(recorder.updated.size() == 2u);
  BOOST_TEST((recorder.updated[0] == a.impl() && recorder.updated[1] == c.impl()));
  BOOST_TEST((recorder.grad_dtypes[0] == minigrad::kFloat32));
}

// Regression: a frozen parameter (requires_grad false) was refused, which broke fine-tuning with
// optim::SGD(model.parameters(), ...). PyTorch accepts it and its step leaves it alone.
BOOST_AUTO_TEST_CASE(a_frozen_parameter_is_accepted_and_left_unchanged) {
  Tensor weight = minigrad::tensor({1.0, 2.0}).requires_grad_();
  Tensor frozen = minigrad::tensor({3.0});  // requires_grad false, as after bias.requires_grad_(false)
  optim::SGD sgd({weight, frozen}, {.lr = 0.5});
  minigrad::mul(weight, frozen).sum().backward();  // d/dweight = frozen = [3, 3]
  sgd.step();
  BOOST_TEST(weight.to_vector<float>() == std::vector<float>({-0.5f, 0.5f}),
             boost::test_tools::per_element());
  BOOST_TEST(frozen.to_vector<float>() == std::vector<float>({3.0f}), boost::test_tools::per_element());
  BOOST_TEST(!frozen.grad().defined());
}

// Regression: a step did not count as an in-place change, so a second backward through the old
// graph (retain_graph) used the new weights: w.grad came out [0, 0, 0] instead of PyTorch's error
// "... is at version 1; expected version 0".
BOOST_AUTO_TEST_CASE(a_step_counts_as_an_in_place_change_of_each_updated_parameter) {
  Tensor w = minigrad::tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor loss = minigrad::mul(w, w).sum();
  loss.backward({}, /*retain_graph=*/true);
  optim::SGD sgd({w}, {.lr = 0.5});
  sgd.step();
  BOOST_TEST(w.version() == 1);
  sgd.zero_grad();
  BOOST_CHECK_THROW(loss.backward(), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(zero_grad_with_set_to_none_leaves_the_grads_undefined) {
  Tensor a = parameter({2}), b = parameter({3});
  a.set_grad(minigrad::ones({2}));
  optim::SGD sgd({a, b}, {.lr = 0.1});
  sgd.zero_grad(/*set_to_none=*/true);
  BOOST_TEST(!a.grad().defined());
  BOOST_TEST(!b.grad().defined());
}

BOOST_AUTO_TEST_CASE(zero_grad_without_set_to_none_fills_the_same_grad_tensor_with_zeros) {
  Tensor a = parameter({3}), b = parameter({2});
  a.set_grad(minigrad::full({3}, 2.5));
  const Tensor old_grad = a.grad();
  optim::Adam adam({a, b});
  adam.zero_grad();                                // set_to_none = false by default, as in PyTorch 1.13
  BOOST_TEST(a.grad().impl() == old_grad.impl());  // in place, as PyTorch's zero_()
  BOOST_TEST(old_grad.to_vector<double>() == (std::vector<double>{0, 0, 0}),
             boost::test_tools::per_element());
  BOOST_TEST(!b.grad().defined());  // an undefined grad stays undefined
}

BOOST_AUTO_TEST_CASE(set_lr_changes_the_lr_and_rejects_a_negative_one) {
  Tensor p = parameter({2});
  optim::AdamW adamw({p}, {.lr = 3e-4, .weight_decay = 0.01});
  BOOST_TEST(adamw.lr() == 3e-4);
  adamw.set_lr(0.05);
  BOOST_TEST(adamw.lr() == 0.05);
  check_throws([&] { adamw.set_lr(-0.5); }, "AdamW: lr must be >= 0, got -0.5");
  BOOST_TEST(adamw.lr() == 0.05);
}

BOOST_AUTO_TEST_CASE(bad_options_throw_naming_the_optimizer_and_the_value) {
  Tensor p = parameter({2});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    std::function<void()> make;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[&] { optim::SGD({p}, {}); },
       "SGD: lr must be a number >= 0, got nan (set it in the options: {.lr = 0.1})"},
      {[&] { optim::SGD({p}, {.lr = -0.1}); }, "SGD: lr must be >= 0, got -0.1"},
      {[&] { optim::SGD({p}, {.lr = 0.1, .momentum = -0.9}); }, "SGD: momentum must be >= 0, got -0.9"},
      {[&] { optim::SGD({p}, {.lr = 0.1, .weight_decay = -1}); }, "SGD: weight_decay must be >= 0, got -1"},
      {[&] { optim::SGD({p}, {.lr = 0.1, .nesterov = true}); },
       "SGD: nesterov momentum requires momentum > 0 and dampening 0, got momentum 0 and dampening 0"},
      {[&] { optim::SGD({p}, {.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .nesterov = true}); },
       "SGD: nesterov momentum requires momentum > 0 and dampening 0, got momentum 0.9 and dampening 0.1"},
      {[&] { optim::Adam({p}, {.lr = -1e-3}); }, "Adam: lr must be >= 0, got -0.001"},
      {[&] { optim::Adam({p}, {.lr = nan}); },
       "Adam: lr must be a number >= 0, got nan (set it in the options: {.lr = 0.1})"},
      {[&] { optim::Adam({p}, {.eps = -1e-8}); }, "Adam: eps must be >= 0, got -1e-08"},
      {[&] {
         optim::Adam({p}, {.betas = {1.0, 0.999}});
       },
       "Adam: beta1 must be in [0, 1), got 1"},
      {[&] {
         optim::Adam({p}, {.betas = {-0.1, 0.999}});
       },
       "Adam: beta1 must be in [0, 1), got -0.1"},
      {[&] {
         optim::Adam({p}, {.betas = {0.9, 1.5}});
       },
       "Adam: beta2 must be in [0, 1), got 1.5"},
      {[&] {
         optim::Adam({p}, {.betas = {0.9, nan}});
       },
       "Adam: beta2 must be in [0, 1), got nan"},
      {[&] { optim::Adam({p}, {.weight_decay = -0.01}); }, "Adam: weight_decay must be >= 0, got -0.01"},
      {[&] { optim::AdamW({p}, {.lr = -3e-4}); }, "AdamW: lr must be >= 0, got -0.0003"},
      {[&] {
         optim::AdamW({p}, {.betas = {0.9, 1.0}});
       },
       "AdamW: beta2 must be in [0, 1), got 1"},
      {[&] { optim::AdamW({p}, {.eps = -1}); }, "AdamW: eps must be >= 0, got -1"},
      {[&] { optim::AdamW({p}, {.weight_decay = -0.01}); }, "AdamW: weight_decay must be >= 0, got -0.01"},
  };
  for (const Case& c : cases) BOOST_TEST_CONTEXT(c.message) {
      check_throws(c.make, c.message);
    }
}

// Regression: after Module::to(kFloat64) the state of the earlier float32 steps no longer fits, and
// a step threw "data_ptr: the tensor's dtype is float32, not float64", naming neither the optimizer
// nor the parameter.
BOOST_AUTO_TEST_CASE(a_step_after_the_parameters_changed_dtype_names_the_optimizer_and_the_state) {
  const auto one_step = [](minigrad::nn::Linear& layer, optim::Optimizer& optimizer, minigrad::Dtype dtype) {
    optimizer.zero_grad();
    layer(minigrad::ones({1, 2}, {.dtype = dtype})).sum().backward();
    optimizer.step();
  };
  minigrad::nn::Linear sgd_layer(2, 2), adam_layer(2, 2);
  optim::SGD sgd(sgd_layer.parameters(), {.lr = 0.1, .momentum = 0.9});
  optim::Adam adam(adam_layer.parameters());
  one_step(sgd_layer, sgd, minigrad::kFloat32);
  one_step(adam_layer, adam, minigrad::kFloat32);
  sgd_layer.to(minigrad::kFloat64);
  adam_layer.to(minigrad::kFloat64);
  check_throws([&] { one_step(sgd_layer, sgd, minigrad::kFloat64); },
               "SGD: the momentum_buffer state of parameter 0 (shape [2, 2]) is float32 but the parameter is "
               "now float64; convert the model (Module::to) before making its optimizer");
  check_throws([&] { one_step(adam_layer, adam, minigrad::kFloat64); },
               "Adam: the exp_avg state of parameter 0 (shape [2, 2]) is float32 but the parameter is now "
               "float64; convert the model (Module::to) before making its optimizer");
  // The check comes before any update: a refused step leaves every parameter as it was, also one
  // whose own state fits (here the weight, which had no gradient, and so no state, before).
  minigrad::nn::Linear layer(2, 2);
  optim::Adam partial(layer.parameters());
  layer(minigrad::ones({1, 2})).sum().backward();
  layer.weight.set_grad(Tensor());  // only the bias steps, and gets state
  partial.step();
  layer.to(minigrad::kFloat64);
  const std::vector<double> weight_before = layer.weight.to_vector<double>();
  BOOST_CHECK_THROW(one_step(layer, partial, minigrad::kFloat64), std::invalid_argument);
  BOOST_TEST(layer.weight.to_vector<double>() == weight_before, boost::test_tools::per_element());
  // An optimizer made after the conversion steps as usual.
  optim::Adam fresh(adam_layer.parameters());
  BOOST_CHECK_NO_THROW(one_step(adam_layer, fresh, minigrad::kFloat64));
}

BOOST_AUTO_TEST_CASE(bad_parameters_throw_naming_the_optimizer_and_the_parameter) {
  Tensor p = parameter({2, 3});
  Tensor labels = minigrad::zeros({3}, {.dtype = minigrad::kInt64});
  Tensor other = parameter({4});
  Tensor computed = p.clone();
  struct Case {
    std::vector<Tensor> params;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{}, "got an empty parameter list (pass model.parameters())"},
      {{p, Tensor()}, "parameter 1 is undefined"},
      {{labels}, "parameter 0 (shape [3]) is int64; only float32 and float64 tensors can be optimized"},
      {{computed},
       "parameter 0 (shape [2, 3]) is not a leaf (it was computed by CloneBackward0); optimize the tensors "
       "it was "
       "computed from"},
      {{p, other, p}, "parameter 2 is the same tensor as parameter 0; pass each parameter once"},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.message) {
      check_throws([&] { optim::SGD(c.params, {.lr = 0.1}); }, "SGD: " + c.message);
      check_throws([&] { optim::Adam(c.params); }, "Adam: " + c.message);
      check_throws([&] { optim::AdamW(c.params); }, "AdamW: " + c.message);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
