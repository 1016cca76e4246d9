// Elementwise ops and reductions on one [N, D] = [2048, 512] float32 tensor: the hidden layer's
// size for the course's batch, where an op is a pass over 4 MiB and memory speed starts to count.
//
// Each workload times one op without autograd (inputs do not require grad), so the figure is our
// loop plus the op's fixed cost (checks, dispatch, allocating the output).
#include <benchmark/benchmark.h>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"

using namespace minigrad;

namespace {

// out = op(a, b) for random a, b of [2048, 512] (seed 0); unary ops ignore b.
template <typename Op>
void time_op(benchmark::State& state, Op op) {
  manual_seed(0);
  const Tensor a = randn({2048, 512});
  const Tensor b = randn({2048, 512});

  for (auto _ : state) {
    Tensor out = op(a, b);
    benchmark::DoNotOptimize(out.data_ptr<float>());
  }
}

// The two names under which the workloads are reported: elementwise/add, reduction/sum, ...
template <typename Op>
void elementwise(benchmark::State& state, Op op) {
  time_op(state, op);
}
template <typename Op>
void reduction(benchmark::State& state, Op op) {
  time_op(state, op);
}

// Ten repetitions (the median is the figure compared), timed by the wall clock.
void repeated(benchmark::internal::Benchmark* b) {
  b->Repetitions(10)->ReportAggregatesOnly(true)->UseRealTime();
}

}  // namespace

BENCHMARK_CAPTURE(elementwise, add, [](const Tensor& a, const Tensor& b) { return a + b; })->Apply(repeated);
BENCHMARK_CAPTURE(elementwise, mul, [](const Tensor& a, const Tensor& b) { return a * b; })->Apply(repeated);
BENCHMARK_CAPTURE(elementwise, relu, [](const Tensor& a, const Tensor&) {
  return a.relu();
})->Apply(repeated);
BENCHMARK_CAPTURE(elementwise, exp, [](const Tensor& a, const Tensor&) { return a.exp(); })->Apply(repeated);
BENCHMARK_CAPTURE(reduction, sum, [](const Tensor& a, const Tensor&) { return a.sum(); })->Apply(repeated);
BENCHMARK_CAPTURE(reduction, sum_dim1, [](const Tensor& a, const Tensor&) {
  return a.sum(1);
})->Apply(repeated);
BENCHMARK_CAPTURE(reduction, softmax_dim_last, [](const Tensor& a, const Tensor&) {
  return a.softmax(-1);
})->Apply(repeated);
