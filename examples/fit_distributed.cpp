// fit_distributed: fit_feedforward's teacher-student fit, on one process or on N under mpirun.
//
//   ./fit_distributed                          one process, the whole batch of 32
//   mpirun -np 2 ./fit_distributed             two ranks, 16 rows each (as root, see README)
//
// Every rank draws the same global batch of 32 sequences from the same seed and keeps its
// contiguous share; DistributedDataParallel averages the gradients during backward, so every
// rank takes the step one process takes on the whole batch, and the printed losses are the ones
// one process prints (up to float rounding). Only rank 0 prints, checkpoints and draws the
// picture. --resume works with another number of ranks: the checkpoint is the same on every rank.
//
// Shape letters: B = 32 sequences (global batch), T = 64 positions, C = n_embd = 128 channels.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "data/datasets.hpp"
#include "distributed/data_parallel.hpp"
#include "examples/support/checkpoint_step.hpp"
#include "examples/support/cli.hpp"
#include "examples/support/csv.hpp"
#include "examples/support/plot.hpp"
#include "examples/support/progress.hpp"
#include "io/safetensors.hpp"
#include "nn/feedforward.hpp"
#include "nn/loss.hpp"
#include "optim/adam.hpp"

using namespace minigrad;
namespace F = minigrad::nn::functional;
namespace dist = minigrad::distributed;

const int64_t batch_size = 32;  // B, the global batch: every rank takes B / N of it
const int64_t block_size = 64;  // T
const int64_t n_embd = 128;     // C
const int64_t examples = 256;   // sequences in the data set

int main(int argc, char** argv) try {
  // Flags (CLI11): `fit_distributed --steps 300`; `--help` lists them. Every rank parses them alike.
  int64_t steps = 100, save_every = 25, check_every = 100;
  double lr = 0.001, bucket_mb = 25;
  bool resume = false, no_overlap = false;
  CLI::App app{"fit_distributed: fit_feedforward's fit, alone or on the ranks mpirun starts",
               "fit_distributed"};
  app.add_option("--steps", steps, "optimizer steps in all")->capture_default_str()->check(support::positive);
  app.add_option("--lr", lr, "AdamW's learning rate")->capture_default_str()->check(support::positive);
  app.add_flag("--resume", resume, "continue from fit_distributed.safetensors, with any number of ranks");
  app.add_option("--save-every", save_every, "checkpoint every N steps")
      ->capture_default_str()
      ->check(support::positive);
  app.add_flag("--no-overlap", no_overlap,
               "all-reduce after the whole backward, not bucket by bucket during it");
  app.add_option("--bucket-mb", bucket_mb, "largest bucket of gradients in MiB (PyTorch's default)")
      ->capture_default_str()
      ->check(support::positive);
  app.add_option("--check-every", check_every, "check every N steps that the ranks' parameters agree")
      ->capture_default_str()
      ->check(support::positive);
  CLI11_PARSE(app, argc, argv);
  const bool overlap = !no_overlap;

  // Under mpirun, join the job; started alone, this is a job of one rank.
  dist::init_process_group();
  const int rank = dist::get_rank(), ranks = dist::get_world_size();
  const bool rank0 = rank == 0;

  // The data: y = teacher(x) for 256 random sequences, the same on every rank (same seeds).
  manual_seed(1);
  nn::FeedForward teacher(n_embd);
  manual_seed(0);
  nn::FeedForward student(n_embd);
  Generator generator(0);
  auto [x, y] = data::teacher_student([&](const Tensor& v) { return teacher(v); },
                                      {examples, block_size, n_embd}, generator);

  // Resume before wrapping: the wrapper then copies rank 0's weights to all, and every rank
  // reads the same optimizer state (on several machines the file must be on a shared disk).
  optim::AdamW optimizer(student.parameters(), {.lr = lr, .betas = {0.9, 0.95}, .weight_decay = 0.01});
  const std::string checkpoint = "fit_distributed.safetensors";
  const std::string optimizer_checkpoint = "fit_distributed_optimizer.safetensors";
  int64_t step = 0;
  support::LossHistory history;
  if (resume) {
    load(student, checkpoint);
    nn::NamedTensors state = load_file(optimizer_checkpoint);
    optimizer.load_state_dict({state.begin(), state.end()});
    step = support::checkpoint_step(load_metadata(checkpoint), checkpoint);
    if (rank0) history = support::read_loss_history("fit_distributed_loss.csv", step);
    if (rank0)
      std::printf("resuming from %s at step %lld\n", checkpoint.c_str(), static_cast<long long>(step));
  }
  dist::DistributedDataParallel ddp(student, {.bucket_cap_mb = bucket_mb, .overlap = overlap});

  // Step s's batch indices are the s-th draw of this generator on every rank, whatever N is, so
  // a resumed run replays the draws it skips.
  Generator batches(42);
  for (int64_t s = 0; s < step; ++s) randint(0, examples, {batch_size}, batches);

  support::Progress progress(step, steps, /*every=*/10);
  const auto start_step = step;
  while (step < steps) {
    Tensor ix = randint(0, examples, {batch_size}, batches);  // the global batch, B indices
    std::vector<Tensor> xs, ys;
    for (int64_t i : dist::shard_batch(ix).to_vector<int64_t>()) {  // this rank's B / N of them
      xs.push_back(x[i]);
      ys.push_back(y[i]);
    }
    Tensor loss = F::mse_loss(ddp(stack(xs)), stack(ys));  // the mean over this rank's rows
    optimizer.zero_grad();
    loss.backward();  // the gradients come out averaged over the ranks
    optimizer.step();
    step += 1;

    Tensor global_loss = loss.detach().to(kFloat64);  // the mean over the whole batch, for printing
    dist::all_reduce(global_loss);
    const double value = global_loss.item<double>() / ranks;
    if (step % check_every == 0 || step == steps) ddp.check_parameters_agree();
    if (!rank0) continue;
    history.add(step, value);
    progress.update(step, value);
    if (step % save_every == 0 || step == steps) {
      save_file(optimizer.state_dict(), optimizer_checkpoint);
      save(student, checkpoint, {{"step", std::to_string(step)}});  // atomic, and last: its step counts
      support::write_csv("fit_distributed_loss.csv", history);
    }
  }
  // What the network alone costs: an all-reduce of one step's gradient bytes, after a barrier so
  // that no rank waits for a slower one (inside backward, that waiting counts too).
  const auto stats = ddp.stats();
  Tensor probe = zeros({stats.bytes_per_backward / 4});
  dist::barrier();
  const auto probe_start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) dist::all_reduce(probe);
  const double probe_ms =
      1e3 / 20 * std::chrono::duration<double>(std::chrono::steady_clock::now() - probe_start).count();
  if (!rank0) return 0;
  progress.finish();
  support::write_loss_plot("fit_distributed_loss.svg", "fit_distributed: mean squared error", history);

  const double seconds = progress.seconds();
  const double tokens = static_cast<double>((step - start_step) * batch_size * block_size);
  std::printf(
      "fit_distributed: %d rank(s), %lld steps in %.2f s, %.0f tokens/s, final loss %.6f; all-reduce: %lld "
      "bucket(s), %lld bytes per step, %.2f ms per step in backward (%s), %.3f ms alone\n",
      ranks, static_cast<long long>(step - start_step), seconds, tokens / seconds, history.losses.back(),
      static_cast<long long>(stats.buckets), static_cast<long long>(stats.bytes_per_backward),
      stats.backwards ? 1e3 * stats.seconds / static_cast<double>(stats.backwards) : 0.0,
      overlap ? "overlapped" : "after backward", probe_ms);
  return 0;
} catch (const std::exception& error) {
  // Under mpirun the other ranks may be waiting for this one: end them all, naming this rank.
  if (dist::is_initialized() && dist::get_world_size() > 1)
    dist::abort_job(std::string("fit_distributed: ") + error.what());
  std::fprintf(stderr, "fit_distributed: %s\n", error.what());
  return 1;
}
