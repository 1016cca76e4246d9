// gradcheck: is an op's backward right? Compare it with central finite differences.
//
// For a function f of float64 inputs, the analytic gradient of sum(f(x) * v) (v a fixed random
// cotangent, so every output element matters with its own weight) is computed by backward() and
// compared with (L(x + eps) - L(x - eps)) / (2 eps), one input element at a time.
#pragma once

#include <functional>
#include <vector>

#include "autograd/tensor.hpp"

namespace minigrad {

/// Tolerances of gradcheck (PyTorch's defaults for eps and atol; rtol a little looser).
struct GradcheckOptions {
  double eps = 1e-6;   ///< finite-difference step
  double atol = 1e-5;  ///< absolute tolerance
  double rtol = 1e-3;  ///< relative tolerance
};

/// Checks f's backward against central differences for every element of every input that
/// requires grad. Inputs must be float64 (std::invalid_argument otherwise). Returns true, or
/// throws std::runtime_error naming the input, the element index, and both values at the first
/// mismatch (`torch.autograd.gradcheck` with raise_exception=True).
bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& inputs,
               GradcheckOptions options = {});

}  // namespace minigrad
