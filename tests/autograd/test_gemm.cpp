// Tests for detail::gemm (autograd/machinery/gemm.cpp), the one wrapper around the BLAS that matmul
// and linear share. It picks one of four routes by shape: a matrix-vector product per row (few
// rows), one matrix-vector product (one column), rank-1 updates (short inner dimension), or the
// BLAS's GEMM; where OpenBLAS has small-matrix kernels (its AVX-512 cores), the products those
// take go to the GEMM from 2 rows and at any inner size. The cases below run each set of routes by
// forcing the choice (detail::set_small_matrix_kernels), so that any machine and any OpenBLAS
// build reaches both; tests/CMakeLists.txt runs this file a second time with OpenBLAS held to
// kernels without them (autograd_gemm_on_nehalem_kernels), so that its GEMM and its zeroing of c
// run on other kernels too. Every route, both transpose flags and both accumulate modes are
// compared here with a plain triple loop written from the definition
// c[i, j] (+)= sum_p op(x)[i, p] op(y)[p, j]; so are the products large enough to be split over the
// threads, by rows or by columns, on 1, 2 and 3 threads, each giving the same bits when run again.
#include <bit>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "autograd/machinery/parallel.hpp"
#include "autograd/op_support.hpp"

#ifndef MINIGRAD_BLAS_BLIS
#include <cblas.h>
#endif

namespace {

// op(x)[i, p] for x stored [rows, inner], or [inner, rows] when transposed; likewise for y.
template <typename T>
std::vector<T> reference(bool trans_x, bool trans_y, int64_t rows, int64_t cols, int64_t inner,
                         const std::vector<T>& x, const std::vector<T>& y, const std::vector<T>& c0,
                         bool accumulate) {
  std::vector<T> c(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double total = accumulate ? c0[i * cols + j] : 0.0;
      for (int64_t p = 0; p < inner; ++p) {
        const T xv = trans_x ? x[p * rows + i] : x[i * inner + p];
        const T yv = trans_y ? y[j * inner + p] : y[p * cols + j];
        total += static_cast<double>(xv) * yv;
      }
      c[i * cols + j] = static_cast<T>(total);
    }
  return c;
}

// Small integers times 1/8: exact in float, so every route must agree to rounding of the sum.
template <typename T>
std::vector<T> values(int64_t n, int salt) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(((i * 7 + salt * 13) % 17) - 8) / T(8);
  return v;
}

// Values in (-1, 1) with all the significand's bits in use, so that a sum taken in another
// order than the BLAS's would show.
template <typename T>
std::vector<T> uneven(int64_t n, int salt) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(std::sin(static_cast<double>(i * 3 + salt) * 0.7));
  return v;
}

// A product's sizes: op(x) is [rows, inner], op(y) [inner, cols].
struct Case {
  int64_t rows, cols, inner;
};

// Forces gemm's routes for one scope, as for a core with small-matrix kernels (true) or without
// (false; the running BLAS's own choice is one of the two), and asks OpenBLAS again after it.
struct ForcedRoutes {
  explicit ForcedRoutes(bool small) { minigrad::detail::set_small_matrix_kernels(small); }
  ~ForcedRoutes() { minigrad::detail::set_small_matrix_kernels(std::nullopt); }
  ForcedRoutes(const ForcedRoutes&) = delete;
  ForcedRoutes& operator=(const ForcedRoutes&) = delete;
};

template <typename T>
void check_all_routes(double tolerance) {
  // rows 1..5 cover the per-row route and its edge; inner 1..3 the rank-1 route and its edge;
  // cols 1 the one-column route; 7 x 9 x 6 reaches the GEMM.
  const std::vector<int64_t> row_sizes = {1, 2, 3, 4, 5, 7}, col_sizes = {1, 2, 9},
                             inner_sizes = {1, 2, 3, 6};
  int checked = 0;
  for (const bool small : {false, true})
    for (int64_t rows : row_sizes)
      for (int64_t cols : col_sizes)
        for (int64_t inner : inner_sizes)
          for (int flags = 0; flags < 8; ++flags) {
            const ForcedRoutes forced(small);
            const bool trans_x = flags & 1, trans_y = flags & 2, accumulate = flags & 4;
            const auto x = values<T>(rows * inner, 1), y = values<T>(inner * cols, 2);
            const auto c0 = values<T>(rows * cols, 3);
            // Without accumulate, c starts as nan: the result must not depend on what was there.
            std::vector<T> c =
                accumulate ? c0 : std::vector<T>(rows * cols, std::numeric_limits<T>::quiet_NaN());
            minigrad::detail::gemm<T>(trans_x, trans_y, rows, cols, inner, x.data(), y.data(), accumulate,
                                      c.data());
            const auto want = reference(trans_x, trans_y, rows, cols, inner, x, y, c0, accumulate);
            for (int64_t e = 0; e < rows * cols; ++e) {
              BOOST_TEST_CONTEXT("rows " << rows << " cols " << cols << " inner " << inner << " trans_x "
                                         << trans_x << " trans_y " << trans_y << " accumulate " << accumulate
                                         << " small-matrix kernels " << small << " element " << e) {
                BOOST_TEST(std::abs(c[e] - want[e]) <= tolerance);
              }
            }
            ++checked;
          }
  BOOST_TEST(checked == 2 * 6 * 3 * 4 * 8);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gemm)

BOOST_AUTO_TEST_CASE(float32_every_route_matches_the_definition) { check_all_routes<float>(1e-5); }

BOOST_AUTO_TEST_CASE(float64_every_route_matches_the_definition) { check_all_routes<double>(1e-12); }

// The forcing takes effect and is undone, and the routes follow it, by the rule in gemm.cpp
// (kGemvMaxRows 4, kGerMaxInner 2, OpenBLAS 0.3.21's permit for its small-matrix kernels).
BOOST_AUTO_TEST_CASE(the_routes_can_be_forced_either_way) {
  using minigrad::detail::gemm_route;
  const bool own = minigrad::detail::small_matrix_kernels();
  {
    const ForcedRoutes forced(!own);
    BOOST_TEST(minigrad::detail::small_matrix_kernels() == !own);
  }
  BOOST_TEST(minigrad::detail::small_matrix_kernels() == own);
#ifndef MINIGRAD_BLAS_BLIS
  {
    const ForcedRoutes forced(false);
    BOOST_TEST(gemm_route(false, false, 1, 512, 128) == "gemv_rows");
    BOOST_TEST(gemm_route(false, true, 2, 512, 128) == "gemv_rows");
    BOOST_TEST(gemm_route(false, false, 7, 1, 6) == "gemv_column");
    BOOST_TEST(gemm_route(false, false, 512, 128, 2) == "ger");
    BOOST_TEST(gemm_route(true, false, 7, 9, 1) == "ger");
    BOOST_TEST(gemm_route(false, false, 7, 9, 6) == "gemm");
  }
  {
    const ForcedRoutes forced(true);
    BOOST_TEST(gemm_route(false, false, 1, 512, 128) == "gemv_rows");  // one row stays on gemv
    BOOST_TEST(gemm_route(false, true, 2, 512, 128) == "gemm");
    BOOST_TEST(gemm_route(false, true, 3, 512, 128) == "gemv_rows");  // y transposed: 1,536 > 1,200
    BOOST_TEST(gemm_route(true, true, 2, 512, 128) == "gemv_rows");   // both transposed
    BOOST_TEST(gemm_route(false, false, 7, 1, 6) == "gemv_column");
    BOOST_TEST(gemm_route(false, false, 512, 128, 2) == "gemm");
    BOOST_TEST(gemm_route(true, false, 7, 9, 1) == "gemm");
    BOOST_TEST(gemm_route(false, false, 1024, 512, 2) == "ger");  // above 100^3 multiply-adds
    // x @ y^T above 100^3 multiply-adds: blocks of 1,000,000 / (cols x inner) rows, at least 100
    BOOST_TEST(gemm_route(false, true, 2048, 32, 128) == "gemm_row_blocks");  // 244 rows a block
    BOOST_TEST(gemm_route(false, true, 64, 32, 128) == "gemm_row_blocks");    // 2,048 > 1,200 of c
    BOOST_TEST(gemm_route(false, true, 37, 32, 128) == "gemm");               // 1,184 of c: small as it is
    BOOST_TEST(gemm_route(false, true, 2048, 64, 128) == "gemm_row_blocks");  // 122 rows a block
    BOOST_TEST(gemm_route(false, true, 2048, 128, 128) == "gemm");            // 61 rows a block
    BOOST_TEST(gemm_route(false, true, 2048, 65, 128) == "gemm");             // 65 columns: not 16k
    BOOST_TEST(gemm_route(false, true, 2048, 16, 512) == "gemm");             // inner above 256
    BOOST_TEST(gemm_route(false, false, 2048, 32, 128) == "gemm");            // y not transposed
    BOOST_TEST(gemm_route(true, true, 2048, 32, 128) == "gemm");              // x transposed
    BOOST_TEST(gemm_route(false, true, 245, 24, 32) == "gemm");               // 24 columns: not 16k
    BOOST_TEST(gemm_route(false, true, 245, 16, 7) == "gemm_row_blocks");     // inner < 32: not small
    BOOST_TEST(gemm_route(false, true, 5, 0, 16) == "gemm");                  // no columns: no block to size
  }
  {
    const ForcedRoutes forced(false);
    BOOST_TEST(gemm_route(false, true, 2048, 32, 128) == "gemm");
  }
#endif
}

#ifndef MINIGRAD_BLAS_BLIS
// On a BLAS with small-matrix kernels (OpenBLAS's AVX-512 cores), x @ y^T in blocks of rows on a
// copy of y^T gives, element for element, the bits of the one cblas_sgemm call that PyTorch's
// linear makes for the whole product: uneven blocks, accumulate or not, and a sum of -0 terms,
// which the one call gives as +0. On one thread: split over threads, each piece is a product of
// its own, which may round otherwise (split_gemm). Elsewhere the forced route runs on the packed
// GEMM, and only has to match the definition (the next test case).
BOOST_AUTO_TEST_CASE(row_blocks_of_a_transposed_product_give_the_bits_of_one_blas_call) {
  if (!minigrad::detail::small_matrix_kernels()) return;  // this BLAS: no such kernels to match
  const std::vector<Case> cases = {{2048, 32, 128}, {2047, 32, 128}, {64, 32, 128},
                                   {38, 32, 128},   {1001, 16, 64},  {777, 48, 128},
                                   {2048, 64, 100}, {4096, 16, 256}, {245, 16, 7}};
  const int before = minigrad::get_num_threads();
  minigrad::set_num_threads(1);
  openblas_set_num_threads(1);  // the reference too, as split_gemm runs the BLAS
  int blocked = 0;
  for (const Case& k : cases)
    for (int values = 0; values < 2; ++values)
      for (const bool accumulate : {false, true}) {
        // values 1: every product underflows to -0 (1e-30 times -1e-30), so each sum is a zero
        auto x = uneven<float>(k.rows * k.inner, 1), y = uneven<float>(k.cols * k.inner, 2),
             c0 = uneven<float>(k.rows * k.cols, 3);
        if (values == 1) {
          std::ranges::fill(x, 1e-30f);
          std::ranges::fill(y, -1e-30f);
        }
        std::vector<float> want = c0;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(k.rows),
                    static_cast<int>(k.cols), static_cast<int>(k.inner), 1.0f, x.data(),
                    static_cast<int>(k.inner), y.data(), static_cast<int>(k.inner), accumulate ? 1.0f : 0.0f,
                    want.data(), static_cast<int>(k.cols));
        blocked += minigrad::detail::gemm_route(false, true, k.rows, k.cols, k.inner) == "gemm_row_blocks";
        std::vector<float> c = accumulate ? c0 : std::vector<float>(k.rows * k.cols, std::nanf(""));
        minigrad::detail::gemm<float>(false, true, k.rows, k.cols, k.inner, x.data(), y.data(), accumulate,
                                      c.data());
        int64_t differ = 0;
        for (size_t e = 0; e < c.size(); ++e)
          differ += std::bit_cast<uint32_t>(c[e]) != std::bit_cast<uint32_t>(want[e]);
        BOOST_TEST_CONTEXT("rows " << k.rows << " cols " << k.cols << " inner " << k.inner << " accumulate "
                                   << accumulate << (values == 1 ? ", sums of -0" : "")) {
          BOOST_TEST(differ == 0);
        }
      }
  minigrad::set_num_threads(before);
  BOOST_TEST(blocked == 9 * 2 * 2);  // every case takes the route
}
#endif

// The same route forced either way, split over 1 and 2 threads by rows and by columns (its pieces
// then have a leading dimension of c other than their width), in float and in double (which keeps
// the GEMM), against the definition.
BOOST_AUTO_TEST_CASE(transposed_products_in_row_blocks_match_the_definition_on_any_thread_count) {
  const std::vector<Case> cases = {{2048, 32, 128}, {100, 224, 64}, {245, 16, 7}, {1001, 48, 96}};
  const int before = minigrad::get_num_threads();
  int checked = 0;
  for (const Case& k : cases)
    for (const bool accumulate : {false, true}) {
      const auto x = uneven<double>(k.rows * k.inner, 1), y = uneven<double>(k.cols * k.inner, 2),
                 c0 = uneven<double>(k.rows * k.cols, 3);
      const auto want = reference(false, true, k.rows, k.cols, k.inner, x, y, c0, accumulate);
      auto as_float = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
      const auto xf = as_float(x), yf = as_float(y), c0f = as_float(c0);
      for (const bool small : {false, true})
        for (const int threads : {1, 2}) {
          const ForcedRoutes forced(small);
          minigrad::set_num_threads(threads);
          std::vector<float> cf = accumulate ? c0f : std::vector<float>(k.rows * k.cols, std::nanf(""));
          minigrad::detail::gemm<float>(false, true, k.rows, k.cols, k.inner, xf.data(), yf.data(),
                                        accumulate, cf.data());
          std::vector<double> cd = accumulate ? c0 : std::vector<double>(k.rows * k.cols, std::nan(""));
          minigrad::detail::gemm<double>(false, true, k.rows, k.cols, k.inner, x.data(), y.data(), accumulate,
                                         cd.data());
          double worst_f = 0, worst_d = 0;
          for (size_t e = 0; e < want.size(); ++e) {
            worst_f = std::max(worst_f, std::abs(static_cast<double>(cf[e]) - want[e]));
            worst_d = std::max(worst_d, std::abs(cd[e] - want[e]));
          }
          BOOST_TEST_CONTEXT("rows " << k.rows << " cols " << k.cols << " inner " << k.inner << " accumulate "
                                     << accumulate << " on " << threads << " threads, small-matrix kernels "
                                     << small) {
            BOOST_TEST(worst_f <= 1e-4);
            BOOST_TEST(worst_d <= 1e-10);
          }
          ++checked;
        }
    }
  minigrad::set_num_threads(before);
  BOOST_TEST(checked == 4 * 2 * 2 * 2);
}

// Shapes above kOneCoreProduct multiply-adds (kGrainSize for 2 and 3 rows), so that 2 and 3 threads
// split them: by rows (more rows than columns) or by columns, on the GEMM route, the one-column
// route, the rank-1 route (inner 1 and 2) and the matrix-vector products of a few rows, with 1000
// and 1001 for uneven blocks.
// The values are not exact in float (unlike values()), so that a block summed in another order
// than the whole would show: the split may round differently from one call, within float32's
// error, but a thread count gives the same bits every time.
BOOST_AUTO_TEST_CASE(products_split_over_threads_match_the_definition_and_repeat_exactly) {
  const std::vector<Case> cases = {{1001, 40, 64}, {40, 1001, 64}, {300000, 1, 3}, {1000, 1001, 1},
                                   {1001, 700, 2}, {2, 1001, 64},  {3, 300, 100},  {1, 1001, 64}};
  const int before = minigrad::get_num_threads();
  int checked = 0;
  for (const Case& k : cases)
    for (int flags = 0; flags < 8; ++flags) {
      const bool trans_x = flags & 1, trans_y = flags & 2, accumulate = flags & 4;
      BOOST_REQUIRE(k.rows * k.cols * k.inner >
                    (k.rows <= 4 ? minigrad::detail::kGrainSize : minigrad::detail::kOneCoreProduct));
      const auto x = uneven<float>(k.rows * k.inner, 1), y = uneven<float>(k.inner * k.cols, 2),
                 c0 = uneven<float>(k.rows * k.cols, 3);
      const auto want = reference(trans_x, trans_y, k.rows, k.cols, k.inner, x, y, c0, accumulate);
      for (const bool small : {false, true})
        for (const int threads : {1, 2, 3}) {
          const ForcedRoutes forced(small);
          minigrad::set_num_threads(threads);
          std::vector<std::vector<float>> runs;
          for (int run = 0; run < 2; ++run) {
            std::vector<float> c =
                accumulate ? c0
                           : std::vector<float>(k.rows * k.cols, std::numeric_limits<float>::quiet_NaN());
            minigrad::detail::gemm<float>(trans_x, trans_y, k.rows, k.cols, k.inner, x.data(), y.data(),
                                          accumulate, c.data());
            runs.push_back(c);
          }
          BOOST_TEST_CONTEXT("rows " << k.rows << " cols " << k.cols << " inner " << k.inner << " trans_x "
                                     << trans_x << " trans_y " << trans_y << " accumulate " << accumulate
                                     << " on " << threads << " threads, small-matrix kernels " << small) {
            float worst = 0;
            for (size_t e = 0; e < want.size(); ++e) worst = std::max(worst, std::abs(runs[0][e] - want[e]));
            BOOST_TEST(worst <= 1e-4f);
            BOOST_TEST(runs[1] == runs[0]);
          }
        }
      ++checked;
    }
  minigrad::set_num_threads(before);
  BOOST_TEST(checked == 8 * 8);
}

BOOST_AUTO_TEST_CASE(int64_matches_the_definition) {
  const std::vector<int64_t> x = {1, -2, 3, 4, 5, -6}, y = {7, 8, -9, 10, 11, 12};  // [2, 3] @ [3, 2]
  std::vector<int64_t> c(4, -1);
  minigrad::detail::gemm<int64_t>(false, false, 2, 2, 3, x.data(), y.data(), false, c.data());
  // by hand: [1*7 + -2*-9 + 3*11, 1*8 + -2*10 + 3*12; 4*7 + 5*-9 + -6*11, 4*8 + 5*10 + -6*12]
  BOOST_TEST(c == (std::vector<int64_t>{58, 24, -83, 10}), boost::test_tools::per_element());
}

// OpenBLAS names its core "SkylakeX" in a build for many CPUs (DYNAMIC_ARCH, as Debian's) and
// "SKYLAKEX" in a build for one (its getarch's CORENAME): both have the small-matrix kernels, and
// the AVX2 and older cores, and prefixes or near-misses of the names, do not.
BOOST_AUTO_TEST_CASE(small_matrix_kernels_are_found_by_core_name_in_either_spelling) {
  using minigrad::detail::has_small_matrix_kernels;
  for (const char* core :
       {"SkylakeX", "SKYLAKEX", "skylakex", "Cooperlake", "COOPERLAKE", "SapphireRapids", "SAPPHIRERAPIDS"})
    BOOST_TEST(has_small_matrix_kernels(core), core);
  for (const char* core :
       {"Haswell", "HASWELL", "Zen", "SKYLAKE", "Skylake", "SkylakeX2", "Skylak", "generic", ""})
    BOOST_TEST(!has_small_matrix_kernels(core), core);
}

BOOST_AUTO_TEST_SUITE_END()
