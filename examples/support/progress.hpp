// A progress line for training loops: step, loss and speed, as tqdm prints under a Python loop.
//
// On a terminal the line is rewritten in place ('\r' moves back to its start), at most ten times
// a second, so printing never slows training down. When the output goes to a file or a pipe (a
// log, a test), '\r' would only clutter it: then it prints one plain line every `every` steps.
// The speed counts the steps of this run only, so it stays right after a --resume. Given the
// tokens of one step, the line also tells milliseconds per step, tokens per second and the time
// left, as a language model's training loop prints them.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace support {

/// True in a process started by Open MPI's mpirun, which hands each rank a pseudo-terminal even
/// when its own output goes to a file: there a rank's stream looks like a terminal but is not one.
inline bool under_mpi_launcher() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

class Progress {
 public:
  /// A run from step `first_step` (0, or the checkpoint's step after a resume) to `total_steps`,
  /// printing a plain line every `every` steps when the output is not a terminal.
  /// With `tokens_per_step` above 0 (B * T for a language model) the line reads
  /// "step 120/5000  loss 2.4567  143 ms/step  14,300 tok/s  11m 38s left" (time spent between
  /// the steps, evaluations say, counts in the average).
  /// `stream` is where the line goes: stdout, or stderr to keep stdout for the program's own
  /// output (as tqdm does).
  Progress(int64_t first_step, int64_t total_steps, int64_t every, int64_t tokens_per_step = 0,
           std::FILE* stream = stdout)
      : first_step_(first_step),
        total_steps_(total_steps),
        every_(every < 1 ? 1 : every),
        tokens_per_step_(tokens_per_step),
        stream_(stream),
        terminal_(isatty(fileno(stream)) != 0 && !under_mpi_launcher()),
        start_(Clock::now()),
        last_print_(start_ - std::chrono::seconds(1)) {}  // the first step prints at once

  /// Reports that step number `step` (counted from 1) has finished with this loss.
  void update(int64_t step, double loss) {
    const auto now = Clock::now();
    const bool last = step == total_steps_;
    if (terminal_) {
      if (!last && now - last_print_ < std::chrono::milliseconds(100)) return;
      std::fprintf(stream_, "\r%-60s",
                   line(step, loss).c_str());  // padded: a shorter line covers a longer one
      in_place_ = true;
    } else {
      if (!last && step % every_ != 0) return;
      std::fprintf(stream_, "%s\n", line(step, loss).c_str());
    }
    std::fflush(stream_);
    last_print_ = now;
  }

  /// Ends the in-place line, so what follows starts on a line of its own.
  void finish() {
    if (terminal_ && in_place_) std::fprintf(stream_, "\n");
    in_place_ = false;
    std::fflush(stream_);
  }

  /// Seconds since this Progress was made.
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;

  // "step   120/300  loss 0.0123456  85.3 steps/s"
  std::string line(int64_t step, double loss) const {
    const int width = static_cast<int>(std::to_string(total_steps_).size());
    const double rate = static_cast<double>(step - first_step_) / seconds();
    char text[160];
    if (tokens_per_step_ > 0) {
      const auto left = static_cast<long long>(static_cast<double>(total_steps_ - step) / rate);
      std::snprintf(text, sizeof text,
                    "step %*lld/%lld  loss %.4f  %.0f ms/step  %.0f tok/s  %lldm %02llds left", width,
                    static_cast<long long>(step), static_cast<long long>(total_steps_), loss, 1000 / rate,
                    rate * static_cast<double>(tokens_per_step_), left / 60, left % 60);
      return text;
    }
    std::snprintf(text, sizeof text, "step %*lld/%lld  loss %.7f  %.1f steps/s", width,
                  static_cast<long long>(step), static_cast<long long>(total_steps_), loss, rate);
    return text;
  }

  int64_t first_step_;
  int64_t total_steps_;
  int64_t every_;
  int64_t tokens_per_step_;
  std::FILE* stream_;
  bool terminal_;
  bool in_place_ = false;  // a line is shown on the terminal, to be ended by finish()
  Clock::time_point start_;
  Clock::time_point last_print_;
};

/// The error that stops a run whose loss became nan or inf at `step`, saying how to go on: from
/// the last checkpoint, `checkpoint` saved at `checkpoint_step` (0: none saved yet), with --resume.
inline std::runtime_error diverged(int64_t step, double loss, const std::string& checkpoint,
                                   int64_t checkpoint_step) {
  std::string value = "nan";
  if (std::isinf(loss)) value = loss > 0 ? "inf" : "-inf";
  std::string message = "the loss is " + value + " at step " + std::to_string(step) +
                        ": training stopped (a learning rate too large makes each step overshoot, until the "
                        "numbers overflow). ";
  if (checkpoint_step > 0) {
    message += "The last checkpoint, " + checkpoint + ", holds step " + std::to_string(checkpoint_step) +
               ": continue from it with --resume and a smaller --lr.";
  } else {
    message += "No checkpoint was saved yet: start again with a smaller --lr.";
  }
  return std::runtime_error(message);
}

}  // namespace support
