// DistributedDataParallel: one model trained by N ranks on N shares of each batch, as PyTorch's
// torch.nn.parallel.DistributedDataParallel.
//
// Every rank holds a whole copy of the model. At the start the wrapper copies rank 0's
// parameters and buffers to all ranks. Each step, every rank draws the same global batch and
// keeps its contiguous share (shard_batch), runs forward and backward on it, and the wrapper
// replaces each gradient by the average over ranks. The average of the ranks' gradients of their
// mean losses is the gradient of the mean loss over the whole batch, so each optimizer step is
// the one a single process takes on the whole batch (up to float rounding), and it is the same
// step on every rank: the copies stay equal without sending parameters again.
//
// The averaging happens inside backward(): the parameters are grouped into buckets (in reverse
// order, roughly the order their gradients are ready in), each gradient is copied into its
// bucket when the engine has finished it (Tensor::register_post_accumulate_grad_hook), and a full
// bucket's all-reduce starts at once, while the backward goes on with the earlier layers. When
// backward() returns, every gradient is averaged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/tensor.hpp"
#include "distributed/distributed.hpp"
#include "nn/module.hpp"

namespace minigrad::distributed {

/// Options of DistributedDataParallel, PyTorch's keyword arguments where it has them.
struct DistributedDataParallelOptions {
  /// Largest bucket, in MiB of gradients (`bucket_cap_mb`); the first bucket (the last layers)
  /// holds at most 1 MiB, as PyTorch's, so that the first all-reduce starts early.
  double bucket_cap_mb = 25;
  /// true: a bucket's all-reduce starts as soon as its gradients are ready, during backward.
  /// false: all of them run one after another once the last gradient is ready (still before
  /// backward() returns). Measured in README's section on mpirun.
  bool overlap = true;
  /// Copy rank 0's buffers (not only its parameters) at construction (`broadcast_buffers`).
  /// PyTorch copies them before every forward too; no module here changes its buffers while it
  /// trains, so once is enough.
  bool broadcast_buffers = true;
};

/// Averages a module's gradients across the ranks during each backward
/// (`torch.nn.parallel.DistributedDataParallel(module)`). It refers to the module, which must
/// outlive it, and registers a hook on each of its parameters that require grad, removed again by
/// the destructor. The hooks do the work, so a model whose forward takes other arguments (the
/// GPT's `forward(idx, targets)`) may be called directly instead of through operator().
/// Every parameter must receive a gradient in every backward (PyTorch's default,
/// find_unused_parameters=False): when one did not, the next forward through operator() or the
/// next backward throws std::runtime_error. Every rank must build it on a module of the same
/// architecture, and run the same number of backwards.
class DistributedDataParallel {
 public:
  /// Copies rank 0's parameters (and buffers) to every rank and prepares the buckets. A collective:
  /// all ranks call it. Throws std::runtime_error before init_process_group(), or if the ranks'
  /// modules do not have the same parameter shapes; std::invalid_argument for bucket_cap_mb <= 0.
  explicit DistributedDataParallel(nn::Module& module, DistributedDataParallelOptions options = {});
  /// Removes the hooks, after waiting for any all-reduce still running.
  ~DistributedDataParallel();
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  /// module(input) (`ddp(x)`). Throws std::runtime_error if the previous backward did not give
  /// every parameter a gradient: then some all-reduces never ran and the gradients are not averaged.
  Tensor operator()(const Tensor& input);
  /// The wrapped module (`ddp.module`).
  nn::Module& module() { return module_; }

  /// Checks that every rank holds the same parameters, bit for bit: a 64-bit hash per parameter,
  /// compared with two small all-reduces (cheap: one pass over the parameters). A collective.
  /// Throws std::runtime_error on every rank if they differ, naming the first parameter that
  /// differs, the ranks whose copy differs from rank 0's, and the largest difference.
  void check_parameters_agree() const;

  /// What the averaging costs, counted since construction.
  struct Stats {
    int64_t buckets = 0;             ///< number of buckets
    int64_t bytes_per_backward = 0;  ///< gradient bytes each rank all-reduces per backward
    int64_t backwards = 0;           ///< backwards whose gradients were averaged
    double seconds = 0;              ///< time the backwards spent in all-reduce calls and waits
  };
  /// The counts above.
  Stats stats() const { return stats_; }

 private:
  struct Bucket {
    std::vector<size_t> params;  // indices into params_, in the order they are laid out
    std::vector<int64_t> offsets;
    Tensor flat;         // the gradients of `params`, one after the other
    size_t pending = 0;  // gradients not yet copied in this backward
    Work work;
    bool launched = false;
  };

  void build_buckets(double cap_bytes);
  void on_gradient_ready(size_t param, Tensor& leaf);
  void launch(Bucket& bucket);
  void finish_backward();

  nn::Module& module_;
  DistributedDataParallelOptions options_;
  std::vector<std::string> names_;  // named_parameters() names of params_
  std::vector<Tensor> params_;      // the parameters that require grad
  std::vector<RemovableHandle> hooks_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;  // per parameter: its bucket
  std::vector<size_t> slot_of_;    // per parameter: its place in the bucket
  size_t ready_ = 0;               // gradients copied in this backward
  std::vector<bool> ready_flags_;  // per parameter: copied in this backward
  Stats stats_;
};

/// This rank's contiguous share of a global batch, along dim 0: with B rows and N ranks, rank r
/// gets rows [r * B / N, (r + 1) * B / N) (a copy, as slice). Every rank must pass the same batch.
/// Throws std::invalid_argument naming both numbers when B does not divide by N, and
/// std::runtime_error before init_process_group().
Tensor shard_batch(const Tensor& global_batch);

}  // namespace minigrad::distributed
