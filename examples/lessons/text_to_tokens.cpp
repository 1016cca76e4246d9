// text_to_tokens: the lecture's first steps, from the raw text to a tensor of tokens.
//
// A character-level language model sees text as numbers: the distinct characters of tiny
// Shakespeare, sorted, are the vocabulary (65 of them), and each character becomes its index in
// that list. Encoding the whole text gives one long int64 tensor; its first 90% is for training,
// the rest for checking the model on text it has not seen.
// data::CharVocab (data/text.hpp) holds the lecture's chars, stoi, itos, encode and decode.
// tools/reference/lessons/text_to_tokens.py is this program in PyTorch.
//
// Run from anywhere: the text is assets/tinyshakespeare.txt, or the path given as an argument.
#include <cstdint>
#include <exception>
#include <iostream>
#include <string>

#include "autograd/ops_index.hpp"
#include "autograd/tensor.hpp"
#include "data/text.hpp"
#include "examples/lessons/python_print.hpp"

using namespace minigrad;
using namespace minigrad::indexing;  // Slice, None: data[:1000] is data.index({Slice(None, 1000)})
using lesson::py;

int main(int argc, char** argv) try {
  lesson::help_if_asked(argc, argv,
                        "usage: lesson_text_to_tokens [TEXT_FILE]   (default: assets/tinyshakespeare.txt)");
  // read it in to inspect it
  const std::string text = data::read_text(argc > 1 ? argv[1] : MINIGRAD_DATA_DIR "/tinyshakespeare.txt");
  std::cout << "length of dataset in characters:  " << text.size() << "\n";
  std::cout << text.substr(0, 1000) << "\n";

  // here are all the unique characters that occur in this text: chars = sorted(list(set(text)))
  const data::CharVocab vocab(text);
  const int64_t vocab_size = vocab.size();
  std::cout << vocab.chars() << "\n" << vocab_size << "\n";

  // the mapping from characters to integers: a character's index is its place in chars
  std::cout << py(vocab.encode("hii there")) << "\n";            // encode: a string to a list of integers
  std::cout << vocab.decode(vocab.encode("hii there")) << "\n";  // decode: a list of integers to a string

  // encode the entire text dataset and store it into a tensor
  Tensor data = vocab.encode_tensor(text);
  std::cout << data.shape() << " " << data.dtype() << "\n";
  std::cout << data.index({Slice(None, 1000)}) << "\n";  // the 1000 characters we looked at earlier

  // split up the data into train and validation sets
  const auto n = static_cast<int64_t>(0.9 * static_cast<double>(data.size(0)));  // first 90% train, rest val
  Tensor train_data = data.index({Slice(None, n)});
  Tensor val_data = data.index({Slice(n, None)});
  std::cout << train_data.size(0) << " " << val_data.size(0) << "\n";
} catch (const std::exception& e) {  // a missing text file, a bad argument: say so, exit 1
  std::cerr << "lesson_text_to_tokens: " << e.what() << "\n";
  return 1;
}
