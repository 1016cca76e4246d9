// parity_trace: one training step of the lesson's FeedForward, compared with PyTorch tensor by tensor.
//
// When a C++ run and its Python notebook disagree, the first tensor that differs says where. This
// runs one step (seed, FeedForward, random batch, mse_loss, SGD), records every parameter,
// activation and gradient by name (parity::trace_training_step) and compares them, in order, with the
// twin's trace: `/usr/bin/python3 tools/reference/parity_reference.py --out pytorch.safetensors`,
// then `parity_trace --reference pytorch.safetensors` (exit status 1 if a tensor differs).
// tools/parity/parity_trace.sh runs both sides and the comparison in one go.
#include <CLI/CLI.hpp>  // flags: --help, types and errors
#include <cstdint>
#include <iostream>
#include <string>

#include "autograd/random.hpp"
#include "examples/support/cli.hpp"
#include "nn/feedforward.hpp"
#include "nn/loss.hpp"
#include "optim/sgd.hpp"
#include "parity/parity.hpp"

using namespace minigrad;

// The twin script's step, line for line.
parity::Trace run_step(uint64_t seed, int64_t n_embd, int64_t rows, double lr) {
  manual_seed(seed);
  nn::FeedForward model(n_embd);
  Tensor x = randn({rows, n_embd});
  Tensor y = randn({rows, n_embd});
  optim::SGD optimizer(model.parameters(), {.lr = lr});
  auto loss_fn = [](const Tensor& output, const Tensor& target) {
    return nn::functional::mse_loss(output, target);
  };
  return parity::trace_training_step(model, x, y, loss_fn, [&] { optimizer.step(); });
}

int main(int argc, char** argv) {
  // Flags (CLI11), the twin script's: `parity_trace --reference pytorch.safetensors --rows 8`.
  std::string reference, saved, save_to;
  uint64_t seed = 0;
  int64_t n_embd = 16, rows = 4;
  double lr = 0.1;
  parity::ParityOptions tolerance{.atol = 1e-5, .rtol = 1e-4};
  CLI::App app{
      "parity_trace: one training step of FeedForward(n_embd) on a random [rows, n_embd] batch with "
      "mse_loss and SGD(lr), as tools/reference/parity_reference.py does with the same flags, "
      "compared with its trace tensor by tensor",
      "parity_trace"};
  app.add_option("--reference", reference, "the PyTorch twin's trace to compare with");
  app.add_option("--compare", saved, "compare this saved trace instead of running the step");
  app.add_option("--save", save_to, "save our trace to this file");
  app.add_option("--seed", seed, "manual_seed before the step")->capture_default_str();
  app.add_option("--n-embd", n_embd, "FeedForward's width")->capture_default_str()->check(support::positive);
  app.add_option("--rows", rows, "rows of the batch")->capture_default_str()->check(support::positive);
  app.add_option("--lr", lr, "SGD's learning rate")->capture_default_str()->check(support::positive);
  app.add_option("--atol", tolerance.atol, "absolute tolerance")->capture_default_str();
  app.add_option("--rtol", tolerance.rtol, "relative tolerance")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const parity::Trace ours = saved.empty() ? run_step(seed, n_embd, rows, lr) : parity::load_trace(saved);
  if (!save_to.empty()) {
    parity::save_trace(ours, save_to);
    std::cout << "saved " << ours.size() << " tensors to " << save_to << "\n";
  }
  if (reference.empty()) {
    for (const auto& [name, tensor] : ours) std::cout << "  " << name << " " << tensor.shape() << "\n";
    std::cout << "(pass --reference pytorch.safetensors to compare)\n";
    return 0;
  }

  const parity::ParityReport report = parity::compare_traces(ours, parity::load_trace(reference), tolerance);
  std::cout << parity::to_string(report);
  return report.agrees() ? 0 : 1;
}
