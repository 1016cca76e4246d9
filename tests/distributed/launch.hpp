// Starting an example program on several ranks, as a learner starts it, for the distributed tests.
#pragma once

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "support.hpp"

namespace minigrad_test {

/// Runs `program` with `arguments` inside `folder` as `ranks` ranks under mpiexec (1 rank: the
/// program alone, without mpiexec), standard error with standard output; logs the command and what
/// it printed. The test's registration sets MINIGRAD_MPIEXEC.
inline CommandResult run_on_ranks(const std::string& program, const std::filesystem::path& folder, int ranks,
                                  const std::string& arguments) {
  const char* mpiexec = std::getenv("MINIGRAD_MPIEXEC");
  BOOST_TEST_REQUIRE(mpiexec != nullptr, "MINIGRAD_MPIEXEC is set by the test's registration");
  const std::string launcher =
      ranks == 1 ? "" : std::string(mpiexec) + " -n " + std::to_string(ranks) + " --oversubscribe ";
  const std::string command =
      "cd '" + folder.string() + "' && " + launcher + program + " " + arguments + " 2>&1";
  CommandResult result = run_command(command);
  BOOST_TEST_MESSAGE(command << ": exit " << result.exit_code << "\n" << result.output);
  return result;
}

}  // namespace minigrad_test
