// Text for a character-level language model: read_text, CharVocab and get_batch (see text.hpp).
#include "data/text.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"

namespace minigrad::data {

using detail::check;
using detail::concat;

std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  check<std::runtime_error>(file.good(), "read_text: cannot open '", path, "': ", std::strerror(errno));
  // A directory opens as a file on Linux and then reads as nothing: say what it is (Python's open
  // raises IsADirectoryError).
  std::error_code error;
  check<std::runtime_error>(!std::filesystem::is_directory(path, error), "read_text: cannot read '", path,
                            "': it is a directory");
  std::ostringstream contents;
  contents << file.rdbuf();
  check<std::runtime_error>(!file.bad(), "read_text: cannot read '", path, "': ", std::strerror(errno));
  // Python's text mode reads with universal newlines: "\r\n" and a lone "\r" both become "\n", so
  // a file saved with Windows line ends gives the course's text, not one with '\r' in its vocabulary.
  std::string text = std::move(contents).str();
  size_t kept = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool pair = text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n';
    if (!pair) text[kept++] = text[i] == '\r' ? '\n' : text[i];
  }
  text.resize(kept);
  return text;
}

namespace {

// A character as a message shows it: 'a', or its escape for the invisible ones ('\n').
std::string quoted(char c) {
  if (c == '\n') return "'\\n'";
  if (c == '\t') return "'\\t'";
  if (static_cast<unsigned char>(c) < 32 || static_cast<unsigned char>(c) >= 127) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
    return hex;
  }
  return std::string("'") + c + "'";
}

}  // namespace

CharVocab::CharVocab(std::string_view text) : index_of_(128, -1) {
  check(!text.empty(), "CharVocab: the text is empty, so it has no characters");
  std::vector<bool> seen(128, false);
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 128)  // not check(): its arguments, quoted() among them, would be built for every byte
      throw std::invalid_argument(concat("CharVocab: byte ", quoted(text[i]), " at position ", i,
                                         " is not ASCII (a character is one byte here; Python would build "
                                         "another vocabulary from this text)"));
    seen[byte] = true;
  }
  // sorted(set(text)): ascending byte order, which for ASCII is Python's code-point order.
  for (int byte = 0; byte < 128; ++byte) {
    if (!seen[byte]) continue;
    index_of_[byte] = static_cast<int64_t>(chars_.size());
    chars_.push_back(static_cast<char>(byte));
  }
}

std::vector<int64_t> CharVocab::encode(std::string_view text) const {
  std::vector<int64_t> indices(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const int64_t index = byte < 128 ? index_of_[byte] : -1;
    if (index < 0) {
      std::string shown;  // the vocabulary as one escaped string, so a learner sees what is in it
      for (char c : chars_) shown += c == '\n' ? std::string("\\n") : std::string(1, c);
      throw std::invalid_argument(concat("CharVocab::encode: character ", quoted(text[i]), " at position ", i,
                                         " is not in the vocabulary (", size(), " characters: \"", shown,
                                         "\")"));
    }
    indices[i] = index;
  }
  return indices;
}

Tensor CharVocab::encode_tensor(std::string_view text) const {
  std::vector<int64_t> indices = encode(text);
  const auto n = static_cast<int64_t>(indices.size());
  return tensor(indices, {n});
}

std::string CharVocab::decode(std::span<const int64_t> indices) const {
  std::string text(indices.size(), '\0');
  for (size_t i = 0; i < indices.size(); ++i) {
    check<std::out_of_range>(indices[i] >= 0 && indices[i] < size(), "CharVocab::decode: index ", indices[i],
                             " at position ", i, " is out of range for a vocabulary of ", size(),
                             " characters");
    text[i] = chars_[static_cast<size_t>(indices[i])];
  }
  return text;
}

std::string CharVocab::decode(const Tensor& indices) const {
  detail::check_defined(indices, "CharVocab::decode");
  check(indices.dtype() == kInt64 && indices.dim() == 1,
        "CharVocab::decode: expects a 1-d int64 tensor, got ", dtype_name(indices.dtype()), " ",
        indices.shape());
  return decode(std::span(indices.data_ptr<int64_t>(), static_cast<size_t>(indices.numel())));
}

std::pair<Tensor, Tensor> get_batch(const Tensor& tokens, int64_t batch_size, int64_t block_size,
                                    Generator& generator) {
  detail::check_defined(tokens, "get_batch");
  check(tokens.dtype() == kInt64 && tokens.dim() == 1, "get_batch: expects 1-d int64 tokens, got ",
        dtype_name(tokens.dtype()), " ", tokens.shape());
  check(batch_size >= 1 && block_size >= 1, "get_batch: batch_size and block_size must be at least 1, got ",
        batch_size, " and ", block_size);
  const int64_t n = tokens.size(0);
  check(n > block_size, "get_batch: a block_size of ", block_size, " needs more than ", block_size,
        " tokens, the data has ", n);

  // ix = torch.randint(len(data) - block_size, (batch_size,)): window starts 0 .. N-T-1.
  const Tensor ix = randint(0, n - block_size, {batch_size}, generator);
  std::vector<Tensor> xs;
  std::vector<Tensor> ys;
  for (int64_t i : ix.to_vector<int64_t>()) {
    xs.push_back(tokens.slice(0, i, i + block_size));          // data[i:i+block_size]
    ys.push_back(tokens.slice(0, i + 1, i + block_size + 1));  // data[i+1:i+block_size+1]
  }
  return {stack(xs).detach(), stack(ys).detach()};
}

}  // namespace minigrad::data
