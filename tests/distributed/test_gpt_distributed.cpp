// examples/gpt on two ranks, at a small size with dropout 0: its evaluation lines and final
// parameters are those of one process with the same global batch (up to float rounding), a
// checkpoint written by two ranks resumes on one, and a batch that does not divide by the ranks is
// refused with a message. Each run is a fresh temporary folder; mpiexec starts the two ranks.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "distributed/launch.hpp"
#include "io/safetensors.hpp"

namespace fs = std::filesystem;

namespace {

// A GPT of 1 block, 2 heads, 32 channels, batches of 8 windows of 16 characters: a few seconds.
const std::string small =
    "--batch-size 8 --block-size 16 --n-embd 32 --n-head 2 --n-layer 1 --eval-interval 10 --eval-iters 4 "
    "--dropout 0 --max-new-tokens 0 --threads 1 ";

using Run = minigrad_test::CommandResult;

Run run(const fs::path& folder, int ranks, const std::string& arguments) {
  return minigrad_test::run_on_ranks(MINIGRAD_GPT, folder, ranks, arguments);
}

// The "step N: train loss X, val loss Y" lines, in order.
std::vector<std::string> evaluation_lines(const std::string& output) {
  std::vector<std::string> lines;
  const std::regex line(R"(step [0-9]+: train loss [0-9.]+, val loss [0-9.]+)");
  for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it)
    lines.push_back(it->str());
  return lines;
}

// Largest |a - b| over the model's tensors of two checkpoints (names "model.*").
double largest_parameter_difference(const fs::path& a, const fs::path& b) {
  const auto left = minigrad::load_file(a.string()), right = minigrad::load_file(b.string());
  BOOST_TEST_REQUIRE(left.size() == right.size());
  double worst = 0;
  size_t compared = 0;
  for (size_t i = 0; i < left.size(); ++i) {
    BOOST_TEST_REQUIRE(left[i].first == right[i].first);
    if (left[i].first.rfind("model.", 0) != 0 || !left[i].second.is_floating_point()) continue;
    const auto x = left[i].second.to_vector<double>(), y = right[i].second.to_vector<double>();
    for (size_t k = 0; k < x.size(); ++k) worst = std::max(worst, std::abs(x[k] - y[k]));
    ++compared;
  }
  BOOST_TEST(compared > 10u, "the checkpoints hold the model's tensors");
  return worst;
}

fs::path fresh_folder(const std::string& name) {
  const fs::path folder = fs::temp_directory_path() / ("minigrad_gpt_distributed_" + name);
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gpt_distributed)

BOOST_AUTO_TEST_CASE(two_ranks_print_the_evaluation_lines_and_reach_the_parameters_of_one_process) {
  const fs::path one = fresh_folder("one"), two = fresh_folder("two");
  const Run alone = run(one, 1, small + "--max-iters 30");
  const Run pair = run(two, 2, small + "--max-iters 30");
  BOOST_TEST_REQUIRE(alone.exit_code == 0);
  BOOST_TEST_REQUIRE(pair.exit_code == 0);
  const std::vector<std::string> want = evaluation_lines(alone.output), got = evaluation_lines(pair.output);
  BOOST_TEST(want.size() == 4u);                              // steps 0, 10, 20 and the last, 29
  BOOST_TEST(got == want, boost::test_tools::per_element());  // rank 1 printed none of its own
  // Float rounding of the halves' average, carried through 30 AdamW steps.
  BOOST_TEST(largest_parameter_difference(one / "gpt.safetensors", two / "gpt.safetensors") < 1e-5);
}

BOOST_AUTO_TEST_CASE(a_checkpoint_of_two_ranks_resumes_on_one_with_the_evaluation_lines_of_a_straight_run) {
  const fs::path folder = fresh_folder("resume"), straight = fresh_folder("straight");
  BOOST_TEST_REQUIRE(run(folder, 2, small + "--max-iters 30 --stop-at 10").exit_code == 0);
  const Run resumed = run(folder, 1, small + "--max-iters 30 --resume");
  const Run whole = run(straight, 1, small + "--max-iters 30");
  BOOST_TEST_REQUIRE(resumed.exit_code == 0);
  BOOST_TEST_REQUIRE(whole.exit_code == 0);
  std::vector<std::string> want = evaluation_lines(whole.output);
  want.erase(want.begin(), want.begin() + 2);  // steps 0 and 10 ran before the stop
  BOOST_TEST(evaluation_lines(resumed.output) == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_global_batch_that_does_not_divide_by_the_ranks_is_refused_naming_both) {
  const Run bad = run(fresh_folder("bad"), 2, small + "--max-iters 2 --batch-size 7");
  BOOST_TEST(bad.exit_code != 0);
  BOOST_TEST(std::regex_search(
      bad.output, std::regex("rank [01] of 2: gpt: --batch-size 7 does not divide by the 2 ranks")));
}

BOOST_AUTO_TEST_SUITE_END()
