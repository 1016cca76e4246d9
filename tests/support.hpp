// Small helpers that several test executables share: running a program and reading what it
// printed, and looking for words in text and in exception messages.
#pragma once

#include <sys/wait.h>

#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace minigrad_test {

/// What a finished command printed on its standard output, and how it ended.
struct CommandResult {
  int exit_code = -1;  ///< its exit status; 128 + the signal's number when a signal ended it
  std::string output;  ///< its standard output (add "2>&1" to the command for standard error too)
};

/// Runs `command` through /bin/sh (popen) and waits for it. Throws std::runtime_error naming the
/// command when it cannot be started.
inline CommandResult run_command(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot start " + command);
  CommandResult result;
  char buffer[4096];
  while (const size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status)     ? WEXITSTATUS(status)
                     : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                           : -1;
  return result;
}

/// Whether `text` contains `part`.
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// A predicate for BOOST_CHECK_EXCEPTION: the message contains every one of `parts`; each part
/// missing is reported with the whole message.
inline std::function<bool(const std::exception&)> message_has(std::vector<std::string> parts) {
  return [parts](const std::exception& e) {
    const std::string message = e.what();
    bool ok = true;
    for (const std::string& part : parts) {
      const bool found = contains(message, part);
      BOOST_TEST(found, "message \"" << message << "\" lacks \"" << part << "\"");
      ok = ok && found;
    }
    return ok;
  };
}

}  // namespace minigrad_test
