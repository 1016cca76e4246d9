// The GPT's own ops at the course's size (batch B 32, block T 64, n_embd 128, 4 heads of 32):
// Dropout's masks, the attention's batched products, its causal softmax and LayerNorm, each timed
// alone.
//
// Shapes: the feed-forward's hidden activations [B, T, 512]; the attention weights of all heads
// [B, 4, T, T], seen as H = B * 4 = 128 matrices [T, T] = [64, 64]; queries, keys and values
// [H, T, 32]. Every workload is float32 from seed 0, and its PyTorch twin
// (tools/bench/pytorch_bench.py) has the same name. "_backward" workloads time the forward and
// the backward of one op, with a fixed upstream gradient.
#include <benchmark/benchmark.h>

#include <limits>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "nn/functional.hpp"

using namespace minigrad;

namespace {

constexpr int64_t kHeads = 32 * 4;  // B * n_head matrices in every batched product

void repeated(benchmark::internal::Benchmark* b) {
  b->Repetitions(10)->ReportAggregatesOnly(true)->UseRealTime();
}

// F.dropout(x, 0.2, training=True) on x of `shape`: 2 words of the generator per element.
void time_dropout(benchmark::State& state, const Shape& shape) {
  manual_seed(0);
  const Tensor x = randn(shape);
  for (auto _ : state) {
    Tensor out = nn::functional::dropout(x, 0.2, true);
    benchmark::DoNotOptimize(out.data_ptr<float>());
  }
  state.counters["elements"] = static_cast<double>(x.numel());
}

// out = F.dropout(x, 0.2); out.backward(g): the mask drawn, applied, and applied to the gradient.
void time_dropout_backward(benchmark::State& state, const Shape& shape) {
  manual_seed(0);
  Tensor x = randn(shape).requires_grad_();
  const Tensor g = randn(shape);
  for (auto _ : state) {
    x.set_grad(Tensor());
    nn::functional::dropout(x, 0.2, true).backward(g);
  }
}

void gpt_dropout_hidden(benchmark::State& state) { time_dropout(state, {32, 64, 512}); }
void gpt_dropout_attention(benchmark::State& state) { time_dropout(state, {32, 4, 64, 64}); }
void gpt_dropout_attention_backward(benchmark::State& state) {
  time_dropout_backward(state, {32, 4, 64, 64});
}

// out = a @ b for a [H, n, k] and b [H, k, m], optionally with out.backward(g); GFLOP/s of the forward.
void time_bmm(benchmark::State& state, int64_t n, int64_t k, int64_t m, bool backward) {
  manual_seed(0);
  Tensor a = randn({kHeads, n, k}).requires_grad_(backward);
  Tensor b = randn({kHeads, k, m}).requires_grad_(backward);
  const Tensor g = randn({kHeads, n, m});
  for (auto _ : state) {
    Tensor out = matmul(a, b);
    if (backward) {
      a.set_grad(Tensor());
      b.set_grad(Tensor());
      out.backward(g);
    }
    benchmark::DoNotOptimize(out.data_ptr<float>());
  }
  const double flops = (backward ? 6.0 : 2.0) * kHeads * n * k * m;
  state.counters["GFLOP"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// The attention scores q @ k^T: [H, 64, 32] @ [H, 32, 64]; then weights @ values: [H, 64, 64] @ [H, 64, 32].
void gpt_bmm_scores(benchmark::State& state) { time_bmm(state, 64, 32, 64, false); }
void gpt_bmm_scores_backward(benchmark::State& state) { time_bmm(state, 64, 32, 64, true); }
void gpt_bmm_values(benchmark::State& state) { time_bmm(state, 64, 64, 32, false); }
void gpt_bmm_values_backward(benchmark::State& state) { time_bmm(state, 64, 64, 32, true); }

// wei.masked_fill(tril == 0, -inf).softmax(-1) on wei [H, 64, 64] (the future j > i masked),
// optionally with its backward.
void time_causal_softmax(benchmark::State& state, bool backward) {
  manual_seed(0);
  Tensor wei = randn({kHeads, 64, 64}).requires_grad_(backward);
  const Tensor future = arange(64).view({1, 64}) > arange(64).view({64, 1});  // tril == 0: j > i
  const Tensor g = randn({kHeads, 64, 64});
  for (auto _ : state) {
    Tensor out = wei.masked_fill(future, -std::numeric_limits<double>::infinity()).softmax(-1);
    if (backward) {
      wei.set_grad(Tensor());
      out.backward(g);
    }
    benchmark::DoNotOptimize(out.data_ptr<float>());
  }
}

void gpt_softmax_causal(benchmark::State& state) { time_causal_softmax(state, false); }
void gpt_softmax_causal_backward(benchmark::State& state) { time_causal_softmax(state, true); }

// F.layer_norm(x, [128], w, b) on x [B, T, 128], optionally with its backward into x, w and b.
void time_layer_norm(benchmark::State& state, bool backward) {
  manual_seed(0);
  Tensor x = randn({32, 64, 128}).requires_grad_(backward);
  Tensor w = (randn({128}) * 0.1 + 1).requires_grad_(backward);
  Tensor b = (randn({128}) * 0.1).requires_grad_(backward);
  const Tensor g = randn({32, 64, 128});
  for (auto _ : state) {
    Tensor out = nn::functional::layer_norm(x, {128}, w, b);
    if (backward) {
      for (Tensor* t : {&x, &w, &b}) t->set_grad(Tensor());
      out.backward(g);
    }
    benchmark::DoNotOptimize(out.data_ptr<float>());
  }
}

void gpt_layer_norm(benchmark::State& state) { time_layer_norm(state, false); }
void gpt_layer_norm_backward(benchmark::State& state) { time_layer_norm(state, true); }

}  // namespace

BENCHMARK(gpt_dropout_hidden)->Apply(repeated);
BENCHMARK(gpt_dropout_attention)->Apply(repeated);
BENCHMARK(gpt_dropout_attention_backward)->Apply(repeated);
BENCHMARK(gpt_bmm_scores)->Apply(repeated);
BENCHMARK(gpt_bmm_scores_backward)->Apply(repeated);
BENCHMARK(gpt_bmm_values)->Apply(repeated);
BENCHMARK(gpt_bmm_values_backward)->Apply(repeated);
BENCHMARK(gpt_softmax_causal)->Apply(repeated);
BENCHMARK(gpt_softmax_causal_backward)->Apply(repeated);
BENCHMARK(gpt_layer_norm)->Apply(repeated);
BENCHMARK(gpt_layer_norm_backward)->Apply(repeated);
