// The process group: MPI's world communicator through Boost.MPI, the collectives on tensors, and
// the fault handling that ends the whole job when one rank fails.
//
// Boost.MPI has no nonblocking collectives, so all_reduce_async calls MPI_Iallreduce (MPI 3) on
// Boost's communicator directly; everything else goes through Boost.MPI.
#include "distributed/distributed.hpp"

#include <mpi.h>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <stdexcept>

#include "autograd/op_support.hpp"

namespace minigrad::distributed {

using minigrad::detail::check;

namespace {

std::unique_ptr<boost::mpi::environment> environment;  // MPI_Init on creation, MPI_Finalize on destruction
std::unique_ptr<boost::mpi::communicator> world;
bool finalized = false;

const boost::mpi::communicator& checked_world(const char* op) {
  check<std::runtime_error>(world != nullptr, op,
                            ": the process group is not initialised; call "
                            "distributed::init_process_group() first");
  return *world;
}

// "rank 1 of 2" for messages; "rank ?" before MPI is up.
std::string rank_label() {
  if (!world) return "rank ?";
  return minigrad::detail::concat("rank ", world->rank(), " of ", world->size());
}

// The job ends here: std::terminate on any rank (an exception nobody caught) aborts every rank,
// naming this one and the exception, instead of leaving the others in a collective.
[[noreturn]] void terminate_handler() {
  std::string what = "std::terminate called without an active exception";
  if (std::exception_ptr error = std::current_exception()) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = std::string("uncaught exception: ") + e.what();
    } catch (...) {
      what = "uncaught exception of a type not derived from std::exception";
    }
  }
  abort_job(what);
}

// MPI's own errors (a peer unreachable, a message truncated) land here rather than being returned
// to Boost.MPI as an exception some rank might swallow while the others wait.
void mpi_error_handler(MPI_Comm*, int* code, ...) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(*code, text, &length);
  abort_job(std::string("MPI error: ") + std::string(text, static_cast<size_t>(length)));
}

MPI_Datatype mpi_type(Dtype dtype) {
  switch (dtype) {
    case kFloat32:
      return MPI_FLOAT;
    case kFloat64:
      return MPI_DOUBLE;
    case kInt64:
      return MPI_INT64_T;
    case kBool:
      return MPI_C_BOOL;
  }
  throw std::invalid_argument("distributed: unknown dtype");
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
      return MPI_SUM;
    case ReduceOp::PRODUCT:
      return MPI_PROD;
    case ReduceOp::MIN:
      return MPI_MIN;
    case ReduceOp::MAX:
      return MPI_MAX;
  }
  throw std::invalid_argument("distributed: unknown ReduceOp");
}

// The checks every in-place collective makes; returns the communicator.
MPI_Comm check_collective(const Tensor& tensor, const char* op, bool numeric) {
  const boost::mpi::communicator& comm = checked_world(op);
  check(tensor.defined(), op, ": the tensor is undefined");
  check(!numeric || tensor.dtype() != kBool, op, ": cannot reduce a bool tensor (shape ", tensor.shape(),
        "); convert it to int64 first");
  minigrad::detail::check_inplace(tensor, op);
  return MPI_Comm(comm);
}

void check_mpi(int code, const char* call) {
  // Unreachable with the aborting error handler installed; kept for the case it is replaced.
  if (code != MPI_SUCCESS) abort_job(minigrad::detail::concat(call, " failed with MPI error code ", code));
}

}  // namespace

bool is_mpi_available() { return true; }

void init_process_group() {
  if (world) return;
  check<std::runtime_error>(!finalized,
                            "init_process_group: MPI was shut down by destroy_process_group() and "
                            "cannot start again in this process");
  environment = std::make_unique<boost::mpi::environment>(boost::mpi::threading::single,
                                                          /*abort_on_exception=*/true);
  world = std::make_unique<boost::mpi::communicator>();
  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(mpi_error_handler, &handler);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler);
  MPI_Errhandler_free(&handler);  // the communicator keeps its own reference
  std::set_terminate(terminate_handler);
  std::atexit([] {
    if (world) destroy_process_group();
  });
}

bool is_initialized() { return world != nullptr; }

int get_rank() { return checked_world("get_rank").rank(); }

int get_world_size() { return checked_world("get_world_size").size(); }

void all_reduce(const Tensor& tensor, ReduceOp op) {
  MPI_Comm comm = check_collective(tensor, "all_reduce", /*numeric=*/true);
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, tensor.impl()->data(), static_cast<int>(tensor.numel()),
                          mpi_type(tensor.dtype()), mpi_op(op), comm),
            "MPI_Allreduce");
  minigrad::detail::bump_version(tensor);
}

Work all_reduce_async(const Tensor& tensor, ReduceOp op) {
  MPI_Comm comm = check_collective(tensor, "all_reduce_async", /*numeric=*/true);
  auto request = std::make_unique<MPI_Request>();
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, tensor.impl()->data(), static_cast<int>(tensor.numel()),
                           mpi_type(tensor.dtype()), mpi_op(op), comm, request.get()),
            "MPI_Iallreduce");
  minigrad::detail::bump_version(tensor);
  return Work(request.release());
}

void broadcast(const Tensor& tensor, int src) {
  MPI_Comm comm = check_collective(tensor, "broadcast", /*numeric=*/false);
  const int size = world->size();
  if (src < 0 || src >= size)
    throw std::out_of_range(
        minigrad::detail::concat("broadcast: src ", src, " is not a rank of this job (0..", size - 1, ")"));
  check_mpi(
      MPI_Bcast(tensor.impl()->data(), static_cast<int>(tensor.numel()), mpi_type(tensor.dtype()), src, comm),
      "MPI_Bcast");
  minigrad::detail::bump_version(tensor);
}

void barrier() { checked_world("barrier").barrier(); }

[[noreturn]] void abort_job(const std::string& message, int code) {
  std::fflush(stdout);
  std::fprintf(stderr, "minigrad.distributed: %s: %s; ending the job\n", rank_label().c_str(),
               message.c_str());
  std::fflush(stderr);
  if (world) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void destroy_process_group() {
  checked_world("destroy_process_group");
  world.reset();
  environment.reset();  // MPI_Finalize
  finalized = true;
}

// ---- Work -------------------------------------------------------------------------------------

Work::Work(void* request) : request_(request) {}

Work::~Work() {
  if (request_) wait();
}

Work::Work(Work&& other) noexcept : request_(other.request_) { other.request_ = nullptr; }

Work& Work::operator=(Work&& other) noexcept {
  if (this != &other) {
    if (request_) wait();
    request_ = other.request_;
    other.request_ = nullptr;
  }
  return *this;
}

void Work::wait() {
  if (!request_) return;
  auto* request = static_cast<MPI_Request*>(request_);
  check_mpi(MPI_Wait(request, MPI_STATUS_IGNORE), "MPI_Wait");
  delete request;
  request_ = nullptr;
}

bool Work::is_completed() {
  if (!request_) return true;
  auto* request = static_cast<MPI_Request*>(request_);
  int done = 0;
  check_mpi(MPI_Test(request, &done, MPI_STATUS_IGNORE), "MPI_Test");
  if (!done) return false;
  delete request;
  request_ = nullptr;
  return true;
}

}  // namespace minigrad::distributed
