// Tests for minigrad::Generator against numbers printed by real PyTorch 1.13.1.
// The fixture tests/fixtures/random.json comes from tools/reference/random_reference.py: each
// case seeds torch, then records one or more calls in order. Here each case seeds a Generator,
// replays the same calls on raw buffers and compares: float32 within 1e-6, float64 within
// 1e-12, integers exactly. Further cases check copying, reseeding and every bad-argument throw.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "autograd/random.hpp"
#include "autograd/tensor.hpp"
#include "fixture.hpp"

namespace {

using minigrad::Generator;
using nlohmann::json;

const json& fixture() { return minigrad_test::read_fixture("random.json"); }

// Compares got[i] with the recorded values; one assertion per step naming the worst element.
template <typename T>
void check_close(const std::vector<T>& got, const json& expected, double tolerance) {
  BOOST_TEST_REQUIRE(got.size() == expected.size());
  double worst = 0.0;
  size_t worst_index = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double error = std::abs(static_cast<double>(got[i]) - expected[i].get<double>());
    if (!(error <= worst)) {  // also catches NaN
      worst = error;
      worst_index = i;
    }
  }
  BOOST_TEST(worst <= tolerance, "element " << worst_index << ": got " << got[worst_index] << ", PyTorch "
                                            << expected[worst_index]);
}

template <typename T>
void check_exact(const std::vector<T>& got, const json& expected) {
  BOOST_TEST_REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    BOOST_TEST(got[i] == expected[i].get<T>(), "element " << i);
  }
}

// Runs a floating-point step (uniform, normal or bernoulli) into a new buffer.
template <typename T>
std::vector<T> run_real(Generator& gen, const json& step) {
  const std::string op = step["op"];
  std::vector<T> out(step["n"].get<size_t>());
  const auto n = static_cast<int64_t>(out.size());
  if (op == "uniform") {
    gen.uniform(out.data(), n, step["from"].get<double>(), step["to"].get<double>());
  } else if (op == "normal") {
    gen.normal(out.data(), n, step["mean"].get<double>(), step["std"].get<double>());
  } else if (op == "bernoulli") {
    gen.bernoulli(out.data(), n, step["p"].get<double>());
  } else {
    BOOST_FAIL("unknown floating-point op " << op);
  }
  return out;
}

// Runs an integer step (random_from_to, random_full or randperm) into a new buffer.
std::vector<int64_t> run_int(Generator& gen, const json& step) {
  const std::string op = step["op"];
  std::vector<int64_t> out(step["n"].get<size_t>());
  const auto n = static_cast<int64_t>(out.size());
  if (op == "random_from_to") {
    gen.random_from_to(out.data(), n, step["from"].get<int64_t>(), step["to"].get<int64_t>());
  } else if (op == "random_full") {
    gen.random_full(out.data(), n);
  } else if (op == "randperm") {
    gen.randperm(out.data(), n);
  } else {
    BOOST_FAIL("unknown integer op " << op);
  }
  return out;
}

void check_step(Generator& gen, const json& step) {
  const std::string dtype = step["dtype"];
  if (dtype == "float32") {
    check_close(run_real<float>(gen, step), step["values"], 1e-6);
  } else if (dtype == "float64") {
    check_close(run_real<double>(gen, step), step["values"], 1e-12);
  } else if (dtype == "int64") {
    check_exact(run_int(gen, step), step["values"]);
  } else if (dtype == "uint32") {  // raw32: the engine's words themselves
    std::vector<uint32_t> words;
    for (size_t i = 0; i < step["n"].get<size_t>(); ++i) {
      words.push_back(gen.random());
    }
    check_exact(words, step["values"]);
  } else {
    BOOST_FAIL("unknown dtype " << dtype);
  }
}

// Replays every fixture case whose name starts with `prefix` (there must be some).
void check_cases_starting_with(const std::string& prefix) {
  int checked = 0;
  for (const json& c : fixture()["cases"]) {
    const std::string name = c["name"];
    if (name.rfind(prefix, 0) != 0) {
      continue;
    }
    BOOST_TEST_CONTEXT("case " << name) {
      Generator gen(c["seed"].get<uint64_t>());
      int index = 0;
      for (const json& step : c["steps"]) {
        BOOST_TEST_CONTEXT("step " << index++ << " (" << step["op"] << ", " << step["dtype"]
                                   << ", n = " << step["n"] << ")") {
          check_step(gen, step);
        }
      }
    }
    ++checked;
  }
  BOOST_TEST(checked > 0, "no fixture case starts with " << prefix);
}

// Each prefix is one test case below; every fixture case must fall under one of them.
const std::vector<std::string> case_prefixes = {
    "rand_",       "randn_",     "uniform_",       "normal_",       "randint_", "randperm_",
    "random_full", "bernoulli_", "draws_continue", "small_normals", "raw32"};

template <typename Exception = std::invalid_argument>
auto message_is(const std::string& expected) {
  return [expected](const Exception& e) { return std::string(e.what()) == expected; };
}

}  // namespace

// The suite is named after the file; it sits in a namespace because a global `random` would
// clash with POSIX random() from <stdlib.h>.
namespace minigrad_tests {

BOOST_AUTO_TEST_SUITE(random)

BOOST_AUTO_TEST_CASE(every_fixture_case_is_checked_by_a_test) {
  for (const json& c : fixture()["cases"]) {
    const std::string name = c["name"];
    int matches = 0;
    for (const std::string& prefix : case_prefixes) {
      matches += name.rfind(prefix, 0) == 0 ? 1 : 0;
    }
    BOOST_TEST(matches == 1, name << " matches " << matches << " test prefixes");
  }
}

BOOST_AUTO_TEST_CASE(raw_32_bit_draws_match_pytorch_mt19937_for_seeds_0_and_42) {
  check_cases_starting_with("raw32");
}

BOOST_AUTO_TEST_CASE(rand_matches_pytorch_for_seeds_0_and_42) { check_cases_starting_with("rand_"); }

BOOST_AUTO_TEST_CASE(randn_matches_pytorch_for_seeds_0_and_42) { check_cases_starting_with("randn_"); }

BOOST_AUTO_TEST_CASE(uniform_with_bounds_matches_pytorch_for_seeds_0_and_42) {
  check_cases_starting_with("uniform_");
}

BOOST_AUTO_TEST_CASE(normal_with_mean_and_std_matches_pytorch_for_seeds_0_and_42) {
  check_cases_starting_with("normal_");
}

BOOST_AUTO_TEST_CASE(randint_matches_pytorch_for_seeds_0_and_42) { check_cases_starting_with("randint_"); }

BOOST_AUTO_TEST_CASE(randperm_matches_pytorch_for_seeds_0_and_42) { check_cases_starting_with("randperm_"); }

BOOST_AUTO_TEST_CASE(random_full_matches_pytorch_for_seeds_0_and_42) {
  check_cases_starting_with("random_full");
}

BOOST_AUTO_TEST_CASE(bernoulli_matches_pytorch_for_seeds_0_and_42) {
  check_cases_starting_with("bernoulli_");
}

BOOST_AUTO_TEST_CASE(draws_continue_from_where_the_previous_call_left_off) {
  check_cases_starting_with("draws_continue");
}

BOOST_AUTO_TEST_CASE(small_normal_calls_use_the_cached_box_muller_sample_as_pytorch_does) {
  check_cases_starting_with("small_normals");
}

BOOST_AUTO_TEST_CASE(default_generator_is_reseeded_by_manual_seed) {
  const json* raw_words = nullptr;
  for (const json& c : fixture()["cases"]) {
    if (c["name"] == "raw32_seed_42") {
      raw_words = &c["steps"][0]["values"];
    }
  }
  BOOST_TEST_REQUIRE(raw_words != nullptr);

  minigrad::manual_seed(42);
  BOOST_TEST(minigrad::default_generator().initial_seed() == 42u);
  for (const json& word : *raw_words) {
    BOOST_TEST(minigrad::default_generator().random() == word.get<uint32_t>());
  }
}

BOOST_AUTO_TEST_CASE(a_copy_continues_the_same_stream_independently) {
  Generator original(7);
  float ahead[3];
  original.normal(ahead, 3, 0.0, 1.0);  // leaves a cached normal sample behind

  Generator copy(original);
  float from_original[5];
  float from_copy[5];
  original.normal(from_original, 5, 0.0, 1.0);
  copy.normal(from_copy, 5, 0.0, 1.0);
  for (int i = 0; i < 5; ++i) {
    BOOST_TEST(from_original[i] == from_copy[i]);
  }
}

BOOST_AUTO_TEST_CASE(a_moved_generator_continues_the_stream_and_the_source_can_be_reseeded) {
  Generator reference(11);
  Generator source(11);
  BOOST_TEST(source.random() == reference.random());

  Generator target(std::move(source));
  BOOST_TEST(target.random() == reference.random());

  source.manual_seed(11);  // a moved-from generator is usable again after reseeding
  BOOST_TEST(source.random() == Generator(11).random());
}

// Drawing from a moved-from generator dereferenced its missing engine (a segfault).
BOOST_AUTO_TEST_CASE(drawing_from_a_moved_from_generator_throws_instead_of_crashing) {
  Generator source(5);
  Generator target = std::move(source);
  std::vector<float> out(4);
  std::vector<int64_t> order(4);
  const std::vector<std::pair<std::string, std::function<void()>>> draws = {
      {"random", [&] { (void)source.random(); }},
      {"random64", [&] { (void)source.random64(); }},
      {"uniform", [&] { source.uniform(out.data(), 4, 0.0, 1.0); }},
      {"normal", [&] { source.normal(out.data(), 4, 0.0, 1.0); }},
      {"randperm", [&] { source.randperm(order.data(), 4); }},
      {"random_full", [&] { source.random_full(order.data(), 4); }},
      {"bernoulli", [&] { source.bernoulli(out.data(), 4, 0.5); }},
      {"a copy's random", [&] { (void)Generator(source).random(); }},
  };
  for (const auto& [what, draw] : draws) {
    BOOST_TEST_CONTEXT(what) {
      try {
        draw();
        BOOST_ERROR("no exception thrown");
      } catch (const std::runtime_error& error) {
        BOOST_TEST(std::string(error.what()).find("moved-from generator") != std::string::npos, error.what());
      }
    }
  }
  BOOST_TEST(target.random() == Generator(5).random());  // the stream went with the move
}

BOOST_AUTO_TEST_CASE(manual_seed_restarts_the_stream_and_drops_the_cached_normal) {
  Generator fresh(3);
  double expected[1];
  fresh.normal(expected, 1, 0.0, 1.0);

  Generator used(99);
  double skipped[1];
  used.normal(skipped, 1, 0.0, 1.0);  // caches the second sample of a pair
  used.manual_seed(3);
  double got[1];
  used.normal(got, 1, 0.0, 1.0);
  BOOST_TEST(got[0] == expected[0]);
  BOOST_TEST(used.initial_seed() == 3u);
}

BOOST_AUTO_TEST_CASE(randint_throws_when_from_is_not_less_than_to) {
  Generator gen;
  int64_t out[1];
  BOOST_CHECK_EXCEPTION(gen.random_from_to(out, 1, 5, 3), std::invalid_argument,
                        message_is("randint: from (5) must be less than to (3)"));
  BOOST_CHECK_EXCEPTION(gen.random_from_to(out, 1, 4, 4), std::invalid_argument,
                        message_is("randint: from (4) must be less than to (4)"));
}

// torch.randint(0, 5, (3,), dtype=torch.bool) raises "to - 1 is out of bounds for bool"; converting
// the draws gave true for every nonzero one.
BOOST_AUTO_TEST_CASE(randint_refuses_a_range_that_bool_cannot_hold) {
  using minigrad::kBool, minigrad::manual_seed, minigrad::randint, minigrad::Tensor;
  BOOST_CHECK_EXCEPTION(randint(0, 5, {3}, {.dtype = kBool}), std::invalid_argument,
                        message_is("randint: to - 1 (4) is out of bounds for bool"));
  BOOST_CHECK_EXCEPTION(randint(-1, 1, {3}, {.dtype = kBool}), std::invalid_argument,
                        message_is("randint: from (-1) is out of bounds for bool"));
  manual_seed(0);
  const Tensor bits = randint(0, 2, {64}, {.dtype = kBool});
  manual_seed(0);
  BOOST_TEST(bits.to_vector<int64_t>() == randint(0, 2, {64}).to_vector<int64_t>(),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(uniform_throws_when_from_is_greater_than_to) {
  Generator gen;
  float out_float[1];
  double out_double[1];
  BOOST_CHECK_EXCEPTION(gen.uniform(out_float, 1, 1.5, 0.5), std::invalid_argument,
                        message_is("uniform_: from (1.5) must not be greater than to (0.5)"));
  BOOST_CHECK_EXCEPTION(gen.uniform(out_double, 1, 1.5, 0.5), std::invalid_argument,
                        message_is("uniform_: from (1.5) must not be greater than to (0.5)"));
}

// Regression: bounds outside the dtype, infinite or nan filled the tensor with inf or nan (each
// case refused by torch 1.13 too). (3e38, 3.3e38) fits float32 and still draws.
BOOST_AUTO_TEST_CASE(uniform_refuses_bounds_the_dtype_cannot_hold_or_a_range_wider_than_its_largest_number) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Generator gen;
  float f[3];
  double d[3];
  BOOST_CHECK_EXCEPTION(gen.uniform(f, 3, -inf, inf), std::invalid_argument,
                        message_is("uniform_: from (-inf) is out of bounds for float32"));
  BOOST_CHECK_EXCEPTION(gen.uniform(f, 3, 0.0, 1e300), std::invalid_argument,
                        message_is("uniform_: to (1e+300) is out of bounds for float32"));
  BOOST_CHECK_EXCEPTION(gen.uniform(f, 3, nan, 1.0), std::invalid_argument,
                        message_is("uniform_: from (nan) is out of bounds for float32"));
  BOOST_CHECK_EXCEPTION(gen.uniform(d, 3, 0.0, inf), std::invalid_argument,
                        message_is("uniform_: to (inf) is out of bounds for float64"));
  BOOST_CHECK_EXCEPTION(
      gen.uniform(f, 3, -3e38, 3e38), std::invalid_argument,
      message_is("uniform_: to - from must be at most the largest float32 (3.40282e+38), but "
                 "to is 3e+38 and from is -3e+38"));
  BOOST_CHECK_THROW(gen.uniform(d, 3, -1e308, 1e308), std::invalid_argument);
  BOOST_CHECK_THROW(minigrad::zeros({3}).uniform_(-3e38, 3e38), std::invalid_argument);  // the method too
  gen.uniform(f, 3, 3e38, 3.3e38);
  for (const float v : f) BOOST_TEST((v >= 3e38f && v <= 3.3e38f));
}

BOOST_AUTO_TEST_CASE(normal_throws_for_negative_std) {
  Generator gen;
  float out_float[20];
  double out_double[20];
  for (int64_t n : {1, 20}) {  // both the small and the block path check
    BOOST_CHECK_EXCEPTION(gen.normal(out_float, n, 0.0, -1.0), std::invalid_argument,
                          message_is("normal_: std (-1) must be non-negative"));
    BOOST_CHECK_EXCEPTION(gen.normal(out_double, n, 0.0, -0.5), std::invalid_argument,
                          message_is("normal_: std (-0.5) must be non-negative"));
  }
}

// The block bernoulli into bools against the plain float one (the reference, checked against
// PyTorch above): the same values, and the stream left at the same place. The sizes cross the
// blocks of 2048 elements and the engine's 624-word twists, from streams started at several
// offsets into a twist; the p's include both ends and values whose p * 2^53 is an integer.
BOOST_AUTO_TEST_CASE(bool_bernoulli_draws_the_float_versions_values) {
  for (const double p : {0.0, 0.2, 0.5, 0.75, 0.8, 1e-300, 1.0 - 1e-16, 1.0}) {
    for (const int64_t n : {0, 1, 2047, 2048, 2049, 10001}) {
      for (const int offset : {0, 1, 311, 623, 624, 625}) {
        BOOST_TEST_CONTEXT("p = " << p << ", n = " << n << ", after " << offset << " words") {
          Generator reference(7), fast(7);
          for (int i = 0; i < offset; ++i) BOOST_TEST_REQUIRE(fast.random() == reference.random());
          std::vector<float> expected(static_cast<size_t>(n));
          std::unique_ptr<bool[]> got(new bool[static_cast<size_t>(n) + 1]);
          reference.bernoulli(expected.data(), n, p);
          fast.bernoulli(got.get(), n, p);
          int64_t differences = 0;
          for (int64_t i = 0; i < n; ++i) differences += (expected[i] == 1.0f) != got[i] ? 1 : 0;
          BOOST_TEST(differences == 0);
          BOOST_TEST(fast.random() == reference.random());
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(bernoulli_throws_for_p_outside_0_1) {
  Generator gen;
  float out_float[1];
  double out_double[1];
  BOOST_CHECK_EXCEPTION(gen.bernoulli(out_float, 1, 1.5), std::invalid_argument,
                        message_is("bernoulli_: p (1.5) must be in [0, 1]"));
  BOOST_CHECK_EXCEPTION(gen.bernoulli(out_double, 1, -0.25), std::invalid_argument,
                        message_is("bernoulli_: p (-0.25) must be in [0, 1]"));
  bool out_bool[1];
  BOOST_CHECK_EXCEPTION(gen.bernoulli(out_bool, 1, std::nan("")), std::invalid_argument,
                        message_is("bernoulli_: p (nan) must be in [0, 1]"));
}

BOOST_AUTO_TEST_CASE(every_fill_throws_for_a_negative_count) {
  Generator gen;
  float f[1];
  double d[1];
  int64_t i[1];
  const auto negative = message_is("uniform_: number of elements (-1) must be non-negative");
  BOOST_CHECK_EXCEPTION(gen.uniform(f, -1, 0.0, 1.0), std::invalid_argument, negative);
  BOOST_CHECK_EXCEPTION(gen.uniform(d, -1, 0.0, 1.0), std::invalid_argument, negative);
  BOOST_CHECK_EXCEPTION(gen.normal(f, -2, 0.0, 1.0), std::invalid_argument,
                        message_is("normal_: number of elements (-2) must be non-negative"));
  BOOST_CHECK_EXCEPTION(gen.normal(d, -2, 0.0, 1.0), std::invalid_argument,
                        message_is("normal_: number of elements (-2) must be non-negative"));
  BOOST_CHECK_EXCEPTION(gen.random_from_to(i, -3, 0, 10), std::invalid_argument,
                        message_is("randint: number of elements (-3) must be non-negative"));
  BOOST_CHECK_EXCEPTION(gen.random_full(i, -4), std::invalid_argument,
                        message_is("random_: number of elements (-4) must be non-negative"));
  BOOST_CHECK_EXCEPTION(gen.randperm(i, -5), std::invalid_argument,
                        message_is("randperm: number of elements (-5) must be non-negative"));
  BOOST_CHECK_EXCEPTION(gen.bernoulli(f, -6, 0.5), std::invalid_argument,
                        message_is("bernoulli_: number of elements (-6) must be non-negative"));
  BOOST_CHECK_EXCEPTION(gen.bernoulli(d, -6, 0.5), std::invalid_argument,
                        message_is("bernoulli_: number of elements (-6) must be non-negative"));
  bool b[1];
  BOOST_CHECK_EXCEPTION(gen.bernoulli(b, -6, 0.5), std::invalid_argument,
                        message_is("bernoulli_: number of elements (-6) must be non-negative"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace minigrad_tests
