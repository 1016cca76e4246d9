// Array versions of the math functions whose scalar calls dominate an op's time, and the AVX2
// kernels of softmax and of the attention's transposed keys.
#pragma once

#include <cstdint>

namespace minigrad::detail {

/// y[i] = e^x[i] for i < n, arrays of stride 1 (x and y may be the same array). float32 goes
/// through glibc's vector math library (8 values per call with AVX2, else 4), within 3 ulp of the
/// exact value; float64 through std::exp. Special values as std::exp: e^-inf = 0, e^inf = inf,
/// nan stays nan, overflow gives inf. Mirrors the contiguous kernel of torch.exp.
void exp_contiguous(const float* x, float* y, int64_t n);
void exp_contiguous(const double* x, double* y, int64_t n);

/// True when the CPU runs AVX2, so that softmax_contiguous, softmax_backward_contiguous and
/// transpose_contiguous below may be called.
bool has_avx2();

/// dst[j * rows + i] = src[i * cols + j]: the [rows, cols] float32 matrix at src transposed into
/// dst (another array), in AVX2 blocks of 8 x 8 and one value at a time at the edges.
void transpose_contiguous(const float* src, float* dst, int64_t rows, int64_t cols);

/// softmax of one lane of n >= 1 float32 at stride 1, x into y (not the same array), in AVX2 and
/// in three passes over the lane: its max; e^(x - max) into y, summed in double; y times 1 / sum.
/// The same numbers, bit for bit, as the plain softmax lane of ops_reduce.cpp: the exponentials
/// of exp_contiguous, the sum in eight partial sums added in order and the tail after them, the
/// products in double. (A lane that holds a nan is nan throughout either way; with nans of both
/// signs, the sign each lane keeps may differ from the plain code's.)
void softmax_contiguous(const float* x, float* y, int64_t n);

/// The backward of that lane: ga = y * (g - sum(g * y)), in double, the sum in eight parts as
/// above; the same numbers as the plain backward lane of ops_reduce.cpp. ga may be g itself (the
/// sum reads the whole lane before anything is written).
void softmax_backward_contiguous(const float* g, const float* y, float* ga, int64_t n);

}  // namespace minigrad::detail
