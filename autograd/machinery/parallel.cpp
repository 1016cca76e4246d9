// The thread pool behind detail::parallel_for: get_num_threads() - 1 workers started on first use.
// The calling thread runs piece 0 itself, worker w runs piece w, and the caller waits until all
// are done. A worker with nothing to do spins for kSpin, then sleeps on a condition variable; the
// caller waits for the workers the same way.
// One loop at a time: a second thread of the program that starts a loop while the pool is busy
// runs its pieces itself, in order (the same pieces, so the same result). A worker takes the
// caller's subnormal mode (set_flush_denormal) with the job.
#include "autograd/machinery/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "autograd/op_support.hpp"

namespace minigrad {

namespace {

using Body = void (*)(void*, int64_t, int64_t, int64_t);

// A hint to the core that this thread is waiting (the x86 pause instruction).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

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

// The calling thread's subnormal mode: the flush-to-zero (bit 15) and denormals-are-zero (bit 6)
// bits of x86's MXCSR, the control register of SSE and AVX arithmetic; 0 where there is none.
#if defined(__x86_64__) || defined(__i386__)
constexpr unsigned kFlushBits = 0x8040;
unsigned subnormal_mode() { return _mm_getcsr() & kFlushBits; }
void set_subnormal_mode(unsigned mode) { _mm_setcsr((_mm_getcsr() & ~kFlushBits) | mode); }
#else
constexpr unsigned kFlushBits = 0;
unsigned subnormal_mode() { return 0; }
void set_subnormal_mode(unsigned) {}
#endif

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

// How long a waiting thread spins before it sleeps. A loop that follows within this time (the
// next op of a training step, most often) finds the worker awake: with workers that slept at once,
// LayerNorm over [2048, 128] took 110 us on 2 threads against 81 us on 1 (a wake-up costs tens of
// microseconds in a virtual machine); spinning, it takes 43 us. A program that pauses, or a
// second program on the same cores, gets them back soon after. Measured: docs/performance.md.
constexpr auto kSpin = std::chrono::microseconds(50);

// Spins until done() or kSpin has passed; true if done(). done() is read after every pause (a
// pause lasts up to 140 cycles on Skylake; reading only every 64 of them let a worker see its job
// microseconds late), the clock every 64, and every 64 the thread yields its core to any thread
// waiting for it: with two programs on two cores, a spinning thread otherwise held a core that a
// thread of the other program (or the one it waits for) needed. Two GPT training steps side by
// side: 180 -> 133 to 168 ms each; alone, the same. Measured: docs/performance.md.
template <typename Done>
bool spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int64_t i = 1;; ++i) {
    if (done()) return true;
    cpu_relax();
    if (i % 64 == 0) {
      if (std::chrono::steady_clock::now() > until) return done();
      std::this_thread::yield();
    }
  }
}

class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }

  // Runs pieces 1.. on the workers and piece 0 here; false if another loop holds the pool.
  bool run(Body body, void* context, int64_t n, int64_t pieces) {
    std::unique_lock busy(submit_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    while (static_cast<int64_t>(workers_.size()) < pieces - 1) {
      const std::lock_guard lock(mutex_);  // a new worker starts at the current generation
      workers_.emplace_back([this, index = workers_.size() + 1, seen = generation_.load()] {
        work(static_cast<int64_t>(index), seen);
      });
    }
    job_ = {body, context, n, pieces, subnormal_mode()};
    error_ = nullptr;
    remaining_ = static_cast<int64_t>(workers_.size());  // every worker reports, with a piece or without
    ++generation_;
    if (sleeping_ > 0) {
      const std::lock_guard lock(mutex_);
      wake_.notify_all();
    }

    std::exception_ptr mine;
    try {
      run_piece(body, context, n, pieces, 0);
    } catch (...) {
      mine = std::current_exception();
    }
    if (!spin_until([this] { return remaining_ == 0; })) {
      std::unique_lock lock(mutex_);
      caller_sleeping_ = true;
      done_.wait(lock, [this] { return remaining_ == 0; });
      caller_sleeping_ = false;
    }
    if (!mine) mine = error_;
    if (mine) std::rethrow_exception(mine);
    return true;
  }

 private:
  struct Job {
    Body body = nullptr;
    void* context = nullptr;
    int64_t n = 0, pieces = 0;
    unsigned subnormal_mode = 0;  // the caller's, for the workers to compute as it does
  };

  void work(int64_t piece, uint64_t seen) {
    while (true) {
      if (!spin_until([&] { return generation_ != seen; })) {
        std::unique_lock lock(mutex_);
        ++sleeping_;
        wake_.wait(lock, [&] { return generation_ != seen; });
        --sleeping_;
      }
      seen = generation_;
      if (stop_) return;
      const Job job = job_;  // written before generation_ moved on, and kept until every worker reports
      if (piece < job.pieces) {
        if (subnormal_mode() != job.subnormal_mode) set_subnormal_mode(job.subnormal_mode);
        try {
          run_piece(job.body, job.context, job.n, job.pieces, piece);
        } catch (...) {
          const std::lock_guard lock(mutex_);
          if (!error_) error_ = std::current_exception();
        }
      }
      if (--remaining_ == 0 && caller_sleeping_) {
        const std::lock_guard lock(mutex_);
        done_.notify_one();
      }
    }
  }

  std::mutex submit_;  // held by the one loop running
  std::mutex mutex_;   // for sleeping and waking, and error_
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  Job job_;
  std::atomic<int64_t> remaining_ = 0;
  std::atomic<uint64_t> generation_ = 0;  // a new job (or the stop) each time it moves on
  std::atomic<int> sleeping_ = 0;
  std::atomic<bool> caller_sleeping_ = false;
  std::exception_ptr error_;
  bool stop_ = false;  // read by the workers after generation_ moves on
};

Pool& pool() {
  static Pool instance;
  return instance;
}

}  // namespace

void set_num_threads(int n) {
  detail::check(n >= 1, "set_num_threads: expected a positive number of threads, got ", n);
  num_threads() = n;
}

int get_num_threads() { return num_threads(); }

bool set_flush_denormal(bool mode) {
  if constexpr (kFlushBits == 0) return false;
  set_subnormal_mode(mode ? kFlushBits : 0);
  return true;
}

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
