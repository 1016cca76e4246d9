// bigram_training: the lecture's bigram language model, before and after training.
//
// The simplest language model: row c of a [vocab, vocab] embedding table holds the scores
// (logits) of every character that may follow c. Untrained, its loss is about 4.88 (a uniform
// guess would give -ln(1/65) = 4.17) and it samples gibberish; after 10,000 AdamW steps the loss
// is near 2.4 and the samples start to look like a play. The generator is seeded twice, as in the
// lecture (once before the first batch, once before the model), and never again: the training
// batches and the last 400 characters continue the same random stream.
// tools/reference/lessons/bigram_training.py is this program in PyTorch.
//
// Shape letters: B batch, T time (block_size), C channels (here the vocabulary size).
// The text is assets/tinyshakespeare.txt, or the path given as an argument.
#include <cstdint>
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
#include "nn/embedding.hpp"
#include "nn/functional.hpp"
#include "nn/loss.hpp"
#include "optim/adam.hpp"

using namespace minigrad;
using namespace minigrad::indexing;  // Slice: logits[:, -1, :] is logits.index({Slice(), -1, Slice()})
namespace F = minigrad::nn::functional;
using lesson::py;

class BigramLanguageModel : public nn::Module {
 public:
  explicit BigramLanguageModel(int64_t vocab_size)
      // each token directly reads off the logits for the next token from a lookup table
      : token_embedding_table(
            register_module("token_embedding_table", nn::Embedding(vocab_size, vocab_size))) {}

  // idx and targets are both (B, T) tensors of integers; targets may be undefined (None)
  std::pair<Tensor, Tensor> forward(const Tensor& idx, const Tensor& targets = Tensor()) {
    Tensor logits = token_embedding_table(idx);  // (B, T, C)
    if (!targets.defined()) return {logits, Tensor()};
    const int64_t B = logits.size(0), T = logits.size(1), C = logits.size(2);
    logits = logits.view({B * T, C});
    Tensor loss = F::cross_entropy(logits, targets.view({B * T}));
    return {logits, loss};
  }

  // idx is (B, T) array of indices in the current context
  Tensor generate(Tensor idx, int64_t max_new_tokens) {
    for (int64_t i = 0; i < max_new_tokens; ++i) {
      auto [logits, loss] = forward(idx);                       // get the predictions
      logits = logits.index({Slice(), -1, Slice()});            // focus only on the last time step: (B, C)
      Tensor probs = F::softmax(logits, -1);                    // (B, C)
      Tensor idx_next = multinomial(probs, /*num_samples=*/1);  // (B, 1)
      idx = cat({idx, idx_next}, 1);                            // (B, T+1)
    }
    return idx;
  }

  nn::Embedding& token_embedding_table;
};

int main(int argc, char** argv) try {
  lesson::help_if_asked(argc, argv,
                        "usage: lesson_bigram_training [TEXT_FILE]   (default: assets/tinyshakespeare.txt)");
  // the text as tokens, as in the text_to_tokens lesson
  const std::string text = data::read_text(argc > 1 ? argv[1] : MINIGRAD_DATA_DIR "/tinyshakespeare.txt");
  const data::CharVocab vocab(text);
  Tensor data = vocab.encode_tensor(text);
  const auto n = static_cast<int64_t>(0.9 * static_cast<double>(data.size(0)));
  Tensor train_data = data.index({Slice(None, n)});
  Tensor val_data = data.index({Slice(n, None)});

  // the batch of the context_and_targets lesson
  manual_seed(1337);
  int64_t batch_size = 4;
  const int64_t block_size = 8;
  auto get_batch = [&](const std::string& split) {  // data::get_batch draws as the lecture's get_batch
    return data::get_batch(split == "train" ? train_data : val_data, batch_size, block_size);
  };
  auto [xb, yb] = get_batch("train");

  manual_seed(1337);
  BigramLanguageModel m(vocab.size());
  auto [logits, loss] = m.forward(xb, yb);
  std::cout << logits.shape() << "\n" << loss << "\n";
  const Tensor start = zeros({1, 1}, {.dtype = kInt64});  // one newline character, token 0
  std::cout << vocab.decode(m.generate(start, 400)[0]) << "\n";

  // create an optimizer
  optim::AdamW optimizer(m.parameters(), {.lr = 1e-3});

  batch_size = 32;
  for (int steps = 0; steps < 10000; ++steps) {
    std::tie(xb, yb) = get_batch("train");       // sample a batch of data
    std::tie(logits, loss) = m.forward(xb, yb);  // evaluate the loss
    optimizer.zero_grad(/*set_to_none=*/true);
    loss.backward();
    optimizer.step();
  }
  std::cout << py(loss.item<double>()) << "\n";

  std::cout << vocab.decode(m.generate(start, 400)[0]) << "\n";
} catch (const std::exception& e) {  // a missing text file, a bad argument: say so, exit 1
  std::cerr << "lesson_bigram_training: " << e.what() << "\n";
  return 1;
}
