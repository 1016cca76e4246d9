// A rank that fails ends the whole job, within seconds, with a non-zero exit code and a message
// naming the rank; no rank is left waiting in an all-reduce. Each case starts a two-rank job of
// tests/distributed/fault_worker.cpp with mpiexec, in which rank 1 fails at step 3 while rank 0
// goes on into that step's all-reduce. Without the fault handling the job would hang until
// CTest's timeout; the job that does not fail is the control.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "support.hpp"

namespace {

struct Job {
  int exit_code = -1;
  double seconds = 0;
  std::string output;  // stdout and stderr of mpiexec and both ranks
};

Job run_job(const std::string& fault) {
  const char* mpiexec = std::getenv("MINIGRAD_MPIEXEC");
  BOOST_TEST_REQUIRE(mpiexec != nullptr, "MINIGRAD_MPIEXEC is set by the test's registration");
  const std::string command = std::string(mpiexec) + " -n 2 --oversubscribe " + MINIGRAD_FAULT_WORKER +
                              " --fault " + fault + " --rank 1 --step 3 2>&1";
  const auto start = std::chrono::steady_clock::now();
  const minigrad_test::CommandResult finished = minigrad_test::run_command(command);
  Job job{.exit_code = finished.exit_code,
          .seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
          .output = finished.output};
  BOOST_TEST_MESSAGE(fault << ": exit " << job.exit_code << " after " << job.seconds << " s:\n"
                           << job.output);
  return job;
}

using minigrad_test::contains;

struct FaultCase {
  std::string fault;
  std::string message;  // what the output must say about rank 1
};

}  // namespace

BOOST_AUTO_TEST_SUITE(faults)

BOOST_AUTO_TEST_CASE(a_job_without_faults_finishes_with_exit_code_0) {
  const Job job = run_job("none");
  BOOST_TEST(job.exit_code == 0);
  BOOST_TEST(contains(job.output, "rank 0 starts step 20"));
  BOOST_TEST(contains(job.output, "finished"));
}

BOOST_AUTO_TEST_CASE(a_rank_that_is_killed_or_throws_ends_the_job_within_seconds_naming_the_rank) {
  const std::vector<FaultCase> cases = {
      // mpiexec's own report of a rank that died of a signal.
      {"kill", "process rank 1 with PID"},
      {"throw",
       "minigrad.distributed: rank 1 of 2: uncaught exception: injected fault at step 3; ending the job"},
      {"abort", "minigrad.distributed: rank 1 of 2: injected fault at step 3; ending the job"},
  };
  for (const FaultCase& c : cases) {
    BOOST_TEST_CONTEXT("fault " << c.fault) {
      const Job job = run_job(c.fault);
      BOOST_TEST(job.exit_code != 0);
      BOOST_TEST(job.seconds < 15.0, "the job must end within seconds, not hang");
      BOOST_TEST(contains(job.output, c.message));
      // Rank 1 reached step 3, so step 2's all-reduce had rank 0's share: rank 0 was training.
      BOOST_TEST(contains(job.output, "rank 0 starts step 2"), "rank 0 was training when rank 1 failed");
      BOOST_TEST(!contains(job.output, "rank 0 starts step 5"));
      BOOST_TEST(!contains(job.output, "finished"));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
