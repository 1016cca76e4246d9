// fit_spiral: a small network learns to tell the three arms of a spiral apart.
//
// No straight line separates the arms, so a linear classifier fails; two hidden ReLU layers bend
// the boundaries around them. The loop is the one of every classifier: scores (logits) from the
// model, cross_entropy against the class labels, backward, an optimizer step. At the end the
// program colours the plane by the class the model picks there: open fit_spiral_regions.svg.
//
// Shape letters: N points, B batch, K = 3 classes. Run `fit_spiral --help` for the flags.
#include <CLI/CLI.hpp>  // flags: --help, types and errors
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

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

int main(int argc, char** argv) try {
  // Flags (CLI11): `fit_spiral --steps 1000 --lr 0.003`; `--help` lists them.
  int64_t steps = 600;
  double lr = 0.01;
  bool resume = false;
  CLI::App app{"fit_spiral: an MLP learns to tell the three arms of a spiral apart", "fit_spiral"};
  app.add_option("--steps", steps, "optimizer steps in all")->capture_default_str()->check(support::positive);
  app.add_option("--lr", lr, "Adam's learning rate")->capture_default_str()->check(support::positive);
  app.add_flag("--resume", resume, "continue from the last checkpoint, fit_spiral.safetensors");
  CLI11_PARSE(app, argc, argv);

  // Data: 100 points per arm; x [300, 2] float32, y [300] int64 (the arm, 0..2), served in
  // shuffled batches of 32 (Python: DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)).
  Generator generator(0);
  auto [x, y] = data::make_spiral(/*n_per_class=*/100, /*n_classes=*/3, /*noise=*/0.2, generator);
  data::DataLoader loader(data::TensorDataset(x, y), {.batch_size = 32, .shuffle = true}, generator);

  // Model: 2 coordinates in, one score per class out, [B, 2] -> [B, 3].
  manual_seed(0);
  nn::Sequential model{nn::Linear(2, 64), nn::ReLU(), nn::Linear(64, 64), nn::ReLU(), nn::Linear(64, 3)};
  optim::Adam optimizer(model.parameters(), {.lr = lr});

  // Checkpoints: the weights (with the step, as metadata) and the optimizer's state (Adam's
  // running averages), every 200 steps. After a crash, or a nan, `fit_spiral --resume` loads both
  // and goes on from that step; the loader starts a fresh shuffle, which training does not mind.
  // Python, with safetensors.torch: save_file(model.state_dict(), path, metadata={"step": "200"})
  // and model.load_state_dict(load_file(path)).
  const std::string checkpoint = "fit_spiral.safetensors";
  const std::string optimizer_checkpoint = "fit_spiral_optimizer.safetensors";
  int64_t step = 0;
  support::LossHistory history;
  if (resume) {
    load(model, checkpoint);
    nn::NamedTensors state = load_file(optimizer_checkpoint);
    optimizer.load_state_dict({state.begin(), state.end()});
    optimizer.set_lr(lr);  // this run's --lr, not the saved one: a diverged run resumes more gently
    step = support::checkpoint_step(load_metadata(checkpoint), checkpoint);
    history = support::read_loss_history("fit_spiral_loss.csv", step);
    std::printf("resuming from %s at step %lld\n", checkpoint.c_str(), static_cast<long long>(step));
  }
  int64_t checkpoint_step = step;

  // The training loop: one batch per step, as many passes (epochs) over the data as it takes.
  support::Progress progress(step, steps, /*every=*/100);
  while (step < steps) {
    for (const auto& batch : loader) {
      Tensor logits = model(batch[0]);                   // [B, 3] scores
      Tensor loss = F::cross_entropy(logits, batch[1]);  // mean over the batch of -log p(right class)
      const double value = loss.item<double>();
      if (!std::isfinite(value)) throw support::diverged(step + 1, value, checkpoint, checkpoint_step);

      optimizer.zero_grad();  // gradients add up across backward() calls: clear them first
      loss.backward();
      optimizer.step();
      step += 1;

      history.add(step, value);
      progress.update(step, value);
      if (step % 200 == 0 || step == steps) {
        save_file(optimizer.state_dict(), optimizer_checkpoint);
        save(model, checkpoint, {{"step", std::to_string(step)}});  // last: its step is the one to trust
        support::write_csv("fit_spiral_loss.csv", history);
        checkpoint_step = step;
      }
      if (step == steps) break;
    }
  }
  progress.finish();

  // How well it fits: loss and accuracy over all 300 points, without recording a graph.
  model.eval();
  NoGradGuard no_grad;
  Tensor logits = model(x);
  const double final_loss = F::cross_entropy(logits, y).item<double>();
  const double accuracy = (logits.argmax(1) == y).sum().item<double>() / static_cast<double>(y.numel());

  // Pictures: the loss curve, and the class the model picks at every point of a grid.
  support::write_loss_plot("fit_spiral_loss.svg", "fit_spiral: cross-entropy loss", history);
  support::Grid grid = support::grid_around(x, 150);
  Tensor picked = model(grid.points).argmax(1);  // [150 * 150] classes
  support::write_regions_plot("fit_spiral_regions.svg", "fit_spiral: decision regions", grid, picked, x, y);

  std::printf(
      "fit_spiral: %lld steps in %.1f s, final loss %.4f, training accuracy %.1f%%; wrote "
      "fit_spiral_loss.csv, fit_spiral_loss.svg, fit_spiral_regions.svg and %s in %s\n",
      static_cast<long long>(step), progress.seconds(), final_loss, 100 * accuracy, checkpoint.c_str(),
      std::filesystem::current_path().c_str());
  return 0;
} catch (const std::exception& error) {
  std::fprintf(stderr, "fit_spiral: %s\n", error.what());
  return 1;
}
