// A training job that fails on purpose, for tests/distributed/test_faults.cpp: every rank trains
// a small FeedForward through DistributedDataParallel, and at step --step the rank --rank fails
// as --fault says, while the others go on into the next all-reduce, where they would wait forever
// if nobody ended the job:
//   kill   the rank sends itself SIGKILL (as the kernel's OOM killer or a lost machine would)
//   throw  the rank throws an exception nobody catches (std::terminate)
//   abort  the rank catches its exception and calls distributed::abort_job
//   none   nothing fails: every rank finishes, and rank 0 prints "finished"
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "distributed/data_parallel.hpp"
#include "nn/feedforward.hpp"
#include "nn/loss.hpp"
#include "optim/adam.hpp"

using namespace minigrad;
namespace dist = minigrad::distributed;

namespace {

void fail(const std::string& fault, int64_t step) {
  if (fault == "kill") std::raise(SIGKILL);
  if (fault == "throw" || fault == "abort")
    throw std::runtime_error("injected fault at step " + std::to_string(step));
}

void train(const std::string& fault, int fault_rank, int64_t fault_step, int64_t steps) {
  manual_seed(0);
  nn::FeedForward model(16);
  dist::DistributedDataParallel ddp(model);
  optim::AdamW optimizer(model.parameters(), {.lr = 0.01});
  Generator generator(1);
  for (int64_t step = 1; step <= steps; ++step) {
    std::printf("rank %d starts step %lld\n", dist::get_rank(), static_cast<long long>(step));
    std::fflush(stdout);
    if (step == fault_step && dist::get_rank() == fault_rank) fail(fault, step);
    Tensor x = dist::shard_batch(randn({8, 4, 16}, generator));
    Tensor loss = nn::functional::mse_loss(ddp(x), zeros_like(x));
    optimizer.zero_grad();
    loss.backward();  // the all-reduces: every rank waits here for every other
    optimizer.step();
  }
}

}  // namespace

int main(int argc, char** argv) {
  dist::init_process_group();
  std::string fault = "none";
  int fault_rank = 1;
  int64_t fault_step = 3, steps = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--fault") fault = value;
    if (flag == "--rank") fault_rank = std::stoi(value);
    if (flag == "--step") fault_step = std::stoll(value);
    if (flag == "--steps") steps = std::stoll(value);
  }
  if (fault == "abort") {
    try {
      train(fault, fault_rank, fault_step, steps);
    } catch (const std::exception& error) {
      dist::abort_job(error.what());
    }
  } else {
    train(fault, fault_rank, fault_step, steps);
  }
  if (dist::get_rank() == 0) std::printf("finished\n");
  return 0;
}
