// gradcheck: analytic gradients (backward) against central finite differences, in float64.
#include "autograd/gradcheck.hpp"

#include <cmath>

#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"

namespace minigrad {

using detail::check;

bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& inputs,
               GradcheckOptions options) {
  for (const Tensor& input : inputs) {
    detail::check_defined(input, "gradcheck");
    check(input.dtype() == kFloat64, "gradcheck: inputs must be float64, got ", dtype_name(input.dtype()));
  }

  // A fixed random cotangent v turns any output into the scalar L = sum(f(x) * v).
  Tensor first = f(inputs);
  Generator generator(1234);
  const Tensor v =
      first.is_floating_point() ? randn(first.shape(), generator, {.dtype = kFloat64}) : Tensor();
  check(v.defined(), "gradcheck: f must return a floating-point tensor");
  auto loss = [&](const std::vector<Tensor>& xs) { return sum(mul(f(xs), v)); };

  // Analytic gradients, from fresh leaves so earlier grads cannot leak in.
  std::vector<Tensor> leaves;
  for (const Tensor& input : inputs) {
    Tensor leaf = input.detach().clone();
    if (input.requires_grad()) leaf.requires_grad_(true);
    leaves.push_back(leaf);
  }
  loss(leaves).backward();

  NoGradGuard no_grad;
  for (size_t k = 0; k < leaves.size(); ++k) {
    if (!leaves[k].requires_grad()) continue;
    const Tensor analytic = leaves[k].grad().defined() ? leaves[k].grad() : zeros_like(leaves[k]);
    double* x = leaves[k].data_ptr<double>();
    for (int64_t i = 0; i < leaves[k].numel(); ++i) {
      const double original = x[i];
      x[i] = original + options.eps;
      const double plus = loss(leaves).item<double>();
      x[i] = original - options.eps;
      const double minus = loss(leaves).item<double>();
      x[i] = original;
      const double numeric = (plus - minus) / (2 * options.eps);
      const double got = analytic.data_ptr<double>()[i];
      check<std::runtime_error>(std::abs(got - numeric) <= options.atol + options.rtol * std::abs(numeric),
                                "gradcheck: input ", k, " (shape ", leaves[k].shape(), ") element ", i,
                                ": backward gives ", got, ", finite differences give ", numeric);
    }
  }
  return true;
}

}  // namespace minigrad
