// Tests for the text helpers of the course's language models: read_text, CharVocab and get_batch
// (data/text.hpp). The fixture tests/fixtures/bigram.json ("data") comes from
// tools/reference/bigram_reference.py (PyTorch 1.13.1): the vocabulary of tiny Shakespeare, its
// first 100 tokens, the split sizes and three batches drawn right after torch.manual_seed(1337).
// The other cases check hand values and one table of bad input.
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "data/text.hpp"
#include "fixture.hpp"

namespace {

using namespace minigrad;
using nlohmann::json;

const json& fixture() { return minigrad_test::read_fixture("bigram.json").at("data"); }

const std::string& shakespeare() {
  static const std::string text =
      data::read_text(std::string(MINIGRAD_SOURCE_DIR) + "/assets/tinyshakespeare.txt");
  return text;
}

/// Whether calling `f` throws an exception of type E whose message contains `part`.
template <typename E>
bool throws_with(const std::function<void()>& f, const std::string& part) {
  try {
    f();
  } catch (const E& error) {
    if (std::string(error.what()).find(part) != std::string::npos) return true;
    BOOST_TEST_MESSAGE("message was: " << error.what());
    return false;
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(text)

BOOST_AUTO_TEST_CASE(shakespeare_vocabulary_and_tokens_match_pytorch) {
  const std::string& text = shakespeare();
  BOOST_TEST(static_cast<int64_t>(text.size()) == fixture().at("characters").get<int64_t>());
  data::CharVocab vocab(text);
  BOOST_TEST(vocab.chars() == fixture().at("vocab").get<std::string>());
  BOOST_TEST(vocab.size() == 65);

  const std::vector<int64_t> first = vocab.encode(text.substr(0, 100));
  const auto expected = fixture().at("first_100").get<std::vector<int64_t>>();
  BOOST_TEST(first == expected, boost::test_tools::per_element());
  BOOST_TEST(vocab.decode(first) == text.substr(0, 100));
}

BOOST_AUTO_TEST_CASE(encode_and_decode_of_a_small_text_give_hand_indices) {
  data::CharVocab vocab("hello world\n");  // sorted: '\n' ' ' d e h l o r w
  BOOST_TEST(vocab.chars() == "\n dehlorw");
  const std::vector<int64_t> expected{4, 3, 5, 5, 6, 1, 8, 6, 7, 5, 2, 0};
  const std::vector<int64_t> got = vocab.encode("hello world\n");
  BOOST_TEST(got == expected, boost::test_tools::per_element());
  BOOST_TEST(vocab.decode(std::vector<int64_t>{2, 3, 8}) == "dew");
  Tensor t = vocab.encode_tensor("row");
  BOOST_TEST((t.dtype() == kInt64));
  BOOST_TEST((t.shape() == Shape{3}));
  BOOST_TEST(t.to_vector<int64_t>() == (std::vector<int64_t>{7, 6, 8}), boost::test_tools::per_element());
  BOOST_TEST(vocab.decode(t) == "row");
}

BOOST_AUTO_TEST_CASE(batches_after_manual_seed_1337_match_pytorch) {
  data::CharVocab vocab(shakespeare());
  Tensor tokens = vocab.encode_tensor(shakespeare());
  const int64_t n = tokens.size(0) * 9 / 10;  // int(0.9 * len(data)) for this length
  BOOST_TEST(n == fixture().at("train_tokens").get<int64_t>());
  Tensor train = tokens.slice(0, 0, n);
  Tensor val = tokens.slice(0, n, tokens.size(0));
  BOOST_TEST(val.size(0) == fixture().at("val_tokens").get<int64_t>());

  manual_seed(1337);
  for (const json& batch : fixture().at("batches")) {
    const Tensor& split = batch.at("split") == "train" ? train : val;
    auto [x, y] = data::get_batch(split, batch.at("batch_size"), batch.at("block_size"));
    BOOST_TEST((x.shape() == Shape{4, 8}));
    BOOST_TEST((y.shape() == Shape{4, 8}));
    BOOST_TEST(!x.requires_grad());
    BOOST_TEST(x.to_vector<int64_t>() == batch.at("x").get<std::vector<int64_t>>(),
               boost::test_tools::per_element());
    BOOST_TEST(y.to_vector<int64_t>() == batch.at("y").get<std::vector<int64_t>>(),
               boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(get_batch_targets_are_the_windows_shifted_by_one_token) {
  Tensor tokens = arange(0, 20, 1, {.dtype = kInt64});  // token i is i: a window shows its start
  Generator generator(7);
  auto [x, y] = data::get_batch(tokens, 5, 4, generator);
  for (int64_t b = 0; b < 5; ++b) {
    const double start = x.at({b, 0});
    BOOST_TEST(start >= 0);
    BOOST_TEST(start <= 15);  // randint(20 - 4): 0 .. 15
    for (int64_t t = 0; t < 4; ++t) {
      BOOST_TEST(x.at({b, t}) == start + static_cast<double>(t));
      BOOST_TEST(y.at({b, t}) == start + static_cast<double>(t) + 1);
    }
  }
  // The same seed gives the same windows: they come from the generator given.
  Generator again(7);
  BOOST_TEST(equal(data::get_batch(tokens, 5, 4, again).first, x));
}

BOOST_AUTO_TEST_CASE(read_text_returns_the_file_byte_for_byte) {
  const auto path = std::filesystem::temp_directory_path() / ("minigrad_text_" + std::to_string(::getpid()));
  const std::string content("two\nlines\0and a zero", 20);
  std::ofstream(path, std::ios::binary) << content;
  BOOST_TEST(data::read_text(path.string()) == content);
  std::filesystem::remove(path);
}

// Regression: Windows line ends stayed, so a CRLF copy of the course's text had '\r' in its
// vocabulary. Python 3.11's open(path).read() of these bytes gives 'a\nb\nc\n\n\nd\n'.
BOOST_AUTO_TEST_CASE(read_text_reads_line_ends_as_pythons_universal_newlines) {
  const auto path = std::filesystem::temp_directory_path() / ("minigrad_crlf_" + std::to_string(::getpid()));
  std::ofstream(path, std::ios::binary) << "a\r\nb\rc\n\r\r\nd\r";
  BOOST_TEST(data::read_text(path.string()) == "a\nb\nc\n\n\nd\n");
  std::ofstream(path, std::ios::binary) << std::string(1000, 'x') + "\r\n";
  BOOST_TEST(data::read_text(path.string()) == std::string(1000, 'x') + "\n");
  std::filesystem::remove(path);
}

struct BadInput {
  const char* what;
  std::function<void()> call;
  const char* message;  // a part of the message that must appear
  bool out_of_range = false;
  bool runtime = false;
};

BOOST_AUTO_TEST_CASE(bad_input_gives_a_message_naming_the_problem) {
  data::CharVocab vocab("abc");
  Tensor tokens = arange(0, 10, 1, {.dtype = kInt64});
  const std::vector<BadInput> cases{
      {"empty text", [] { data::CharVocab(""); }, "CharVocab: the text is empty"},
      {"non-ASCII byte", [] { data::CharVocab("caf\xc3\xa9"); }, "byte 0xc3 at position 3 is not ASCII"},
      {"unknown character", [&] { vocab.encode("abZ"); },
       "character 'Z' at position 2 is not in the vocabulary (3 characters: \"abc\")"},
      {"unknown newline", [&] { vocab.encode("a\n"); }, "character '\\n' at position 1"},
      {"index too large",
       [&] {
         vocab.decode(std::vector<int64_t>{0, 3});
       },
       "index 3 at position 1 is out of range for a vocabulary of 3", true},
      {"negative index", [&] { vocab.decode(std::vector<int64_t>{-1}); }, "index -1 at position 0", true},
      {"float tensor to decode", [&] { vocab.decode(zeros({2})); },
       "expects a 1-d int64 tensor, got float32 [2]"},
      {"2-d tokens",
       [&] {
         data::get_batch(tokens.reshape({2, 5}), 2, 2);
       },
       "get_batch: expects 1-d int64 tokens, got int64 [2, 5]"},
      {"float tokens", [&] { data::get_batch(zeros({10}), 2, 2); }, "got float32 [10]"},
      {"block as long as the data", [&] { data::get_batch(tokens, 2, 10); },
       "a block_size of 10 needs more than 10 tokens, the data has 10"},
      {"zero batch", [&] { data::get_batch(tokens, 0, 2); },
       "batch_size and block_size must be at least 1, got 0 and 2"},
      {"missing file", [] { data::read_text("no/such/file.txt"); },
       "read_text: cannot open 'no/such/file.txt': No such file", false, true},
      // Regression: a directory read as an empty text, which CharVocab then called empty.
      {"a directory", [] { data::read_text(std::filesystem::temp_directory_path().string()); },
       "': it is a directory", false, true},
  };
  for (const BadInput& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      if (c.out_of_range) {
        BOOST_TEST(throws_with<std::out_of_range>(c.call, c.message));
      } else if (c.runtime) {
        BOOST_TEST(throws_with<std::runtime_error>(c.call, c.message));
      } else {
        BOOST_TEST(throws_with<std::invalid_argument>(c.call, c.message));
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
