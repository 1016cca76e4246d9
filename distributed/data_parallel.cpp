// DistributedDataParallel: buckets of gradients, all-reduced from inside the backward.
//
// The life of one backward, per bucket: each of its parameters' hooks copies that gradient,
// divided by the world size, into the bucket's flat buffer; the hook that fills the bucket starts
// its all-reduce (with overlap on), which sums the shares of all ranks: the average. The hook of
// the last parameter of all waits for every bucket and copies the averages back into the .grads.
// Dividing before the sum, as PyTorch's reducer does (torch/csrc/distributed/c10d/reducer.cpp),
// keeps the sum of N gradients from overflowing where each one fits.
#include "distributed/data_parallel.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"

namespace minigrad::distributed {

using minigrad::detail::check;
using minigrad::detail::concat;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// FNV-1a over the tensor's bytes: equal bits give equal hashes; a changed bit almost surely not.
int64_t hash_bytes(const Tensor& tensor) {
  const auto* bytes = static_cast<const unsigned char*>(tensor.impl()->data());
  const size_t count = static_cast<size_t>(tensor.numel()) * element_size(tensor.dtype());
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < count; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  int64_t result;
  std::memcpy(&result, &hash, sizeof result);
  return result;
}

// Every rank must hold parameters of the same shapes, or the all-reduces would mix up numbers:
// the element count of each, compared by min and max across ranks.
void check_same_shapes(const std::vector<std::string>& names, const std::vector<Tensor>& params) {
  const int64_t count = static_cast<int64_t>(params.size());
  Tensor sizes = zeros({count + 1}, {.dtype = kInt64});
  sizes.data_ptr<int64_t>()[0] = count;
  for (int64_t i = 0; i < count; ++i) sizes.data_ptr<int64_t>()[i + 1] = params[i].numel();
  Tensor low = sizes.clone(), high = sizes.clone();
  all_reduce(low, ReduceOp::MIN);
  all_reduce(high, ReduceOp::MAX);  // a rank with fewer parameters fails this too
  check<std::runtime_error>(
      low.equal(high), "DistributedDataParallel: the ranks' modules differ: rank ", get_rank(), " has ",
      count, " parameters (first: ", names.empty() ? "none" : names[0],
      ") whose sizes are not the same on every rank; build the same model on every rank");
}

}  // namespace

DistributedDataParallel::DistributedDataParallel(nn::Module& module, DistributedDataParallelOptions options)
    : module_(module), options_(options) {
  check(options.bucket_cap_mb > 0, "DistributedDataParallel: bucket_cap_mb must be positive, got ",
        options.bucket_cap_mb);
  get_world_size();  // throws before init_process_group()
  for (const auto& [name, param] : module.named_parameters()) {
    if (!param.requires_grad()) continue;  // frozen: never gets a gradient, nothing to average
    names_.push_back(name);
    params_.push_back(param);
  }
  check_same_shapes(names_, params_);

  // Rank 0's initial values everywhere, so that equal steps keep the copies equal.
  {
    NoGradGuard no_grad;
    for (const auto& [name, param] : module.named_parameters()) broadcast(param, 0);
    if (options.broadcast_buffers)
      for (const auto& [name, buffer] : module.named_buffers()) broadcast(buffer, 0);
  }

  build_buckets(options.bucket_cap_mb * 1024 * 1024);
  ready_flags_.assign(params_.size(), false);
  for (size_t i = 0; i < params_.size(); ++i)
    hooks_.push_back(params_[i].register_post_accumulate_grad_hook(
        [this, i](Tensor& leaf) { on_gradient_ready(i, leaf); }));
}

DistributedDataParallel::~DistributedDataParallel() {
  for (RemovableHandle& hook : hooks_) hook.remove();
  for (Bucket& bucket : buckets_) bucket.work.wait();  // an all-reduce still running writes into flat
}

// Parameters in reverse order, gradients roughly ready in that order; a bucket closes when the
// next parameter would take it past the cap (1 MiB for the first), or has another dtype.
void DistributedDataParallel::build_buckets(double cap_bytes) {
  const double first_cap = std::min(cap_bytes, 1024.0 * 1024.0);
  bucket_of_.assign(params_.size(), 0);
  slot_of_.assign(params_.size(), 0);
  std::vector<std::vector<size_t>> groups;
  double bytes = 0;
  for (size_t k = params_.size(); k-- > 0;) {
    const Tensor& param = params_[k];
    const double param_bytes = static_cast<double>(param.numel() * element_size(param.dtype()));
    const double cap = groups.size() <= 1 ? first_cap : cap_bytes;
    const bool full = !groups.empty() && bytes + param_bytes > cap;
    if (groups.empty() || full || params_[groups.back().front()].dtype() != param.dtype()) {
      groups.emplace_back();
      bytes = 0;
    }
    groups.back().push_back(k);
    bytes += param_bytes;
  }
  for (const std::vector<size_t>& group : groups) {
    Bucket bucket;
    int64_t numel = 0;
    for (size_t k : group) {
      bucket_of_[k] = buckets_.size();
      slot_of_[k] = bucket.params.size();
      bucket.params.push_back(k);
      bucket.offsets.push_back(numel);
      numel += params_[k].numel();
    }
    check(numel <= std::numeric_limits<int>::max(), "DistributedDataParallel: a bucket of ", numel,
          " elements is more than MPI counts; lower bucket_cap_mb");
    bucket.pending = bucket.params.size();
    bucket.flat = zeros({numel}, {.dtype = params_[group.front()].dtype()});
    stats_.bytes_per_backward += numel * static_cast<int64_t>(element_size(bucket.flat.dtype()));
    buckets_.push_back(std::move(bucket));
  }
  stats_.buckets = static_cast<int64_t>(buckets_.size());
}

void DistributedDataParallel::on_gradient_ready(size_t param, Tensor& leaf) {
  const auto start = Clock::now();
  Bucket& bucket = buckets_[bucket_of_[param]];
  check<std::runtime_error>(
      !ready_flags_[param], "DistributedDataParallel: ", names_[param],
      " got a gradient "
      "again, but the previous backward gave gradients to only ",
      ready_, " of ", params_.size(),
      " parameters, so their average was never taken (is a parameter unused in forward?); "
      "every parameter must get a gradient in every backward");
  ready_flags_[param] = true;
  const double share = 1.0 / get_world_size();
  const int64_t offset = bucket.offsets[slot_of_[param]];
  dispatch_floating(leaf.dtype(), "DistributedDataParallel", [&]<typename T>() {
    const T* grad = leaf.grad().template data_ptr<T>();
    T* flat = bucket.flat.template data_ptr<T>() + offset;
    for (int64_t i = 0; i < leaf.numel(); ++i) flat[i] = grad[i] * static_cast<T>(share);
  });
  ++ready_;
  if (--bucket.pending == 0 && options_.overlap) launch(bucket);
  for (Bucket& other : buckets_)
    if (other.launched) other.work.is_completed();  // MPI moves a running all-reduce on only when called
  stats_.seconds += seconds_since(start);
  if (ready_ == params_.size()) finish_backward();
}

void DistributedDataParallel::launch(Bucket& bucket) {
  bucket.work = all_reduce_async(bucket.flat);
  bucket.launched = true;
}

// The last gradient is in: every bucket's average goes back into the .grads, and the counts start
// again for the next backward.
void DistributedDataParallel::finish_backward() {
  const auto start = Clock::now();
  for (Bucket& bucket : buckets_) {
    if (bucket.launched)
      bucket.work.wait();
    else
      all_reduce(bucket.flat);
    dispatch_floating(bucket.flat.dtype(), "DistributedDataParallel", [&]<typename T>() {
      const T* flat = bucket.flat.template data_ptr<T>();
      for (size_t slot = 0; slot < bucket.params.size(); ++slot) {
        Tensor grad = params_[bucket.params[slot]].grad();
        std::copy_n(flat + bucket.offsets[slot], grad.numel(), grad.template data_ptr<T>());
      }
    });
    bucket.launched = false;
    bucket.pending = bucket.params.size();
  }
  ready_ = 0;
  ready_flags_.assign(params_.size(), false);
  stats_.backwards += 1;
  stats_.seconds += seconds_since(start);
}

Tensor DistributedDataParallel::operator()(const Tensor& input) {
  check<std::runtime_error>(
      ready_ == 0, "DistributedDataParallel: the previous backward gave gradients to ", ready_, " of ",
      params_.size(), " parameters, so their average was never taken (",
      "is a parameter unused in forward?); every parameter must get a gradient in every backward");
  return module_(input);
}

void DistributedDataParallel::check_parameters_agree() const {
  const int64_t count = static_cast<int64_t>(params_.size());
  Tensor low = empty({count}, {.dtype = kInt64});
  for (int64_t i = 0; i < count; ++i) low.data_ptr<int64_t>()[i] = hash_bytes(params_[i]);
  Tensor high = low.clone(), mine = low.clone();
  all_reduce(low, ReduceOp::MIN);
  all_reduce(high, ReduceOp::MAX);
  int64_t first = -1, differing = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (low.data_ptr<int64_t>()[i] == high.data_ptr<int64_t>()[i]) continue;
    if (first < 0) first = i;
    ++differing;
  }
  if (first < 0) return;

  // Which ranks differ from rank 0, and by how much, for the first parameter that differs.
  NoGradGuard no_grad;
  const Tensor& param = params_[first];
  Tensor reference = param.detach().clone();
  broadcast(reference, 0);
  Tensor gap = (param.detach() - reference).abs().max().to(kFloat64);
  all_reduce(gap, ReduceOp::MAX);
  Tensor ranks = zeros({get_world_size()}, {.dtype = kInt64});
  Tensor own_hash = mine.slice(0, first, first + 1);
  broadcast(own_hash, 0);  // rank 0's hash of that parameter
  ranks.data_ptr<int64_t>()[get_rank()] = own_hash.item<int64_t>() != mine.data_ptr<int64_t>()[first] ? 1 : 0;
  all_reduce(ranks);
  std::string which;
  for (int64_t r = 0; r < ranks.numel(); ++r)
    if (ranks.data_ptr<int64_t>()[r] != 0) which += (which.empty() ? "" : ", ") + std::to_string(r);
  throw std::runtime_error(
      concat("DistributedDataParallel: the ranks' parameters have diverged: ", names_[first], " on rank(s) ",
             which, " differs from rank 0's by up to ", gap.item<double>(), " (", differing, " of ", count,
             " parameters differ); the ranks no longer "
             "train the same model"));
}

Tensor shard_batch(const Tensor& global_batch) {
  const int64_t ranks = get_world_size(), rank = get_rank();
  check(global_batch.defined() && global_batch.dim() >= 1,
        "shard_batch: expected a batch with at least one dim");
  const int64_t rows = global_batch.size(0);
  check(rows % ranks == 0, "shard_batch: the global batch of ", rows, " rows does not divide by the ", ranks,
        " ranks; choose a batch size that is a multiple of the number of ranks");
  const int64_t share = rows / ranks;
  return global_batch.slice(0, rank * share, (rank + 1) * share);
}

}  // namespace minigrad::distributed
