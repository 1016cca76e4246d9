// fit_feedforward: the lesson's FeedForward learns to imitate another FeedForward.
//
// A "teacher" FeedForward, seeded 1, makes the data: targets y = teacher(x) for random token
// vectors x, one batch of the course's shape. The "student", the lesson's FeedForward(128) seeded
// 0, starts from other weights and fits those targets with mse_loss and AdamW. It can compute
// exactly what the teacher computes, so the loss can go towards 0: this program takes it below 5%
// of where it started. Open fit_feedforward_loss.svg to watch it fall.
//
// Shape letters: B = 32 sequences, T = 64 positions, C = n_embd = 128 channels.
#include <CLI/CLI.hpp>  // flags: --help, types and errors
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "data/datasets.hpp"
#include "examples/support/checkpoint_step.hpp"
#include "examples/support/cli.hpp"
#include "examples/support/csv.hpp"
#include "examples/support/plot.hpp"
#include "examples/support/progress.hpp"
#include "io/safetensors.hpp"
#include "nn/feedforward.hpp"
#include "nn/loss.hpp"
#include "optim/adam.hpp"
#include "optim/scheduler.hpp"

using namespace minigrad;
namespace F = minigrad::nn::functional;

const int64_t batch_size = 32;  // B
const int64_t block_size = 64;  // T
const int64_t n_embd = 128;     // C

int main(int argc, char** argv) try {
  // Flags (CLI11): `fit_feedforward --steps 300 --lr 0.003`; `--help` lists them.
  int64_t steps = 100;
  double lr = 0.01;
  bool resume = false;
  CLI::App app{"fit_feedforward: the lesson's FeedForward learns to copy a teacher FeedForward",
               "fit_feedforward"};
  app.add_option("--steps", steps, "optimizer steps in all")->capture_default_str()->check(support::positive);
  app.add_option("--lr", lr, "AdamW's learning rate after the warm-up")
      ->capture_default_str()
      ->check(support::positive);
  app.add_flag("--resume", resume, "continue from the last checkpoint, fit_feedforward.safetensors");
  CLI11_PARSE(app, argc, argv);

  // Teacher and student: two FeedForward(128), each Linear drawing its weights after its seed.
  manual_seed(1);
  nn::FeedForward teacher(n_embd);
  manual_seed(0);
  nn::FeedForward student(n_embd);

  // Data: x [32, 64, 128] from randn and y = teacher(x), the whole data set in one batch, used
  // at every step. 32 new sequences, drawn the same way, test the student on inputs it never saw.
  // Python: x = torch.randn(32, 64, 128, generator=g); with torch.no_grad(): y = teacher(x)
  Generator generator(0);
  auto ask_teacher = [&](const Tensor& v) { return teacher(v); };
  auto [x, y] = data::teacher_student(ask_teacher, {batch_size, block_size, n_embd}, generator);
  auto [x_new, y_new] = data::teacher_student(ask_teacher, {batch_size, block_size, n_embd}, generator);

  // AdamW: Adam's step size per weight, and every weight shrunk by lr * 0.01 at each step. betas
  // (0.9, 0.95) as nanoGPT uses: the step size follows the gradients' size more quickly.
  optim::AdamW optimizer(student.parameters(), {.lr = lr, .betas = {0.9, 0.95}, .weight_decay = 0.01});

  // Checkpoints every 25 steps: weights (with the step) and AdamW's state, as in fit_spiral.
  // After a crash, or a nan, `fit_feedforward --resume` goes on from the last one.
  const std::string checkpoint = "fit_feedforward.safetensors";
  const std::string optimizer_checkpoint = "fit_feedforward_optimizer.safetensors";
  int64_t step = 0;
  support::LossHistory history;
  if (resume) {
    load(student, checkpoint);
    nn::NamedTensors state = load_file(optimizer_checkpoint);
    optimizer.load_state_dict({state.begin(), state.end()});
    optimizer.set_lr(lr);  // this run's --lr, not the saved one: a diverged run resumes more gently
    step = support::checkpoint_step(load_metadata(checkpoint), checkpoint);
    history = support::read_loss_history("fit_feedforward_loss.csv", step);
    std::printf("resuming from %s at step %lld\n", checkpoint.c_str(), static_cast<long long>(step));
  }
  int64_t checkpoint_step = step;

  // Warm-up: the lr climbs from lr / 10 to lr over the first 20 steps, so that the first, large
  // gradients do not throw the weights far off (Python: LinearLR(optimizer, 0.1, 1.0, 20)).
  optim::LinearLR warmup(optimizer, /*start_factor=*/0.1, /*end_factor=*/1.0, /*total_iters=*/20);
  for (int64_t i = 0; i < step; ++i) warmup.step();  // after --resume: where the run was

  // The training loop: each step, the student's outputs for all of x, their loss, one update.
  support::Progress progress(step, steps, /*every=*/10);
  while (step < steps) {
    Tensor prediction = student(x);            // [B, T, C]
    Tensor loss = F::mse_loss(prediction, y);  // mean of (prediction - target)^2
    const double value = loss.item<double>();
    if (!std::isfinite(value)) throw support::diverged(step + 1, value, checkpoint, checkpoint_step);

    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    warmup.step();
    step += 1;

    history.add(step, value);
    progress.update(step, value);
    if (step % 25 == 0 || step == steps) {
      save_file(optimizer.state_dict(), optimizer_checkpoint);
      save(student, checkpoint, {{"step", std::to_string(step)}});  // last: its step is the one to trust
      support::write_csv("fit_feedforward_loss.csv", history);
      checkpoint_step = step;
    }
  }
  progress.finish();

  // How close the student came, against the loss it started from; and on the new sequences,
  // where a loss well above the final one would mean it learnt x by heart, not the teacher.
  NoGradGuard no_grad;
  const double first_loss = history.losses.front();
  const double final_loss = F::mse_loss(student(x), y).item<double>();
  const double new_loss = F::mse_loss(student(x_new), y_new).item<double>();

  support::write_loss_plot("fit_feedforward_loss.svg", "fit_feedforward: mean squared error", history);
  std::printf(
      "fit_feedforward: %lld steps in %.1f s, final loss %.6f, %.1f%% of the first loss %.6f (on new "
      "inputs %.6f, %.1f%%); wrote fit_feedforward_loss.csv, fit_feedforward_loss.svg and %s in %s\n",
      static_cast<long long>(step), progress.seconds(), final_loss, 100 * final_loss / first_loss, first_loss,
      new_loss, 100 * new_loss / first_loss, checkpoint.c_str(), std::filesystem::current_path().c_str());
  return 0;
} catch (const std::exception& error) {
  std::fprintf(stderr, "fit_feedforward: %s\n", error.what());
  return 1;
}
