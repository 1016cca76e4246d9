// transformer_block: multi-head attention, the feed-forward network and the residual block, as
// the lecture builds them.
//
// One head (the self_attention_head lesson as a module); four heads of 8 side by side, whose
// outputs are concatenated back to 32 channels and projected: communication; the feed-forward
// network, each token on its own: computation; then the block, which puts each behind a
// LayerNorm and adds its result to its input (x = x + sa(ln1(x))): the residual connection keeps
// a straight path from the input to the output, which is what lets blocks stack deep. Dropout
// comes last in the lecture and is left out here. On the [4, 8, 32] batch of the self-attention
// lesson; tools/reference/lessons/transformer_block.py is this program in PyTorch.
//
// Shape letters: B batch, T time, C channels (n_embd), hs head size.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/ops_index.hpp"
#include "autograd/random.hpp"
#include "nn/activation.hpp"
#include "nn/functional.hpp"
#include "nn/layer_norm.hpp"
#include "nn/linear.hpp"
#include "nn/module_list.hpp"
#include "nn/sequential.hpp"

using namespace minigrad;
using namespace minigrad::indexing;  // Slice, None: tril[:T, :T] is tril.index({Slice(None, T), Slice(None,
                                     // T)})
namespace F = minigrad::nn::functional;

const int64_t n_embd = 32;
const int64_t n_head = 4;
const int64_t block_size = 8;

/// one head of self-attention
class Head : public nn::Module {
 public:
  explicit Head(int64_t head_size)
      : key(register_module("key", nn::Linear(n_embd, head_size, /*bias=*/false))),
        query(register_module("query", nn::Linear(n_embd, head_size, /*bias=*/false))),
        value(register_module("value", nn::Linear(n_embd, head_size, /*bias=*/false))),
        tril(register_buffer("tril", minigrad::tril(ones({block_size, block_size})))) {}

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
};

/// multiple heads of self-attention in parallel
class MultiHeadAttention : public nn::Module {
 public:
  MultiHeadAttention(int64_t num_heads, int64_t head_size)
      : heads(register_module("heads", make_heads(num_heads, head_size))),
        proj(register_module("proj", nn::Linear(n_embd, n_embd))) {}

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
    return proj(out);
  }

  nn::ModuleList& heads;
  nn::Linear& proj;
};

/// a simple linear layer followed by a non-linearity
class FeedForward : public nn::Module {
 public:
  explicit FeedForward(int64_t n_embd)
      : net(register_module("net", nn::Sequential{
                                       nn::Linear(n_embd, 4 * n_embd),
                                       nn::ReLU(),
                                       nn::Linear(4 * n_embd, n_embd),
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

int64_t count(const nn::Module& module) {
  int64_t total = 0;
  for (const Tensor& p : module.parameters()) total += p.numel();
  return total;
}

int main() {
  manual_seed(1337);
  const int64_t B = 4, T = block_size, C = n_embd;  // batch, time, channels
  Tensor x = randn({B, T, C});

  Head head(16);
  std::cout << "one head: " << head(x).shape() << " " << count(head) << "\n";
  MultiHeadAttention sa(n_head, n_embd / n_head);
  std::cout << "four heads of 8: " << sa(x).shape() << " " << count(sa) << "\n";
  FeedForward ffwd(n_embd);
  std::cout << "feed-forward: " << ffwd(x).shape() << " " << count(ffwd) << "\n";
  Block block(n_embd, n_head);
  Tensor y = block(x);
  std::cout << "block: " << y.shape() << " " << count(block) << "\n";
  std::cout << x.index({0, 0}) << "\n";
  std::cout << y.index({0, 0}) << "\n";
  std::cout << y.index({0, 0}) - x.index({0, 0}) << "\n";  // what the block added to the first token
}
