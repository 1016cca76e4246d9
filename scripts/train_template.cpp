// train_template: a whole training script in one file, to copy and change.
//
// Copy it to scripts/my_script.cpp, pick it up with `cmake --preset release`, build it with
// `cmake --build --preset release --target script_my_script` and run
// ./build/release/scripts/my_script. It trains a small classifier on two interleaving half moons
// and goes through every step a training script needs: seed, data, model, optimizer, a loop with
// a progress line, evaluation, a checkpoint saved and loaded back, the loss curve. The walkthrough,
// with the PyTorch line beside each step, is docs/write_your_own_script.md.
//
// Shape letters: N examples, B batch size, D = 2 features, K = 2 classes.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "examples/support/csv.hpp"       // LossHistory, write_csv: the loss curve as step,loss lines
#include "examples/support/plot.hpp"      // write_loss_plot: the same curve as an SVG picture
#include "examples/support/progress.hpp"  // Progress: one line with the step, the loss and the speed
#include "minigrad.hpp"

using namespace minigrad;
namespace F = minigrad::nn::functional;

// The model: a subclass of nn::Module. Register the layers in the constructor, write forward().
struct Classifier : nn::Module {
  nn::Linear& hidden;
  nn::Linear& out;

  Classifier(int64_t in_features, int64_t width, int64_t classes)
      : hidden(register_module("hidden", nn::Linear(in_features, width))),
        out(register_module("out", nn::Linear(width, classes))) {}

  // [B, D] -> [B, K]: one score (logit) per class
  Tensor forward(const Tensor& x) override { return out(hidden(x).relu()); }
};

// The share of rows of x whose highest score is the class in y, without recording a graph.
double accuracy(nn::Module& model, const Tensor& x, const Tensor& y) {
  NoGradGuard no_grad;
  model.eval();
  const Tensor predicted = model(x).argmax(1);  // [N] int64
  model.train();
  return (predicted == y).sum().item<double>() / static_cast<double>(y.numel());
}

int main() try {
  // Settings: change these first.
  const int64_t epochs = 60;
  const int64_t batch_size = 32;
  const double lr = 0.01;
  const std::string name = "train_template";  // every file written starts with it

  // Seed: the same data, initial weights and batch order on every run.
  manual_seed(0);

  // Data: x [N, 2] float32 points, y [N] int64 classes 0 or 1. The test set is a second draw
  // from the same distribution, never trained on.
  auto [x, y] = data::make_moons(300, 0.15);
  auto [x_test, y_test] = data::make_moons(100, 0.15);
  data::DataLoader loader(data::TensorDataset(x, y), {.batch_size = batch_size, .shuffle = true});

  // Model and optimizer.
  Classifier model(2, 16, 2);
  optim::Adam optimizer(model.parameters(), {.lr = lr});
  std::printf("%s\n", to_string(model).c_str());

  // The training loop: one optimizer step per batch, `epochs` passes over the data.
  support::LossHistory history;
  support::Progress progress(0, epochs * loader.size(), /*every=*/100);
  int64_t step = 0;
  for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
    for (const auto& batch : loader) {
      Tensor logits = model(batch[0]);                   // [B, 2]
      Tensor loss = F::cross_entropy(logits, batch[1]);  // 0-d: mean over the batch

      optimizer.zero_grad();  // gradients add up across backward() calls: clear them first
      loss.backward();
      optimizer.step();

      step += 1;
      history.add(step, loss.item<double>());
      progress.update(step, loss.item<double>());
    }
  }
  progress.finish();

  // Evaluation on data the model has not seen.
  const double test_accuracy = accuracy(model, x_test, y_test);

  // Checkpoint: save the weights, load them into a fresh model, check it predicts the same.
  save(model, name + ".safetensors");
  Classifier restored(2, 16, 2);
  load(restored, name + ".safetensors");
  const double restored_accuracy = accuracy(restored, x_test, y_test);

  // The loss curve, as numbers and as a picture.
  support::write_csv(name + "_loss.csv", history);
  support::write_loss_plot(name + "_loss.svg", name + ": cross-entropy loss", history);

  std::printf("%s: %lld steps in %.1f s, test accuracy %.1f%%, reloaded checkpoint %.1f%%\n", name.c_str(),
              static_cast<long long>(step), progress.seconds(), 100 * test_accuracy, 100 * restored_accuracy);
  std::printf("wrote %s.safetensors, %s_loss.csv and %s_loss.svg\n", name.c_str(), name.c_str(),
              name.c_str());
  return 0;
} catch (const std::exception& error) {
  std::fprintf(stderr, "error: %s\n", error.what());
  return 1;
}
