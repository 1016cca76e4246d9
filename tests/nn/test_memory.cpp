// Memory: training does not leak. Each step builds a graph, backward() runs through it, and once
// the step's tensors go out of scope the whole graph must be freed: nothing (a parameter's .grad,
// an optimizer's state, a node that owns itself) may keep it alive. Two checks: a weak_ptr to an
// intermediate tensor and to the loss's node expire when the step ends, and a 10,000-step loop of
// a small classifier keeps a flat resident set (RSS from /proc/self/statm after step 100 and after
// step 10,000, growth under 1 MiB; a leak of one step's graph would add megabytes).
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <fstream>
#include <memory>
#include <utility>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "nn/activation.hpp"
#include "nn/linear.hpp"
#include "nn/loss.hpp"
#include "nn/sequential.hpp"
#include "optim/adam.hpp"

// AddressSanitizer keeps freed memory in a quarantine (256 MiB by default) to catch use after
// free, so under it the resident set grows by design and only its leak checker can judge leaks.
#if defined(__SANITIZE_ADDRESS__)
#define MINIGRAD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MINIGRAD_ASAN 1
#endif
#endif

namespace {

using namespace minigrad;
namespace F = minigrad::nn::functional;

constexpr int kSteps = 10000;
constexpr int64_t kMaxGrowth = 1 << 20;  // 1 MiB

/// Resident set size in bytes: the second field of /proc/self/statm, counted in pages.
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  BOOST_TEST_REQUIRE(resident > 0, "cannot read /proc/self/statm");
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

/// A small classifier, N = 64 rows of D = 16 features into 4 classes, and its optimizer.
struct Training {
  nn::Sequential model{nn::Linear(16, 32), nn::ReLU(), nn::Linear(32, 4)};
  Tensor x = randn({64, 16});
  Tensor y = randint(0, 4, {64});
  optim::Adam optimizer{model.parameters(), {.lr = 1e-2}};
};

/// What one step leaves behind, to be checked once the step's own handles are gone.
struct StepTrace {
  std::weak_ptr<TensorImpl> hidden;  ///< the ReLU's output, an intermediate of the graph
  std::weak_ptr<Node> loss_node;     ///< the loss's grad_fn, the root of the graph
  double loss = 0;
};

/// zero_grad, forward, cross_entropy, backward, step: the lesson's training step.
StepTrace train_step(Training& t) {
  t.optimizer.zero_grad();
  const Tensor hidden = t.model[1](t.model[0](t.x));
  const Tensor loss = F::cross_entropy(t.model[2](hidden), t.y);
  loss.backward();
  t.optimizer.step();
  return {hidden.impl_ptr(), loss.grad_fn(), loss.item<double>()};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(memory)

BOOST_AUTO_TEST_CASE(the_graph_of_a_training_step_is_freed_when_the_step_ends) {
  manual_seed(0);
  Training t;
  for (int step = 0; step < 3; ++step) {
    const StepTrace trace = train_step(t);
    BOOST_TEST(trace.hidden.expired(), "step " << step << ": the hidden activation outlived its step");
    BOOST_TEST(trace.loss_node.expired(), "step " << step << ": the loss's node outlived its step");
  }
}

BOOST_AUTO_TEST_CASE(a_graph_kept_alive_by_its_loss_is_freed_with_the_loss) {
  manual_seed(0);
  Training t;
  std::weak_ptr<TensorImpl> hidden_impl;
  std::weak_ptr<Node> node;
  {
    const Tensor hidden = t.model[1](t.model[0](t.x));
    Tensor loss = F::cross_entropy(t.model[2](hidden), t.y);
    hidden_impl = hidden.impl_ptr();
    node = loss.grad_fn();
    loss.backward();
    BOOST_TEST(!node.expired());  // the loss still holds its graph, as in PyTorch
  }
  BOOST_TEST(hidden_impl.expired());
  BOOST_TEST(node.expired());
  for (const Tensor& p : t.model.parameters()) BOOST_TEST(p.grad().is_leaf(), "a .grad() is part of a graph");
}

BOOST_AUTO_TEST_CASE(ten_thousand_training_steps_keep_a_flat_resident_set) {
  manual_seed(0);
  Training t;
  int64_t after_100 = 0;
  double first_loss = 0, last_loss = 0;
  for (int step = 1; step <= kSteps; ++step) {
    const StepTrace trace = train_step(t);
    if (step == 1) first_loss = trace.loss;
    if (step == 100) after_100 = resident_bytes();
    last_loss = trace.loss;
  }
  const int64_t after_all = resident_bytes();
  const int64_t growth = after_all - after_100;
  BOOST_TEST_MESSAGE("resident set after step 100: " << after_100 / 1024 << " KiB, after step " << kSteps
                                                     << ": " << after_all / 1024 << " KiB, growth "
                                                     << growth / 1024 << " KiB; loss " << first_loss << " -> "
                                                     << last_loss);
  BOOST_TEST(last_loss < first_loss / 2,
             "the loop did not train: loss " << first_loss << " -> " << last_loss);
#ifdef MINIGRAD_ASAN
  BOOST_TEST_MESSAGE("AddressSanitizer build: the growth bound is checked in the release build only");
#else
  BOOST_TEST(growth < kMaxGrowth,
             "the resident set grew by " << growth << " bytes over " << kSteps - 100 << " steps");
#endif
}

BOOST_AUTO_TEST_SUITE_END()
