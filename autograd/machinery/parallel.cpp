// The thread pool behind detail::parallel_for: get_num_threads() - 1 workers started on first use,
// each asleep on a condition variable until a loop hands out its pieces. The calling thread runs
// piece 0 itself, worker w runs piece w, and the caller waits until all are done.
// One loop at a time: a second thread of the program that starts a loop while the pool is busy
// runs its pieces itself, in order (the same pieces, so the same result).
#include "autograd/machinery/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "autograd/op_support.hpp"

#ifdef MINIGRAD_BLAS_BLIS
extern "C" void bli_thread_set_num_threads(int64_t n_threads);  // blis.h's declaration (dim_t)
#else
extern "C" void openblas_set_num_threads(int num_threads);  // OpenBLAS's cblas.h
#endif

namespace minigrad {

namespace {

using Body = void (*)(void*, int64_t, int64_t, int64_t);

// PyTorch's default (intraop_default_num_threads, ATen/ParallelCommon.cpp): OMP_NUM_THREADS if set
// to a positive number, else the cores.
int default_num_threads() {
  if (const char* text = std::getenv("OMP_NUM_THREADS")) {
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (end != text && *end == '\0' && value > 0) return static_cast<int>(std::min(value, 1024L));
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::atomic<int>& num_threads() {
  static std::atomic<int> count{default_num_threads()};
  return count;
}

thread_local bool inside_piece = false;  // nested loops run on the thread they are called from

void run_piece(Body body, void* context, int64_t n, int64_t pieces, int64_t piece) {
  const int64_t size = n / pieces, extra = n % pieces;  // the first `extra` pieces get one more
  const int64_t begin = piece * size + std::min(piece, extra);
  const int64_t end = begin + size + (piece < extra ? 1 : 0);
  const bool outer = inside_piece;
  inside_piece = true;
  try {
    body(context, piece, begin, end);
  } catch (...) {
    inside_piece = outer;
    throw;
  }
  inside_piece = outer;
}

class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }

  // Runs pieces 1.. on the workers and piece 0 here; false if another loop holds the pool.
  bool run(Body body, void* context, int64_t n, int64_t pieces) {
    std::unique_lock busy(submit_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard lock(mutex_);
      while (static_cast<int64_t>(workers_.size()) < pieces - 1)
        workers_.emplace_back([this, index = workers_.size() + 1] { work(static_cast<int64_t>(index)); });
      job_ = {body, context, n, pieces};
      remaining_ = pieces - 1;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();

    std::exception_ptr mine;
    try {
      run_piece(body, context, n, pieces, 0);
    } catch (...) {
      mine = std::current_exception();
    }
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return remaining_ == 0; });
    if (!mine) mine = error_;
    lock.unlock();
    if (mine) std::rethrow_exception(mine);
    return true;
  }

 private:
  struct Job {
    Body body = nullptr;
    void* context = nullptr;
    int64_t n = 0, pieces = 0;
  };

  void work(int64_t piece) {
    uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (piece >= job_.pieces) continue;
      const Job job = job_;
      lock.unlock();
      std::exception_ptr failure;
      try {
        run_piece(job.body, job.context, job.n, job.pieces, piece);
      } catch (...) {
        failure = std::current_exception();
      }
      lock.lock();
      if (failure && !error_) error_ = failure;
      if (--remaining_ == 0) done_.notify_one();
    }
  }

  std::mutex submit_;  // held by the one loop running
  std::mutex mutex_;   // guards everything below
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  Job job_;
  int64_t remaining_ = 0;
  uint64_t generation_ = 0;
  std::exception_ptr error_;
  bool stop_ = false;
};

Pool& pool() {
  static Pool instance;
  return instance;
}

}  // namespace

void set_num_threads(int n) {
  detail::check(n >= 1, "set_num_threads: expected a positive number of threads, got ", n);
  num_threads() = n;
#ifdef MINIGRAD_BLAS_BLIS
  bli_thread_set_num_threads(n);
#else
  openblas_set_num_threads(n);
#endif
}

int get_num_threads() { return num_threads(); }

namespace detail {

int64_t parallel_pieces(int64_t n, int64_t grain) {
  grain = std::max<int64_t>(grain, 1);
  if (n <= grain || inside_piece) return 1;
  return std::min<int64_t>(num_threads(), (n + grain - 1) / grain);
}

void run_pieces(int64_t n, int64_t pieces, Body body, void* context) {
  if (pieces > 1 && !inside_piece && pool().run(body, context, n, pieces)) return;
  for (int64_t piece = 0; piece < pieces; ++piece) run_piece(body, context, n, pieces, piece);
}

}  // namespace detail
}  // namespace minigrad
