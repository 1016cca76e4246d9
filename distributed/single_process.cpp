// The process group of a build without MPI: a job of one rank. all_reduce of one rank's tensor is
// that tensor, broadcast from rank 0 leaves it as it is, barrier has nobody to wait for; the
// checks are the MPI build's, so a program that is wrong for N ranks is told so here too.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "autograd/op_support.hpp"
#include "distributed/distributed.hpp"

namespace minigrad::distributed {

using minigrad::detail::check;

namespace {

bool initialized = false;

void check_initialized(const char* op) {
  check<std::runtime_error>(initialized, op,
                            ": the process group is not initialised; call "
                            "distributed::init_process_group() first");
}

void check_collective(const Tensor& tensor, const char* op, bool numeric) {
  check_initialized(op);
  check(tensor.defined(), op, ": the tensor is undefined");
  check(!numeric || tensor.dtype() != kBool, op, ": cannot reduce a bool tensor (shape ", tensor.shape(),
        "); convert it to int64 first");
  minigrad::detail::check_inplace(tensor, op);
}

}  // namespace

bool is_mpi_available() { return false; }

void init_process_group() {
  check<std::runtime_error>(
      !launched_by_mpi(),
      "init_process_group: this process was started by mpirun, but "
      "minigrad was built without MPI, so every copy would train alone; install "
      "libboost-mpi-dev, openmpi-bin and libopenmpi-dev and configure with -DMINIGRAD_WITH_MPI=ON");
  initialized = true;
}

bool is_initialized() { return initialized; }

int get_rank() {
  check_initialized("get_rank");
  return 0;
}

int get_world_size() {
  check_initialized("get_world_size");
  return 1;
}

void all_reduce(const Tensor& tensor, ReduceOp) { check_collective(tensor, "all_reduce", /*numeric=*/true); }

Work all_reduce_async(const Tensor& tensor, ReduceOp op) {
  check_collective(tensor, "all_reduce_async", /*numeric=*/true);
  all_reduce(tensor, op);
  return Work();
}

void broadcast(const Tensor& tensor, int src) {
  check_collective(tensor, "broadcast", /*numeric=*/false);
  if (src != 0)
    throw std::out_of_range(
        minigrad::detail::concat("broadcast: src ", src, " is not a rank of this job (0..0)"));
}

void barrier() { check_initialized("barrier"); }

[[noreturn]] void abort_job(const std::string& message, int code) {
  std::fflush(stdout);
  std::fprintf(stderr, "minigrad.distributed: rank 0 of 1: %s; ending the job\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(code);
}

void destroy_process_group() {
  check_initialized("destroy_process_group");
  initialized = false;
}

Work::Work(void* request) : request_(request) {}
Work::~Work() = default;
Work::Work(Work&& other) noexcept : request_(other.request_) { other.request_ = nullptr; }
Work& Work::operator=(Work&& other) noexcept {
  request_ = other.request_;
  other.request_ = nullptr;
  return *this;
}
void Work::wait() {}
bool Work::is_completed() { return true; }

}  // namespace minigrad::distributed
