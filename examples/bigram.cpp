// bigram: the course's first language model, bigram.py of the "Let's build GPT" lecture, in C++.
//
// Each character predicts the next one from a table alone: row c of an embedding table
// [vocab, vocab] holds the scores (logits) of every character that may follow c. Trained on tiny
// Shakespeare (assets/tinyshakespeare.txt) with AdamW, it prints the same ten evaluation lines
// and the same 500 generated characters as bigram.py for the same seed (our random numbers are
// PyTorch's). Read it beside the script: the order of the lines is the script's.
//
// Shape letters: B batch, T block size (time), C vocabulary size (channels). Run `bigram --help`.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "autograd/machinery/parallel.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "data/text.hpp"
#include "examples/support/cli.hpp"
#include "examples/support/run_state.hpp"
#include "nn/embedding.hpp"
#include "nn/functional.hpp"
#include "nn/loss.hpp"
#include "optim/adam.hpp"

using namespace minigrad;
using namespace minigrad::indexing;  // Slice, None: idx[:, -1, :] is idx.index({Slice(), -1, Slice()})
namespace F = minigrad::nn::functional;
using support::at_least;  // the checks of the flags
using support::positive;

class BigramLanguageModel : public nn::Module {
 public:
  explicit BigramLanguageModel(int64_t vocab_size)
      // each token reads the logits for the next token off a lookup table
      : token_embedding_table(
            register_module("token_embedding_table", nn::Embedding(vocab_size, vocab_size))) {}

  // idx and targets are both (B, T) tensors of integers; targets may be undefined (None).
  std::pair<Tensor, Tensor> forward(const Tensor& idx, const Tensor& targets = Tensor()) {
    Tensor logits = token_embedding_table(idx);  // (B, T, C)
    if (!targets.defined()) return {logits, Tensor()};
    const int64_t B = logits.size(0), T = logits.size(1), C = logits.size(2);
    Tensor loss = F::cross_entropy(logits.view({B * T, C}), targets.view({B * T}));
    return {logits, loss};
  }

  // idx is (B, T) array of indices in the current context; appends max_new_tokens sampled ones.
  Tensor generate(Tensor idx, int64_t max_new_tokens) {
    for (int64_t i = 0; i < max_new_tokens; ++i) {
      auto [logits, loss] = forward(idx);                       // get the predictions
      logits = logits.index({Slice(), -1, Slice()});            // focus only on the last time step: (B, C)
      Tensor probs = F::softmax(logits, -1);                    // apply softmax to get probabilities
      Tensor idx_next = multinomial(probs, /*num_samples=*/1);  // sample from the distribution: (B, 1)
      idx = cat({idx, idx_next}, 1);                            // append sampled index: (B, T+1)
    }
    return idx;
  }

  nn::Embedding& token_embedding_table;
};

int main(int argc, char** argv) try {
  // hyperparameters (bigram.py's), each a flag of the same name: --batch-size 64
  int64_t batch_size = 32;  // how many independent sequences will we process in parallel?
  int64_t block_size = 8;   // what is the maximum context length for predictions?
  int64_t max_iters = 3000;
  int64_t eval_interval = 300;
  double learning_rate = 1e-2;
  int64_t eval_iters = 200;
  uint64_t seed = 1337;
  int64_t max_new_tokens = 500;
  int threads = 0;
  std::string input = MINIGRAD_DATA_DIR "/tinyshakespeare.txt";
  CLI::App app{"bigram: the course's bigram language model on tiny Shakespeare (bigram.py in C++)"};
  // As argparse: a flag given twice takes its last value; --help shows the defaults.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)->always_capture_default();
  app.add_option("--batch-size", batch_size, "sequences per batch")->check(at_least(1));
  app.add_option("--block-size", block_size, "tokens per sequence")->check(at_least(1));
  app.add_option("--max-iters", max_iters, "training steps")->check(at_least(0));
  app.add_option("--eval-interval", eval_interval, "steps between evaluations")->check(at_least(1));
  app.add_option("--learning-rate", learning_rate, "AdamW's lr")->check(positive);
  app.add_option("--eval-iters", eval_iters, "batches per evaluation")->check(at_least(1));
  app.add_option("--seed", seed, "torch.manual_seed");
  app.add_option("--max-new-tokens", max_new_tokens, "characters generated at the end")->check(at_least(0));
  app.add_option("--threads", threads, "threads, as torch.set_num_threads (0: OMP_NUM_THREADS or the cores)")
      ->check(at_least(0));
  app.add_option("--input", input, "the text to learn");
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) set_num_threads(threads);  // our loops' threads, matrix products included

  manual_seed(seed);

  // The text, its characters and their indices: chars = sorted(list(set(text))), encode, decode.
  const std::string text = support::read_course_text(input);
  data::CharVocab vocab(text);
  const int64_t vocab_size = vocab.size();

  // Train and test splits: the first 90% trains, the rest is for validation.
  Tensor data = vocab.encode_tensor(text);
  const auto n = static_cast<int64_t>(0.9 * static_cast<double>(data.size(0)));
  Tensor train_data = data.slice(0, 0, n);
  Tensor val_data = data.slice(0, n, data.size(0));
  support::check_block_size(block_size, val_data.size(0));

  // data loading: a small batch of inputs x and targets y, (B, T) each, at random positions
  auto get_batch = [&](const std::string& split) {
    return data::get_batch(split == "train" ? train_data : val_data, batch_size, block_size);
  };

  BigramLanguageModel model(vocab_size);

  // @torch.no_grad(): the mean loss over eval_iters batches of each split, in eval mode
  auto estimate_loss = [&]() {
    NoGradGuard no_grad;
    std::map<std::string, float> out;
    model.eval();
    for (const std::string split : {"train", "val"}) {
      Tensor losses = zeros({eval_iters});  // torch.zeros(eval_iters)
      for (int64_t k = 0; k < eval_iters; ++k) {
        auto [X, Y] = get_batch(split);
        auto [logits, loss] = model.forward(X, Y);
        losses.index_put_({k}, loss.item<float>());  // losses[k] = loss.item()
      }
      out[split] = losses.mean().item<float>();
    }
    model.train();
    return out;
  };

  // create a PyTorch optimizer
  optim::AdamW optimizer(model.parameters(), {.lr = learning_rate});

  for (int64_t iter = 0; iter < max_iters; ++iter) {
    // every once in a while evaluate the loss on train and val sets
    if (iter % eval_interval == 0) {
      std::map<std::string, float> losses = estimate_loss();
      std::printf("step %lld: train loss %.4f, val loss %.4f\n", static_cast<long long>(iter),
                  losses["train"], losses["val"]);
    }

    // sample a batch of data
    auto [xb, yb] = get_batch("train");

    // evaluate the loss
    auto [logits, loss] = model.forward(xb, yb);
    optimizer.zero_grad(/*set_to_none=*/true);
    loss.backward();
    optimizer.step();
  }

  // generate from the model, starting from one token 0 (a newline)
  Tensor context = zeros({1, 1}, {.dtype = kInt64});
  std::printf("%s\n", vocab.decode(model.generate(context, max_new_tokens)[0]).c_str());
  return 0;
} catch (const std::exception& error) {
  std::fprintf(stderr, "bigram: %s\n", error.what());
  return 1;
}
