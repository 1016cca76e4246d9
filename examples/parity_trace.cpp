// parity_trace: one training step of the lesson's FeedForward, compared with PyTorch tensor by tensor.
//
// When a C++ run and its Python notebook disagree, the first tensor that differs says where. This
// runs one step (seed, FeedForward, random batch, mse_loss, SGD), records every parameter,
// activation and gradient by name (parity::trace_training_step) and compares them, in order, with the
// twin's trace: `/usr/bin/python3 tools/reference/parity_reference.py --out pytorch.safetensors`,
// then `parity_trace --reference pytorch.safetensors` (exit status 1 if a tensor differs).
// tools/parity/parity_trace.sh runs both sides and the comparison in one go.
#include <cstdint>
#include <iostream>
#include <string>

#include "autograd/random.hpp"
#include "examples/support/flags.hpp"
#include "nn/feedforward.hpp"
#include "nn/loss.hpp"
#include "parity/parity.hpp"
#include "optim/sgd.hpp"

using namespace minigrad;

const char* const kUsage =
    "usage: parity_trace [--reference pytorch.safetensors] [--save minigrad.safetensors]\n"
    "                    [--seed 0] [--n-embd 16] [--rows 4] [--lr 0.1] [--atol 1e-5] [--rtol 1e-4]\n"
    "       parity_trace --compare ours.safetensors --reference theirs.safetensors [--atol ..] [--rtol ..]\n"
    "Runs one training step of FeedForward(n_embd) on a random [rows, n_embd] batch with mse_loss and\n"
    "SGD(lr), as tools/reference/parity_reference.py does with the same flags, and compares the two.\n";

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
  support::Flags flags(argc, argv, kUsage);
  const std::string reference = flags.text("--reference", "");
  const std::string saved = flags.text("--compare", "");
  const std::string save_to = flags.text("--save", "");
  const uint64_t seed = std::stoull(flags.text("--seed", "0"));
  const int64_t n_embd = flags.integer("--n-embd", 16), rows = flags.integer("--rows", 4);
  const double lr = flags.real("--lr", 0.1);
  const parity::ParityOptions tolerance{.atol = flags.real("--atol", 1e-5), .rtol = flags.real("--rtol", 1e-4)};
  flags.check_all_used();

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
