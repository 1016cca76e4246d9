// Tests for set_num_threads and detail::parallel_for (autograd/parallel.hpp): every index covered
// once in contiguous pieces, exceptions carried back, nested loops kept on their thread, and the
// ops split over the threads giving at 2 and 3 threads what they give at 1 (bit for bit, except
// a sum over everything, whose pieces are added in another grouping: float rounding only), and
// set_flush_denormal on the calling thread and on the workers that run its loops.
#include <atomic>
#include <bit>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "autograd/machinery/parallel.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "nn/functional.hpp"

namespace {

using namespace minigrad;

// Restores the thread count a test changed.
struct ThreadCount {
  int before = get_num_threads();
  ~ThreadCount() { set_num_threads(before); }
};

// Stops flushing subnormals on this thread at the end of a test that started it.
struct FlushOff {
  ~FlushOff() { set_flush_denormal(false); }
};

// float32's subnormals: below 2^-126 (about 1.18e-38). Doubling one is exact without flushing.
constexpr float kTiny = 1e-39f;
constexpr float kTwiceTiny = 2 * kTiny;  // computed by the compiler, whatever the thread's mode

// How many elements of t hold exactly `value`, compared as bits: a thread that flushes would also
// read a subnormal as equal to 0.
int64_t count_bits(const Tensor& t, float value) {
  int64_t n = 0;
  for (const float v : t.to_vector<float>())
    n += std::bit_cast<uint32_t>(v) == std::bit_cast<uint32_t>(value);
  return n;
}

// The outputs (and gradients of the inputs) of one workload, as flat vectors.
using Results = std::vector<std::vector<float>>;

Results run_ops() {
  manual_seed(1);
  Tensor a = randn({300, 500}, {.requires_grad = true});
  Tensor b = randn({300, 500}, {.requires_grad = true});
  Tensor q = randn({128, 64, 32}, {.requires_grad = true});
  Tensor k = randn({128, 32, 64}, {.requires_grad = true});
  const Tensor c = randn({300, 2}), w = randn({256, 2});  // a product small enough for one call
  Tensor bias = randn({256}, {.requires_grad = true});
  Results out;
  auto keep = [&](const Tensor& t) { out.push_back(t.to_vector<float>()); };
  const Tensor sum = (a * b + a).relu().exp().softmax(-1).sum(1);
  Generator generator(5);
  const Tensor dropped = nn::functional::dropout(a, 0.2, true, generator);
  const Tensor scores = matmul(q, k);
  const Tensor projected = nn::functional::linear(c, w, bias);  // its bias gradient: 2 pieces of columns
  (sum.sum() + dropped.sum(0).sum() + (scores * scores).sum() + (projected * projected).sum()).backward();
  for (const Tensor& t : {sum, dropped, scores, a.grad(), b.grad(), q.grad(), k.grad(), bias.grad()}) keep(t);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(parallel)

BOOST_AUTO_TEST_CASE(set_num_threads_sets_what_get_num_threads_reports) {
  ThreadCount restore;
  BOOST_TEST(get_num_threads() >= 1);
  set_num_threads(3);
  BOOST_TEST(get_num_threads() == 3);
  set_num_threads(1);
  BOOST_TEST(get_num_threads() == 1);
}

BOOST_AUTO_TEST_CASE(set_num_threads_refuses_fewer_than_one_thread) {
  BOOST_CHECK_EXCEPTION(set_num_threads(0), std::invalid_argument, [](const std::invalid_argument& e) {
    return std::string(e.what()) == "set_num_threads: expected a positive number of threads, got 0";
  });
}

BOOST_AUTO_TEST_CASE(parallel_for_covers_every_index_once_in_contiguous_pieces) {
  ThreadCount restore;
  struct Case {
    int threads;
    int64_t n, grain, pieces;  // pieces expected: min(threads, ceil(n / grain)), 1 if n <= grain
  };
  for (const Case c : {Case{1, 100000, 10, 1}, Case{2, 100000, 10, 2}, Case{3, 100000, 10, 3},
                       Case{3, 25, 10, 3}, Case{3, 15, 10, 2}, Case{2, 10, 10, 1}, Case{4, 0, 1, 1}}) {
    BOOST_TEST_CONTEXT(c.threads << " threads, n " << c.n << ", grain " << c.grain) {
      set_num_threads(c.threads);
      BOOST_TEST(detail::parallel_pieces(c.n, c.grain) == c.pieces);
      std::vector<std::atomic<int>> seen(static_cast<size_t>(c.n));
      std::atomic<int> calls{0};
      detail::parallel_for(c.n, c.grain, [&](int64_t begin, int64_t end) {
        ++calls;
        for (int64_t i = begin; i < end; ++i) ++seen[static_cast<size_t>(i)];
      });
      int64_t wrong = 0;
      for (const auto& count : seen) wrong += count != 1 ? 1 : 0;
      BOOST_TEST(wrong == 0);
      BOOST_TEST(calls == (c.n == 0 ? 0 : c.pieces));
    }
  }
}

BOOST_AUTO_TEST_CASE(an_exception_in_a_piece_reaches_the_caller) {
  ThreadCount restore;
  set_num_threads(2);
  auto throw_in_last_piece = [](int64_t, int64_t end) {
    if (end == 100000) throw std::runtime_error("piece failed");
  };
  BOOST_CHECK_THROW(detail::parallel_for(100000, 10, throw_in_last_piece), std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int64_t> total{0};
  detail::parallel_for(100000, 10, [&](int64_t begin, int64_t end) { total += end - begin; });
  BOOST_TEST(total == 100000);
}

BOOST_AUTO_TEST_CASE(a_nested_loop_runs_on_the_thread_of_its_piece) {
  ThreadCount restore;
  set_num_threads(2);
  std::atomic<int> inner_pieces{0};
  detail::parallel_for(100000, 10, [&](int64_t, int64_t) {
    BOOST_CHECK(detail::parallel_pieces(100000, 10) == 1);
    detail::parallel_for(100000, 10, [&](int64_t, int64_t) { ++inner_pieces; });
  });
  BOOST_TEST(inner_pieces == 2);  // one inner loop per outer piece, each in one piece
}

BOOST_AUTO_TEST_CASE(ops_give_the_same_numbers_at_1_2_and_3_threads) {
  ThreadCount restore;
  set_num_threads(1);
  const Results one = run_ops();
  for (const int threads : {2, 3}) {
    BOOST_TEST_CONTEXT(threads << " threads") {
      set_num_threads(threads);
      const Results many = run_ops();
      BOOST_TEST_REQUIRE(many.size() == one.size());
      for (size_t r = 0; r < one.size(); ++r) {
        BOOST_TEST_CONTEXT("result " << r) {
          BOOST_TEST(many[r] == one[r], boost::test_tools::per_element());
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_sum_over_everything_differs_between_thread_counts_by_rounding_only) {
  ThreadCount restore;
  manual_seed(2);
  const Tensor x = randn({1000, 1000});
  double exact = 0;  // in double, in order: the reference
  for (const float v : x.to_vector<float>()) exact += v;
  for (const int threads : {1, 2, 3}) {
    set_num_threads(threads);
    const float first = x.sum().item<float>();
    BOOST_TEST(x.sum().item<float>() == first);  // the same pieces each time
    BOOST_TEST(first == static_cast<float>(exact), boost::test_tools::tolerance(1e-6f));
  }
}

// Each fast case of the broadcasting loop, split over the threads: a single number on either
// side, a side repeating over the leading dims on either side (a bias, a causal mask), and the
// general case, which stays on one thread. Every element is checked against its definition.
BOOST_AUTO_TEST_CASE(broadcasting_ops_split_over_the_threads_give_every_element_its_definition) {
  ThreadCount restore;
  manual_seed(3);
  const Tensor big = randn({100, 1000});  // 3 pieces of 32 rows and more at 2 and 3 threads
  const Tensor row = randn({1000}), number = randn({}), column = randn({100, 1});
  const Tensor mask = randn({1000}) > 0.0;
  const std::vector<float> x = big.to_vector<float>(), r = row.to_vector<float>(),
                           c = column.to_vector<float>();
  const std::vector<bool> m = mask.to_vector<bool>();
  const float s = number.item<float>();
  for (const int threads : {1, 2, 3}) {
    BOOST_TEST_CONTEXT(threads << " threads") {
      set_num_threads(threads);
      const std::vector<float> times_number = (big * number).to_vector<float>();
      const std::vector<float> number_minus = (number - big).to_vector<float>();
      const std::vector<float> plus_row = (big + row).to_vector<float>();
      const std::vector<float> row_minus = (row - big).to_vector<float>();
      const std::vector<float> filled = big.masked_fill(mask, -1.5).to_vector<float>();
      const std::vector<float> general = (row * column).to_vector<float>();  // [1000] x [100, 1]
      for (int64_t i = 0; i < 100; ++i) {
        for (int64_t j = 0; j < 1000; ++j) {
          const int64_t e = i * 1000 + j;
          if (times_number[e] != x[e] * s || number_minus[e] != s - x[e] || plus_row[e] != x[e] + r[j] ||
              row_minus[e] != r[j] - x[e] || filled[e] != (m[j] ? -1.5f : x[e]) ||
              general[e] != r[j] * c[i]) {
            BOOST_ERROR("element [" << i << ", " << j << "] differs from its definition");
            return;
          }
        }
      }
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)
BOOST_AUTO_TEST_CASE(set_flush_denormal_reads_and_writes_subnormals_as_zero_until_turned_off) {
  FlushOff restore;
  const Tensor tiny = full({2}, kTiny);
  const Tensor small = full({2}, 1e-20f);  // normal; its square, 1e-40, is not
  BOOST_TEST(count_bits(tiny * 2.0, kTwiceTiny) == 2);
  BOOST_TEST(set_flush_denormal(true));
  BOOST_TEST(count_bits(tiny * 2.0, 0.0f) == 2);     // a subnormal operand reads as 0
  BOOST_TEST(count_bits(small * small, 0.0f) == 2);  // a subnormal result is stored as 0
  BOOST_TEST(set_flush_denormal(false));
  BOOST_TEST(count_bits(tiny * 2.0, kTwiceTiny) == 2);
  BOOST_TEST(count_bits(small * small, 0.0f) == 0);
}

// 100,000 elements: two pieces at 2 threads, one of them on the pool's worker. The worker runs a
// flushing thread's loop, then one of a thread that does not flush, then the first one's again.
BOOST_AUTO_TEST_CASE(the_workers_run_a_loop_in_the_mode_of_the_thread_that_started_it) {
  ThreadCount threads;
  FlushOff restore;
  set_num_threads(2);
  const Tensor tiny = full({100000}, kTiny);
  BOOST_TEST(set_flush_denormal(true));
  BOOST_TEST(count_bits(tiny * 2.0, 0.0f) == 100000);
  int64_t kept = 0;
  std::thread other([&] {
    set_flush_denormal(false);  // a new thread starts in the mode of the thread that made it
    kept = count_bits(tiny * 2.0, kTwiceTiny);
  });
  other.join();
  BOOST_TEST(kept == 100000);
  BOOST_TEST(count_bits(tiny * 2.0, 0.0f) == 100000);
}
#endif

BOOST_AUTO_TEST_SUITE_END()
