// Text for a character-level language model: a vocabulary of characters and the batches of the
// course's get_batch.
//
// The course turns Shakespeare into numbers in three steps, and this file holds each one:
//   text = open('input.txt').read()           std::string text = data::read_text(path);
//   chars = sorted(list(set(text)))           data::CharVocab vocab(text);
//   data = torch.tensor(encode(text))         Tensor data = vocab.encode_tensor(text);  // [N] int64
// then draws training batches of B windows of T tokens at random positions (get_batch): x holds
// the windows, y the same windows one token later, so y[b, t] is the token that follows x[b, :t+1].
// For the same seed the windows are PyTorch's, draw for draw.
//
// Shape letters: N tokens, B batch size, T block size (tokens per window).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "autograd/random.hpp"
#include "autograd/tensor.hpp"

namespace minigrad::data {

/// The whole file at `path` as a string (Python's `open(path).read()`), with Python's universal
/// newlines: "\r\n" and a lone "\r" read as "\n". Throws std::runtime_error naming the path and
/// the system's reason when it cannot be opened or read, or is a directory.
std::string read_text(const std::string& path);

/// The characters of a text, sorted, each with its index: the course's `chars = sorted(list(set(text)))`,
/// `stoi` and `itos`. A character is one byte, which is what Python's characters are for ASCII
/// text (tiny Shakespeare is ASCII); text with a byte of 128 or more is refused rather than split
/// into a vocabulary Python would not build.
class CharVocab {
 public:
  /// The vocabulary of `text`. Throws std::invalid_argument for an empty text, or for a byte of
  /// 128 or more, naming it and its position: `CharVocab: byte 0xc3 at position 12 is not ASCII
  /// (...)`.
  explicit CharVocab(std::string_view text);

  /// How many distinct characters (`vocab_size = len(chars)`): 65 for tiny Shakespeare.
  int64_t size() const { return static_cast<int64_t>(chars_.size()); }
  /// The characters in sorted order: chars()[i] is the character of index i (`''.join(chars)`).
  const std::string& chars() const { return chars_; }

  /// The index of each character of `text` (`encode(s)`). Throws std::invalid_argument for a
  /// character outside the vocabulary, naming it and its position: `CharVocab::encode: character
  /// 'Z' at position 3 is not in the vocabulary (65 characters: "\n !$&',-.3:;?ABC...")`.
  std::vector<int64_t> encode(std::string_view text) const;
  /// encode(text) as a 1-d int64 tensor [N] (`torch.tensor(encode(text), dtype=torch.long)`).
  /// Throws as encode.
  Tensor encode_tensor(std::string_view text) const;

  /// The text of the indices (`decode(l)`). Throws std::out_of_range for an index outside
  /// 0..size()-1, naming it and its position.
  std::string decode(std::span<const int64_t> indices) const;
  /// decode() of a 1-d int64 tensor (`decode(idx[0].tolist())`). Throws std::invalid_argument for
  /// another dtype or dimension, std::out_of_range as decode.
  std::string decode(const Tensor& indices) const;

 private:
  std::string chars_;
  std::vector<int64_t> index_of_;  // 128 entries: the index of each ASCII byte, -1 if absent
};

/// The course's get_batch on a 1-d int64 token tensor `tokens` [N]:
///   ix = torch.randint(len(data) - block_size, (batch_size,))
///   x = torch.stack([data[i:i+block_size] for i in ix])
///   y = torch.stack([data[i+1:i+block_size+1] for i in ix])
/// Returns {x, y}, both int64 [B, T], new tensors that do not require grad. Draws B numbers from
/// `generator` (one 32-bit draw each, as torch.randint). Throws std::invalid_argument for tokens
/// that are not 1-d int64, batch_size or block_size below 1, or N <= block_size: `get_batch: a
/// block_size of 64 needs more than 64 tokens, the data has 50`.
std::pair<Tensor, Tensor> get_batch(const Tensor& tokens, int64_t batch_size, int64_t block_size,
                                    Generator& generator = default_generator());

}  // namespace minigrad::data
