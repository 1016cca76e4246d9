// Tensor handles, grad mode and the in-place helpers used by init and optimizers; the factories
// that make new tensors are in factories.cpp.
//
// Everything here moves or fills memory; the arithmetic lives in the ops_*.cpp files and the
// backward walk in engine.cpp.
#include "autograd/tensor.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <ostream>

#include "autograd/machinery/storage.hpp"
#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"

namespace minigrad {

using detail::check;
using detail::concat;

// ---- shapes ----------------------------------------------------------------------------------

std::string to_string(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << to_string(shape); }

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t size : shape) {
    check(size >= 0, "shape ", shape, ": sizes must be non-negative");
    check(size == 0 || n <= std::numeric_limits<int64_t>::max() / size, "shape ", shape,
          ": the element count overflows int64");
    n *= size;
  }
  return n;
}

// ---- storage -----------------------------------------------------------------------------------

namespace {

// Thrown by data_ptr<T>() for a T that is not the tensor's dtype. The message is built here, on
// failure only: data_ptr runs several times per op, and formatting two dtype names each time
// showed in the 1-row forward's instruction counts.
void dtype_mismatch(Dtype have, Dtype want) {
  check(false, "data_ptr: the tensor's dtype is ", dtype_name(have), ", not ", dtype_name(want));
}

}  // namespace

namespace detail {

Tensor new_tensor(const Shape& shape, Dtype dtype, const char* op) {
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->dtype = dtype;
  impl->numel = shape_numel(shape);
  const int64_t max_elements = std::numeric_limits<int64_t>::max() / 8;
  check(impl->numel <= max_elements, op != nullptr ? op : "tensor", ": shape ", shape,
        " is too large to allocate");
  const int64_t bytes = impl->numel * static_cast<int64_t>(element_size(dtype));
  try {
    impl->storage = allocate_storage(bytes);
  } catch (const std::bad_alloc&) {  // the one place tensors are allocated: say what was asked for
    throw OutOfMemoryError(concat(op != nullptr ? op : "tensor", ": out of memory allocating a ",
                                  dtype_name(dtype), " tensor of shape ", shape, " (", bytes, " bytes)"));
  }
  impl->version = std::make_shared<int64_t>(0);
  return Tensor(std::move(impl));
}

void check_inplace(const Tensor& self, const char* op) {
  check_defined(self, op);
  if (!is_grad_enabled() || !self.requires_grad()) return;
  check<std::runtime_error>(!self.is_leaf(), op,
                            ": a leaf tensor that requires grad cannot be changed in place "
                            "while grad mode is on (wrap the update in NoGradGuard)");
  check<std::runtime_error>(false, op, ": the result of ", self.grad_fn()->name(), " (shape ", self.shape(),
                            ") requires grad and cannot be changed in place: in-place changes are not "
                            "recorded, so backward would miss it. Compute a new tensor instead (y = x * 2, "
                            "not x.mul_(2)), or detach() it first");
}

void bump_version(const Tensor& self) { ++*self.impl()->version; }

void check_fits_float32(Scalar value, const char* op) {
  const double number = value.to_double();
  check(value.dtype() != kFloat64 || !std::isfinite(number) ||
            std::abs(number) <= std::numeric_limits<float>::max(),
        op, ": value ", number, " cannot be converted to type float without overflow");
}

}  // namespace detail

// ---- what it is ------------------------------------------------------------------------------

namespace {
[[noreturn]] void undefined_tensor() {
  throw std::invalid_argument("Tensor: this tensor is undefined (default-constructed)");
}

// Behind shape(), dtype(), numel() and the like, which ops call many times: a test and a branch,
// with the throw out of line.
const TensorImpl& impl_of(const Tensor& t) {
  if (!t.defined()) [[unlikely]]
    undefined_tensor();
  return *t.impl();
}
}  // namespace

const Shape& Tensor::shape() const { return impl_of(*this).shape; }
int64_t Tensor::dim() const { return static_cast<int64_t>(shape().size()); }
int64_t Tensor::numel() const { return impl_of(*this).numel; }
Dtype Tensor::dtype() const { return impl_of(*this).dtype; }

int64_t Tensor::size(int64_t dim) const {
  check<std::out_of_range>(this->dim() > 0, "size: a 0-d tensor has no dims");
  return shape()[detail::normalize_dim(dim, shape(), "size")];
}

// Only blocks the block cache takes back (64 KiB and more) are worth freeing early; a small
// tensor keeps its data, so that a drawing of a small graph (to_dot) still shows every value.
void Tensor::release_unread_data() noexcept {
  if (!impl_ || !impl_->grad_fn) return;  // a leaf stays whole, as PyTorch's AccumulateGrad holds it
  const int32_t graph = impl_->graph_refs.load(std::memory_order_acquire);
  if (graph == 0 || impl_->data_read_by_graph.load(std::memory_order_acquire) ||
      impl_.use_count() != graph + 1)
    return;
  if (impl_->numel * static_cast<int64_t>(element_size(impl_->dtype)) >= kMinCachedBytes)
    impl_->storage.reset();
}

Tensor& Tensor::operator=(const Tensor& other) & {
  if (impl_ != other.impl_) {
    release_unread_data();
    impl_ = other.impl_;
  }
  return *this;
}

Tensor& Tensor::operator=(Tensor&& other) & noexcept {
  if (this != &other) {
    if (impl_ != other.impl_) release_unread_data();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

void TensorImpl::data_freed() const {
  throw std::runtime_error(
      detail::concat("the data of this ", to_string(shape), " tensor was freed: only the graph held it",
                     grad_fn ? " (made by " + std::string(grad_fn->name()) + ")" : std::string(),
                     ", and no backward reads it"));
}

template <typename T>
T* Tensor::data_ptr() {
  if (dtype() != dtype_of<T>()) dtype_mismatch(dtype(), dtype_of<T>());
  return reinterpret_cast<T*>(impl_->data());
}

template <typename T>
const T* Tensor::data_ptr() const {
  if (dtype() != dtype_of<T>()) dtype_mismatch(dtype(), dtype_of<T>());
  return reinterpret_cast<const T*>(impl_->data());
}

using detail::checked_cast;

template <typename T>
T Tensor::item() const {
  check(numel() == 1, "item: a tensor with ", numel(), " elements (shape ", shape(),
        ") cannot be converted to a number; only one-element tensors can");
  return dispatch(dtype(), [&]<typename S>() { return checked_cast<T>(data_ptr<S>()[0], "item"); });
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  std::vector<T> out(static_cast<size_t>(numel()));
  dispatch(dtype(), [&]<typename S>() {
    const S* src = data_ptr<S>();
    for (int64_t i = 0; i < numel(); ++i) out[i] = checked_cast<T>(src[i], "to_vector");
  });
  return out;
}

double Tensor::at(const std::vector<int64_t>& index) const {
  check<std::out_of_range>(static_cast<int64_t>(index.size()) == dim(), "at: got ", index.size(),
                           " indices for a tensor of shape ", shape());
  int64_t offset = 0;
  for (int64_t d = 0; d < dim(); ++d) {
    check<std::out_of_range>(index[d] >= 0 && index[d] < shape()[d], "at: index ", index[d],
                             " is out of range for dim ", d, " of shape ", shape());
    offset = offset * shape()[d] + index[d];
  }
  return dispatch(dtype(), [&]<typename S>() { return static_cast<double>(data_ptr<S>()[offset]); });
}

#define MINIGRAD_INSTANTIATE(T)                  \
  template T* Tensor::data_ptr<T>();             \
  template const T* Tensor::data_ptr<T>() const; \
  template T Tensor::item<T>() const;            \
  template std::vector<T> Tensor::to_vector<T>() const;
MINIGRAD_INSTANTIATE(bool)
MINIGRAD_INSTANTIATE(int64_t)
MINIGRAD_INSTANTIATE(float)
MINIGRAD_INSTANTIATE(double)
#undef MINIGRAD_INSTANTIATE
template int Tensor::item<int>() const;

Tensor Tensor::from_scalar(Scalar value) { return scalar_tensor(value, {.dtype = value.dtype()}); }

// ---- autograd state --------------------------------------------------------------------------

bool Tensor::requires_grad() const { return impl_of(*this).requires_grad; }
bool Tensor::is_leaf() const { return impl_of(*this).grad_fn == nullptr; }
Tensor Tensor::grad() const { return impl_of(*this).grad; }
std::shared_ptr<Node> Tensor::grad_fn() const { return impl_of(*this).grad_fn; }

Tensor& Tensor::requires_grad_(bool requires_grad) {
  impl_of(*this);  // first: the message below reads impl_
  check(is_leaf(), "requires_grad_: only leaf tensors can change requires_grad (this one was made by ",
        impl_->grad_fn ? impl_->grad_fn->name() : std::string_view("an op"), "); use detach() first");
  check(!requires_grad || is_floating_point(),
        "requires_grad_: only floating-point tensors can require "
        "gradients, this one is ",
        dtype_name(dtype()));
  impl_->requires_grad = requires_grad;
  return *this;
}

void Tensor::set_grad(const Tensor& grad) {
  check(!grad.defined() || grad.shape() == shape(), "set_grad: gradient of shape ",
        grad.defined() ? grad.shape() : Shape{}, " does not match the tensor's shape ", shape());
  check(!grad.defined() || grad.dtype() == dtype(), "set_grad: gradient of dtype ",
        grad.defined() ? dtype_name(grad.dtype()) : "", " does not match the tensor's dtype ",
        dtype_name(dtype()));
  // Backward would add into the tensor's own data (and an optimizer step subtract it from itself).
  // PyTorch refuses the tensor itself; an alias of its data (detach, view) is refused here too.
  check(!grad.defined() || grad.impl()->storage != impl_->storage,
        "set_grad: can't assign a tensor as its own grad (the gradient shares this tensor's data; pass "
        "a clone())");
  impl_->grad = grad;
}

void Tensor::retain_grad() {
  check(requires_grad(), "retain_grad: the tensor does not require grad");
  impl_->retains_grad = true;
}

Tensor Tensor::detach() const {
  const TensorImpl& self = impl_of(*this);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = self.storage;
  impl->version = self.version;
  impl->shape = self.shape;
  impl->dtype = self.dtype;
  impl->numel = self.numel;
  return Tensor(std::move(impl));
}

int64_t Tensor::version() const { return *impl_of(*this).version; }

Tensor Tensor::clone() const {
  Tensor out = detail::new_tensor(shape(), dtype(), "clone");
  std::memcpy(out.impl()->data(), impl_->data(), static_cast<size_t>(numel()) * element_size(dtype()));
  return detail::record(
      out, "CloneBackward0", {*this}, detail::Saves::nothing,
      [](const Tensor& grad, const std::vector<Tensor>&) { return std::vector<Tensor>{grad}; });
}

Tensor Tensor::to(Dtype dtype) const {
  if (dtype == this->dtype()) return *this;
  Tensor out = detail::convert(*this, dtype);
  if (!minigrad::is_floating_point(dtype)) return out;  // integers carry no gradient
  const Dtype from = this->dtype();
  return detail::record(out, "ToCopyBackward0", {*this}, detail::Saves::nothing,
                        [from](const Tensor& grad, const std::vector<Tensor>&) {
                          return std::vector<Tensor>{detail::convert(grad, from)};
                        });
}

// ---- grad mode -----------------------------------------------------------------------------

namespace {
thread_local bool grad_enabled = true;
}
bool is_grad_enabled() { return grad_enabled; }
void set_grad_enabled(bool enabled) { grad_enabled = enabled; }

// ---- in-place ------------------------------------------------------------------------------

Tensor& Tensor::fill_(Scalar value) {
  detail::check_inplace(*this, "fill_");
  // As PyTorch's checked conversion; an op such as x * 1e40 still overflows to inf, as there.
  if (dtype() == kFloat32) detail::check_fits_float32(value, "fill_");
  dispatch(dtype(), [&]<typename T>() {
    T* data = data_ptr<T>();
    const T v = value.to<T>();
    for (int64_t i = 0; i < numel(); ++i) data[i] = v;
  });
  detail::bump_version(*this);
  return *this;
}

Tensor& Tensor::zero_() { return fill_(0); }

Tensor& Tensor::copy_(const Tensor& src) {
  detail::check_inplace(*this, "copy_");
  detail::check_defined(src, "copy_");
  check(src.shape() == shape(), "copy_: source of shape ", src.shape(), " does not match destination ",
        shape());
  Tensor converted = detail::convert(src, dtype());
  std::memcpy(impl_->data(), converted.impl()->data(), static_cast<size_t>(numel()) * element_size(dtype()));
  detail::bump_version(*this);
  return *this;
}

Tensor& Tensor::uniform_(double from, double to) { return uniform_(from, to, default_generator()); }

Tensor& Tensor::uniform_(double from, double to, Generator& generator) {
  detail::check_inplace(*this, "uniform_");
  dispatch_floating(dtype(), "uniform_",
                    [&]<typename T>() { generator.uniform(data_ptr<T>(), numel(), from, to); });
  detail::bump_version(*this);
  return *this;
}

Tensor& Tensor::normal_(double mean, double std) { return normal_(mean, std, default_generator()); }

Tensor& Tensor::normal_(double mean, double std, Generator& generator) {
  detail::check_inplace(*this, "normal_");
  dispatch_floating(dtype(), "normal_",
                    [&]<typename T>() { generator.normal(data_ptr<T>(), numel(), mean, std); });
  detail::bump_version(*this);
  return *this;
}

Tensor& Tensor::exponential_(double lambd) { return exponential_(lambd, default_generator()); }

Tensor& Tensor::exponential_(double lambd, Generator& generator) {
  detail::check_inplace(*this, "exponential_");
  dispatch_floating(dtype(), "exponential_",
                    [&]<typename T>() { generator.exponential(data_ptr<T>(), numel(), lambd); });
  detail::bump_version(*this);
  return *this;
}

Tensor& Tensor::add_(const Tensor& other, Scalar alpha) {
  detail::check_inplace(*this, "add_");
  detail::check_defined(other, "add_");
  check(broadcast_shapes(shape(), other.shape(), "add_") == shape(), "add_: cannot add a tensor of shape ",
        other.shape(), " in place to one of shape ", shape());
  const Dtype result = result_type(dtype(), dim() == 0, other.dtype(), other.dim() == 0);
  check(can_cast(result, dtype()), "add_: result type ", dtype_name(result),
        " can't be cast to the tensor's dtype ", dtype_name(dtype()), " in place");
  check(is_floating_point() || alpha.dtype() != kFloat64, "add_: for ", dtype_name(dtype()),
        " tensors, alpha must not be a floating-point number");
  check(dtype() == kBool || alpha.dtype() != kBool, "add_: a bool alpha is only for bool tensors, not ",
        dtype_name(dtype()));
  Tensor src = detail::convert(other, dtype());
  dispatch(dtype(), [&]<typename T>() {
    T* dst = data_ptr<T>();
    const T* b = src.data_ptr<T>();
    const T a = alpha.to<T>();
    detail::for_each_broadcast(shape(), shape(), src.shape(), [&](int64_t i, int64_t, int64_t j) {
      dst[i] = detail::wrapping_add(dst[i], detail::wrapping_mul(a, b[j]));
    });
  });
  detail::bump_version(*this);
  return *this;
}

Tensor& Tensor::mul_(Scalar factor) {
  detail::check_inplace(*this, "mul_");
  const Dtype result = result_type(dtype(), factor.dtype());
  check(can_cast(result, dtype()), "mul_: result type ", dtype_name(result),
        " can't be cast to the tensor's dtype ", dtype_name(dtype()), " in place");
  dispatch(dtype(), [&]<typename T>() {
    T* data = data_ptr<T>();
    const T f = factor.to<T>();
    for (int64_t i = 0; i < numel(); ++i) data[i] = detail::wrapping_mul(data[i], f);
  });
  detail::bump_version(*this);
  return *this;
}

// ---- method spellings of ops -----------------------------------------------------------------

Tensor Tensor::operator[](int64_t index) const { return minigrad::select(*this, 0, index); }
Tensor Tensor::select(int64_t dim, int64_t index) const { return minigrad::select(*this, dim, index); }
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step) const {
  return minigrad::slice(*this, dim, start, end, step);
}
Tensor Tensor::reshape(const Shape& shape) const { return minigrad::reshape(*this, shape); }
Tensor Tensor::view(const Shape& shape) const { return minigrad::view(*this, shape); }
Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  return minigrad::flatten(*this, start_dim, end_dim);
}
Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const { return minigrad::transpose(*this, dim0, dim1); }
Tensor Tensor::t() const { return minigrad::t(*this); }
Tensor Tensor::permute(const std::vector<int64_t>& dims) const { return minigrad::permute(*this, dims); }
Tensor Tensor::unsqueeze(int64_t dim) const { return minigrad::unsqueeze(*this, dim); }
Tensor Tensor::squeeze() const { return minigrad::squeeze(*this); }
Tensor Tensor::squeeze(int64_t dim) const { return minigrad::squeeze(*this, dim); }
Tensor Tensor::matmul(const Tensor& other) const { return minigrad::matmul(*this, other); }
Tensor Tensor::pow(double exponent) const { return minigrad::pow(*this, exponent); }
Tensor Tensor::exp() const { return minigrad::exp(*this); }
Tensor Tensor::log() const { return minigrad::log(*this); }
Tensor Tensor::sqrt() const { return minigrad::sqrt(*this); }
Tensor Tensor::abs() const { return minigrad::abs(*this); }
Tensor Tensor::neg() const { return minigrad::neg(*this); }
Tensor Tensor::relu() const { return minigrad::relu(*this); }
Tensor Tensor::tanh() const { return minigrad::tanh(*this); }
Tensor Tensor::sigmoid() const { return minigrad::sigmoid(*this); }
Tensor Tensor::sin() const { return minigrad::sin(*this); }
Tensor Tensor::cos() const { return minigrad::cos(*this); }
Tensor Tensor::sum() const { return minigrad::sum(*this); }
Tensor Tensor::sum(int64_t dim, bool keepdim) const { return minigrad::sum(*this, dim, keepdim); }
Tensor Tensor::mean() const { return minigrad::mean(*this); }
Tensor Tensor::mean(int64_t dim, bool keepdim) const { return minigrad::mean(*this, dim, keepdim); }
Tensor Tensor::max() const { return minigrad::max(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  return minigrad::max(*this, dim, keepdim);
}
Tensor Tensor::min() const { return minigrad::min(*this); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  return minigrad::min(*this, dim, keepdim);
}
Tensor Tensor::argmax() const { return minigrad::argmax(*this); }
Tensor Tensor::argmax(int64_t dim, bool keepdim) const { return minigrad::argmax(*this, dim, keepdim); }
Tensor Tensor::softmax(int64_t dim) const { return minigrad::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return minigrad::log_softmax(*this, dim); }
Tensor Tensor::var() const { return minigrad::var(*this); }
Tensor Tensor::var(const std::vector<int64_t>& dims, int64_t correction, bool keepdim) const {
  return minigrad::var(*this, dims, correction, keepdim);
}
Tensor Tensor::var(int64_t dim, bool unbiased, bool keepdim) const {
  return minigrad::var(*this, dim, unbiased, keepdim);
}
Tensor Tensor::std() const { return minigrad::std(*this); }
Tensor Tensor::std(const std::vector<int64_t>& dims, int64_t correction, bool keepdim) const {
  return minigrad::std(*this, dims, correction, keepdim);
}
Tensor Tensor::std(int64_t dim, bool unbiased, bool keepdim) const {
  return minigrad::std(*this, dim, unbiased, keepdim);
}
Tensor Tensor::cumsum(int64_t dim) const { return minigrad::cumsum(*this, dim); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return minigrad::topk(*this, k, dim, largest, sorted);
}
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  return minigrad::clamp(*this, min, max);
}
Tensor Tensor::masked_fill(const Tensor& mask, Scalar value) const {
  return minigrad::masked_fill(*this, mask, value);
}
bool Tensor::equal(const Tensor& other) const { return minigrad::equal(*this, other); }
bool Tensor::allclose(const Tensor& other, double rtol, double atol) const {
  return minigrad::allclose(*this, other, rtol, atol);
}

}  // namespace minigrad
