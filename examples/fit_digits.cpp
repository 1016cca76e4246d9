// fit_digits: a network learns to read hand-written digits, and is tested on digits it never saw.
//
// Real data: 1,797 images of 8 x 8 pixels, each a digit 0..9 (assets/digits.csv.gz, see
// data/README.md). A fixed, seeded fifth of them is held out before training starts: the test
// accuracy on those says how well the network reads new handwriting, which the training accuracy
// cannot (a network can learn its training images by heart). The loop is fit_spiral's.
//
// Shape letters: N images, B batch, D = 64 pixels, K = 10 classes. Run `fit_digits --help`.
#include <CLI/CLI.hpp>  // flags: --help, types and errors
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "data/dataloader.hpp"
#include "data/datasets.hpp"
#include "examples/support/checkpoint_step.hpp"
#include "examples/support/cli.hpp"
#include "examples/support/csv.hpp"
#include "examples/support/plot.hpp"
#include "examples/support/progress.hpp"
#include "io/safetensors.hpp"
#include "nn/activation.hpp"
#include "nn/linear.hpp"
#include "nn/loss.hpp"
#include "nn/sequential.hpp"
#include "optim/adam.hpp"

using namespace minigrad;
namespace F = minigrad::nn::functional;

// The share of rows whose highest score is the right class.
double accuracy(const Tensor& logits, const Tensor& labels) {
  return (logits.argmax(1) == labels).sum().item<double>() / static_cast<double>(labels.numel());
}

int main(int argc, char** argv) try {
  // Flags (CLI11): `fit_digits --steps 2000 --data my_digits.csv.gz`; `--help` lists them.
  int64_t steps = 1350;  // thirty passes over the training images
  double lr = 0.002;
  bool resume = false;
  std::string path = MINIGRAD_DATA_DIR "/digits.csv.gz";
  CLI::App app{"fit_digits: a network learns to read hand-written digits", "fit_digits"};
  app.add_option("--steps", steps, "optimizer steps in all")->capture_default_str()->check(support::positive);
  app.add_option("--lr", lr, "Adam's learning rate")->capture_default_str()->check(support::positive);
  app.add_flag("--resume", resume, "continue from the last checkpoint, fit_digits.safetensors");
  app.add_option("--data", path, "the digits, a CSV file (.gz read as gzip)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  // Data: pixels 0..16 scaled to 0..1, x [1797, 64] float32; digits y [1797] int64.
  auto [images, digits] = data::load_digits(path);
  data::TensorDataset all(images / 16.0, digits);

  // The split: a permutation from a generator seeded 0, so every run holds out the same 360
  // images. Python: perm = torch.randperm(n, generator=g); train, test = perm[:1437], perm[1437:].
  Generator generator(0);
  const std::vector<int64_t> order = randperm(all.size(), generator).to_vector<int64_t>();
  const auto n_train = static_cast<size_t>(all.size() * 8 / 10);
  std::vector<Tensor> train = all.get_batch(std::span(order).first(n_train));   // {x [1437, 64], y [1437]}
  std::vector<Tensor> test = all.get_batch(std::span(order).subspan(n_train));  // {x [360, 64], y [360]}
  data::DataLoader loader(data::TensorDataset(train), {.batch_size = 32, .shuffle = true}, generator);

  // Model: 64 pixels in, one score per digit out, [B, 64] -> [B, 10].
  manual_seed(0);
  nn::Sequential model{nn::Linear(64, 128), nn::ReLU(), nn::Linear(128, 10)};
  optim::Adam optimizer(model.parameters(), {.lr = lr});

  // Checkpoints every 450 steps: weights (with the step) and Adam's state, as in fit_spiral.
  // `fit_digits --resume` goes on from the last one (with a fresh shuffle of the batches).
  const std::string checkpoint = "fit_digits.safetensors";
  const std::string optimizer_checkpoint = "fit_digits_optimizer.safetensors";
  int64_t step = 0;
  support::LossHistory history;
  if (resume) {
    load(model, checkpoint);
    nn::NamedTensors state = load_file(optimizer_checkpoint);
    optimizer.load_state_dict({state.begin(), state.end()});
    optimizer.set_lr(lr);  // this run's --lr, not the saved one: a diverged run resumes more gently
    step = support::checkpoint_step(load_metadata(checkpoint), checkpoint);
    history = support::read_loss_history("fit_digits_loss.csv", step);
    std::printf("resuming from %s at step %lld\n", checkpoint.c_str(), static_cast<long long>(step));
  }
  int64_t checkpoint_step = step;

  // The training loop: one batch per step, as many passes (epochs) over the images as it takes.
  support::Progress progress(step, steps, /*every=*/150);
  while (step < steps) {
    for (const auto& batch : loader) {
      Tensor loss = F::cross_entropy(model(batch[0]), batch[1]);  // [B, 10] scores vs [B] digits
      const double value = loss.item<double>();
      if (!std::isfinite(value)) throw support::diverged(step + 1, value, checkpoint, checkpoint_step);

      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      step += 1;

      history.add(step, value);
      progress.update(step, value);
      if (step % 450 == 0 || step == steps) {
        save_file(optimizer.state_dict(), optimizer_checkpoint);
        save(model, checkpoint, {{"step", std::to_string(step)}});  // last: its step is the one to trust
        support::write_csv("fit_digits_loss.csv", history);
        checkpoint_step = step;
      }
      if (step == steps) break;
    }
  }
  progress.finish();

  // How well it reads: on the training images, and on the 360 held-out ones that count.
  model.eval();
  NoGradGuard no_grad;
  Tensor train_logits = model(train[0]);
  const double final_loss = F::cross_entropy(train_logits, train[1]).item<double>();
  const double train_accuracy = accuracy(train_logits, train[1]);
  const double test_accuracy = accuracy(model(test[0]), test[1]);

  support::write_loss_plot("fit_digits_loss.svg", "fit_digits: cross-entropy loss", history);
  std::printf(
      "fit_digits: %lld steps in %.1f s, final loss %.4f, training accuracy %.1f%%, test accuracy "
      "%.1f%% (%lld held-out images); wrote fit_digits_loss.csv, fit_digits_loss.svg and %s in %s\n",
      static_cast<long long>(step), progress.seconds(), final_loss, 100 * train_accuracy, 100 * test_accuracy,
      static_cast<long long>(test[1].numel()), checkpoint.c_str(), std::filesystem::current_path().c_str());
  return 0;
} catch (const std::exception& error) {
  std::fprintf(stderr, "fit_digits: %s\n", error.what());
  return 1;
}
