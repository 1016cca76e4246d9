// detail::gemm, the library's one wrapper around the BLAS call (declared in op_support.hpp),
// and how products use the threads: the BLAS itself runs on one thread, and a product large
// enough to be worth it is cut into blocks that minigrad's own threads run side by side
// (split_gemm). One set of threads for the BLAS and for every other loop: a BLAS with threads of
// its own would keep them spinning beside minigrad's, and on two cores each set would take the
// cores from the other (docs/performance.md).
#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "autograd/machinery/parallel.hpp"
#include "autograd/machinery/vector_math.hpp"
#include "autograd/op_support.hpp"

namespace minigrad {

namespace detail {

bool has_small_matrix_kernels(std::string_view core) {
  std::string name(core);  // lowered letter by letter in ASCII: std::tolower follows the locale
  for (char& letter : name)
    if (letter >= 'A' && letter <= 'Z') letter = static_cast<char>(letter - 'A' + 'a');
  return name == "skylakex" || name == "cooperlake" || name == "sapphirerapids";
}

namespace {

// The BLAS entry points for one element type, so that gemm below is written once.
template <typename T>
struct Blas;
template <>
struct Blas<float> {
  static constexpr auto gemm = cblas_sgemm;
  static constexpr auto gemv = cblas_sgemv;
  static constexpr auto ger = cblas_sger;
};
template <>
struct Blas<double> {
  static constexpr auto gemm = cblas_dgemm;
  static constexpr auto gemv = cblas_dgemv;
  static constexpr auto ger = cblas_dger;
};

// Below these sizes a product goes through the BLAS's level-2 routines (matrix-vector products and
// rank-1 updates) instead of its GEMM. OpenBLAS's GEMM copies ("packs") the whole of y into a
// blocked layout on every call, which for the course's [128, 512] weights costs about 20 us
// whatever the number of rows; a matrix-vector product just streams y once. Measured with
// OpenBLAS 0.3.21 on its AVX2 cores (the AMD EPYC Zen 3; route() below for its AVX-512 ones) on
// the [N,128] x [128,512] products and their backward shapes (bench/ and
// docs/performance.md): gemv per row wins up to 4 rows (4.8 us for 1 row against 21.7 us for
// the GEMM), rank-1 updates win up to 2 (8.9 us for 1 against 28.1 us). BLIS (MINIGRAD_BLAS=BLIS)
// has its own unpacked path for skinny products, faster than its gemv (4.1 us for 1 row, 5.9 us
// for 2 against 5.0 and 9.8), so there every product except a single column goes to its GEMM.
#ifdef MINIGRAD_BLAS_BLIS
constexpr int64_t kGemvMaxRows = 0;
constexpr int64_t kGerMaxInner = 0;
#else
constexpr int64_t kGemvMaxRows = 4;
constexpr int64_t kGerMaxInner = 2;
#endif

// set_small_matrix_kernels forces small_kernels() for the tests: -1 asks OpenBLAS, 0 and 1 force it.
std::atomic<int> forced_small_kernels{-1};

// Whether OpenBLAS has small-matrix kernels, which run a small product straight from the
// operands into c, without packing: its AVX-512 cores (SkylakeX, Cooperlake, SapphireRapids) do.
// BLIS is not asked (its GEMM has an unpacked path of its own, above).
bool small_kernels() {
  if (const int forced = forced_small_kernels.load(std::memory_order_relaxed); forced >= 0)
    return forced == 1;
#ifdef MINIGRAD_BLAS_BLIS
  return false;
#else
  static const bool small = has_small_matrix_kernels(openblas_get_corename());
  return small;
#endif
}

// Whether OpenBLAS 0.3.21 gives this product to those kernels: the rule of its SkylakeX kernels
// (kernel/x86_64/sgemm_small_kernel_permit_skylakex.c), in our row-major terms, where its
// transposed A is our transposed y and its M and N are our cols and rows: at most 100^3
// multiply-adds, and with y transposed at most 1,200 elements of c and an inner size of at least
// 32. Its rule also lets both operands transposed through (sgemm from an inner size of 4, dgemm
// always), but that kernel was slower than a matrix-vector product per row on every shape timed
// (the Intel Xeon, one thread, best of 3,000 calls: [2, 128] from an inner 512 14.2 against
// 4.8 us, [4, 512] from 128 15.0 against 10.4 us, [2, 64] from 64 0.98 against 0.38 us; on a
// busier run [4, 512] came out level), so such products are counted out here and keep the
// level-2 routes.
bool small_product(bool trans_x, bool trans_y, int64_t rows, int64_t cols, int64_t inner) {
  if (!small_kernels() || rows * cols * inner > 1'000'000) return false;
  if (trans_x && trans_y) return false;
  if (trans_y) return rows * cols <= 1200 && inner >= 32;
  return true;
}

// The rows of each call when a float product x @ y^T that OpenBLAS does not give its small-matrix
// kernels runs instead as x @ (a copy of y^T) in blocks of rows that it does give them, or 0 when
// it does not. Its GEMM packs the whole of x for every call, where those kernels read x in place:
// the course's key, query and value layers, [2048, 128] @ [128, 32]^T, 150 -> 101 us (one thread,
// the Intel Xeon's SkylakeX kernels, the copy included; docs/performance.md). Each element of c
// is still one sum over the inner size in order, so on one thread the bits are OpenBLAS's own for
// the whole product under three conditions, checked on those kernels with [2048, cols] @
// [cols, inner]^T for cols from 8 to 128 and inner from 16 to 512, and by a review over cols 16
// to 240 and every inner size from 3 to 256: columns in multiples of 16 (with 8, 24, 33 or 65
// columns its GEMM sums the last columns in another order), an inner size of at most 256 (its
// GEMM sums an inner size past 448 in two passes, the small kernel in one; 256 leaves a margin for
// the other AVX-512 cores' blocking, which was not tried) and float (dgemm's kernels were not
// checked). Blocks of fewer than 100 rows were slower than the whole ([2048, 128] @ [128, 128]^T
// in blocks of 61: 494 -> 634 us).
int64_t row_block(bool is_float, bool trans_x, bool trans_y, int64_t rows, int64_t cols, int64_t inner) {
  if (!is_float || trans_x || !trans_y || !small_kernels() || cols <= 0 || inner <= 0) return 0;
  if (small_product(trans_x, trans_y, rows, cols, inner) || cols % 16 != 0 || inner > 256) return 0;
  const int64_t block = 1'000'000 / (cols * inner);  // at most 100^3 multiply-adds a block
  return block >= 100 ? block : 0;
}

// How one product runs: a matrix-vector product per row of c, one matrix-vector product for a
// single column, one rank-1 update per term of the inner sum, the GEMM, or the GEMM on a copy
// of y^T in blocks of rows (row_block). A product that
// OpenBLAS gives its small-matrix kernels goes to the GEMM from 2 rows, and with an inner size of 1
// or 2: on the Intel Xeon (SkylakeX kernels), one thread, best of 3,000 calls (docs/performance.md),
// [2, 128] @ [128, 512]^T 6.5 -> 4.2 us, [4, 512] @ [512, 128] 11.7 -> 4.0 us, the rank-2
// [512, 2] @ [2, 128] 13.4 -> 7.3 us, where a product it would pack stays on the level-2 routes
// ([3, 128] @ [128, 512]^T: 9.8 us by rows, 22.4 us by its GEMM). One row stays on gemv (level).
// The GEMM of one thread sums each element as PyTorch's addmm does on the same BLAS.
enum class Route { gemv_rows, gemv_column, ger, gemm, gemm_row_blocks };

Route route(bool is_float, bool trans_x, bool trans_y, int64_t rows, int64_t cols, int64_t inner) {
  const bool small = small_product(trans_x, trans_y, rows, cols, inner);
  if (rows <= kGemvMaxRows && (rows == 1 || !small)) return Route::gemv_rows;
  if (cols == 1) return Route::gemv_column;
  if (inner <= kGerMaxInner && !small) return Route::ger;
  if (row_block(is_float, trans_x, trans_y, rows, cols, inner) > 0) return Route::gemm_row_blocks;
  return Route::gemm;
}

// Whether a GEMM writing c (beta = 0) gets a c zeroed here and beta = 1 instead. Given beta = 0,
// OpenBLAS 0.3.21 zeroes c in a pass of its own (sgemm_beta) before its kernels add onto it, and
// on its AVX2 cores that pass is slower than std::fill_n: on the AMD EPYC Zen 3, OpenBLAS on its
// Zen kernels, one product alone, best of 40 rounds: the attention's 32 products [64, 32] @
// [32, 64] 161 -> 131 us, a key's [2048, 128] @ [128, 32] 252 -> 239 us, [2048, 128] @ [128, 512]
// 3.27 -> 3.05 ms; the same bits (0 + a sum is the sum). Its AVX-512 cores keep beta = 0: their
// small-matrix kernels have versions for beta = 0 that write c without reading it, and its direct
// float kernel runs only with beta = 0. BLIS's kernels overwrite c when beta = 0, at any size.
bool zero_before_gemm() {
#ifdef MINIGRAD_BLAS_BLIS
  return false;
#else
  return !small_kernels();
#endif
}

// The BLAS route, float or double. Every product here is y-major: each level-2 call is one row of
// c (gemv over y), one column of c (gemv over x), or one term x[:, p] y[p, :] (ger).
template <typename T>
void blas_gemm(bool trans_x, bool trans_y, int64_t rows, int64_t cols, int64_t inner, const T* x, int64_t ldx,
               const T* y, int64_t ldy, bool accumulate, T* c, int64_t ldc) {
  const int r = static_cast<int>(rows), n = static_cast<int>(cols), k = static_cast<int>(inner);
  const int lx = static_cast<int>(ldx), ly = static_cast<int>(ldy), lc = static_cast<int>(ldc);
  // The level-2 routines get beta = 1 on a zeroed c rather than beta = 0: some BLAS builds scale
  // c by beta, and 0 * nan would keep garbage from an uninitialised output. The GEMM too where
  // that is faster (zero_before_gemm).
  const Route how = route(std::is_same_v<T, float>, trans_x, trans_y, rows, cols, inner);
  const bool zeroed =
      !accumulate && how != Route::gemm_row_blocks && (how != Route::gemm || zero_before_gemm());
  if (zeroed)
    for (int64_t i = 0; i < rows; ++i) std::fill_n(c + i * ldc, cols, T(0));
  if (how == Route::gemv_rows) {
    // Row i of c is op(y)^T applied to row i of op(x).
    for (int64_t i = 0; i < rows; ++i) {
      const T* x_row = trans_x ? x + i : x + i * ldx;
      const int inc_x = trans_x ? lx : 1;
      if (trans_y)  // y stored [cols, inner]: c_i = y @ x_i
        Blas<T>::gemv(CblasRowMajor, CblasNoTrans, n, k, T(1), y, ly, x_row, inc_x, T(1), c + i * ldc, 1);
      else  // y stored [inner, cols]: c_i = y^T @ x_i
        Blas<T>::gemv(CblasRowMajor, CblasTrans, k, n, T(1), y, ly, x_row, inc_x, T(1), c + i * ldc, 1);
    }
  } else if (how == Route::gemv_column) {
    // c is one column: op(x) @ y, y a vector (of stride 1 when stored as a row, ldy as a column).
    const int inc_y = trans_y ? 1 : ly;
    if (trans_x)  // x stored [inner, rows]
      Blas<T>::gemv(CblasRowMajor, CblasTrans, k, r, T(1), x, lx, y, inc_y, T(1), c, lc);
    else
      Blas<T>::gemv(CblasRowMajor, CblasNoTrans, r, k, T(1), x, lx, y, inc_y, T(1), c, lc);
  } else if (how == Route::ger) {
    // c += column p of op(x) times row p of op(y), for each p.
    for (int64_t p = 0; p < inner; ++p) {
      const T* x_col = trans_x ? x + p * ldx : x + p;
      const T* y_row = trans_y ? y + p : y + p * ldy;
      Blas<T>::ger(CblasRowMajor, r, n, T(1), x_col, trans_x ? 1 : lx, y_row, trans_y ? ly : 1, c, lc);
    }
  } else if (how == Route::gemm_row_blocks) {
    // y is stored [cols, inner], row j at y + j * ldy; y_t is [inner, cols], in a buffer each
    // thread keeps (at most 10,000 elements, row_block), so the attention's thousands of small
    // products a step allocate nothing.
    thread_local std::vector<T> y_t_buffer;
    y_t_buffer.resize(static_cast<size_t>(inner * cols));
    T* y_t = y_t_buffer.data();
    bool copied = false;
    if constexpr (std::is_same_v<T, float>) {
      if (ldy == inner && has_avx2()) {
        transpose_contiguous(y, y_t, cols, inner);
        copied = true;
      }
    }
    if (!copied)
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t p = 0; p < inner; ++p) y_t[p * cols + j] = y[j * ldy + p];
    const int64_t most = std::max<int64_t>(1, row_block(true, trans_x, trans_y, rows, cols, inner));
    const int64_t blocks = (rows + most - 1) / most, block = (rows + blocks - 1) / blocks;  // even blocks
    for (int64_t r0 = 0; r0 < rows; r0 += block) {
      const int64_t r = std::min(block, rows - r0);
      // Each block's c zeroed here and added onto (beta = 1), as OpenBLAS's GEMM zeroes the whole
      // c first: a sum whose every term is -0 then comes out +0 as from its one call, where its
      // small kernel with beta = 0 writes -0. The block's c is in the cache for the kernel.
      if (!accumulate)
        for (int64_t i = r0; i < r0 + r; ++i) std::fill_n(c + i * ldc, cols, T(0));
      Blas<T>::gemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(r), n, k, T(1), x + r0 * ldx,
                    lx, y_t, n, T(1), c + r0 * ldc, lc);
    }
  } else {
    const CBLAS_TRANSPOSE flag_x = trans_x ? CblasTrans : CblasNoTrans,
                          flag_y = trans_y ? CblasTrans : CblasNoTrans;
    const T beta = accumulate || zeroed ? T(1) : T(0);
    Blas<T>::gemm(CblasRowMajor, flag_x, flag_y, r, n, k, T(1), x, lx, y, ly, beta, c, lc);
  }
}

#ifdef MINIGRAD_BLAS_BLIS
extern "C" void bli_thread_set_num_threads(int64_t n_threads);  // blis.h's declaration (dim_t)
void set_blas_threads(int n) { bli_thread_set_num_threads(n); }
#else
extern "C" void openblas_set_num_threads(int num_threads);  // OpenBLAS's cblas.h
void set_blas_threads(int n) { openblas_set_num_threads(n); }
#endif

// A product worth splitting (above kOneCoreProduct multiply-adds, or kGrainSize for a
// matrix-vector product of a few rows, outside a parallel piece) runs as
// blocks of its larger side, one per thread: blocks of rows of c (and of op(x)), or of its
// columns (and of op(y)), each a product of its own. The blocks follow the thread count, and the
// BLAS may take other kernels for a block than for the whole (OpenBLAS's small-matrix kernels
// below 100^3 multiply-adds), so the result can differ from one thread's by float rounding, as
// with the BLAS's own threads; the same thread count gives the same bits, run after run.
template <typename T>
void split_gemm(bool trans_x, bool trans_y, int64_t rows, int64_t cols, int64_t inner, const T* x, const T* y,
                bool accumulate, T* c) {
  // The BLAS's own threads would spin beside minigrad's and take the cores from them.
  static const bool blas_on_one_thread = (set_blas_threads(1), true);
  (void)blas_on_one_thread;
  const int64_t ldx = trans_x ? rows : inner, ldy = trans_y ? inner : cols;
  constexpr int64_t kBlock = 16;  // the smallest block worth a call of its own
  const bool by_rows = rows >= cols;
  // The matrix-vector products of a few rows stream their matrix once, as an elementwise op does:
  // they pay to split from PyTorch's grain size on (OpenBLAS threads them from 9,216 elements).
  // Measured on the FeedForward at 1 and 2 rows on 2 threads: its training step 570 -> 240 us. The
  // small GEMMs that take their place on OpenBLAS's AVX-512 cores split the same way, by columns
  // (on the Intel Xeon at 2 threads: 2-row products 5.6 -> 2.6 us against gemv's split).
  // Rank-1 updates are not split: they write a whole matrix, and its forward and backward got
  // slower (31 -> 49 us at 1 row).
  const int64_t worth = rows <= kGemvMaxRows ? kGrainSize : kOneCoreProduct;
  if (rows * cols * inner <= worth || parallel_pieces(by_rows ? rows : cols, kBlock) <= 1) {
    blas_gemm(trans_x, trans_y, rows, cols, inner, x, ldx, y, ldy, accumulate, c, cols);
  } else if (by_rows) {
    parallel_for(rows, kBlock, [&](int64_t r0, int64_t r1) {
      blas_gemm(trans_x, trans_y, r1 - r0, cols, inner, trans_x ? x + r0 : x + r0 * ldx, ldx, y, ldy,
                accumulate, c + r0 * cols, cols);
    });
  } else {
    parallel_for(cols, kBlock, [&](int64_t c0, int64_t c1) {
      blas_gemm(trans_x, trans_y, rows, c1 - c0, inner, x, ldx, trans_y ? y + c0 * ldy : y + c0, ldy,
                accumulate, c + c0, cols);
    });
  }
}

}  // namespace

template <typename T>
void gemm(bool trans_x, bool trans_y, int64_t rows, int64_t cols, int64_t inner, const T* x, const T* y,
          bool accumulate, T* c) {
  if (rows == 0 || cols == 0) return;
  if (inner == 0) {  // an empty sum is 0; the BLAS would reject the zero leading dimension
    if (!accumulate) std::fill_n(c, rows * cols, T(0));
    return;
  }
  if constexpr (std::is_floating_point_v<T>) {
    split_gemm(trans_x, trans_y, rows, cols, inner, x, y, accumulate, c);
  } else {
    // int64: the BLAS has no integer GEMM. Unsigned arithmetic wraps on overflow as PyTorch's
    // int64 matmul does, without C++'s undefined behaviour for signed overflow.
    const int64_t ldx = trans_x ? rows : inner, ldy = trans_y ? inner : cols;
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        uint64_t total = accumulate ? static_cast<uint64_t>(c[i * cols + j]) : 0;
        for (int64_t p = 0; p < inner; ++p) {
          const T x_ip = trans_x ? x[p * ldx + i] : x[i * ldx + p];
          const T y_pj = trans_y ? y[j * ldy + p] : y[p * ldy + j];
          total += static_cast<uint64_t>(x_ip) * static_cast<uint64_t>(y_pj);
        }
        c[i * cols + j] = static_cast<T>(total);
      }
    }
  }
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, const float*, const float*, bool, float*);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, const double*, const double*, bool,
                           double*);
template void gemm<int64_t>(bool, bool, int64_t, int64_t, int64_t, const int64_t*, const int64_t*, bool,
                            int64_t*);

bool small_matrix_kernels() { return small_kernels(); }

std::string_view gemm_route(bool trans_x, bool trans_y, int64_t rows, int64_t cols, int64_t inner) {
  switch (route(/*is_float=*/true, trans_x, trans_y, rows, cols, inner)) {
    case Route::gemv_rows:
      return "gemv_rows";
    case Route::gemv_column:
      return "gemv_column";
    case Route::ger:
      return "ger";
    case Route::gemm:
      return "gemm";
    case Route::gemm_row_blocks:
      return "gemm_row_blocks";
  }
  return "gemm";
}

void set_small_matrix_kernels(std::optional<bool> forced) {
  forced_small_kernels.store(forced ? int{*forced} : -1, std::memory_order_relaxed);
}

}  // namespace detail

}  // namespace minigrad
