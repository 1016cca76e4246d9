// text_to_tokens: the lecture's first steps, from the raw text to a tensor of tokens.
//
// A character-level language model sees text as numbers: the distinct characters of tiny
// Shakespeare, sorted, are the vocabulary (65 of them), and each character becomes its index in
// that list. Encoding the whole text gives one long int64 tensor; its first 90% is for training,
// the rest for checking the model on text it has not seen.
// tools/reference/lessons/text_to_tokens.py is this program in PyTorch.
//
// Run from anywhere: the text is assets/tinyshakespeare.txt, or the path given as an argument.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/ops_index.hpp"
#include "autograd/tensor.hpp"
#include "examples/lessons/python_print.hpp"

using namespace minigrad;
using namespace minigrad::indexing;  // Slice, None: data[:1000] is data.index({Slice(None, 1000)})
using lesson::py;

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : MINIGRAD_ASSETS_DIR "/tinyshakespeare.txt";
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::cerr << "text_to_tokens: cannot open " << path << "\n";
    return 1;
  }
  std::ostringstream contents;
  contents << file.rdbuf();
  const std::string text = contents.str();
  std::cout << "length of dataset in characters:  " << text.size() << "\n";
  std::cout << text.substr(0, 1000) << "\n";

  // here are all the unique characters that occur in this text (one byte each: it is ASCII)
  std::string chars = text;
  std::sort(chars.begin(), chars.end());
  chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
  const int64_t vocab_size = static_cast<int64_t>(chars.size());
  std::cout << chars << "\n" << vocab_size << "\n";

  // create a mapping from characters to integers: a character's index is its place in chars
  auto encode = [&](const std::string& s) {  // take a string, output a list of integers
    std::vector<int64_t> ids;
    for (char c : s) ids.push_back(std::lower_bound(chars.begin(), chars.end(), c) - chars.begin());
    return ids;
  };
  auto decode = [&](const std::vector<int64_t>& ids) {  // take a list of integers, output a string
    std::string s;
    for (int64_t i : ids) s += chars[static_cast<size_t>(i)];
    return s;
  };
  std::cout << py(encode("hii there")) << "\n";
  std::cout << decode(encode("hii there")) << "\n";

  // encode the entire text dataset and store it into a tensor
  const std::vector<int64_t> ids = encode(text);
  Tensor data = tensor(ids, {static_cast<int64_t>(ids.size())});
  std::cout << data.shape() << " " << data.dtype() << "\n";
  std::cout << data.index({Slice(None, 1000)}) << "\n";  // the 1000 characters we looked at earlier

  // split up the data into train and validation sets
  const auto n = static_cast<int64_t>(0.9 * static_cast<double>(data.size(0)));  // first 90% train, rest val
  Tensor train_data = data.index({Slice(None, n)});
  Tensor val_data = data.index({Slice(n, None)});
  std::cout << train_data.size(0) << " " << val_data.size(0) << "\n";
}
