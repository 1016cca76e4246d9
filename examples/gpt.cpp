// gpt: the course's last program, gpt.py of the "Let's build GPT" lecture, in C++.
//
// A character-level GPT learns tiny Shakespeare (assets/tinyshakespeare.txt): token and position
// embeddings, n_layer blocks of multi-head causal self-attention and the lesson's feed-forward
// network, each behind a LayerNorm and a residual connection, then a final LayerNorm and a linear
// head scoring the next character. At the course's size (the defaults) it prints the numbers
// gpt.py prints for the same seed: 0.816705 M parameters, the same evaluation lines, the same
// text. Read it beside the script: the classes, the loop and its order are the script's.
// Beyond the script: a progress line, a checkpoint at every evaluation (--resume goes on from it
// exactly), the loss curve as a picture and the generated text in a file.
//
// Shape letters: B batch, T time (block_size), C channels (n_embd), hs head size. `gpt --help`.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "autograd/machinery/parallel.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "data/text.hpp"
#include "distributed/data_parallel.hpp"
#include "examples/support/cli.hpp"
#include "examples/support/progress.hpp"
#include "examples/support/run_state.hpp"
#include "nn/activation.hpp"
#include "nn/dropout.hpp"
#include "nn/embedding.hpp"
#include "nn/functional.hpp"
#include "nn/init.hpp"
#include "nn/layer_norm.hpp"
#include "nn/linear.hpp"
#include "nn/loss.hpp"
#include "nn/module_list.hpp"
#include "nn/sequential.hpp"
#include "optim/adam.hpp"

using namespace minigrad;
using namespace minigrad::indexing;  // Slice, None: tril[:T, :T] is tril.index({Slice(None, T), Slice(None,
                                     // T)})
namespace F = minigrad::nn::functional;
namespace dist = minigrad::distributed;
using support::at_least;  // the checks of the flags
using support::positive;

// hyperparameters: the course's size, each a flag of the same name (--n-embd 64)
struct Config {
  int64_t batch_size = 32;  // how many independent sequences will we process in parallel?
  int64_t block_size = 64;  // what is the maximum context length for predictions?
  int64_t max_iters = 5000;
  int64_t eval_interval = 500;
  double learning_rate = 3e-4;
  int64_t eval_iters = 200;
  int64_t n_embd = 128;
  int64_t n_head = 4;
  int64_t n_layer = 4;
  double dropout = 0.2;
};

/// one head of self-attention
class Head : public nn::Module {
 public:
  Head(const Config& c, int64_t head_size)
      : key(register_module("key", nn::Linear(c.n_embd, head_size, /*bias=*/false))),
        query(register_module("query", nn::Linear(c.n_embd, head_size, /*bias=*/false))),
        value(register_module("value", nn::Linear(c.n_embd, head_size, /*bias=*/false))),
        tril(register_buffer("tril", minigrad::tril(ones({c.block_size, c.block_size})))),
        dropout(register_module("dropout", nn::Dropout(c.dropout))) {}

  // input (B, T, C), output (B, T, hs)
  Tensor forward(const Tensor& x) override {
    const int64_t T = x.size(1);
    Tensor k = key(x);    // (B, T, hs)
    Tensor q = query(x);  // (B, T, hs)
    // compute attention scores ("affinities"): (B, T, hs) @ (B, hs, T) -> (B, T, T)
    Tensor wei = q.matmul(k.transpose(-2, -1)) * std::pow(static_cast<double>(k.size(-1)), -0.5);
    wei = wei.masked_fill(tril.index({Slice(None, T), Slice(None, T)}) == 0, -INFINITY);  // (B, T, T)
    wei = F::softmax(wei, -1);                                                            // (B, T, T)
    wei = dropout(wei);
    // perform the weighted aggregation of the values
    Tensor v = value(x);   // (B, T, hs)
    return wei.matmul(v);  // (B, T, T) @ (B, T, hs) -> (B, T, hs)
  }

  nn::Linear& key;
  nn::Linear& query;
  nn::Linear& value;
  Tensor tril;  // the lower triangle of ones, (block_size, block_size): a buffer, not trained
  nn::Dropout& dropout;
};

/// multiple heads of self-attention in parallel
class MultiHeadAttention : public nn::Module {
 public:
  MultiHeadAttention(const Config& c, int64_t num_heads, int64_t head_size)
      : heads(register_module("heads", make_heads(c, num_heads, head_size))),
        proj(register_module("proj", nn::Linear(head_size * num_heads, c.n_embd))),
        dropout(register_module("dropout", nn::Dropout(c.dropout))) {}

  // nn.ModuleList([Head(head_size) for _ in range(num_heads)])
  static nn::ModuleList make_heads(const Config& c, int64_t num_heads, int64_t head_size) {
    nn::ModuleList list;
    for (int64_t h = 0; h < num_heads; ++h) list.append(Head(c, head_size));
    return list;
  }

  Tensor forward(const Tensor& x) override {
    std::vector<Tensor> outs;
    for (nn::Module& h : heads) outs.push_back(h(x));
    Tensor out = cat(outs, -1);  // (B, T, num_heads * hs)
    return dropout(proj(out));
  }

  nn::ModuleList& heads;
  nn::Linear& proj;
  nn::Dropout& dropout;
};

/// a simple linear layer followed by a non-linearity: the lesson's FeedForward, plus Dropout
class FeedForward : public nn::Module {
 public:
  FeedForward(const Config& c)
      : net(register_module("net",
                            nn::Sequential{nn::Linear(c.n_embd, 4 * c.n_embd), nn::ReLU(),
                                           nn::Linear(4 * c.n_embd, c.n_embd), nn::Dropout(c.dropout)})) {}

  Tensor forward(const Tensor& x) override { return net(x); }

  nn::Sequential& net;
};

/// Transformer block: communication followed by computation
class Block : public nn::Module {
 public:
  // n_embd: embedding dimension, n_head: the number of heads we'd like
  explicit Block(const Config& c)
      : sa(register_module("sa", MultiHeadAttention(c, c.n_head, c.n_embd / c.n_head))),
        ffwd(register_module("ffwd", FeedForward(c))),
        ln1(register_module("ln1", nn::LayerNorm(c.n_embd))),
        ln2(register_module("ln2", nn::LayerNorm(c.n_embd))) {}

  Tensor forward(const Tensor& input) override {
    Tensor x = input + sa(ln1(input));
    x = x + ffwd(ln2(x));
    return x;
  }

  MultiHeadAttention& sa;
  FeedForward& ffwd;
  nn::LayerNorm& ln1;
  nn::LayerNorm& ln2;
};

class GPTLanguageModel : public nn::Module {
 public:
  GPTLanguageModel(const Config& c, int64_t vocab_size)
      : block_size(c.block_size),
        // each token directly reads off the logits for the next token from a lookup table
        token_embedding_table(register_module("token_embedding_table", nn::Embedding(vocab_size, c.n_embd))),
        position_embedding_table(
            register_module("position_embedding_table", nn::Embedding(c.block_size, c.n_embd))),
        blocks(register_module("blocks", make_blocks(c))),
        ln_f(register_module("ln_f", nn::LayerNorm(c.n_embd))),  // final layer norm
        lm_head(register_module("lm_head", nn::Linear(c.n_embd, vocab_size))) {
    // better init, not covered in the original GPT video, but important
    apply(init_weights);
  }

  // nn.Sequential(*[Block(n_embd, n_head=n_head) for _ in range(n_layer)])
  static nn::Sequential make_blocks(const Config& c) {
    nn::Sequential blocks;
    for (int64_t i = 0; i < c.n_layer; ++i) blocks.push_back(Block(c));
    return blocks;
  }

  static void init_weights(nn::Module& module) {
    if (auto* linear = module.as<nn::Linear>()) {
      nn::init::normal_(linear->weight, 0.0, 0.02);
      if (linear->bias.defined()) nn::init::zeros_(linear->bias);
    } else if (auto* embedding = module.as<nn::Embedding>()) {
      nn::init::normal_(embedding->weight, 0.0, 0.02);
    }
  }

  // idx and targets are both (B, T) tensors of integers; targets may be undefined (None)
  std::pair<Tensor, Tensor> forward(const Tensor& idx, const Tensor& targets = Tensor()) {
    const int64_t T = idx.size(1);
    Tensor tok_emb = token_embedding_table(idx);           // (B, T, C)
    Tensor pos_emb = position_embedding_table(arange(T));  // (T, C)
    Tensor x = tok_emb + pos_emb;                          // (B, T, C)
    x = blocks(x);                                         // (B, T, C)
    x = ln_f(x);                                           // (B, T, C)
    Tensor logits = lm_head(x);                            // (B, T, vocab_size)
    if (!targets.defined()) return {logits, Tensor()};
    const int64_t B = logits.size(0), C = logits.size(2);
    Tensor loss = F::cross_entropy(logits.view({B * T, C}), targets.view({B * T}));
    return {logits, loss};
  }

  // idx is (B, T) array of indices in the current context; appends max_new_tokens sampled ones.
  // (gpt.py records the graph here too; no_grad gives the same numbers without it.)
  Tensor generate(Tensor idx, int64_t max_new_tokens) {
    NoGradGuard no_grad;
    for (int64_t i = 0; i < max_new_tokens; ++i) {
      Tensor idx_cond =
          idx.index({Slice(), Slice(-block_size, None)});       // crop idx to the last block_size tokens
      auto [logits, loss] = forward(idx_cond);                  // get the predictions
      logits = logits.index({Slice(), -1, Slice()});            // focus only on the last time step: (B, C)
      Tensor probs = F::softmax(logits, -1);                    // apply softmax to get probabilities
      Tensor idx_next = multinomial(probs, /*num_samples=*/1);  // sample from the distribution: (B, 1)
      idx = cat({idx, idx_next}, 1);                            // append sampled index: (B, T+1)
    }
    return idx;
  }

  int64_t block_size;
  nn::Embedding& token_embedding_table;
  nn::Embedding& position_embedding_table;
  nn::Sequential& blocks;
  nn::LayerNorm& ln_f;
  nn::Linear& lm_head;
};

// What a run adds to the script's variables: the seed and the files, and the switches of a long run.
struct Run {
  uint64_t seed = 1337;
  int64_t max_new_tokens = 500;
  int threads = 0;
  std::string input = MINIGRAD_DATA_DIR "/tinyshakespeare.txt";
  std::string prompt;  // none: the course's context torch.zeros((1, 1)), token 0 (a newline here)
  bool prompt_given = false;
  std::string checkpoint = "gpt.safetensors";
  bool resume = false;
  bool overwrite = false;
  std::string plot = "gpt_loss.svg";
  std::string output = "gpt_sample.txt";
  bool eval_mode = false;
  bool print_losses = false;
  int64_t stop_at = -1;
  bool distributed = false;
};

void add_flags(CLI::App& app, Config& c, Run& run) {
  // As argparse: a flag given twice takes its last value; --help shows the defaults.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)->always_capture_default();
  app.add_option("--batch-size", c.batch_size, "sequences per batch")->check(at_least(1));
  app.add_option("--block-size", c.block_size, "context length")->check(at_least(1));
  app.add_option("--max-iters", c.max_iters, "training steps")->check(at_least(0));
  app.add_option("--eval-interval", c.eval_interval, "steps between evaluations")->check(at_least(1));
  app.add_option("--eval-iters", c.eval_iters, "batches per evaluation")->check(at_least(1));
  app.add_option("--learning-rate", c.learning_rate, "AdamW's lr")->check(positive);
  app.add_option("--n-embd", c.n_embd, "embedding width C")->check(at_least(1));
  app.add_option("--n-head", c.n_head, "attention heads per block")->check(at_least(1));
  app.add_option("--n-layer", c.n_layer, "blocks")->check(at_least(1));
  app.add_option("--dropout", c.dropout, "dropout probability")->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", run.seed, "torch.manual_seed");
  app.add_option("--max-new-tokens", run.max_new_tokens, "characters generated at the end")
      ->check(at_least(0));
  app.add_option("--threads", run.threads,
                 "threads, as torch.set_num_threads (0: OMP_NUM_THREADS or the cores)")
      ->check(at_least(0));
  app.add_option("--input", run.input, "the text to learn");
  app.add_option("--prompt", run.prompt, "the text generation starts from (default: token 0, as gpt.py)");
  app.add_option("--checkpoint", run.checkpoint, "written at every evaluation and at the end");
  app.add_flag("--resume", run.resume, "continue from --checkpoint");
  app.add_flag("--overwrite", run.overwrite, "start over, replacing an earlier run's --checkpoint");
  app.add_option("--plot", run.plot, "the loss curve (SVG)");
  app.add_option("--output", run.output, "the generated text");
  app.add_flag("--eval-mode", run.eval_mode, "generate with dropout off (gpt.py generates in training mode)");
  app.add_flag("--print-losses", run.print_losses, "print every training batch's loss");
  app.add_option("--stop-at", run.stop_at,
                 "end after the checkpoint of the evaluation at this step (--resume goes on)")
      ->check(at_least(0));
  app.add_flag("--distributed", run.distributed,
               "train on the ranks mpirun started (on by itself under mpirun)");
}

// The flags a checkpoint records: a resumed run with other values is told so.
Metadata config_metadata(const Config& c, const Run& run) {
  auto text = [](double v) { return support::number_text(v); };
  return {{"batch-size", std::to_string(c.batch_size)},
          {"block-size", std::to_string(c.block_size)},
          {"eval-interval", std::to_string(c.eval_interval)},
          {"eval-iters", std::to_string(c.eval_iters)},
          {"learning-rate", text(c.learning_rate)},
          {"n-embd", std::to_string(c.n_embd)},
          {"n-head", std::to_string(c.n_head)},
          {"n-layer", std::to_string(c.n_layer)},
          {"dropout", text(c.dropout)},
          {"seed", std::to_string(run.seed)}};
}

// What the flags cannot say alone: the heads split the embedding evenly, a prompt is not empty.
void check_config(const Config& c, const Run& run) {
  if (c.n_embd % c.n_head != 0) {
    throw std::invalid_argument("--n-embd " + std::to_string(c.n_embd) + " is not divisible by --n-head " +
                                std::to_string(c.n_head) + ": each head takes n_embd / n_head channels");
  }
  if (run.prompt_given && run.prompt.empty())
    throw std::invalid_argument("--prompt needs at least one character");
  const bool evaluated = run.stop_at % c.eval_interval == 0 || run.stop_at == c.max_iters - 1;
  if (run.stop_at >= 0 && (run.stop_at >= c.max_iters || !evaluated)) {  // it was ignored
    throw std::invalid_argument(
        "--stop-at " + std::to_string(run.stop_at) +
        " is not a step this run evaluates and checkpoints (multiples of --eval-interval " +
        std::to_string(c.eval_interval) + " below --max-iters " + std::to_string(c.max_iters) +
        ", and its last step)");
  }
}

// The run's files, checked before any training: a new run does not replace an earlier run's
// checkpoint unless told to, no file takes the place of another (--output my.txt --input my.txt
// would replace the text), and each output's folder exists.
void check_files(const Run& run) {
  if (!run.resume && !run.overwrite && std::filesystem::exists(run.checkpoint)) {
    throw std::invalid_argument("--checkpoint " + run.checkpoint +
                                " exists (an earlier run saved it): continue that run with --resume, start "
                                "over with --overwrite, or give another --checkpoint");
  }
  const auto canonical = [](const std::string& file) {
    return std::filesystem::weakly_canonical(std::filesystem::absolute(file));
  };
  const std::vector<std::pair<std::string, std::string>> files = {{"--input", run.input},
                                                                  {"--checkpoint", run.checkpoint},
                                                                  {"--plot", run.plot},
                                                                  {"--output", run.output}};
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& [flag, file] = files[i];
    const std::filesystem::path path = canonical(file);
    if (i > 0 && !std::filesystem::is_directory(path.parent_path()))
      throw std::invalid_argument(flag + " " + file + ": its folder does not exist");
    for (size_t j = 0; j < i; ++j) {
      if (path == canonical(files[j].second))
        throw std::invalid_argument(flag + " " + file + " is also the " + files[j].first +
                                    " file: each needs a name of its own");
    }
  }
}

int main(int argc, char** argv) try {
  Config c;
  Run run;
  CLI::App app{"gpt: the course's character-level GPT on tiny Shakespeare (gpt.py in C++)"};
  add_flags(app, c, run);
  CLI11_PARSE(app, argc, argv);
  run.prompt_given = app.count("--prompt") > 0;
  check_config(c, run);
  check_files(run);
  if (run.threads > 0) set_num_threads(run.threads);  // our loops' threads, matrix products included

  // Data parallelism (README, "Several processes"): under mpirun every rank trains the same model
  // on its contiguous share of each batch, and only rank 0 prints and writes files.
  const bool parallel = run.distributed || dist::launched_by_mpi();
  if (parallel) dist::init_process_group();
  const int rank = parallel ? dist::get_rank() : 0, ranks = parallel ? dist::get_world_size() : 1;
  const bool rank0 = rank == 0;
  if (c.batch_size % ranks != 0) {
    throw std::invalid_argument("--batch-size " + std::to_string(c.batch_size) + " does not divide by the " +
                                std::to_string(ranks) +
                                " ranks: each rank takes batch_size / ranks rows of every batch");
  }
  // this rank's rows of a batch every rank drew alike (the same seed, the same draws)
  auto share = [&](const Tensor& batch) { return parallel ? dist::shard_batch(batch) : batch; };

  manual_seed(run.seed);

  // The text, its characters and their indices: chars = sorted(list(set(text))), encode, decode.
  const std::string text = support::read_course_text(run.input);
  data::CharVocab vocab(text);
  const int64_t vocab_size = vocab.size();
  Tensor context = run.prompt_given ? vocab.encode_tensor(run.prompt).view({1, -1})
                                    : zeros({1, 1}, {.dtype = kInt64});  // the course's [[0]]

  // Train and test splits: the first 90% trains, the rest is for validation.
  Tensor data = vocab.encode_tensor(text);
  const auto n = static_cast<int64_t>(0.9 * static_cast<double>(data.size(0)));
  Tensor train_data = data.slice(0, 0, n);
  Tensor val_data = data.slice(0, n, data.size(0));
  support::check_block_size(c.block_size, val_data.size(0));

  // data loading: a small batch of inputs x and targets y, (B, T) each, at random positions
  auto get_batch = [&](const std::string& split) {
    return data::get_batch(split == "train" ? train_data : val_data, c.batch_size, c.block_size);
  };

  GPTLanguageModel model(c, vocab_size);

  // @torch.no_grad(): the mean loss over eval_iters batches of each split, in eval mode
  auto estimate_loss = [&]() {
    NoGradGuard no_grad;
    std::map<std::string, float> out;
    model.eval();
    for (const std::string split : {"train", "val"}) {
      Tensor losses = zeros({c.eval_iters});  // torch.zeros(eval_iters)
      for (int64_t k = 0; k < c.eval_iters; ++k) {
        auto [X, Y] = get_batch(split);
        auto [logits, loss] = model.forward(share(X), share(Y));
        losses.index_put_({k}, loss.item<float>());  // losses[k] = loss.item()
      }
      if (parallel) {  // each rank's mean over its rows; their average is the whole batch's mean
        dist::all_reduce(losses);
        losses = losses / static_cast<double>(ranks);
      }
      out[split] = losses.mean().item<float>();
    }
    model.train();
    return out;
  };

  // print the number of parameters in the model
  int64_t count = 0;
  for (const Tensor& p : model.parameters()) count += p.numel();
  if (rank0) std::printf("%s M parameters\n", support::number_text(static_cast<double>(count) / 1e6).c_str());

  // create a PyTorch optimizer
  optim::AdamW optimizer(model.parameters(), {.lr = c.learning_rate});

  // --resume: model, optimizer, random state and losses as the checkpoint left them
  support::RunHistory history;
  int64_t start = 0;
  bool evaluated_at_start = false;  // the checkpoint's history holds the evaluation of step `start`
  if (run.resume) {
    start = support::load_checkpoint(run.checkpoint, model, optimizer, history, config_metadata(c, run));
    optimizer.set_lr(c.learning_rate);  // this run's --learning-rate, as its note says, not the saved one
    // The run goes on from `start`, evaluating it again unless the checkpoint's history already
    // holds that evaluation (then `start` is past): a --stop-at before that would be ignored.
    evaluated_at_start =
        !history.eval_steps.empty() && history.eval_steps.back() == static_cast<double>(start);
    if (run.stop_at >= 0 && (run.stop_at < start || (run.stop_at == start && evaluated_at_start)))
      throw std::invalid_argument("--stop-at " + std::to_string(run.stop_at) + " is not after step " +
                                  std::to_string(start) + ", where " + run.checkpoint + " resumes");
    if (rank0)
      std::printf("resuming from %s at step %lld\n", run.checkpoint.c_str(), static_cast<long long>(start));
  }

  // Every rank read the same checkpoint, so any number of ranks resumes it. The wrapper copies
  // rank 0's weights to all and averages the gradients inside each backward.
  std::unique_ptr<dist::DistributedDataParallel> ddp;
  if (parallel) ddp = std::make_unique<dist::DistributedDataParallel>(model);
  // Dropout on several ranks: the default generator draws the batches, the same on every rank, so
  // Dropout draws from a stream of this rank's own instead (its seed: the seed, the rank and the
  // first step), or all ranks would drop the same positions. One process draws its masks for the
  // whole batch from the default generator, so with dropout N ranks match it only in distribution.
  const bool own_dropout_stream = ranks > 1 && c.dropout > 0;
  Generator dropout_stream(run.seed + 1000003 * static_cast<uint64_t>(rank + 1) +
                           static_cast<uint64_t>(start));

  support::Progress progress(start, c.max_iters, /*every=*/100, c.batch_size * c.block_size, stderr);
  for (int64_t iter = start; iter < c.max_iters; ++iter) {
    // every once in a while evaluate the loss on train and val sets (a resumed run did it already)
    const bool resumed_here = iter == start && evaluated_at_start;
    if ((iter % c.eval_interval == 0 || iter == c.max_iters - 1) && !resumed_here) {
      std::map<std::string, float> losses = estimate_loss();
      history.eval_steps.push_back(static_cast<double>(iter));
      history.eval_train.push_back(losses["train"]);
      history.eval_val.push_back(losses["val"]);
      if (ddp) ddp->check_parameters_agree();  // throws on every rank if the copies drifted apart
      if (rank0) {
        progress.finish();  // ends an in-place progress line on a terminal
        std::fflush(stderr);
        std::printf("step %lld: train loss %.4f, val loss %.4f\n", static_cast<long long>(iter),
                    losses["train"], losses["val"]);
        std::fflush(stdout);  // a log shows each evaluation as it happens
        support::save_checkpoint(run.checkpoint, model, optimizer, iter, history, config_metadata(c, run));
        support::write_run_plot(run.plot, "gpt: cross-entropy loss", history);
      }
      if (iter == run.stop_at) {
        if (rank0)
          std::printf("stopped at step %lld: %s holds it, continue with --resume\n",
                      static_cast<long long>(iter), run.checkpoint.c_str());
        return 0;
      }
    }

    // sample a batch of data
    auto [xb, yb] = get_batch("train");

    // evaluate the loss (on several ranks: this rank's rows; backward averages the gradients)
    if (own_dropout_stream) std::swap(default_generator(), dropout_stream);  // this rank's masks
    auto [logits, loss] = model.forward(share(xb), share(yb));
    optimizer.zero_grad(/*set_to_none=*/true);
    loss.backward();
    optimizer.step();
    if (own_dropout_stream) std::swap(default_generator(), dropout_stream);  // the shared batches again

    Tensor global_loss = loss.detach().to(kFloat64);
    if (parallel) dist::all_reduce(global_loss);  // the mean over the whole batch, for the history
    const double value = global_loss.item<double>() / ranks;
    history.steps.push_back(static_cast<double>(iter + 1));
    history.losses.push_back(value);
    if (!rank0) continue;
    if (run.print_losses) std::printf("loss %lld %.9g\n", static_cast<long long>(iter + 1), value);
    progress.update(iter + 1, value);
  }
  if (!rank0) return 0;  // the other ranks' work is done; rank 0 saves and generates
  progress.finish();
  if (!run.resume || start < c.max_iters) {  // the trained model (the untrained one for --max-iters 0)
    support::save_checkpoint(run.checkpoint, model, optimizer, c.max_iters, history, config_metadata(c, run));
    support::write_run_plot(run.plot, "gpt: cross-entropy loss", history);
  }

  // generate from the model (in training mode, as gpt.py does, unless --eval-mode)
  if (run.eval_mode) model.eval();
  const std::string sample = vocab.decode(model.generate(context, run.max_new_tokens)[0]);
  std::printf("%s\n", sample.c_str());
  support::write_text_file(run.output, sample + "\n", "--output");
  return 0;
} catch (const std::exception& error) {
  // Under mpirun the other ranks may be waiting for this one: end them all, naming this rank.
  if (dist::is_initialized() && dist::get_world_size() > 1)
    dist::abort_job(std::string("gpt: ") + error.what());
  std::fprintf(stderr, "gpt: %s\n", error.what());
  return 1;
}
