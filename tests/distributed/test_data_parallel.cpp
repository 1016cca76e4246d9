// DistributedDataParallel, run as two ranks (tests/CMakeLists.txt starts them with mpiexec).
//
// The main check: a FeedForward fit on two ranks, each on its contiguous half of every global
// batch, gives the losses and final parameters that one process computes on the whole batches.
// Every rank also runs that one-process fit itself, without any collective, so the reference
// is computed independently of the code under test; the two must agree within float rounding.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "data/dataloader.hpp"
#include "data/datasets.hpp"
#include "distributed/data_parallel.hpp"
#include "distributed/distributed.hpp"
#include "nn/feedforward.hpp"
#include "nn/linear.hpp"
#include "nn/loss.hpp"
#include "optim/adam.hpp"
#include "optim/sgd.hpp"
#include "support.hpp"
#include "tests/distributed/process_group_fixture.hpp"

using namespace minigrad;
namespace dist = minigrad::distributed;

BOOST_TEST_GLOBAL_FIXTURE(ProcessGroupFixture);

namespace {

using minigrad_test::contains;

// A small teacher-student fit (FeedForward(16), 64 examples of [4, 16], global batches of 8
// drawn by a shuffling DataLoader): the losses of `steps` steps of SGD with momentum or AdamW, and
// the final parameters. SGD's step is proportional to the gradient, so it shows a gradient summed
// instead of averaged; AdamW's hardly changes when the gradient is scaled.
// With `ddp` options each rank trains on its share of each global batch through the wrapper and
// the loss is the average of the ranks' losses; without, this rank trains alone on whole batches.
struct Fit {
  std::vector<double> losses;
  std::vector<std::vector<float>> parameters;
};

Fit fit(bool adamw, const dist::DistributedDataParallelOptions* ddp_options, int64_t steps = 12) {
  manual_seed(3);
  nn::FeedForward teacher(16);
  manual_seed(4 + (ddp_options ? dist::get_rank() : 0));  // the wrapper must undo rank 1's other start
  nn::FeedForward student(16);
  Generator generator(5);  // the same global batches on every rank
  auto [x, y] = data::teacher_student([&](const Tensor& v) { return teacher(v); }, {64, 4, 16}, generator);
  data::DataLoader loader(data::TensorDataset(x, y), {.batch_size = 8, .shuffle = true}, generator);

  std::unique_ptr<dist::DistributedDataParallel> ddp;
  if (ddp_options) ddp = std::make_unique<dist::DistributedDataParallel>(student, *ddp_options);
  std::unique_ptr<optim::Optimizer> optimizer;
  if (adamw)
    optimizer = std::make_unique<optim::AdamW>(student.parameters(), optim::AdamWOptions{.lr = 0.01});
  else
    optimizer =
        std::make_unique<optim::SGD>(student.parameters(), optim::SGDOptions{.lr = 0.1, .momentum = 0.9});
  Fit result;
  while (static_cast<int64_t>(result.losses.size()) < steps) {
    for (const auto& batch : loader) {
      Tensor input = ddp ? dist::shard_batch(batch[0]) : batch[0];
      Tensor target = ddp ? dist::shard_batch(batch[1]) : batch[1];
      Tensor loss = nn::functional::mse_loss(ddp ? (*ddp)(input) : student(input), target);
      optimizer->zero_grad();
      loss.backward();
      optimizer->step();
      Tensor reported = loss.detach().to(kFloat64);
      if (ddp) {
        dist::all_reduce(reported);
        reported = reported / static_cast<double>(dist::get_world_size());
      }
      result.losses.push_back(reported.item<double>());
      if (static_cast<int64_t>(result.losses.size()) == steps) break;
    }
  }
  for (const Tensor& p : student.parameters()) result.parameters.push_back(p.to_vector<float>());
  return result;
}

// Largest relative difference of the losses, and largest absolute difference of the parameters.
std::pair<double, double> largest_differences(const Fit& got, const Fit& want) {
  double loss = 0, parameter = 0;
  for (size_t i = 0; i < want.losses.size(); ++i)
    loss = std::max(loss, std::abs(got.losses.at(i) / want.losses[i] - 1));
  for (size_t p = 0; p < want.parameters.size(); ++p)
    for (size_t i = 0; i < want.parameters[p].size(); ++i)
      parameter = std::max(parameter,
                           static_cast<double>(std::abs(got.parameters.at(p).at(i) - want.parameters[p][i])));
  return {loss, parameter};
}

// A module with a layer its forward never calls: its parameters never get a gradient.
struct HalfUsed : nn::Module {
  nn::Linear& used;
  nn::Linear& unused;
  HalfUsed()
      : used(register_module("used", nn::Linear(2, 2))),
        unused(register_module("unused", nn::Linear(2, 2))) {}
  Tensor forward(const Tensor& x) override { return used(x); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(data_parallel)

BOOST_AUTO_TEST_CASE(two_ranks_on_half_batches_give_the_one_process_losses_and_parameters) {
  // Options: PyTorch's buckets (one here), one bucket per parameter with overlap, and without.
  const std::vector<dist::DistributedDataParallelOptions> cases = {
      {}, {.bucket_cap_mb = 0.001, .overlap = true}, {.bucket_cap_mb = 0.001, .overlap = false}};
  for (bool adamw : {false, true}) {
    const Fit want = fit(adamw, nullptr);
    BOOST_TEST(want.losses.back() < 0.5 * want.losses.front(), "the fit must really train");
    for (const dist::DistributedDataParallelOptions& options : cases) {
      const auto [loss, parameter] = largest_differences(fit(adamw, &options), want);
      BOOST_TEST_CONTEXT((adamw ? "AdamW" : "SGD")
                         << ", bucket_cap_mb " << options.bucket_cap_mb << ", overlap " << options.overlap) {
        BOOST_TEST_MESSAGE("losses differ by up to " << loss << " relative, parameters by up to "
                                                     << parameter);
        // Float rounding: the halves' means and their average round differently from the whole
        // batch's mean, by about 1e-7 relative per step (measured: 6e-8 at most for the losses, 5e-8 for the
        // parameters), and 12 steps carry it on.
        BOOST_TEST(loss < 1e-6);
        BOOST_TEST(parameter < 1e-6);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(the_wrapper_starts_every_rank_from_rank_0s_parameters) {
  manual_seed(10);
  nn::FeedForward reference(8);  // what rank 0 draws
  manual_seed(10 + dist::get_rank());
  nn::FeedForward model(8);
  dist::DistributedDataParallel ddp(model);
  const auto want = reference.parameters();
  const auto got = model.parameters();
  for (size_t i = 0; i < want.size(); ++i) BOOST_TEST(got[i].equal(want[i]));
}

BOOST_AUTO_TEST_CASE(stats_count_the_gradient_bytes_and_buckets) {
  // FeedForward(16): 16*64 + 64 + 64*16 + 16 = 2,128 float32 parameters = 8,512 bytes. Taken in
  // reverse order with a 4 KiB cap: net.2.bias (64 B), net.2.weight (4,096 B), net.0.bias (256 B),
  // net.0.weight (4,096 B); no two neighbours fit in 4 KiB together, so four buckets.
  nn::FeedForward model(16);
  dist::DistributedDataParallel ddp(model, {.bucket_cap_mb = 4.0 / 1024});
  Tensor loss = ddp(randn({2, 16})).sum();
  loss.backward();
  const auto stats = ddp.stats();
  BOOST_TEST(stats.bytes_per_backward == 8512);
  BOOST_TEST(stats.buckets == 4);
  BOOST_TEST(stats.backwards == 1);
}

BOOST_AUTO_TEST_CASE(check_parameters_agree_passes_for_equal_copies_and_names_a_divergence) {
  manual_seed(20);
  nn::FeedForward model(8);
  dist::DistributedDataParallel ddp(model);
  BOOST_CHECK_NO_THROW(ddp.check_parameters_agree());
  if (dist::get_rank() == 1) {
    NoGradGuard no_grad;
    model.net[2].named_parameters()[1].second.data_ptr<float>()[3] += 0.5f;  // net.2.bias[3]
  }
  BOOST_CHECK_EXCEPTION(ddp.check_parameters_agree(), std::runtime_error, [](const std::exception& e) {
    return contains(e.what(),
                    "net.2.bias on rank(s) 1 differs from rank 0's by up to 0.5 (1 of 4 parameters");
  });
}

BOOST_AUTO_TEST_CASE(a_parameter_without_gradient_stops_the_next_forward_with_a_clear_error) {
  HalfUsed model;
  dist::DistributedDataParallel ddp(model);
  ddp(ones({1, 2})).sum().backward();
  BOOST_CHECK_EXCEPTION(ddp(ones({1, 2})), std::runtime_error, [](const std::exception& e) {
    return contains(e.what(), "the previous backward gave gradients to 2 of 4 parameters");
  });
  // Called directly, the module runs, and the next backward stops at the first repeated gradient.
  BOOST_CHECK_EXCEPTION(
      model(ones({1, 2})).sum().backward(), std::runtime_error, [](const std::exception& e) {
        return contains(e.what(),
                        "got a gradient again, but the previous backward gave gradients to only 2 of 4");
      });
}

BOOST_AUTO_TEST_SUITE_END()
