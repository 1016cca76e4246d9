// The lesson's FeedForward block timed as a learner runs it; the numbers compared with PyTorch.
//
// Three workloads: forward under no_grad (inference), forward + backward, and a whole training
// step (zero_grad, forward, mse_loss, backward, AdamW step). The input holds N rows of width
// C = 128: N = 1 and 2 are the lesson's tokens, 64 one block, and 2048 the course's batch, fed
// as [B, T, C] = [32, 64, 128]. tools/bench/pytorch_bench.py runs the same lines in PyTorch
// (same seed, float32), and tools/bench/compare.py prints the two medians side by side.
#include <benchmark/benchmark.h>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "nn/feedforward.hpp"
#include "nn/loss.hpp"
#include "optim/adam.hpp"

using namespace minigrad;
namespace F = minigrad::nn::functional;

namespace {

// N rows of the course's width C = 128; the 2048-row case is the batch [B, T, C] = [32, 64, 128].
Shape input_shape(int64_t rows) {
  if (rows == 2048) return {32, 64, 128};
  return {rows, 128};
}

// Every workload at N = 1, 2, 64 and 2048, ten repetitions (the median is the figure compared),
// timed by the wall clock: the BLAS may run on more threads than this one.
void at_course_sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("rows")->Arg(1)->Arg(2)->Arg(64)->Arg(2048);
  b->Repetitions(10)->ReportAggregatesOnly(true)->UseRealTime();
}

// with torch.no_grad(): out = ff(x)
void ff_forward_no_grad(benchmark::State& state) {
  manual_seed(0);
  nn::FeedForward ff;
  const Tensor x = randn(input_shape(state.range(0)));

  for (auto _ : state) {
    NoGradGuard no_grad;
    Tensor out = ff(x);
    benchmark::DoNotOptimize(out.data_ptr<float>());
  }
}

// ff.zero_grad(set_to_none=True); ff(x).sum().backward()
void ff_forward_backward(benchmark::State& state) {
  manual_seed(0);
  nn::FeedForward ff;
  const Tensor x = randn(input_shape(state.range(0)));

  for (auto _ : state) {
    ff.zero_grad(/*set_to_none=*/true);
    Tensor out = ff(x);
    out.sum().backward();
  }
}

// optimizer.zero_grad(set_to_none=True); loss = F.mse_loss(ff(x), y); loss.backward(); optimizer.step()
void ff_train_step(benchmark::State& state) {
  manual_seed(0);
  nn::FeedForward ff;
  const Tensor x = randn(input_shape(state.range(0)));
  const Tensor y = randn(input_shape(state.range(0)));
  optim::AdamW optimizer(ff.parameters());  // lr 1e-3, weight_decay 1e-2: PyTorch's defaults

  for (auto _ : state) {
    optimizer.zero_grad(/*set_to_none=*/true);
    Tensor loss = F::mse_loss(ff(x), y);
    loss.backward();
    optimizer.step();
  }
}

}  // namespace

BENCHMARK(ff_forward_no_grad)->Apply(at_course_sizes);
BENCHMARK(ff_forward_backward)->Apply(at_course_sizes);
BENCHMARK(ff_train_step)->Apply(at_course_sizes);
