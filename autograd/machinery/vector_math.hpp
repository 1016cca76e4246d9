// Array versions of the math functions whose scalar calls dominate an op's time.
#pragma once

#include <cstdint>

namespace minigrad::detail {

/// y[i] = e^x[i] for i < n, arrays of stride 1 (x and y may be the same array). float32 goes
/// through glibc's vector math library (8 values per call with AVX2, else 4), within 3 ulp of the
/// exact value; float64 through std::exp. Special values as std::exp: e^-inf = 0, e^inf = inf,
/// nan stays nan, overflow gives inf. Mirrors the contiguous kernel of torch.exp.
void exp_contiguous(const float* x, float* y, int64_t n);
void exp_contiguous(const double* x, double* y, int64_t n);

}  // namespace minigrad::detail
