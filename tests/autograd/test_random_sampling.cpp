// Tests for exponential_, multinomial and the generator's state against real PyTorch 1.13.1.
// The fixture tests/fixtures/modules_random.json comes from
// tools/reference/modules_random_reference.py: each case seeds torch, makes one call and records
// its result and what torch.rand(3) gives next, which shows that the call drew exactly as many
// numbers as torch's. Samples and state bytes are compared exactly, values bit for bit (float32
// values are exact in the fixture's doubles).
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "autograd/tensor.hpp"
#include "nn/fixture_support.hpp"

namespace {

using namespace minigrad;
using nlohmann::json;

const json& fixture() { return minigrad_test::read_fixture("modules_random.json"); }

std::vector<json> cases_of(const std::string& kind) {
  std::vector<json> out;
  for (const json& c : fixture()["cases"])
    if (c["kind"] == kind) out.push_back(c);
  BOOST_TEST_REQUIRE(!out.empty(), "no " << kind << " case in the fixture");
  return out;
}

Dtype dtype_of(const std::string& name) { return name == "float64" ? kFloat64 : kFloat32; }

Tensor input(const std::string& name) {
  const json& record = fixture()["inputs"][name];
  return nn_test::from_json(record["values"], record["shape"].get<std::vector<int64_t>>(),
                            dtype_of(record["dtype"]));
}

// Values compared exactly: both sides are the same float or double.
void check_equal(const Tensor& got, const json& expected, const std::string& what) {
  nn_test::check_close(got, expected, 0.0, what);
}

// The next torch.rand(3) after the call: the stream continues where torch's does.
void check_continues(Generator& gen, const json& c) {
  check_equal(rand({3}, gen), c["after"], "rand(3) after");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(random_sampling)

BOOST_AUTO_TEST_CASE(exponential_matches_pytorch_for_seeds_0_and_1337) {
  for (const json& c : cases_of("exponential")) {
    BOOST_TEST_CONTEXT("seed " << c["seed"] << ", " << c["dtype"] << ", shape " << c["shape"] << ", lambd "
                               << c["lambd"]) {
      Generator gen(c["seed"].get<uint64_t>());
      Tensor t = empty(c["shape"].get<std::vector<int64_t>>(), {.dtype = dtype_of(c["dtype"])});
      t.exponential_(c["lambd"].get<double>(), gen);
      check_equal(t, c["values"], "exponential_");
      check_continues(gen, c);
    }
  }
}

BOOST_AUTO_TEST_CASE(multinomial_matches_pytorch_for_seeds_0_and_1337_with_and_without_replacement) {
  for (const json& c : cases_of("multinomial")) {
    BOOST_TEST_CONTEXT("seed " << c["seed"] << ", " << c["probs"] << ", num_samples " << c["num_samples"]
                               << ", replacement " << c["replacement"]) {
      Generator gen(c["seed"].get<uint64_t>());
      const Tensor samples =
          multinomial(input(c["probs"]), c["num_samples"].get<int64_t>(), c["replacement"].get<bool>(), gen);
      BOOST_TEST(samples.dtype() == kInt64);
      BOOST_TEST(samples.shape() == Shape(c["shape"].get<std::vector<int64_t>>()));
      BOOST_TEST(samples.to_vector<int64_t>() == c["samples"].get<std::vector<int64_t>>(),
                 boost::test_tools::per_element());
      check_continues(gen, c);
    }
  }
}

BOOST_AUTO_TEST_CASE(multinomial_and_exponential_draw_from_the_default_generator_after_manual_seed) {
  const json c = cases_of("multinomial").front();  // seed 0, the course's softmax over 65 classes
  manual_seed(c["seed"].get<uint64_t>());
  const Tensor samples = input(c["probs"]).multinomial(c["num_samples"].get<int64_t>(), c["replacement"]);
  BOOST_TEST(samples.to_vector<int64_t>() == c["samples"].get<std::vector<int64_t>>(),
             boost::test_tools::per_element());
  check_equal(rand({3}), c["after"], "rand(3) after");

  const json e = cases_of("exponential").front();
  manual_seed(e["seed"].get<uint64_t>());
  Tensor t = empty(e["shape"].get<std::vector<int64_t>>(), {.dtype = dtype_of(e["dtype"])});
  check_equal(t.exponential_(e["lambd"].get<double>()), e["values"], "exponential_");
}

BOOST_AUTO_TEST_CASE(get_rng_state_holds_the_bytes_of_pytorchs_state) {
  for (const json& c : cases_of("rng_state")) {
    BOOST_TEST_CONTEXT("seed " << c["seed"]) {
      manual_seed(c["seed"].get<uint64_t>());
      const Tensor fresh = get_rng_state();
      BOOST_TEST(fresh.dtype() == kInt64);
      BOOST_TEST(fresh.to_vector<int64_t>() == c["fresh"].get<std::vector<int64_t>>(),
                 boost::test_tools::per_element());
      randn({3});  // the calls the reference script makes, in its order
      multinomial(ones({65}), 1);
      rand({1234});
      BOOST_TEST(get_rng_state().to_vector<int64_t>() == c["state"].get<std::vector<int64_t>>(),
                 boost::test_tools::per_element());
    }
  }
}

BOOST_AUTO_TEST_CASE(set_rng_state_from_pytorchs_bytes_continues_pytorchs_stream) {
  for (const json& c : cases_of("rng_state")) {
    BOOST_TEST_CONTEXT("seed " << c["seed"]) {
      manual_seed(99);  // anything else: the state must replace all of it
      randn({1});       // leaves a cached normal, which the state must replace too
      set_rng_state(tensor(c["state"].get<std::vector<int64_t>>(), {5056}));
      check_equal(randn({5}), c["randn_5"], "randn(5)");  // the first uses torch's cached sample
      check_equal(rand({4}), c["rand_4"], "rand(4)");
      BOOST_TEST(multinomial(ones({65}), 1).to_vector<int64_t>() ==
                     c["multinomial_65_1"].get<std::vector<int64_t>>(),
                 boost::test_tools::per_element());
      BOOST_TEST(default_generator().initial_seed() == c["seed"].get<uint64_t>());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_saved_generator_state_continues_the_same_stream) {
  Generator gen(1337);
  Tensor warmup = empty({100});
  warmup.normal_(0.0, 1.0, gen);
  randn({3}, gen);  // a cached Box-Muller sample is part of the state
  const Tensor state = gen.get_state();

  const Tensor first = cat(
      {randn({5}, gen), rand({700}, gen), multinomial(ones({4, 65}), 3, true, gen).to(kFloat32).flatten()});
  Generator other(7);
  other.set_state(state);
  const Tensor again = cat({randn({5}, other), rand({700}, other),
                            multinomial(ones({4, 65}), 3, true, other).to(kFloat32).flatten()});
  BOOST_TEST(again.equal(first));
  BOOST_TEST(other.initial_seed() == 1337u);
  BOOST_TEST(other.get_state().equal(gen.get_state()));
}

BOOST_AUTO_TEST_CASE(multinomial_rejects_what_pytorch_rejects) {
  using nn_test::check_throws;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    std::string name;
    Tensor probs;
    int64_t num_samples;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"a negative probability",
       tensor({0.5, -0.1, 0.6}),
       1,
       {"multinomial", "element < 0", "probs[1] = -0.1"}},
      {"a nan probability",
       tensor({{0.5, 1.0}, {nan, 1.0}}),
       1,
       {"inf, nan or element < 0", "probs[1, 0] = nan"}},
      {"an inf probability", tensor({1.0, inf}), 2, {"inf, nan or element < 0", "probs[1] = inf"}},
      {"a row of zeros",
       tensor({{1.0, 2.0}, {0.0, 0.0}}),
       1,
       {"sum of probabilities <= 0", "row 1 is all zeros"}},
      {"a 1-d tensor of zeros", tensor({0.0, 0.0}), 1, {"sum of probabilities <= 0", "probs is all zeros"}},
      {"more samples than categories",
       tensor({1.0, 2.0}),
       3,
       {"num_samples = 3 > 2 categories without replacement"}},
      {"no samples", tensor({1.0, 2.0}), 0, {"num_samples = 0 <= 0"}},
      {"a 3-d tensor", ones({1, 2, 2}), 1, {"1-d [C] or 2-d [R, C]", "[1, 2, 2]"}},
      {"a 0-d tensor", scalar_tensor(1.0), 1, {"1-d [C] or 2-d [R, C]", "[]"}},
      {"integer probabilities", tensor(std::vector<int64_t>{1, 2}, {2}), 1, {"float32 or float64", "int64"}},
  };
  for (const Case& c : cases) {
    for (bool replacement : {false, true}) {
      if (c.name == "more samples than categories" && replacement) continue;  // allowed with replacement
      BOOST_TEST_CONTEXT(c.name << ", replacement " << replacement) {
        Generator gen(0);
        const Tensor before = gen.get_state();
        check_throws<std::invalid_argument>([&] { multinomial(c.probs, c.num_samples, replacement, gen); },
                                            c.fragments);
        BOOST_TEST(gen.get_state().equal(before), "a rejected call must not draw");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(multinomial_with_replacement_may_draw_more_samples_than_categories) {
  // Hand check: a row whose only mass is on category 2 gives 2 every time, 5 times from 3 classes.
  const Tensor samples = multinomial(tensor({0.0, 0.0, 3.0}), 5, true);
  BOOST_TEST(samples.to_vector<int64_t>() == std::vector<int64_t>(5, 2), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(multinomial_of_zero_rows_draws_nothing) {
  Generator gen(0);
  const Tensor before = gen.get_state();
  const Tensor samples = multinomial(ones({0, 3}), 2, false, gen);
  BOOST_TEST(samples.shape() == Shape({0, 2}));
  BOOST_TEST(gen.get_state().equal(before));
}

BOOST_AUTO_TEST_CASE(exponential_rejects_a_negative_rate_and_integer_tensors) {
  using nn_test::check_throws;
  Tensor t = empty({3});
  check_throws<std::invalid_argument>([&] { t.exponential_(-1.0); }, {"exponential_", "lambd (-1)"});
  Tensor i = zeros({3}, {.dtype = kInt64});
  check_throws<std::invalid_argument>([&] { i.exponential_(); }, {"exponential_", "int64"});
  Tensor w = zeros({3}, {.requires_grad = true});
  check_throws<std::runtime_error>([&] { w.exponential_(); }, {"exponential_"});
}

BOOST_AUTO_TEST_CASE(set_state_rejects_a_tensor_that_is_no_generator_state) {
  using nn_test::check_throws;
  std::vector<int64_t> bytes = Generator(5).get_state().to_vector<int64_t>();
  const auto with = [&](int64_t offset, int64_t value) {
    std::vector<int64_t> changed = bytes;
    changed[offset] = value;
    return tensor(changed, {5056});
  };
  struct Case {
    std::string name;
    Tensor state;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"an undefined tensor", Tensor(), {"set_state", "undefined"}},
      {"a float tensor", zeros({5056}), {"int64", "float32"}},
      {"the wrong size", zeros({10}, {.dtype = kInt64}), {"5056", "[10]"}},
      {"a 2-d tensor", zeros({2, 2528}, {.dtype = kInt64}), {"1-d", "[2, 2528]"}},
      {"an element that is not a byte", with(100, 256), {"element 100 is 256"}},
      {"a position no generator has", with(8, 0), {"left = 0"}},
      {"a word of more than 32 bits", with(24 + 8 * 3 + 4, 1), {"word 3", "more than 32 bits"}},
  };
  // left = 500 with next = 200 would read 499 words from word 200 on, past the 624th.
  std::vector<int64_t> far = bytes;
  far[8] = 500 % 256;
  far[9] = 500 / 256;
  far[16] = 200;
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      Generator gen(5);
      check_throws<std::invalid_argument>([&] { gen.set_state(c.state); }, c.fragments);
      BOOST_TEST(gen.get_state().equal(tensor(bytes, {5056})),
                 "a rejected state must leave the generator as it was");
    }
  }
  Generator gen(5);
  check_throws<std::invalid_argument>([&] { gen.set_state(tensor(far, {5056})); },
                                      {"left = 500", "next = 200"});
}

BOOST_AUTO_TEST_SUITE_END()
