// The matrix products inside FeedForward's widening layer, alone, at the course's row counts.
//
// Linear(128, 512) on N rows is one product forward and two backward; each is timed here as a
// plain matmul of contiguous float32 matrices (seed 0), so the figure is the BLAS call plus our
// op's overhead and nothing else. N = 1, 2, 64, 2048 as in bench_feedforward.cpp (the 2048 rows
// of the [32, 64, 128] batch fold into one [2048, 128] matrix, as matmul does itself).
// The counter GFLOP=.../s is 2 * N * 128 * 512 / time, the figure the BLAS back ends are judged by.
#include <benchmark/benchmark.h>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"

using namespace minigrad;

namespace {

void at_course_sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("rows")->Arg(1)->Arg(2)->Arg(64)->Arg(2048);
  b->Repetitions(10)->ReportAggregatesOnly(true)->UseRealTime();
}

// out = a @ b for random a, b of the given shapes; reports GFLOP/s.
void time_matmul(benchmark::State& state, const Shape& a_shape, const Shape& b_shape) {
  manual_seed(0);
  const Tensor a = randn(a_shape);
  const Tensor b = randn(b_shape);

  for (auto _ : state) {
    Tensor out = matmul(a, b);
    benchmark::DoNotOptimize(out.data_ptr<float>());
  }
  const double flops = 2.0 * a_shape[0] * a_shape[1] * b_shape[1];
  // Shown as GFLOP=.../s: the floating-point operations of one call, as a rate over the wall clock.
  state.counters["GFLOP"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// forward: x @ W^T, [N, 128] @ [128, 512]
void matmul_x_wt(benchmark::State& state) { time_matmul(state, {state.range(0), 128}, {128, 512}); }

// backward, gradient of x: grad @ W, [N, 512] @ [512, 128]
void matmul_grad_w(benchmark::State& state) { time_matmul(state, {state.range(0), 512}, {512, 128}); }

// backward, gradient of W: grad^T @ x, [512, N] @ [N, 128]
void matmul_gradt_x(benchmark::State& state) {
  time_matmul(state, {512, state.range(0)}, {state.range(0), 128});
}

}  // namespace

BENCHMARK(matmul_x_wt)->Apply(at_course_sizes);
BENCHMARK(matmul_grad_w)->Apply(at_course_sizes);
BENCHMARK(matmul_gradt_x)->Apply(at_course_sizes);
