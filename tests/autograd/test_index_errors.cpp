// The indexing ops' bad input (autograd/ops_index.hpp, Tensor::index): each mistake throws a
// standard exception whose message names the op and the values or shapes involved, one test per
// kind of mistake. The messages follow PyTorch's rules; their wording is ours.
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/autograd.hpp"
#include "support.hpp"

using namespace minigrad;
using namespace minigrad::indexing;

namespace {

using Values = std::vector<double>;

Tensor matrix() { return tensor(Values{0, 1, 2, 3, 4, 5}, {2, 3}, {.dtype = kFloat64}); }
Tensor longs(const std::vector<int64_t>& values, const Shape& shape) { return tensor(values, shape); }

using minigrad_test::message_has;

}  // namespace

BOOST_AUTO_TEST_SUITE(index_errors)

BOOST_AUTO_TEST_CASE(embedding_rejects_ids_out_of_range_and_non_int64_ids) {
  const Tensor table = zeros({65, 4});
  BOOST_CHECK_EXCEPTION(embedding(table, longs({3, 70}, {2})), std::out_of_range,
                        message_has({"embedding: index 70 is out of range for 65 embeddings"}));
  BOOST_CHECK_EXCEPTION(embedding(table, longs({-1}, {1})), std::out_of_range,
                        message_has({"embedding: index -1 is out of range for 65 embeddings"}));
  BOOST_CHECK_EXCEPTION(embedding(table, zeros({2})), std::invalid_argument,
                        message_has({"embedding", "int64", "float32"}));
  BOOST_CHECK_EXCEPTION(embedding(longs({1}, {1}), table), std::invalid_argument,
                        message_has({"embedding", "swapped"}));
  BOOST_CHECK_EXCEPTION(embedding(zeros({65}), longs({1}, {1})), std::invalid_argument,
                        message_has({"embedding", "2-d", "[65]"}));
  BOOST_CHECK_EXCEPTION(embedding(table, longs({1}, {1}), 65), std::out_of_range,
                        message_has({"embedding", "padding_idx 65"}));
}

BOOST_AUTO_TEST_CASE(index_ops_reject_non_int64_indices_and_indices_out_of_range) {
  const Tensor m = matrix();
  BOOST_CHECK_EXCEPTION(index_select(m, 0, zeros({1})), std::invalid_argument,
                        message_has({"index_select", "int64", "float32"}));
  BOOST_CHECK_EXCEPTION(index_select(m, 0, longs({0}, {1, 1})), std::invalid_argument,
                        message_has({"index_select", "1-d", "[1, 1]"}));
  BOOST_CHECK_EXCEPTION(index_select(m, 1, longs({3}, {1})), std::out_of_range,
                        message_has({"index_select", "index 3", "dim 1", "[2, 3]"}));
  BOOST_CHECK_EXCEPTION(index_select(m, 0, longs({-1}, {1})), std::out_of_range, message_has({"index -1"}));
  BOOST_CHECK_EXCEPTION(m[longs({-3}, {1})], std::out_of_range, message_has({"index", "-3", "[2, 3]"}));
  BOOST_CHECK_EXCEPTION(m[tensor(std::vector<bool>{true, false}, {2})], std::invalid_argument,
                        message_has({"index", "int64", "bool"}));
  BOOST_CHECK_EXCEPTION(one_hot(zeros({2}), 3), std::invalid_argument, message_has({"one_hot", "int64"}));
  BOOST_CHECK_EXCEPTION(one_hot(longs({3}, {1}), 3), std::invalid_argument,
                        message_has({"one_hot", "class value 3", "smaller than num_classes 3"}));
  BOOST_CHECK_EXCEPTION(one_hot(longs({-1}, {1}), 3), std::invalid_argument,
                        message_has({"one_hot", "non-negative"}));
  BOOST_CHECK_EXCEPTION(one_hot(zeros({0}, {.dtype = kInt64})), std::invalid_argument,
                        message_has({"one_hot", "empty"}));
}

BOOST_AUTO_TEST_CASE(gather_rejects_an_index_of_the_wrong_rank_or_size) {
  const Tensor m = matrix();
  BOOST_CHECK_EXCEPTION(gather(m, 1, longs({1, 0}, {2})), std::invalid_argument,
                        message_has({"gather: index has 1 dims but the input has 2"}));
  BOOST_CHECK_EXCEPTION(gather(m, 1, longs({0, 0, 0}, {3, 1})), std::invalid_argument,
                        message_has({"gather", "larger than input", "dim 0"}));
  BOOST_CHECK_EXCEPTION(gather(m, 0, longs({2}, {1, 1})), std::out_of_range,
                        message_has({"gather", "index 2", "dim 0"}));
  BOOST_CHECK_EXCEPTION(gather(m, 2, longs({0}, {1, 1})), std::out_of_range,
                        message_has({"gather", "dim 2"}));
}

BOOST_AUTO_TEST_CASE(index_add_and_scatter_add_reject_mismatched_shapes_and_dtypes) {
  const Tensor m = matrix();
  BOOST_CHECK_EXCEPTION(index_add(m, 0, longs({0}, {1}), zeros({2, 3}, {.dtype = kFloat64})),
                        std::invalid_argument, message_has({"index_add", "[2, 3]", "must be [1, 3]"}));
  BOOST_CHECK_EXCEPTION(index_add(m, 0, longs({0}, {1}), zeros({1, 3})), std::invalid_argument,
                        message_has({"index_add", "float64", "float32", "same dtype"}));
  BOOST_CHECK_EXCEPTION(index_add(m, 0, longs({2}, {1}), zeros({1, 3}, {.dtype = kFloat64})),
                        std::out_of_range, message_has({"index_add", "index 2"}));
  BOOST_CHECK_EXCEPTION(scatter_add(m, 0, longs({0}, {1, 1}), zeros({1, 1})), std::invalid_argument,
                        message_has({"scatter_add", "same dtype"}));
  BOOST_CHECK_EXCEPTION(scatter_add(m, 0, longs({0, 0}, {1, 2}), zeros({1, 1}, {.dtype = kFloat64})),
                        std::invalid_argument, message_has({"scatter_add", "larger than src"}));
  BOOST_CHECK_EXCEPTION(scatter_add(m, 0, longs({0}, {1}), zeros({1}, {.dtype = kFloat64})),
                        std::invalid_argument, message_has({"scatter_add", "dims"}));
}

BOOST_AUTO_TEST_CASE(tril_and_triu_reject_fewer_than_two_dims) {
  BOOST_CHECK_EXCEPTION(tril(zeros({3})), std::invalid_argument,
                        message_has({"tril", "at least 2 dims", "[3]"}));
  BOOST_CHECK_EXCEPTION(triu(scalar_tensor(1.0)), std::invalid_argument,
                        message_has({"triu", "at least 2 dims", "[]"}));
}

BOOST_AUTO_TEST_CASE(index_rejects_bad_entry_lists) {
  const Tensor m = matrix();
  BOOST_CHECK_EXCEPTION(m.index({0, 0, 0}), std::out_of_range,
                        message_has({"index", "too many indices", "[2, 3]"}));
  BOOST_CHECK_EXCEPTION(m.index({Ellipsis, Ellipsis}), std::invalid_argument,
                        message_has({"index", "ellipsis"}));
  BOOST_CHECK_EXCEPTION(m.index({Slice(None, None, 0)}), std::invalid_argument,
                        message_has({"slice", "step", "0"}));
  BOOST_CHECK_EXCEPTION(m.index({Slice(None, None, -1)}), std::invalid_argument,
                        message_has({"slice", "step", "-1"}));
  BOOST_CHECK_EXCEPTION(m.index({Slice(), 3}), std::out_of_range,
                        message_has({"select", "index 3", "dim 1"}));
  const Tensor i = longs({0}, {1});
  BOOST_CHECK_EXCEPTION(m.index({i, i}), std::invalid_argument, message_has({"index", "one tensor"}));
}

BOOST_AUTO_TEST_CASE(index_put_rejects_values_that_do_not_broadcast_and_changes_that_autograd_would_miss) {
  Tensor m = matrix();
  BOOST_CHECK_EXCEPTION(
      m.index_put_({0}, zeros({4}, {.dtype = kFloat64})), std::invalid_argument,
      message_has({"index_put_", "value tensor of shape [4]", "indexing result of shape [3]"}));
  BOOST_CHECK_EXCEPTION(m.index_put_({0}, zeros({2, 1, 3})), std::invalid_argument,
                        message_has({"index_put_", "[2, 1, 3]", "[3]"}));
  BOOST_CHECK_EXCEPTION(m.index_put_({5}, 1.0), std::out_of_range,
                        message_has({"index_put_: select: index 5", "[2, 3]"}));
  BOOST_CHECK_EXCEPTION(m.index_put_({0, 0, 0}, 1.0), std::out_of_range,
                        message_has({"index_put_: index: too many indices"}));
  BOOST_CHECK_EXCEPTION(m.index_put_({Slice(None, None, -1)}, 1.0), std::invalid_argument,
                        message_has({"index_put_: slice: step"}));
  BOOST_TEST(m.version() == 0);  // nothing written by a call that threw
  BOOST_TEST(m.to_vector<double>() == matrix().to_vector<double>(), boost::test_tools::per_element());

  Tensor leaf = zeros({3}, {.requires_grad = true});
  BOOST_CHECK_EXCEPTION(leaf.index_put_({0}, 1.0), std::runtime_error, message_has({"index_put_", "leaf"}));
  Tensor plain = zeros({3});
  const Tensor v = ones({1}, {.requires_grad = true});
  BOOST_CHECK_EXCEPTION(plain.index_put_({Slice(None, 1)}, v), std::runtime_error,
                        message_has({"index_put_", "[1]", "require grad"}));
  {
    NoGradGuard no_grad;  // an update outside grad mode, as an optimizer's
    leaf.index_put_({0}, 1.0);
    plain.index_put_({Slice(None, 1)}, v);
  }
  BOOST_TEST(leaf.to_vector<double>() == Values({1, 0, 0}), boost::test_tools::per_element());
  BOOST_TEST(plain.to_vector<double>() == Values({1, 0, 0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(split_and_chunk_reject_bad_sizes) {
  const Tensor x = zeros({5, 2});
  BOOST_CHECK_EXCEPTION(split(x, 0), std::invalid_argument, message_has({"split", "0", "size 5"}));
  BOOST_CHECK_EXCEPTION(split(x, -1), std::invalid_argument, message_has({"split", "non-negative"}));
  BOOST_CHECK_EXCEPTION(split(x, {2, 2}), std::invalid_argument,
                        message_has({"split", "[2, 2]", "add up to 4", "size 5"}));
  BOOST_CHECK_EXCEPTION(chunk(x, 0), std::invalid_argument, message_has({"chunk", "greater than 0"}));
  // Regression: sizes whose sum wrapped around to 5 were accepted ([0, 1, 2, 3, 4], [], [...]), and
  // chunk's ceil(5 / chunks) overflowed for a huge count. torch 1.13 wraps too: it returns those
  // three pieces, and its chunk(x, 2**63 - 1) says split_size can only be 0 if the dim has size 0.
  const int64_t huge = std::numeric_limits<int64_t>::max();
  BOOST_CHECK_EXCEPTION(split(x, {7, huge, huge}), std::invalid_argument,
                        message_has({"split", "add up to more than dim 0", "(5)"}));
  BOOST_TEST(chunk(x, huge).size() == 5u);  // as chunk(x, 100): pieces of one row
  BOOST_CHECK_EXCEPTION(one_hot(longs({huge}, {1})), std::invalid_argument,
                        message_has({"one_hot", "class value 9223372036854775807"}));
  BOOST_CHECK_EXCEPTION(split(scalar_tensor(1.0), 1), std::invalid_argument, message_has({"split", "0-d"}));
}

BOOST_AUTO_TEST_SUITE_END()
