// The collectives on tensors, run as two ranks (tests/CMakeLists.txt starts them with mpiexec):
// each rank contributes values that depend on its rank, and the expected results are worked out
// by hand from the world size, so a rank that sent nothing or the wrong thing shows.
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "distributed/data_parallel.hpp"
#include "distributed/distributed.hpp"
#include "support.hpp"
#include "tests/distributed/process_group_fixture.hpp"

using namespace minigrad;
namespace dist = minigrad::distributed;

BOOST_TEST_GLOBAL_FIXTURE(ProcessGroupFixture);

namespace {

using minigrad_test::contains;

// What rank r contributes: [r + 1, -(r + 1) / 2, r == 0 ? 4 : 1].
std::vector<double> contribution(int rank) { return {rank + 1.0, -(rank + 1.0) / 2, rank == 0 ? 4.0 : 1.0}; }

}  // namespace

BOOST_AUTO_TEST_SUITE(collectives)

BOOST_AUTO_TEST_CASE(the_job_has_two_ranks_numbered_zero_and_one) {
  BOOST_TEST(dist::is_initialized());
  BOOST_TEST(dist::launched_by_mpi());
  BOOST_TEST(dist::get_world_size() == 2);
  BOOST_TEST((dist::get_rank() == 0 || dist::get_rank() == 1));
}

struct ReduceCase {
  dist::ReduceOp op;
  Dtype dtype;
  std::vector<double> expected;  // by hand for two ranks: [1, -0.5, 4] and [2, -1, 1]; int64 [1, 0, 4]
};

BOOST_AUTO_TEST_CASE(all_reduce_combines_every_ranks_tensor_and_leaves_the_result_on_all) {
  const std::vector<ReduceCase> cases = {
      {dist::ReduceOp::SUM, kFloat32, {3, -1.5, 5}},    {dist::ReduceOp::SUM, kFloat64, {3, -1.5, 5}},
      {dist::ReduceOp::PRODUCT, kFloat64, {2, 0.5, 4}}, {dist::ReduceOp::MIN, kFloat32, {1, -1, 1}},
      {dist::ReduceOp::MAX, kFloat64, {2, -0.5, 4}},    {dist::ReduceOp::SUM, kInt64, {3, -1, 5}},
  };
  for (const ReduceCase& c : cases) {
    std::vector<double> mine = contribution(dist::get_rank());
    Tensor t = tensor(mine, {3}, {.dtype = kFloat64}).to(c.dtype);  // to int64: -0.5 truncates to 0
    dist::all_reduce(t, c.op);
    BOOST_TEST(t.dtype() == c.dtype);
    BOOST_TEST(t.to_vector<double>() == c.expected, boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(all_reduce_async_gives_the_sum_after_wait) {
  Tensor t = tensor(contribution(dist::get_rank()), {3});
  dist::Work work = dist::all_reduce_async(t);
  work.wait();
  BOOST_TEST(work.is_completed());
  BOOST_TEST(t.to_vector<double>() == std::vector<double>({3, -1.5, 5}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(broadcast_copies_the_source_ranks_tensor_to_every_rank) {
  const int last = dist::get_world_size() - 1;
  Tensor t = tensor(contribution(dist::get_rank()), {3});
  dist::broadcast(t, last);
  BOOST_TEST(t.to_vector<double>() == contribution(last), boost::test_tools::per_element());

  Tensor flags = tensor(std::vector<bool>{dist::get_rank() == 0, true}, {2});
  dist::broadcast(flags, 0);  // bool goes through broadcast too
  BOOST_TEST(flags.to_vector<double>() == std::vector<double>({1, 1}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(
    collectives_refuse_a_bool_sum_a_rank_that_does_not_exist_and_a_tensor_that_requires_grad) {
  BOOST_CHECK_EXCEPTION(dist::all_reduce(tensor(std::vector<bool>{true}, {1})), std::invalid_argument,
                        [](const std::exception& e) {
                          return contains(e.what(), "all_reduce: cannot reduce a bool tensor (shape [1])");
                        });
  BOOST_CHECK_EXCEPTION(dist::broadcast(zeros({2}), 2), std::out_of_range, [](const std::exception& e) {
    return contains(e.what(), "broadcast: src 2 is not a rank of this job (0..1)");
  });
  Tensor w = zeros({2}).requires_grad_();
  BOOST_CHECK_THROW(dist::all_reduce(w), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(shard_batch_gives_each_rank_its_contiguous_rows) {
  // 4 rows [0..7] as [4, 2] over 2 ranks: rank 0 rows 0-1 = [0, 1, 2, 3], rank 1 rows 2-3 = [4, 5, 6, 7].
  Tensor batch = arange(0, 8, 1, {.dtype = kInt64}).reshape({4, 2});
  Tensor mine = dist::shard_batch(batch);
  const double start = 4.0 * dist::get_rank();
  BOOST_TEST(mine.shape() == Shape({2, 2}));
  BOOST_TEST(mine.to_vector<double>() == std::vector<double>({start, start + 1, start + 2, start + 3}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(shard_batch_refuses_a_batch_that_does_not_divide_by_the_ranks) {
  BOOST_CHECK_EXCEPTION(dist::shard_batch(zeros({5, 3})), std::invalid_argument, [](const std::exception& e) {
    return contains(e.what(), "shard_batch: the global batch of 5 rows does not divide by the 2 ranks");
  });
}

BOOST_AUTO_TEST_SUITE_END()
