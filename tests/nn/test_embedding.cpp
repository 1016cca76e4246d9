// Tests for nn::Embedding and F::embedding: PyTorch's initial weights after manual_seed(1337)
// (tests/fixtures/indexing.json, written by tools/reference/indexing_reference.py), the padding
// row, printing as PyTorch's repr, the bigram model's lookup and its gradient, bad input.
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "fixture_support.hpp"
#include "nn/embedding.hpp"
#include "nn/functional.hpp"

namespace {

using namespace minigrad;
namespace F = minigrad::nn::functional;
using nn_test::check_close;
using nn_test::check_throws;
using nn_test::json;

/// The fixture's entries of one kind (embedding_init, embedding_course).
std::vector<json> entries(const std::string& kind) {
  std::vector<json> out;
  for (const json& c : nn_test::fixture("indexing.json").at("cases"))
    if (c.at("kind") == kind) out.push_back(c);
  return out;
}

std::optional<int64_t> padding_of(const json& entry) {
  if (entry.at("padding_idx").is_null()) return std::nullopt;
  return entry.at("padding_idx").get<int64_t>();
}

BOOST_AUTO_TEST_SUITE(embedding)

BOOST_AUTO_TEST_CASE(embedding_init_matches_pytorch_seed_1337) {
  const std::vector<json> inits = entries("embedding_init");
  BOOST_TEST_REQUIRE(inits.size() == 4u);
  for (const json& e : inits) {
    BOOST_TEST_CONTEXT(e.at("repr").get<std::string>()) {
      manual_seed(1337);
      nn::Embedding table(e.at("num_embeddings"), e.at("embedding_dim"), padding_of(e));
      BOOST_TEST(table.weight.shape() == Shape({e.at("num_embeddings"), e.at("embedding_dim")}));
      BOOST_TEST(dtype_name(table.weight.dtype()) == "float32");
      check_close(table.weight, e.at("weight"), 0.0, "weight");  // the same draws: bit for bit
      BOOST_TEST(to_string(table) == e.at("repr").get<std::string>());
    }
  }
}

BOOST_AUTO_TEST_CASE(the_course_embedding_draws_what_pytorch_draws_and_leaves_the_generator_as_pytorch) {
  const json course = entries("embedding_course").at(0);
  manual_seed(1337);
  nn::Embedding table(65, 128);
  const std::vector<double> w = table.weight.to_vector<double>();
  const std::vector<double> first(w.begin(), w.begin() + 16), last(w.end() - 16, w.end());
  check_close(first, course.at("first"), 0.0, "first 16 weights");
  check_close(last, course.at("last"), 0.0, "last 16 weights");
  BOOST_TEST(table.weight.sum().item<double>() == course.at("sum").get<double>(),
             boost::test_tools::tolerance(1e-4));
  check_close(randn({4}), course.at("next_randn"), 0.0, "the next randn after the table");
  BOOST_TEST(to_string(table) == "Embedding(65, 128)");
  const auto named = table.named_parameters();
  BOOST_TEST_REQUIRE(named.size() == 1u);
  BOOST_TEST(named[0].first == "weight");
  BOOST_TEST(named[0].second.requires_grad());
}

BOOST_AUTO_TEST_CASE(the_padding_row_is_zero_and_gets_no_gradient) {
  manual_seed(0);
  nn::Embedding table(4, 3, 0);
  BOOST_TEST(to_string(table) == "Embedding(4, 3, padding_idx=0)");
  BOOST_TEST(table.weight[0].abs().sum().item<double>() == 0.0);
  BOOST_TEST(table.weight[1].abs().sum().item<double>() > 0.0);
  table(tensor(std::vector<int64_t>{0, 1, 0, 1}, {2, 2})).sum().backward();
  const std::vector<double> expected{0, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0};  // id 1 twice, id 0 is padding
  BOOST_TEST(table.weight.grad().to_vector<double>() == expected, boost::test_tools::per_element());
  nn::Embedding last(4, 3, -1);
  BOOST_TEST(*last.padding_idx == 3);  // as PyTorch: a negative padding_idx counts from the end
  BOOST_TEST(to_string(last) == "Embedding(4, 3, padding_idx=3)");
}

BOOST_AUTO_TEST_CASE(a_bigram_lookup_gives_B_T_C_logits_and_adds_up_repeated_ids) {
  // The course's bigram: idx [B, T] of token ids -> logits [B, T, V], one table row per id.
  manual_seed(1337);
  nn::Embedding table(5, 5);
  const Tensor idx = tensor(std::vector<int64_t>{1, 1, 4, 0, 1, 2}, {2, 3});
  const Tensor logits = table(idx);
  BOOST_TEST(logits.shape() == Shape({2, 3, 5}));
  BOOST_TEST(logits.grad_fn()->name() == "EmbeddingBackward0");
  BOOST_TEST(logits[1][2].equal(table.weight[2]));
  BOOST_TEST(F::embedding(idx, table.weight).equal(logits));
  logits.sum().backward();
  const std::vector<double> counts{1, 3, 1, 0, 1};  // how often each id occurs in idx
  for (int64_t v = 0; v < 5; ++v) {
    BOOST_TEST(table.weight.grad()[v].sum().item<double>() == 5 * counts[v]);
  }
}

BOOST_AUTO_TEST_CASE(embedding_rejects_bad_sizes_padding_and_ids) {
  check_throws<std::invalid_argument>([] { nn::Embedding(-1, 3); },
                                      {"Embedding", "non-negative", "num_embeddings=-1"});
  check_throws<std::out_of_range>([] { nn::Embedding(65, 3, 65); },
                                  {"Embedding", "padding_idx 65", "within"});
  check_throws<std::out_of_range>([] { nn::Embedding(65, 3, -66); }, {"Embedding", "padding_idx -66"});
  nn::Embedding table(65, 3);
  check_throws<std::out_of_range>([&] { table(tensor(std::vector<int64_t>{70}, {1})); },
                                  {"embedding: index 70 is out of range for 65 embeddings"});
  check_throws<std::invalid_argument>([&] { table(zeros({2})); }, {"embedding", "int64", "float32"});
  check_throws<std::invalid_argument>(
      [&] { F::embedding(table.weight, tensor(std::vector<int64_t>{1}, {1})); },
      {"F::embedding takes (input, weight)"});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
