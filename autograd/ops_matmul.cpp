// matmul: torch.matmul's rank rules, reduced to a batch of plain [N, D] @ [D, M] matrix products.
//
// Every case is one loop over batch indices of one GEMM: a vector on the left is a one-row
// matrix and a vector on the right a one-column matrix (the extra dim never reaches the result),
// and batch dims broadcast like any binary op. When b is a single matrix, as in the common
// [B, T, C] @ [C, D], a's batch dims fold into its rows: one [B*T, C] @ [C, D] GEMM, no loop.
// float32 and float64 go through the BLAS (OpenBLAS by default, BLIS with MINIGRAD_BLAS=BLIS);
// int64 through a plain loop.
// The backward products read the operands transposed through the BLAS flags, never as copies.
// detail::gemm, the library's one wrapper around the BLAS call, is in machinery/gemm.cpp.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "autograd/machinery/parallel.hpp"
#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"

namespace minigrad {

using detail::check;

namespace {

// How one matmul runs: out[i] = a[i] @ b[i], an [n, k] @ [k, m] product, for every index i of
// out_batch, with a_batch and b_batch broadcast to it (a stretched operand reuses its matrix).
struct Plan {
  Shape a_batch, b_batch, out_batch;
  int64_t n = 0, k = 0, m = 0;
  Shape out_shape;
};

Plan make_plan(const Shape& a, const Shape& b) {
  const bool a_is_vector = a.size() == 1, b_is_vector = b.size() == 1;
  Plan plan;
  plan.n = a_is_vector ? 1 : a[a.size() - 2];
  plan.k = a.back();
  plan.m = b_is_vector ? 1 : b.back();
  const int64_t k_b = b_is_vector ? b[0] : b[b.size() - 2];
  check(plan.k == k_b, "matmul: cannot multiply ", a, " by ", b, " (inner dimensions ", plan.k, " and ", k_b,
        " differ)");

  plan.a_batch = Shape(a.begin(), a.end() - (a_is_vector ? 1 : 2));
  plan.b_batch = Shape(b.begin(), b.end() - (b_is_vector ? 1 : 2));
  Shape batch;
  try {
    batch = broadcast_shapes(plan.a_batch, plan.b_batch, "matmul");
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(detail::concat("matmul: cannot multiply ", a, " by ", b,
                                               " (batch dimensions ", plan.a_batch, " and ", plan.b_batch,
                                               " do not broadcast)"));
  }
  plan.out_shape = batch;
  if (!a_is_vector) plan.out_shape.push_back(plan.n);
  if (!b_is_vector) plan.out_shape.push_back(plan.m);

  // One matrix on the right: a's rows, over all its batch dims, make one tall matrix whose
  // product is laid out exactly as the result is (b's size-1 batch dims only prepend 1s).
  if (shape_numel(plan.b_batch) == 1) {
    plan.n *= shape_numel(plan.a_batch);
    plan.a_batch = plan.b_batch = {};
  } else {
    plan.out_batch = batch;
  }
  check(plan.n <= INT_MAX && plan.k <= INT_MAX && plan.m <= INT_MAX, "matmul: cannot multiply ", a, " by ", b,
        " (a matrix dimension above ", INT_MAX, " is more than the BLAS accepts)");
  return plan;
}

// Calls f(out, a, b) with the element offsets of the three matrices of every batch index.
template <typename F>
void for_each_matrix(const Plan& plan, F&& f) {
  const int64_t out_size = plan.n * plan.m, a_size = plan.n * plan.k, b_size = plan.k * plan.m;
  detail::for_each_broadcast(
      plan.out_batch, plan.a_batch, plan.b_batch,
      [&](int64_t i, int64_t ia, int64_t ib) { f(i * out_size, ia * a_size, ib * b_size); });
}

// for_each_matrix with the batch split over the threads, when that is safe and pays: no operand
// is broadcast (so each product writes its own output matrix, nothing is shared) and each product
// is small enough that the BLAS would run it on one core anyway. A piece holds products worth at
// least about 2^20 multiply-adds.
template <typename F>
void for_each_matrix_parallel(const Plan& plan, F&& f) {
  const int64_t work = plan.n * plan.k * plan.m;
  const bool independent =
      !plan.out_batch.empty() && plan.a_batch == plan.out_batch && plan.b_batch == plan.out_batch;
  if (!independent || work > detail::kOneCoreProduct) {
    for_each_matrix(plan, f);
    return;
  }
  const int64_t out_size = plan.n * plan.m, a_size = plan.n * plan.k, b_size = plan.k * plan.m;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(work, 1));
  detail::parallel_for(shape_numel(plan.out_batch), grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) f(i * out_size, i * a_size, i * b_size);
  });
}

// Whether each matrix of an operand with batch dims `batch` meets exactly one product (broadcasting
// stretched none of them), so that its gradient can be written by one product instead of summed.
bool used_once(const Plan& plan, const Shape& batch) {
  return shape_numel(batch) == shape_numel(plan.out_batch);
}

// The grad_fn name PyTorch 1.13 shows for each rank case: its batched cases end in a view; a 2-d
// left operand folds b as b^T @ a^T and transposes the result back, cloned to be contiguous
// unless it already is (a single row or column, or no element).
detail::OpName backward_name(const Tensor& a, const Tensor& b, const Tensor& out) {
  const int64_t a_dim = a.dim(), b_dim = b.dim();
  if (a_dim == 1 && b_dim == 1) return "DotBackward0";
  if (a_dim == 2 && b_dim == 1) return "MvBackward0";
  if (a_dim == 2 && b_dim == 2) return "MmBackward0";
  if (a_dim == 1 && b_dim == 2) return "SqueezeBackward3";
  if (a_dim == 2)
    return a.size(0) == 1 || b.size(-1) == 1 || out.numel() == 0 ? detail::OpName("TransposeBackward0")
                                                                 : detail::OpName("CloneBackward0");
  return "UnsafeViewBackward0";
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  detail::check_defined(a, "matmul");
  detail::check_defined(b, "matmul");
  check(a.dim() >= 1 && b.dim() >= 1, "matmul: both arguments need at least 1 dimension, got ", a.shape(),
        " and ", b.shape());
  check(a.dtype() == b.dtype(), "matmul: expected both operands to have the same dtype, got ",
        dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  check(a.dtype() != kBool, "matmul: expected float32, float64 or int64 operands, got bool");
  const Plan plan = make_plan(a.shape(), b.shape());

  Tensor out = detail::new_tensor(plan.out_shape, a.dtype(), "matmul");
  dispatch(a.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T* x = a.data_ptr<T>();
      const T* y = b.data_ptr<T>();
      T* z = out.data_ptr<T>();
      for_each_matrix_parallel(plan, [&](int64_t io, int64_t ia, int64_t ib) {
        detail::gemm<T>(false, false, plan.n, plan.m, plan.k, x + ia, y + ib, false, z + io);
      });
    }
  });

  // Each product adds into the (zeroed) gradient of the matrix it read, so a matrix that
  // broadcasting reused collects the sum over its uses: the batch-dim sum_to, done by the GEMM.
  // A gradient whose every matrix comes from one product is written directly, without the zeros.
  auto backward = [plan](const Tensor& grad, const std::vector<Tensor>& inputs) {
    const Tensor& a = inputs[0];
    const Tensor& b = inputs[1];
    const bool write_a = used_once(plan, plan.a_batch), write_b = used_once(plan, plan.b_batch);
    auto gradient_like = [](const Tensor& t, bool written) {
      return written ? detail::new_tensor(t.shape(), t.dtype()) : zeros_like(t);
    };
    Tensor grad_a = a.requires_grad() ? gradient_like(a, write_a) : Tensor();
    Tensor grad_b = b.requires_grad() ? gradient_like(b, write_b) : Tensor();
    dispatch_floating(grad.dtype(), "matmul backward", [&]<typename T>() {
      const T* g = grad.data_ptr<T>();
      if (grad_a.defined()) {  // grad_a = grad @ b^T: [n, m] @ [m, k]
        const T* y = b.data_ptr<T>();
        T* ga = grad_a.data_ptr<T>();
        for_each_matrix_parallel(plan, [&](int64_t io, int64_t ia, int64_t ib) {
          detail::gemm<T>(false, true, plan.n, plan.k, plan.m, g + io, y + ib, !write_a, ga + ia);
        });
      }
      if (grad_b.defined()) {  // grad_b = a^T @ grad: [k, n] @ [n, m]
        const T* x = a.data_ptr<T>();
        T* gb = grad_b.data_ptr<T>();
        for_each_matrix_parallel(plan, [&](int64_t io, int64_t ia, int64_t ib) {
          detail::gemm<T>(true, false, plan.k, plan.m, plan.n, x + ia, g + io, !write_b, gb + ib);
        });
      }
    });
    return std::vector<Tensor>{grad_a, grad_b};
  };
  return detail::record(out, backward_name(a, b, out), {a, b}, backward);
}

}  // namespace minigrad
