// The course's GPT at the course's size (examples/gpt.cpp's defaults: batch 32, block 64, n_embd
// 128, 4 heads, 4 layers, tiny Shakespeare), timed as a learner's run spends its time:
//   gpt_train_step/dropout:20 and /dropout:0: get_batch, forward, loss, zero_grad, backward,
//     AdamW step, with dropout 0.2 (the course's) and 0;
//   gpt_forward_no_grad: the forward of one batch in eval mode under no_grad;
//   gpt_generate: 200 new tokens from a one-token context in eval mode;
//   gpt_matmul_floor: the step's matrix products alone on the same shapes, one call after another
//     (the floor any framework on this BLAS meets; our side only, beside the step);
//   gpt_generate_matmul_floor: the same for generate's 200 forward passes.
// The model is the example's own classes, compiled here with the program's main renamed, so the
// figures are those of the program a learner runs. The PyTorch twin (tools/bench/pytorch_bench.py)
// times tools/reference/gpt_reference.py's model on the same workloads.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#define main gpt_example_main  // the example's main is not the benchmark's
#include "examples/gpt.cpp"
#undef main

namespace {

// The example's model and data at the course's size, seeded as the example seeds them.
struct Course {
  Config c;
  data::CharVocab vocab;
  Tensor train_data;

  explicit Course(double dropout)
      : vocab(support::read_course_text(MINIGRAD_DATA_DIR "/tinyshakespeare.txt")) {
    c.dropout = dropout;
    const std::string text = support::read_course_text(MINIGRAD_DATA_DIR "/tinyshakespeare.txt");
    Tensor data = vocab.encode_tensor(text);
    train_data = data.slice(0, 0, static_cast<int64_t>(0.9 * static_cast<double>(data.size(0))));
  }
};

void repeated(benchmark::internal::Benchmark* b) {
  b->Repetitions(10)->ReportAggregatesOnly(true)->UseRealTime();
}

// xb, yb = get_batch('train'); logits, loss = model(xb, yb); optimizer.zero_grad(set_to_none=True);
// loss.backward(); optimizer.step()   (state.range(0): dropout in hundredths)
void gpt_train_step(benchmark::State& state) {
  manual_seed(1337);
  Course course(static_cast<double>(state.range(0)) / 100);
  GPTLanguageModel model(course.c, course.vocab.size());
  optim::AdamW optimizer(model.parameters(), {.lr = course.c.learning_rate});
  for (auto _ : state) {
    auto [xb, yb] = data::get_batch(course.train_data, course.c.batch_size, course.c.block_size);
    auto [logits, loss] = model.forward(xb, yb);
    optimizer.zero_grad(/*set_to_none=*/true);
    loss.backward();
    optimizer.step();
    benchmark::DoNotOptimize(loss.item<float>());
  }
}

// model.eval(); with torch.no_grad(): model(xb)
void gpt_forward_no_grad(benchmark::State& state) {
  manual_seed(1337);
  Course course(0.2);
  GPTLanguageModel model(course.c, course.vocab.size());
  model.eval();
  auto [xb, yb] = data::get_batch(course.train_data, course.c.batch_size, course.c.block_size);
  for (auto _ : state) {
    NoGradGuard no_grad;
    auto [logits, loss] = model.forward(xb);
    benchmark::DoNotOptimize(logits.data_ptr<float>());
  }
}

// model.eval(); model.generate(torch.zeros((1, 1)), 200)
void gpt_generate(benchmark::State& state) {
  manual_seed(1337);
  Course course(0.2);
  GPTLanguageModel model(course.c, course.vocab.size());
  model.eval();
  const Tensor context = zeros({1, 1}, {.dtype = kInt64});
  for (auto _ : state) {
    Tensor out = model.generate(context, 200);
    benchmark::DoNotOptimize(out.data_ptr<int64_t>());
  }
}

// The step's matrix products, forward and backward, as plain matmul calls on their shapes (N = B * T
// = 2048 rows, H = B * n_head = 128 attention matrices): per layer the q, k, v projections of
// the 4 heads (each [N, 128] @ [128, 32], with 2 backward products), q @ k^T and wei @ v
// ([H, 64, 32] @ [H, 32, 64], [H, 64, 64] @ [H, 64, 32], 2 backward products each), the output
// projection [N, 128] @ [128, 128] and the feed-forward's [N, 128] @ [128, 512] and
// [N, 512] @ [512, 128] (2 backward products each); then lm_head [N, 128] @ [128, 65] and its 2.
void gpt_matmul_floor(benchmark::State& state) {
  manual_seed(0);
  struct Product {
    Tensor a, b;
    int count;  // how many times a step does it
  };
  const int64_t N = 2048, H = 128, L = 4;
  auto product = [](Shape a, Shape b, int count) { return Product{randn(a), randn(b), count}; };
  // Each forward [n, k] @ [k, m] comes with grad_a = [n, m] @ [m, k] and grad_b = [k, n] @ [n, m].
  std::vector<Product> products;
  auto linear = [&](int64_t in, int64_t out, int count) {
    products.push_back(product({N, in}, {in, out}, count));
    products.push_back(product({N, out}, {out, in}, count));
    products.push_back(product({in, N}, {N, out}, count));
  };
  auto batched = [&](int64_t n, int64_t k, int64_t m) {
    products.push_back(product({H, n, k}, {H, k, m}, L));
    products.push_back(product({H, n, m}, {H, m, k}, L));
    products.push_back(product({H, k, n}, {H, n, m}, L));
  };
  linear(128, 32, 3 * 4 * L);  // key, query, value of 4 heads per layer
  batched(64, 32, 64);         // q @ k^T
  batched(64, 64, 32);         // wei @ v
  linear(128, 128, L);         // proj
  linear(128, 512, L);         // the feed-forward's widening layer
  linear(512, 128, L);         // and its narrowing one
  linear(128, 65, 1);          // lm_head
  for (auto _ : state) {
    for (const Product& p : products)
      for (int i = 0; i < p.count; ++i) benchmark::DoNotOptimize(matmul(p.a, p.b).data_ptr<float>());
  }
}

// generate's matrix products alone: its 200 forwards run on contexts of T = 1, 2, ..., 64 tokens and
// then 64 again (the crop to block_size), 137 times. Per forward and layer: the q, k, v projections
// of the 4 heads (x @ W^T, [T, 128] by a [32, 128] weight), each head's q @ k^T ([1, T, 32] @
// [1, 32, T]) and wei @ v ([1, T, T] @ [1, T, 32]), proj (a [128, 128] weight), the feed-forward's
// two layers ([512, 128] and [128, 512]); then lm_head ([65, 128]). The layers' products are
// F::linear under no_grad, as generate's Linear layers call it, but without their biases (proj,
// the feed-forward's layers and lm_head copy theirs into the output first): the products alone.
void gpt_generate_matmul_floor(benchmark::State& state) {
  manual_seed(0);
  NoGradGuard no_grad;
  const int64_t block = 64, tokens = 200, L = 4, heads = 4;
  const Tensor w_head = randn({32, 128}), w_proj = randn({128, 128}), w_up = randn({512, 128}),
               w_down = randn({128, 512}), w_lm = randn({65, 128});
  struct Context {
    Tensor x, x_wide, scores, head_out, keys_t;
  };
  std::vector<Context> by_length;  // by_length[T - 1]: the operands for a context of T tokens
  for (int64_t T = 1; T <= block; ++T)
    by_length.push_back(
        {randn({T, 128}), randn({T, 512}), randn({1, T, T}), randn({1, T, 32}), randn({1, 32, T})});
  auto keep = [](const Tensor& t) { benchmark::DoNotOptimize(t.data_ptr<float>()); };
  for (auto _ : state) {
    for (int64_t i = 0; i < tokens; ++i) {
      const Context& c = by_length[static_cast<size_t>(std::min(i + 1, block) - 1)];
      for (int64_t layer = 0; layer < L; ++layer) {
        for (int64_t h = 0; h < 3 * heads; ++h) keep(F::linear(c.x, w_head));
        for (int64_t h = 0; h < heads; ++h) {
          keep(matmul(c.head_out, c.keys_t));
          keep(matmul(c.scores, c.head_out));
        }
        keep(F::linear(c.x, w_proj));
        keep(F::linear(c.x, w_up));
        keep(F::linear(c.x_wide, w_down));
      }
      keep(F::linear(c.x, w_lm));
    }
  }
}

}  // namespace

BENCHMARK(gpt_train_step)
    ->ArgName("dropout")
    ->Arg(20)
    ->Arg(0)
    ->Apply(repeated)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(gpt_forward_no_grad)->Apply(repeated)->Unit(benchmark::kMillisecond);
BENCHMARK(gpt_generate)->Apply(repeated)->Unit(benchmark::kMillisecond);
BENCHMARK(gpt_matmul_floor)->Apply(repeated)->Unit(benchmark::kMillisecond);
BENCHMARK(gpt_generate_matmul_floor)->Apply(repeated)->Unit(benchmark::kMillisecond);
