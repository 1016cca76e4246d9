// Threads for minigrad's own loops: set_num_threads / get_num_threads as in torch, and the one
// helper ops use to split a large loop over them (as at::parallel_for). Also set_flush_denormal,
// a per-thread float mode that the pool's workers take from the thread whose loop they run.
//
// A loop of n elements runs on one thread unless n exceeds the grain size (PyTorch's 32,768
// elements, at::internal::GRAIN_SIZE in ATen/Parallel.h): below that, waking a second thread costs
// more than it saves. Above it, [0, n) is cut into get_num_threads() contiguous pieces of nearly
// equal size, always the same pieces for the same n and thread count, so a reduction that adds
// per-piece results in piece order gives the same number on every run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace minigrad {

/// Sets the number of threads minigrad's loops use, matrix products included: the BLAS itself
/// runs on one thread (`torch.set_num_threads`). Throws std::invalid_argument unless n >= 1.
void set_num_threads(int n);

/// The number of threads minigrad's loops use (`torch.get_num_threads`). Until set_num_threads
/// is called: OMP_NUM_THREADS when it holds a positive number (as PyTorch reads it), else the
/// number of cores.
int get_num_threads();

/// Flushes subnormal floats to zero, or stops flushing them, on the calling thread: with `mode`,
/// a subnormal operand of float32 and float64 arithmetic reads as 0 and a subnormal result is
/// stored as 0 (x86's denormals-are-zero and flush-to-zero modes), which spares the CPU its slow
/// path for them at the price of those tiny values. As `torch.set_flush_denormal(mode)`: returns
/// true where the CPU has the modes (every x86-64), false elsewhere, and then changes nothing.
/// Each thread has its own mode (a new thread starts in its creator's); minigrad's worker threads
/// run each piece of a loop in the mode of the thread that started it, so a result never depends
/// on which thread computed it (torch 1.13 sets the calling thread only, so that its ops split
/// over threads come out partly flushed). Throws nothing.
bool set_flush_denormal(bool mode);

namespace detail {

/// PyTorch's grain size: loops of at most this many elements stay on one thread.
constexpr int64_t kGrainSize = 32768;

/// The grain of a loop over items of `item_size` elements each (rows, matrices, blocks): as many
/// items as make kGrainSize elements, at least 1.
constexpr int64_t grain_for(int64_t item_size) {
  return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(item_size, 1));
}

/// The pieces parallel_for cuts [0, n) into for `grain` (at least 1): one piece if n <= grain,
/// else the thread count, but no more than n / grain pieces.
int64_t parallel_pieces(int64_t n, int64_t grain);

// Calls f(args...) through a function compiled three times: for x86-64-v4 (AVX-512), for AVX2
// and for the baseline x86-64, the CPU's best one chosen when the program starts (GCC's
// target_clones), as PyTorch builds its kernels for AVX-512, AVX2 and the baseline. f's loop,
// inlined into each, then runs in the widest vectors the CPU has: relu over [2048, 512] took half
// the time on an AVX-512 CPU, sum four fifths (docs/performance.md). Every clone gives the same
// bits: the build forbids fusing a * b + c into one rounding (-ffp-contract=off in
// CMakeLists.txt), and no compiler reorders a float sum unasked. Only in GCC's optimised builds on
// x86-64: clang 14, the fuzzer's compiler, does not clone templates.
#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__) && defined(__x86_64__)
#define MINIGRAD_LOOP_CLONES [[gnu::target_clones("arch=x86-64-v4", "avx2", "default")]]
#else
#define MINIGRAD_LOOP_CLONES
#endif
template <typename F, typename... Args>
MINIGRAD_LOOP_CLONES void call_vectorised(F& f, Args... args) {
  f(args...);
}

/// Runs body(context, piece, begin, end) for each piece of [0, n); piece 0 on the calling thread.
/// Returns when all are done; the first exception a piece throws is rethrown.
void run_pieces(int64_t n, int64_t pieces, void (*body)(void*, int64_t, int64_t, int64_t), void* context);

/// Calls f(begin, end) on the pieces of [0, n), on several threads when n > grain; from inside
/// a piece (a nested loop), on the calling thread alone. f must only write what its range owns.
template <typename F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  const int64_t pieces = parallel_pieces(n, grain);
  if (pieces <= 1) {
    if (n > 0) call_vectorised(f, int64_t{0}, n);
    return;
  }
  using Fn = std::remove_reference_t<F>;
  run_pieces(
      n, pieces,
      [](void* context, int64_t, int64_t begin, int64_t end) {
        call_vectorised(*static_cast<Fn*>(context), begin, end);
      },
      const_cast<void*>(static_cast<const void*>(&f)));
}

/// As parallel_for, with the piece's index: f(piece, begin, end), piece in [0, pieces). For
/// per-piece partial results, indexed by piece, then combined in piece order.
template <typename F>
void parallel_pieces_for(int64_t n, int64_t pieces, F&& f) {
  if (pieces <= 1) {
    if (n > 0) call_vectorised(f, int64_t{0}, int64_t{0}, n);
    return;
  }
  using Fn = std::remove_reference_t<F>;
  run_pieces(
      n, pieces,
      [](void* context, int64_t piece, int64_t begin, int64_t end) {
        call_vectorised(*static_cast<Fn*>(context), piece, begin, end);
      },
      const_cast<void*>(static_cast<const void*>(&f)));
}

}  // namespace detail
}  // namespace minigrad
