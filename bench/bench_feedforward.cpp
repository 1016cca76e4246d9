// The lesson's FeedForward block timed as a learner runs it; the numbers compared with PyTorch.
//
// Three workloads: forward under no_grad (inference), forward + backward, and a whole training
// step (zero_grad, forward, mse_loss, backward, AdamW step). The input holds N rows of width
// C = 128: N = 1 and 2 are the lesson's tokens, 64 one block, and 2048 the course's batch, fed
// as [B, T, C] = [32, 64, 128]. tools/bench/pytorch_bench.py runs the same lines in PyTorch
// (same seed, float32), and tools/bench/compare.py prints the two medians side by side.
#include <benchmark/benchmark.h>

#include <vector>

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

// The sum of count floats (count a multiple of 64) through 64 running sums (eight 8-wide vectors),
// which keep the adds independent, so the loop waits on memory rather than on the previous add. Compiled
// twice, and the loader picks the AVX2 copy where the CPU has it: 32-byte loads, as the BLAS's kernels use.
__attribute__((target_clones("avx2", "default"))) float streamed_sum(const float* w, int64_t count) {
  float partial[64] = {};
  for (int64_t i = 0; i < count; i += 64)
    for (int q = 0; q < 64; ++q) partial[q] += w[i + q];
  float total = 0;
  for (float p : partial) total += p;
  return total;
}

// Not a PyTorch workload: the FeedForward's two weight matrices (2 x [512, 128] floats, 512 KiB)
// read once. A 1- or 2-row forward uses every weight once, so on one core it cannot take less
// than this; tools/bench/compare.py prints it beside the 1-row target.
void ff_weights_read(benchmark::State& state) {
  manual_seed(0);
  nn::FeedForward ff;
  std::vector<Tensor> weights;
  for (const auto& [name, parameter] : ff.named_parameters())
    if (parameter.dim() == 2) weights.push_back(parameter);

  for (auto _ : state) {
    float total = 0;
    for (const Tensor& weight : weights) total += streamed_sum(weight.data_ptr<float>(), weight.numel());
    benchmark::DoNotOptimize(total);
  }
}

}  // namespace

BENCHMARK(ff_weights_read)->Repetitions(10)->ReportAggregatesOnly(true)->UseRealTime();
BENCHMARK(ff_forward_no_grad)->Apply(at_course_sizes);
BENCHMARK(ff_forward_backward)->Apply(at_course_sizes);
BENCHMARK(ff_train_step)->Apply(at_course_sizes);
