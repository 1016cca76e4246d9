// context_and_targets: what the model learns from, one block and then a batch of blocks.
//
// A block of block_size + 1 tokens holds block_size examples at once: every prefix of it is a
// context and the token after that prefix its target, so the model learns to predict from one
// character of context up to block_size of them. get_batch draws batch_size such blocks at
// random places in the training data; the targets are the inputs shifted by one.
// tools/reference/lessons/context_and_targets.py is this program in PyTorch.
//
// Shape letters: B batch (batch_size), T time (block_size). The text is
// assets/tinyshakespeare.txt, or the path given as an argument.
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

using namespace minigrad;
using namespace minigrad::indexing;  // Slice, None: x[:t+1] is x.index({Slice(None, t + 1)})
using lesson::py;

int main(int argc, char** argv) try {
  lesson::help_if_asked(
      argc, argv, "usage: lesson_context_and_targets [TEXT_FILE]   (default: assets/tinyshakespeare.txt)");
  // the text as tokens, as in the text_to_tokens lesson
  const std::string text = data::read_text(argc > 1 ? argv[1] : MINIGRAD_DATA_DIR "/tinyshakespeare.txt");
  const data::CharVocab vocab(text);
  Tensor data = vocab.encode_tensor(text);
  const auto n = static_cast<int64_t>(0.9 * static_cast<double>(data.size(0)));
  Tensor train_data = data.index({Slice(None, n)});
  Tensor val_data = data.index({Slice(n, None)});

  int64_t block_size = 8;
  std::cout << train_data.index({Slice(None, block_size + 1)}) << "\n";

  Tensor x = train_data.index({Slice(None, block_size)});
  Tensor y = train_data.index({Slice(1, block_size + 1)});
  for (int64_t t = 0; t < block_size; ++t) {
    Tensor context = x.index({Slice(None, t + 1)});
    Tensor target = y[t];
    std::cout << "when input is " << context << " the target: " << target.item<int64_t>() << "\n";
  }

  manual_seed(1337);
  int64_t batch_size = 4;  // how many independent sequences will we process in parallel?
  block_size = 8;          // what is the maximum context length for predictions?

  // generate a small batch of data of inputs x and targets y (data::get_batch in data/text.hpp
  // is this function, drawing the same numbers; the later lessons call it)
  auto get_batch = [&](const std::string& split) {
    const Tensor& source = split == "train" ? train_data : val_data;
    Tensor ix = randint(0, source.size(0) - block_size, {batch_size});
    std::vector<Tensor> xs, ys;
    for (int64_t i : ix.to_vector<int64_t>()) {
      xs.push_back(source.index({Slice(i, i + block_size)}));
      ys.push_back(source.index({Slice(i + 1, i + block_size + 1)}));
    }
    return std::pair{stack(xs), stack(ys)};
  };

  auto [xb, yb] = get_batch("train");
  std::cout << "inputs:\n" << xb.shape() << "\n" << xb << "\n";
  std::cout << "targets:\n" << yb.shape() << "\n" << yb << "\n";

  std::cout << "----\n";

  for (int64_t b = 0; b < batch_size; ++b) {    // batch dimension
    for (int64_t t = 0; t < block_size; ++t) {  // time dimension
      Tensor context = xb.index({b, Slice(None, t + 1)});
      Tensor target = yb.index({b, t});
      std::cout << "when input is " << py(context.to_vector<int64_t>())
                << " the target: " << target.item<int64_t>() << "\n";
    }
  }
} catch (const std::exception& e) {  // a missing text file, a bad argument: say so, exit 1
  std::cerr << "lesson_context_and_targets: " << e.what() << "\n";
  return 1;
}
