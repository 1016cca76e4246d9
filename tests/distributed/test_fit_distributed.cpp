// examples/fit_distributed, run as a learner runs it: alone and as two ranks under mpiexec, each
// in a fresh temporary folder. The two runs must print the same final loss (the two ranks train
// on halves of the same global batches), only rank 0 may write files, and a checkpoint written by
// two ranks must resume on one, continuing exactly as a run that never stopped.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <iterator>
#include <regex>
#include <string>

#include "distributed/launch.hpp"

namespace fs = std::filesystem;

namespace {

using Run = minigrad_test::CommandResult;

// Runs fit_distributed with `arguments` in `folder`, as `ranks` ranks (1: without mpiexec).
Run run(const fs::path& folder, int ranks, const std::string& arguments) {
  return minigrad_test::run_on_ranks(MINIGRAD_FIT_DISTRIBUTED, folder, ranks, arguments);
}

// The final loss of the summary line: "final loss 0.041234;".
double final_loss(const Run& run) {
  std::smatch m;
  const bool found = std::regex_search(run.output, m, std::regex(R"(final loss ([0-9.]+);)"));
  BOOST_TEST_REQUIRE(found, "no summary line in:\n" << run.output);
  return std::stod(m[1]);
}

fs::path fresh_folder(const std::string& name) {
  const fs::path folder = fs::temp_directory_path() / ("minigrad_fit_distributed_" + name);
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fit_distributed)

BOOST_AUTO_TEST_CASE(two_ranks_print_the_final_loss_of_one_process_and_only_rank_0_writes) {
  const Run one = run(fresh_folder("one"), 1, "--steps 6");
  const Run two = run(fresh_folder("two"), 2, "--steps 6");
  BOOST_TEST_REQUIRE(one.exit_code == 0);
  BOOST_TEST_REQUIRE(two.exit_code == 0);
  BOOST_TEST(one.output.find("1 rank(s)") != std::string::npos);
  BOOST_TEST(two.output.find("2 rank(s)") != std::string::npos);
  // Regression: mpirun gives ranks a pseudo-terminal, and the progress line was rewritten with
  // '\r' into a redirected log. Under mpirun it prints plain lines.
  BOOST_TEST(two.output.find('\r') == std::string::npos);
  // Printed with 6 digits: float rounding of the halves' average stays far below the last one.
  BOOST_TEST(final_loss(two) == final_loss(one), boost::test_tools::tolerance(2e-5));
  // One summary line: rank 1 printed nothing.
  const std::regex summary("rank\\(s\\)");
  BOOST_TEST(std::distance(std::sregex_iterator(two.output.begin(), two.output.end(), summary),
                           std::sregex_iterator()) == 1);
}

BOOST_AUTO_TEST_CASE(a_checkpoint_of_two_ranks_resumes_on_one_as_if_the_run_had_never_stopped) {
  const fs::path folder = fresh_folder("resume");
  BOOST_TEST_REQUIRE(run(folder, 2, "--steps 4 --save-every 2").exit_code == 0);
  const Run resumed = run(folder, 1, "--steps 6 --save-every 2 --resume");
  BOOST_TEST_REQUIRE(resumed.exit_code == 0);
  BOOST_TEST(resumed.output.find("resuming from fit_distributed.safetensors at step 4") != std::string::npos);
  const Run straight = run(fresh_folder("straight"), 1, "--steps 6");
  BOOST_TEST_REQUIRE(straight.exit_code == 0);
  BOOST_TEST(final_loss(resumed) == final_loss(straight), boost::test_tools::tolerance(2e-5));
}

BOOST_AUTO_TEST_CASE(a_bad_flag_on_two_ranks_ends_the_job_with_the_flags_message) {
  // Every rank reads the same flags and stops before joining the job: none waits for another.
  const Run bad = run(fresh_folder("bad"), 2, "--save-every 0");
  BOOST_TEST(bad.exit_code != 0);
  BOOST_TEST(bad.output.find("--save-every: 0 is not a finite number above 0") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
