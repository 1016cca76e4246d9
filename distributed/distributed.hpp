// minigrad::distributed: several processes that train one model, as torch.distributed.
//
// `mpirun -np N program` starts N copies of a program; each is a rank, numbered 0..N-1. After
// init_process_group() they can combine tensors: all_reduce adds (or takes the min/max of) a
// tensor across all ranks and leaves the result on every rank, broadcast copies rank src's tensor
// to all, barrier waits for everyone. Every rank must call the same collectives in the same
// order with tensors of the same shape and dtype: a rank that skips one leaves the others waiting.
// The messages go through MPI (Open MPI here, through Boost.MPI), on one machine over shared
// memory and across machines over the network. DistributedDataParallel (data_parallel.hpp) is
// built on these calls.
//
// Built without MPI (MINIGRAD_WITH_MPI off), the same calls serve a job of one rank, so a program
// written for several ranks still builds and runs alone; is_mpi_available() tells which it is.
//
// Faults: once initialised, an uncaught exception on any rank (std::terminate) and any MPI error
// print which rank failed and end the whole job with MPI_Abort, so no rank waits forever for a
// rank that is gone; a rank killed by a signal is noticed by mpirun, which ends the others.
#pragma once

#include <string>

#include "autograd/tensor.hpp"

namespace minigrad::distributed {

/// How all_reduce combines the ranks' values (`torch.distributed.ReduceOp`).
enum class ReduceOp { SUM, PRODUCT, MIN, MAX };

/// True when this build talks MPI (`dist.is_mpi_available()`); false in a build configured with
/// MINIGRAD_WITH_MPI off, where every job has one rank.
bool is_mpi_available();

/// True when this process was started by an MPI launcher (mpirun / mpiexec of Open MPI or
/// MPICH, or srun with PMI or PMIx): it reads the environment the launcher sets, without starting
/// MPI. A program can turn data parallelism on from this alone.
bool launched_by_mpi();

/// Starts MPI and joins the job that mpirun started, reading rank and world size from its
/// environment (`torch.distributed.init_process_group("mpi")`). Also installs the fault handling
/// described at the top of this file. Calling it again does nothing. A program started without
/// mpirun becomes a job of one rank. Throws std::runtime_error if MPI cannot start, or if this
/// build has no MPI and the process was started by mpirun (each copy would train alone).
void init_process_group();

/// True between init_process_group() and destroy_process_group() (`dist.is_initialized()`).
bool is_initialized();

/// This process's rank, 0..world size - 1 (`dist.get_rank()`). Throws std::runtime_error before
/// init_process_group(), as every call below does.
int get_rank();

/// The number of ranks in the job (`dist.get_world_size()`).
int get_world_size();

/// What an asynchronous collective returns (`torch.distributed.Work`): wait() blocks until the
/// result is in the tensor. A Work must be waited for before the tensor is read or freed; one
/// that is destroyed unwaited waits in its destructor.
class Work {
 public:
  Work() = default;  ///< A finished Work, with nothing to wait for.
  ~Work();           ///< Waits if still running: the tensor must not be freed under MPI.
  /// Takes over `other`'s collective; `other` is left finished.
  Work(Work&& other) noexcept;
  /// Waits for this Work's own collective, then takes over `other`'s.
  Work& operator=(Work&& other) noexcept;
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;

  /// Blocks until the collective has finished on this rank (`work.wait()`).
  void wait();
  /// True once the collective has finished; never blocks, and lets MPI make progress on it
  /// (`work.is_completed()`).
  bool is_completed();

 private:
  friend Work all_reduce_async(const Tensor& tensor, ReduceOp op);
  explicit Work(void* request);
  void* request_ = nullptr;  // the pending MPI_Request, owned; null when finished
};

/// Combines `tensor` across all ranks in place: afterwards every rank holds, element by element,
/// the sum (or product, min, max) of all ranks' tensors (`dist.all_reduce(tensor, op)`). Every
/// rank gets the same bits. float32, float64 and int64; any shape, the same on every rank.
/// Throws std::invalid_argument for an undefined or bool tensor, std::runtime_error for a tensor
/// that requires grad while grad mode is on (as every in-place change).
void all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::SUM);

/// all_reduce started in the background (`dist.all_reduce(tensor, op, async_op=True)`): returns
/// at once; the result is in `tensor` after the returned Work's wait(). Same checks as all_reduce.
Work all_reduce_async(const Tensor& tensor, ReduceOp op = ReduceOp::SUM);

/// Copies rank `src`'s tensor into `tensor` on every other rank (`dist.broadcast(tensor, src)`).
/// Every dtype. Throws std::out_of_range for a src outside 0..world size - 1, and as all_reduce.
void broadcast(const Tensor& tensor, int src = 0);

/// Returns on each rank once every rank has called it (`dist.barrier()`).
void barrier();

/// Prints "minigrad.distributed: rank R of N: <message>; ending the job" to stderr, then ends
/// every rank of the job with exit code `code` (MPI_Abort). For a rank that has caught an error
/// the others cannot know about: returning from main instead would leave them waiting.
[[noreturn]] void abort_job(const std::string& message, int code = 1);

/// Leaves the job and shuts MPI down (`dist.destroy_process_group()`); after it, is_initialized()
/// is false and MPI cannot be started again in this process. Called at exit if the program does
/// not call it. Every rank must call it, as a collective.
void destroy_process_group();

}  // namespace minigrad::distributed
