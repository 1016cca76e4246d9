// Tests for the learning-rate schedulers against torch.optim.lr_scheduler (PyTorch 1.13).
// Each fixture case gives the lr right after constructing the scheduler and after each of 12
// steps (taken after optimizer.step(), in PyTorch's order); both get_last_lr() and the
// optimizer's lr() must follow it. Then a closed form worked by hand and every bad-input throw.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "optim/optim_fixture.hpp"
#include "optim/scheduler.hpp"

namespace {

using namespace optim_test;

std::unique_ptr<optim::LRScheduler> make_scheduler(const json& c, optim::Optimizer& optimizer) {
  const std::string kind = c["scheduler"];
  const json& args = c["args"];
  if (kind == "StepLR") {
    return std::make_unique<optim::StepLR>(optimizer, args["step_size"].get<int64_t>(),
                                           args.value("gamma", 0.1));
  }
  if (kind == "CosineAnnealingLR") {
    return std::make_unique<optim::CosineAnnealingLR>(optimizer, args["T_max"].get<int64_t>(),
                                                      args.value("eta_min", 0.0));
  }
  if (kind != "LinearLR") throw std::runtime_error("unknown scheduler " + kind + " in optim.json");
  return std::make_unique<optim::LinearLR>(optimizer, args.value("start_factor", 1.0 / 3),
                                           args.value("end_factor", 1.0),
                                           args.value("total_iters", int64_t{5}));
}

// Relative 1e-15: the same double operations in the same order as PyTorch's Python.
void check_lr(double got, double expected, const std::string& what) {
  BOOST_TEST(std::abs(got - expected) <= 1e-15 * std::abs(expected),
             what << ": got " << got << ", PyTorch " << expected);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(schedulers)

BOOST_AUTO_TEST_CASE(lr_sequences_over_twelve_steps_match_pytorch) {
  const std::set<std::string> expected_cases = {
      "step_lr_halves_every_three_steps",   "step_lr_default_gamma", "cosine_annealing_past_t_max",
      "cosine_annealing_default_eta_min",   "linear_lr_defaults",    "linear_lr_decay",
      "linear_lr_to_zero_rounds_below_zero"};
  std::set<std::string> seen;
  for (const json& c : fixture()["schedulers"]) {
    seen.insert(c["name"].get<std::string>());
    BOOST_TEST_CONTEXT(c["name"].get<std::string>()) {
      Tensor p = parameter({2});
      optim::SGD optimizer({p}, {.lr = c["base_lr"].get<double>()});
      auto scheduler = make_scheduler(c, optimizer);
      const std::vector<double> lrs = c["lrs"].get<std::vector<double>>();
      BOOST_TEST(scheduler->last_epoch() == 0);
      for (size_t epoch = 0; epoch < lrs.size(); ++epoch) {
        if (epoch > 0) {
          optimizer.step();  // no gradients: changes nothing, but keeps PyTorch's call order
          scheduler->step();
        }
        BOOST_TEST_REQUIRE(scheduler->get_last_lr().size() == 1u);
        check_lr(scheduler->get_last_lr()[0], lrs[epoch], "epoch " + std::to_string(epoch) + " get_last_lr");
        check_lr(optimizer.lr(), lrs[epoch], "epoch " + std::to_string(epoch) + " optimizer lr");
      }
      BOOST_TEST(scheduler->last_epoch() == static_cast<int64_t>(lrs.size()) - 1);
    }
  }
  BOOST_TEST(seen == expected_cases, boost::test_tools::per_element());
}

// Regression: LinearLR down to end_factor 0 threw at its last epoch ("SGD: lr must be >= 0, got
// -1.85037e-18"), having already counted the epoch, and left the optimizer at the epoch before's
// lr. PyTorch writes the rounded lr as it is (the fixture case above); a checkpoint taken then loads.
BOOST_AUTO_TEST_CASE(an_lr_a_scheduler_rounded_below_zero_is_kept_and_survives_a_checkpoint) {
  Tensor p = parameter({2});
  optim::SGD optimizer({p}, {.lr = 0.1});
  optim::LinearLR scheduler(optimizer, 1.0 / 3, 0.0, 4);
  for (int epoch = 0; epoch < 4; ++epoch) scheduler.step();
  BOOST_TEST(optimizer.lr() < 0);
  BOOST_TEST(optimizer.lr() > -1e-17);
  optim::SGD restored({parameter({2})}, {.lr = 0.1});
  restored.load_state_dict(optimizer.state_dict());
  BOOST_TEST(restored.lr() == optimizer.lr());
}

// Regression: a CosineAnnealingLR built after a LinearLR took the lr LinearLR had already halved as
// its base, so the lr came out 0.0159 where PyTorch has 0.0232 after 5 steps, with peaks of 0.05
// instead of 0.1. PyTorch starts every scheduler from the optimizer's initial_lr.
BOOST_AUTO_TEST_CASE(chained_schedulers_start_from_the_initial_lr_as_pytorch) {
  for (const json& c : fixture()["chained_schedulers"]) {
    BOOST_TEST_CONTEXT(c["name"].get<std::string>()) {
      Tensor p = parameter({1});
      optim::SGD sgd({p}, {.lr = c["base_lr"].get<double>()});
      std::vector<std::unique_ptr<optim::LRScheduler>> schedulers;
      for (const json& s : c["schedulers"]) schedulers.push_back(make_scheduler(s, sgd));
      const std::vector<double> lrs = c["lrs"].get<std::vector<double>>();
      check_lr(sgd.lr(), lrs[0], "after construction");
      for (size_t epoch = 1; epoch < lrs.size(); ++epoch) {
        for (auto& scheduler : schedulers) scheduler->step();
        check_lr(sgd.lr(), lrs[epoch], "epoch " + std::to_string(epoch));
      }
      BOOST_TEST(sgd.initial_lr().value() == c["base_lr"].get<double>());
    }
  }
  BOOST_TEST(fixture()["chained_schedulers"].size() == 1u);
}

BOOST_AUTO_TEST_CASE(cosine_annealing_follows_its_closed_form_within_rounding) {
  // eta_min + (base - eta_min) * (1 + cos(pi t / T_max)) / 2, up to the recursion's rounding.
  Tensor p = parameter({2});
  optim::Adam adam({p}, {.lr = 0.1});
  optim::CosineAnnealingLR cosine(adam, 8, 0.001);
  for (int t = 1; t <= 20; ++t) {
    cosine.step();
    const double closed = 0.001 + (0.1 - 0.001) * (1 + std::cos(std::numbers::pi * t / 8)) / 2;
    BOOST_TEST(std::abs(adam.lr() - closed) < 1e-12, "epoch " << t << ": " << adam.lr() << " vs " << closed);
  }
}

BOOST_AUTO_TEST_CASE(step_lr_and_linear_lr_chain_on_one_optimizer_as_pytorch_chains_them) {
  // Chainable forms multiply the current lr: warm-up factor then decay both apply.
  Tensor p = parameter({2});
  optim::SGD sgd({p}, {.lr = 1.0});
  optim::LinearLR warmup(sgd, 0.5, 1.0, 2);  // lr 0.5 at once
  optim::StepLR decay(sgd, 2, 0.1);          // epoch 0: leaves 0.5
  BOOST_TEST(sgd.lr() == 0.5);
  warmup.step();  // factor 0.5 -> 0.75: lr * 1.5
  decay.step();   // epoch 1: unchanged
  BOOST_TEST(std::abs(sgd.lr() - 0.75) < 1e-15);
  warmup.step();  // factor 0.75 -> 1.0
  decay.step();   // epoch 2: * 0.1
  BOOST_TEST(std::abs(sgd.lr() - 0.1) < 1e-15);
}

BOOST_AUTO_TEST_CASE(cosine_annealing_with_t_max_past_2_to_62_does_not_overflow) {
  // 2 * T_max overflowed int64 (undefined behaviour: the sanitizer build aborted). Python's
  // integers do not overflow; with T_max = INT64_MAX, cos(pi t / T_max) is 1 in a double for these
  // epochs, so PyTorch keeps the lr at 0.1.
  Tensor p = parameter({2});
  optim::SGD sgd({p}, {.lr = 0.1});
  optim::CosineAnnealingLR cosine(sgd, std::numeric_limits<int64_t>::max());
  for (int t = 1; t <= 5; ++t) cosine.step();
  BOOST_TEST(cosine.last_epoch() == 5);
  BOOST_TEST(sgd.lr() == 0.1);
}

BOOST_AUTO_TEST_CASE(bad_arguments_throw_naming_the_scheduler_and_the_value) {
  Tensor p = parameter({2});
  optim::SGD sgd({p}, {.lr = 0.1});
  check_throws([&] { optim::StepLR(sgd, 0); }, "StepLR: step_size must be >= 1, got 0");
  check_throws([&] { optim::StepLR(sgd, 3, -0.5); }, "StepLR: gamma must be >= 0, got -0.5");
  check_throws([&] { optim::CosineAnnealingLR(sgd, 0); }, "CosineAnnealingLR: T_max must be >= 1, got 0");
  check_throws([&] { optim::CosineAnnealingLR(sgd, 10, -0.01); },
               "CosineAnnealingLR: eta_min must be >= 0, got -0.01");
  check_throws([&] { optim::LinearLR(sgd, 0.0); }, "LinearLR: start_factor must be in (0, 1], got 0");
  check_throws([&] { optim::LinearLR(sgd, 1.5); }, "LinearLR: start_factor must be in (0, 1], got 1.5");
  check_throws([&] { optim::LinearLR(sgd, 0.5, 1.2); }, "LinearLR: end_factor must be in [0, 1], got 1.2");
  check_throws([&] { optim::LinearLR(sgd, 0.5, 1.0, 0); }, "LinearLR: total_iters must be >= 1, got 0");
  BOOST_TEST(sgd.lr() == 0.1);  // a rejected scheduler never touched the optimizer
}

BOOST_AUTO_TEST_SUITE_END()
