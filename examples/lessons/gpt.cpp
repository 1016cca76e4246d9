// gpt: the lecture's finished GPT, the last cell of its notebook, in C++.
//
// Everything of the earlier lessons in one model: token and position embeddings, n_layer blocks
// of multi-head self-attention and feed-forward (the transformer_block lesson's classes, with
// dropout), each behind a LayerNorm and a residual connection, a final LayerNorm and a linear
// head; AdamW, the loss estimated on train and val every 100 steps, then 2000 sampled
// characters. This is the notebook's small model, with PyTorch's default initialisation and the
// lecture's C**-0.5 scale (C = n_embd); the course's examples/gpt.cpp is the later gpt.py,
// bigger and with its own initialisation. tools/reference/lessons/gpt.py is this program in
// PyTorch.
//
// `lesson_gpt` trains the lecture's 5000 steps (minutes); `lesson_gpt 500` trains 500 (what the
// test runs). A second argument is the text's path (default assets/tinyshakespeare.txt).
// Shape letters: B batch, T time (block_size), C channels (n_embd), hs head size.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/ops_index.hpp"
#include "autograd/random.hpp"
#include "data/text.hpp"
#include "examples/lessons/python_print.hpp"
#include "nn/activation.hpp"
#include "nn/dropout.hpp"
#include "nn/embedding.hpp"
#include "nn/functional.hpp"
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
using lesson::py;

// hyperparameters
const int64_t batch_size = 16;  // how many independent sequences will we process in parallel?
const int64_t block_size = 32;  // what is the maximum context length for predictions?
const int64_t eval_interval = 100;
const double learning_rate = 1e-3;
const int64_t eval_iters = 200;
const int64_t n_embd = 64;
const int64_t n_head = 4;
const int64_t n_layer = 4;
const double dropout_p = 0.0;  // `dropout` in the lecture, which here names the modules

/// one head of self-attention
class Head : public nn::Module {
 public:
  explicit Head(int64_t head_size)
      : key(register_module("key", nn::Linear(n_embd, head_size, /*bias=*/false))),
        query(register_module("query", nn::Linear(n_embd, head_size, /*bias=*/false))),
        value(register_module("value", nn::Linear(n_embd, head_size, /*bias=*/false))),
        tril(register_buffer("tril", minigrad::tril(ones({block_size, block_size})))),
        dropout(register_module("dropout", nn::Dropout(dropout_p))) {}

  Tensor forward(const Tensor& x) override {
    const int64_t T = x.size(1), C = x.size(2);
    Tensor k = key(x);    // (B, T, hs)
    Tensor q = query(x);  // (B, T, hs)
    // compute attention scores ("affinities"), scaled by C**-0.5 as in the lecture
    Tensor wei = q.matmul(k.transpose(-2, -1)) * std::pow(static_cast<double>(C), -0.5);  // (B, T, T)
    wei = wei.masked_fill(tril.index({Slice(None, T), Slice(None, T)}) == 0, -INFINITY);  // (B, T, T)
    wei = F::softmax(wei, -1);                                                            // (B, T, T)
    // perform the weighted aggregation of the values
    Tensor v = value(x);   // (B, T, hs)
    return wei.matmul(v);  // (B, T, T) @ (B, T, hs) -> (B, T, hs)
  }

  nn::Linear& key;
  nn::Linear& query;
  nn::Linear& value;
  Tensor& tril;
  nn::Dropout& dropout;
};

/// multiple heads of self-attention in parallel
class MultiHeadAttention : public nn::Module {
 public:
  MultiHeadAttention(int64_t num_heads, int64_t head_size)
      : heads(register_module("heads", make_heads(num_heads, head_size))),
        proj(register_module("proj", nn::Linear(n_embd, n_embd))),
        dropout(register_module("dropout", nn::Dropout(dropout_p))) {}

  // nn.ModuleList([Head(head_size) for _ in range(num_heads)])
  static nn::ModuleList make_heads(int64_t num_heads, int64_t head_size) {
    nn::ModuleList list;
    for (int64_t h = 0; h < num_heads; ++h) list.append(Head(head_size));
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

/// a simple linear layer followed by a non-linearity
class FeedForward : public nn::Module {
 public:
  explicit FeedForward(int64_t n_embd)
      : net(register_module("net", nn::Sequential{
                                       nn::Linear(n_embd, 4 * n_embd),
                                       nn::ReLU(),
                                       nn::Linear(4 * n_embd, n_embd),
                                       nn::Dropout(dropout_p),
                                   })) {}

  Tensor forward(const Tensor& x) override { return net(x); }

  nn::Sequential& net;
};

/// Transformer block: communication followed by computation
class Block : public nn::Module {
 public:
  // n_embd: embedding dimension, n_head: the number of heads we'd like
  Block(int64_t n_embd, int64_t n_head)
      : sa(register_module("sa", MultiHeadAttention(n_head, n_embd / n_head))),
        ffwd(register_module("ffwd", FeedForward(n_embd))),
        ln1(register_module("ln1", nn::LayerNorm(n_embd))),
        ln2(register_module("ln2", nn::LayerNorm(n_embd))) {}

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

// super simple bigram model (the lecture kept the name)
class BigramLanguageModel : public nn::Module {
 public:
  explicit BigramLanguageModel(int64_t vocab_size)
      // each token directly reads off the logits for the next token from a lookup table
      : token_embedding_table(register_module("token_embedding_table", nn::Embedding(vocab_size, n_embd))),
        position_embedding_table(
            register_module("position_embedding_table", nn::Embedding(block_size, n_embd))),
        blocks(register_module("blocks", make_blocks())),
        ln_f(register_module("ln_f", nn::LayerNorm(n_embd))),  // final layer norm
        lm_head(register_module("lm_head", nn::Linear(n_embd, vocab_size))) {}

  // nn.Sequential(*[Block(n_embd, n_head=n_head) for _ in range(n_layer)])
  static nn::Sequential make_blocks() {
    nn::Sequential blocks;
    for (int64_t i = 0; i < n_layer; ++i) blocks.push_back(Block(n_embd, n_head));
    return blocks;
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
    logits = logits.view({B * T, C});
    Tensor loss = F::cross_entropy(logits, targets.view({B * T}));
    return {logits, loss};
  }

  // idx is (B, T) array of indices in the current context. The lecture records the graph here;
  // without it the numbers are the same, only faster.
  Tensor generate(Tensor idx, int64_t max_new_tokens) {
    NoGradGuard no_grad;
    for (int64_t i = 0; i < max_new_tokens; ++i) {
      Tensor idx_cond = idx.index({Slice(), Slice(-block_size, None)});  // crop to the last block_size tokens
      auto [logits, loss] = forward(idx_cond);                           // get the predictions
      logits = logits.index({Slice(), -1, Slice()});                     // the last time step: (B, C)
      Tensor probs = F::softmax(logits, -1);                             // (B, C)
      Tensor idx_next = multinomial(probs, /*num_samples=*/1);           // (B, 1)
      idx = cat({idx, idx_next}, 1);                                     // (B, T+1)
    }
    return idx;
  }

  nn::Embedding& token_embedding_table;
  nn::Embedding& position_embedding_table;
  nn::Sequential& blocks;
  nn::LayerNorm& ln_f;
  nn::Linear& lm_head;
};

int main(int argc, char** argv) try {
  lesson::help_if_asked(
      argc, argv, "usage: lesson_gpt [MAX_ITERS [TEXT_FILE]]   (defaults: 5000, assets/tinyshakespeare.txt)");
  const int64_t max_iters = argc > 1 ? lesson::whole_number(argv[1], "MAX_ITERS") : 5000;
  manual_seed(1337);

  // the text as tokens, as in the text_to_tokens lesson
  const std::string text = data::read_text(argc > 2 ? argv[2] : MINIGRAD_DATA_DIR "/tinyshakespeare.txt");
  const data::CharVocab vocab(text);
  Tensor data = vocab.encode_tensor(text);
  const auto n = static_cast<int64_t>(0.9 * static_cast<double>(data.size(0)));
  Tensor train_data = data.index({Slice(None, n)});
  Tensor val_data = data.index({Slice(n, None)});

  // data loading: a small batch of inputs x and targets y, as in the context_and_targets lesson
  auto get_batch = [&](const std::string& split) {  // data::get_batch draws as the lecture's get_batch
    return data::get_batch(split == "train" ? train_data : val_data, batch_size, block_size);
  };

  BigramLanguageModel model(vocab.size());

  // the mean loss of eval_iters batches of each split, without recording and in eval mode
  auto estimate_loss = [&]() {
    NoGradGuard no_grad;
    std::vector<double> out;
    model.eval();
    for (const std::string split : {"train", "val"}) {
      std::vector<float> losses(eval_iters);
      for (int64_t k = 0; k < eval_iters; ++k) {
        auto [X, Y] = get_batch(split);
        losses[static_cast<size_t>(k)] = model.forward(X, Y).second.item<float>();
      }
      out.push_back(tensor(losses, {eval_iters}).mean().item<double>());
    }
    model.train();
    return out;
  };

  // print the number of parameters in the model
  int64_t count = 0;
  for (const Tensor& p : model.parameters()) count += p.numel();
  std::cout << py(static_cast<double>(count) / 1e6) << " M parameters" << std::endl;

  optim::AdamW optimizer(model.parameters(), {.lr = learning_rate});

  for (int64_t iter = 0; iter < max_iters; ++iter) {
    // every once in a while evaluate the loss on train and val sets
    if (iter % eval_interval == 0 || iter == max_iters - 1) {
      const std::vector<double> losses = estimate_loss();
      std::printf("step %lld: train loss %.4f, val loss %.4f\n", static_cast<long long>(iter), losses[0],
                  losses[1]);
      std::fflush(stdout);
    }
    auto [xb, yb] = get_batch("train");          // sample a batch of data
    Tensor loss = model.forward(xb, yb).second;  // evaluate the loss
    optimizer.zero_grad(/*set_to_none=*/true);
    loss.backward();
    optimizer.step();
  }

  // generate from the model
  const Tensor context = zeros({1, 1}, {.dtype = kInt64});
  std::cout << vocab.decode(model.generate(context, 2000)[0]) << std::endl;
} catch (const std::exception& e) {  // a missing text file, a bad argument: say so, exit 1
  std::cerr << "lesson_gpt: " << e.what() << "\n";
  return 1;
}
