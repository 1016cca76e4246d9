// linear, gelu and dropout: forward first, backward lambda right below, as every op.
//
// linear is the layer the whole course stands on. Its inputs [..., I] are N = (product of the
// leading dims) rows of I numbers, one row per token, and every row meets the same weight: one
// GEMM over all rows, whatever the batch and time dims. The weight is stored [O, I], as PyTorch
// stores it, and the BLAS reads it transposed in place (CblasTrans): no copy of W^T is ever made.
#include "nn/functional.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <type_traits>
#include <vector>

#include "autograd/machinery/parallel.hpp"
#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"

namespace minigrad::nn::functional {

using minigrad::detail::check;

namespace {

void check_linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  minigrad::detail::check_defined(input, "linear");
  minigrad::detail::check_defined(weight, "linear");
  check(weight.dim() == 2, "linear: the weight must be 2-d [out_features, in_features], got shape ",
        weight.shape());
  check(input.dim() >= 1,
        "linear: the input must have at least 1 dimension (its features), got a 0-d tensor");
  const int64_t in_features = weight.size(1), out_features = weight.size(0);
  check(input.size(-1) == in_features, "linear: input has ", input.size(-1),
        " features but the weight expects ", in_features, " (input ", input.shape(), ", weight ",
        weight.shape(), ")");
  check(!bias.defined() || bias.shape() == Shape{out_features}, "linear: the bias has shape ",
        bias.defined() ? bias.shape() : Shape{}, " but the weight ", weight.shape(), " needs [", out_features,
        "]");

  const bool same_dtype =
      input.dtype() == weight.dtype() && (!bias.defined() || bias.dtype() == weight.dtype());
  if (!same_dtype || !input.is_floating_point()) {  // the message's strings only when it fails
    check(false, "linear: expected float32 or float64 tensors of one dtype, got input ",
          dtype_name(input.dtype()), ", weight ", dtype_name(weight.dtype()),
          bias.defined() ? ", bias " + dtype_name(bias.dtype()) : std::string());
  }
  check(in_features <= INT_MAX && out_features <= INT_MAX &&
            input.numel() / std::max<int64_t>(in_features, 1) <= INT_MAX,
        "linear: input ", input.shape(), " and weight ", weight.shape(), " are larger than the BLAS accepts");
}

// grad_x = grad @ W ([N, O] @ [O, I]), grad_W = grad^T @ x ([O, N] @ [N, I]), grad_b = column
// sums of grad; each only for an input that requires grad. grad_x is added by the GEMM into the
// gradient x's other uses have summed, when the engine offers it (the keys, queries and values of
// all heads read the same x).
std::vector<Tensor> linear_backward(const Tensor& grad, const std::vector<Tensor>& inputs, int64_t rows) {
  const Tensor &x = inputs[0], &w = inputs[1], &b = inputs[2];
  const int64_t in_features = w.size(1), out_features = w.size(0);
  Tensor* sum_x = x.requires_grad() ? minigrad::detail::gradient_to_add_into(0) : nullptr;
  Tensor grad_x = x.requires_grad() && !sum_x ? minigrad::detail::new_tensor(x.shape(), x.dtype()) : Tensor();
  Tensor grad_w = w.requires_grad() ? minigrad::detail::new_tensor(w.shape(), w.dtype()) : Tensor();
  Tensor grad_b = b.defined() && b.requires_grad() ? zeros(b.shape(), {.dtype = b.dtype()}) : Tensor();

  dispatch_floating(grad.dtype(), "linear backward", [&]<typename T>() {
    const T* g = grad.data_ptr<T>();
    if (x.requires_grad())
      minigrad::detail::gemm<T>(false, false, rows, in_features, out_features, g, w.data_ptr<T>(),
                                /*accumulate=*/sum_x != nullptr, (sum_x ? *sum_x : grad_x).data_ptr<T>());
    if (grad_w.defined())
      minigrad::detail::gemm<T>(true, false, out_features, in_features, rows, g, x.data_ptr<T>(), false,
                                grad_w.data_ptr<T>());
    if (grad_b.defined()) {  // the columns split over the threads, each summed down its rows in order
      T* gb = grad_b.data_ptr<T>();
      minigrad::detail::parallel_for(out_features, minigrad::detail::grain_for(rows),
                                     [&](int64_t first, int64_t last) {
                                       for (int64_t i = 0; i < rows; ++i)
                                         for (int64_t j = first; j < last; ++j)
                                           gb[j] += g[i * out_features + j];
                                     });
    }
  });
  return {grad_x, grad_w, grad_b};
}

}  // namespace

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  check_linear(input, weight, bias);
  const int64_t in_features = weight.size(1), out_features = weight.size(0);
  Shape out_shape(input.shape().begin(), input.shape().end() - 1);
  const int64_t rows = shape_numel(out_shape);  // every leading dim folds into the rows
  out_shape.push_back(out_features);

  // With a bias, each output row starts as b and the GEMM adds x @ W^T onto it (beta = 1), as
  // torch.addmm does: the bias is summed in the GEMM's own pass, not in a second one.
  Tensor out = minigrad::detail::new_tensor({rows, out_features}, input.dtype());
  dispatch_floating(input.dtype(), "linear", [&]<typename T>() {
    T* o = out.data_ptr<T>();
    if (bias.defined()) {
      const T* b = bias.data_ptr<T>();
      minigrad::detail::parallel_for(rows, minigrad::detail::grain_for(out_features),
                                     [&](int64_t begin, int64_t end) {
                                       for (int64_t i = begin; i < end; ++i)
                                         std::copy_n(b, out_features, o + i * out_features);
                                     });
    }
    minigrad::detail::gemm<T>(false, true, rows, out_features, in_features, input.data_ptr<T>(),
                              weight.data_ptr<T>(), /*accumulate=*/bias.defined(), o);
  });

  // One node for the whole addmm (PyTorch names its 2-d case AddmmBackward0, MmBackward0 without bias).
  using minigrad::detail::OpName;
  const OpName name = bias.defined() ? OpName("AddmmBackward0") : OpName("MmBackward0");
  Tensor rows_out = minigrad::detail::record(out, name, {input, weight, bias},
                                             [rows](const Tensor& grad, const std::vector<Tensor>& inputs) {
                                               return linear_backward(grad, inputs, rows);
                                             });
  if (input.dim() == 2) return rows_out;

  // Other ranks: the [rows, out_features] result viewed back as [..., out_features] (no copy).
  // PyTorch 1.13 reaches that result another way per rank, and its last node names the result's
  // grad_fn: a view of an addmm for 3-d input with a bias, matmul then add for 1-d and 4-d and
  // more, matmul alone without a bias. The view node takes that name, so a printed result and the
  // top of the graph read as PyTorch's (tests/autograd/test_grad_fn_names.cpp).
  const OpName top = bias.defined()
                         ? (input.dim() == 3 ? OpName("ViewBackward0") : OpName("AddBackward0"))
                         : (input.dim() == 1 ? OpName("SqueezeBackward3") : OpName("UnsafeViewBackward0"));
  Tensor viewed;
  {
    NoGradGuard no_grad;
    viewed = rows_out.reshape(out_shape);
  }
  const Shape rows_shape = {rows, out_features};
  return minigrad::detail::record(viewed, top, {rows_out},
                                  [rows_shape](const Tensor& grad, const std::vector<Tensor>&) {
                                    return std::vector<Tensor>{grad.reshape(rows_shape)};
                                  });
}

// ---- gelu -----------------------------------------------------------------------------------------

namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;      // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kKappa = 0.044715;                      // the cubic term of the tanh approximation

template <typename T>
T gelu_value(T x, bool tanh_approx) {
  if (tanh_approx) {
    const T inner = T(kSqrt2OverPi) * (x + T(kKappa) * x * x * x);
    return T(0.5) * x * (T(1) + std::tanh(inner));
  }
  return x * T(0.5) * (T(1) + std::erf(x * T(kSqrt1_2)));
}

// d gelu / dx at x (the formulas of functional.hpp).
template <typename T>
T gelu_slope(T x, bool tanh_approx) {
  if (tanh_approx) {
    const T tanh_inner = std::tanh(T(kSqrt2OverPi) * (x + T(kKappa) * x * x * x));
    const T inner_slope = T(kSqrt2OverPi) * (T(1) + T(3 * kKappa) * x * x);
    return T(0.5) * (T(1) + tanh_inner) + T(0.5) * x * (T(1) - tanh_inner * tanh_inner) * inner_slope;
  }
  const T cdf = T(0.5) * (T(1) + std::erf(x * T(kSqrt1_2)));
  const T pdf = T(kInvSqrt2Pi) * std::exp(T(-0.5) * x * x);
  return cdf + x * pdf;
}

}  // namespace

Tensor gelu(const Tensor& input, const std::string& approximate) {
  minigrad::detail::check_defined(input, "gelu");
  check(approximate == "none" || approximate == "tanh",
        "gelu: approximate must be \"none\" or \"tanh\", got \"", approximate, "\"");
  const bool tanh_approx = approximate == "tanh";
  Tensor out = minigrad::detail::new_tensor(input.shape(), input.dtype());
  dispatch_floating(input.dtype(), "gelu", [&]<typename T>() {
    const T* x = input.data_ptr<T>();
    T* o = out.data_ptr<T>();
    const int64_t input_numel = input.numel();
    for (int64_t i = 0; i < input_numel; ++i) o[i] = gelu_value(x[i], tanh_approx);
  });

  return minigrad::detail::record(out, "GeluBackward0", {input},
                                  [tanh_approx](const Tensor& grad, const std::vector<Tensor>& inputs) {
                                    Tensor grad_x = minigrad::detail::new_tensor(grad.shape(), grad.dtype());
                                    dispatch_floating(grad.dtype(), "gelu backward", [&]<typename T>() {
                                      const T* g = grad.data_ptr<T>();
                                      const T* x = inputs[0].data_ptr<T>();
                                      T* gx = grad_x.data_ptr<T>();
                                      const int64_t grad_numel = grad.numel();
                                      for (int64_t i = 0; i < grad_numel; ++i)
                                        gx[i] = g[i] * gelu_slope(x[i], tanh_approx);
                                    });
                                    return std::vector<Tensor>{grad_x};
                                  });
}

// ---- dropout --------------------------------------------------------------------------------------

namespace {

// out[i] = x[i] * (keep[i] * scale), compiled for AVX-512, AVX2 and any x86-64 (the CPU picks,
// as in random.cpp; two products and no sum, so each version rounds the same). The bools are
// read as bytes (0 or 1): the compiler vectorises loads of bytes, not of bools. One overload per
// dtype: clang cannot multiversion a function template.
[[gnu::target_clones("arch=x86-64-v4", "avx2", "default")]] void scale_kept(const float* x, const bool* keep,
                                                                            float scale, int64_t n,
                                                                            float* out) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(keep);
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * (static_cast<float>(bytes[i]) * scale);
}
[[gnu::target_clones("arch=x86-64-v4", "avx2", "default")]] void scale_kept(const double* x, const bool* keep,
                                                                            double scale, int64_t n,
                                                                            double* out) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(keep);
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * (static_cast<double>(bytes[i]) * scale);
}

// x * (keep / (1 - p)) into out (x's shape and dtype, x itself allowed), keep a bool tensor of
// x's shape: out[i] = x[i] * scale or x[i] * 0 (a product by 0, not a 0 written, so an inf or nan
// of x gives nan where it is dropped, as x * mask does in PyTorch). Split over the threads.
Tensor apply_mask(const Tensor& x, const Tensor& keep, double p, Tensor out) {
  dispatch_floating(x.dtype(), "dropout", [&]<typename T>() {
    const T scale = p < 1 ? T(1) / static_cast<T>(1 - p) : T(0);  // keep / (1 - p) for keep = 1
    const T* in = x.data_ptr<T>();
    const bool* k = keep.data_ptr<bool>();
    T* o = out.data_ptr<T>();
    minigrad::detail::parallel_for(x.numel(), minigrad::detail::kGrainSize, [&](int64_t begin, int64_t end) {
      scale_kept(in + begin, k + begin, scale, end - begin, o + begin);
    });
  });
  return out;
}

}  // namespace

Tensor dropout(const Tensor& input, double p, bool training) {
  return dropout(input, p, training, default_generator());
}

Tensor dropout(const Tensor& input, double p, bool training, Generator& generator) {
  minigrad::detail::check_defined(input, "dropout");
  check(p >= 0 && p <= 1, "dropout: probability has to be between 0 and 1, but got ", p, " (input ",
        input.shape(), ")");
  if (!training || p == 0 || input.numel() == 0) return input;

  // The mask PyTorch's CPU dropout draws: keep = bernoulli_(1 - p), then x * (keep / (1 - p)).
  // keep is saved as bools, a quarter of a float mask. With p = 1 nothing is kept or drawn.
  Tensor keep = minigrad::detail::new_tensor(input.shape(), kBool);
  if (p < 1)
    generator.bernoulli(keep.data_ptr<bool>(), keep.numel(), 1 - p);
  else
    std::fill_n(keep.data_ptr<bool>(), keep.numel(), false);
  Tensor out = apply_mask(input, keep, p, minigrad::detail::new_tensor(input.shape(), input.dtype()));

  return minigrad::detail::record(
      out, "MulBackward0", {input}, /*reads=*/{false},
      [keep, p](const Tensor& grad, const std::vector<Tensor>& inputs) {
        const Tensor g = minigrad::detail::convert(grad, inputs[0].dtype());
        return std::vector<Tensor>{apply_mask(g, keep, p, minigrad::detail::gradient_output(g))};
      });
}

}  // namespace minigrad::nn::functional
