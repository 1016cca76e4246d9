// Tensor: an n-dimensional array that remembers how it was computed.
//
// A Tensor is a cheap handle: a shared_ptr to a TensorImpl (storage, shape, dtype, requires_grad,
// grad, grad_fn). Copying a Tensor aliases the same data, exactly as assigning a tensor in Python
// does; use clone() for an independent copy. Storage is contiguous and row-major: reshape and view
// share it, while select, slice, transpose and permute return new contiguous tensors (copies, not
// views: writing into them does not change the original, unlike PyTorch).
//
// The ops themselves (add, matmul, sum, ...) are declared in "autograd/ops.hpp"; the methods below
// that share their names forward to them, so `x.sum()` and `minigrad::sum(x)` are the same call.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "autograd/dtype.hpp"
#include "autograd/machinery/anomaly.hpp"

namespace minigrad {

class Generator;
struct Node;
struct TensorImpl;
namespace indexing {
class TensorIndex;
}
class Tensor;

/// What a post-accumulate-grad hook is called with: the leaf itself, its grad() complete.
using PostAccumulateGradHook = std::function<void(Tensor& leaf)>;

/// Removes the hook it was returned for (`torch.utils.hooks.RemovableHandle`). Removing twice, or
/// after the tensor is gone, does nothing. Copies remove the same hook.
class RemovableHandle {
 public:
  RemovableHandle() = default;
  /// Unregisters the hook: later backward() calls no longer call it (`handle.remove()`).
  void remove();

 private:
  friend class Tensor;
  RemovableHandle(std::weak_ptr<TensorImpl> tensor, int64_t id) : tensor_(std::move(tensor)), id_(id) {}
  std::weak_ptr<TensorImpl> tensor_;
  int64_t id_ = -1;
};

/// A tensor's sizes, one per dimension; `[2, 128]` when printed (PyTorch's `torch.Size`).
/// A plain std::vector<int64_t> that lives in namespace minigrad so `std::cout << x.shape()` works.
struct Shape : std::vector<int64_t> {
  using std::vector<int64_t>::vector;
  Shape() = default;
  /// From any vector of sizes, so a `std::vector<int64_t>` converts implicitly.
  Shape(std::vector<int64_t> sizes) : std::vector<int64_t>(std::move(sizes)) {}  // NOLINT
};

/// "[2, 128]"; "[]" for a 0-d tensor.
std::string to_string(const Shape& shape);
/// Writes to_string(shape).
std::ostream& operator<<(std::ostream& os, const Shape& shape);

/// Product of the sizes (1 for a 0-d shape). Throws std::invalid_argument for a negative size or
/// an element count that overflows int64.
int64_t shape_numel(const Shape& shape);

/// Options for factories (PyTorch's `TensorOptions`): `zeros({2, 3}, {.dtype = kFloat64})`.
struct TensorOptions {
  Dtype dtype = kFloat32;      ///< element type (`dtype=`)
  bool requires_grad = false;  ///< record ops on the new leaf (`requires_grad=`)
};

/// An n-dimensional array of float32, float64, int64 or bool, and its place in the autograd graph
/// (PyTorch's `torch.Tensor`). A handle: copies share the data and the graph node, as Python
/// names do; clone() copies the data. Always contiguous and row-major.
class Tensor {
 public:
  /// An undefined tensor (like a default `at::Tensor`): only defined() may be called on it.
  Tensor() = default;
  /// Wraps an implementation made by library code.
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  /// Another handle to the same tensor (data, grad and node shared).
  Tensor(const Tensor&) = default;
  /// Takes the other handle's tensor; the other is left undefined.
  Tensor(Tensor&&) noexcept = default;
  /// This handle now names other's tensor. If it named an intermediate (a tensor an op made) of
  /// 64 KiB or more that only the graph still holds and that no backward reads, that tensor's data
  /// is freed (as when Python rebinds a name).
  Tensor& operator=(const Tensor& other) &;
  /// The same, taking other's handle.
  Tensor& operator=(Tensor&& other) & noexcept;
  /// No assignment to a temporary: `x[0] = v` or `x.index({...}) = v` would only rebind a copy of
  /// the selection and leave x as it was. Write into x with `x.index_put_({0}, v)` instead.
  Tensor& operator=(const Tensor& other) && = delete;
  /// The same, for a moved value.
  Tensor& operator=(Tensor&& other) && = delete;
  /// Drops the handle; frees the data as operator= does.
  ~Tensor() { release_unread_data(); }

  /// A 0-d tensor holding one number, of the scalar's category (float64 for 2.5, int64 for 2).
  /// Prefer `scalar_tensor(value, options)` to choose the dtype.
  static Tensor from_scalar(Scalar value);

  // ---- what it is --------------------------------------------------------------------------
  bool defined() const { return impl_ != nullptr; }  ///< false for Tensor() (Python's None)
  const Shape& shape() const;                        ///< sizes per dimension (`x.shape`)
  int64_t size(int64_t dim) const;  ///< one size; negative dims count from the end (`x.size(d)`)
  int64_t dim() const;              ///< number of dimensions (`x.dim()`)
  int64_t numel() const;            ///< number of elements (`x.numel()`)
  Dtype dtype() const;              ///< element type (`x.dtype`)
  /// float32 or float64 (`x.is_floating_point()`).
  bool is_floating_point() const { return minigrad::is_floating_point(dtype()); }

  /// The single element as T (`x.item()`); converts between dtypes as PyTorch does (a float to an
  /// integer truncates toward zero). Throws std::invalid_argument if numel() != 1, or for a float
  /// that no int64 holds (nan, inf, beyond +-2^63) when T is an integer.
  template <typename T>
  T item() const;

  /// Raw row-major data. Throws std::invalid_argument if T is not the tensor's element type.
  ///@{
  template <typename T>
  T* data_ptr();
  template <typename T>
  const T* data_ptr() const;
  ///@}

  /// All elements as a flat vector of T, converting from the tensor's dtype (for tests and output).
  /// Throws std::invalid_argument as item() does for a float that no integer T holds.
  template <typename T>
  std::vector<T> to_vector() const;

  /// One element by full index, converted to double (for tests): `x.at({0, 3})`.
  /// Throws std::out_of_range for a wrong number of indices or an index out of range.
  double at(const std::vector<int64_t>& index) const;

  // ---- autograd ----------------------------------------------------------------------------
  bool requires_grad() const;  ///< ops on it are recorded (`x.requires_grad`)
  /// Starts (or stops) recording ops on this leaf (`x.requires_grad_()`). Throws
  /// std::invalid_argument for an int64/bool tensor or a non-leaf.
  Tensor& requires_grad_(bool requires_grad = true);
  /// True for tensors made by the user, false for results of recorded ops (`x.is_leaf`).
  bool is_leaf() const;
  /// The accumulated gradient (`x.grad`); undefined until a backward() reaches this tensor.
  Tensor grad() const;
  /// Replaces the gradient (undefined resets it, as `x.grad = None`). Throws std::invalid_argument
  /// for a gradient of another shape or dtype, as PyTorch refuses one, and for the tensor itself or
  /// an alias of its data ("can't assign Variable as its own grad", in PyTorch for the tensor itself).
  void set_grad(const Tensor& grad);
  /// The node that produced this tensor, or nullptr for a leaf (`x.grad_fn`).
  std::shared_ptr<Node> grad_fn() const;
  /// Keep .grad() for this non-leaf too after backward (`x.retain_grad()`).
  void retain_grad();
  /// Calls hook(leaf) in each backward() that reaches this leaf, right after the engine has added
  /// this backward's whole gradient into grad() (every use of the leaf has contributed by then),
  /// and before the engine goes on to the tensors further down the graph. The hook runs under
  /// NoGradGuard and may read or change grad() in place; an exception it throws leaves backward()
  /// there. Hooks run in the order they were registered. This is how DistributedDataParallel
  /// learns that a gradient is ready during the backward (PyTorch 2.1's
  /// `Tensor.register_post_accumulate_grad_hook`; 1.13 has only `register_hook`). Throws
  /// std::runtime_error for a tensor that does not require grad, or that is not a leaf.
  RemovableHandle register_post_accumulate_grad_hook(PostAccumulateGradHook hook);

  /// Computes d(this)/d(leaf) for every leaf that requires grad and ADDS it to leaf.grad()
  /// (gradients accumulate across calls, as in PyTorch; zero them between steps).
  /// `gradient` is d(loss)/d(this); it may be omitted only for a one-element tensor.
  /// Without retain_graph the graph's saved data is freed and a second backward through a node
  /// that saved tensors throws std::runtime_error (ops that save none, such as add, run again). Throws
  /// std::runtime_error if this tensor does not require grad, std::invalid_argument for a gradient of the
  /// wrong shape. Mirrors `Tensor.backward`.
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false) const;

  /// Same data, cut from the graph: no grad_fn, requires_grad false (`x.detach()`). It shares
  /// the data's version counter too, so changing it in place counts as changing x.
  Tensor detach() const;
  /// How many in-place changes the data has had, through this tensor or an alias of it (reshape,
  /// view, detach): `x._version`. Each recorded op notes its inputs' and output's versions, and
  /// backward throws std::runtime_error if one has changed since.
  int64_t version() const;
  /// An independent copy of the data, recorded in the graph (`x.clone()`).
  Tensor clone() const;
  /// Converted to another dtype; returns *this unchanged if it already has it (`x.to(dtype)`). A
  /// float becomes an integer truncated toward zero. Throws std::invalid_argument for a float
  /// that no int64 holds (nan, inf, beyond +-2^63), where PyTorch returns an arbitrary number.
  Tensor to(Dtype dtype) const;

  // ---- in-place, never recorded (used for initialisation and optimizer steps) ---------------
  // Each throws std::runtime_error on a tensor that requires grad while grad mode is on: on a
  // leaf as PyTorch does (wrap it in NoGradGuard), and on an op's result too, because these
  // changes are not recorded and the backward would not see them (PyTorch records them). Each
  // adds 1 to the version its data shares with its aliases (version()), so a backward that needs
  // the old values throws instead of computing with the new ones. A value is converted to the
  // tensor's dtype; add_ and mul_ throw std::invalid_argument where the result's dtype cannot be
  // written back (a float into int64, anything but bool into bool: `torch.can_cast`), and
  // fill_ for a float that no int64 holds (nan, inf) into an int64 tensor, or a finite one beyond
  // float32's range into a float32 tensor.
  Tensor& fill_(Scalar value);       ///< every element = value
  Tensor& zero_();                   ///< every element = 0
  Tensor& copy_(const Tensor& src);  ///< same shape required
  /// U(from, to), from the default generator or the one given (`x.uniform_(a, b, generator=g)`).
  ///@{
  Tensor& uniform_(double from = 0.0, double to = 1.0);
  Tensor& uniform_(double from, double to, Generator& generator);
  ///@}
  /// N(mean, std^2), from the default generator or the one given (`x.normal_(m, s, generator=g)`).
  ///@{
  Tensor& normal_(double mean = 0.0, double std = 1.0);
  Tensor& normal_(double mean, double std, Generator& generator);
  ///@}
  /// Exponential(lambd), density lambd * exp(-lambd * x), from the default generator or the one
  /// given (`x.exponential_(lambd, generator=g)`); floating dtypes. Throws std::invalid_argument
  /// for lambd < 0.
  ///@{
  Tensor& exponential_(double lambd = 1.0);
  Tensor& exponential_(double lambd, Generator& generator);
  ///@}
  Tensor& add_(const Tensor& other, Scalar alpha = 1);  ///< this += alpha * other (broadcast)
  /// this[index[i]] += alpha * source[i] along dim, repeats adding up (`x.index_add_`); shapes,
  /// dtypes and errors as index_add (autograd/ops_index.hpp).
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1);
  Tensor& mul_(Scalar factor);  ///< this *= factor

  // ---- method spellings of ops (defined in ops.cpp) -----------------------------------------
  Tensor operator[](int64_t index) const;  ///< select(0, index): `x[0]`
  /// `x[idx]` with an int64 tensor of any shape: index(x, idx) (autograd/ops_index.hpp), so a
  /// [V, D] table indexed by [B, T] gives [B, T, D].
  Tensor operator[](const Tensor& index) const;
  /// Python's `x[...]` with several entries, as libtorch's `Tensor::index` (the entry types are in
  /// autograd/ops_index.hpp, namespace minigrad::indexing):
  /// `x.index({Slice(), Slice(-T, None)})` is `x[:, -T:]`, `x.index({Slice(), -1, Slice()})` is
  /// `x[:, -1, :]`. Each entry is an integer (selects, removing the dim), a Slice (keeps the dim,
  /// Python's clamping and negative bounds), None (a new size-1 dim), Ellipsis (as many `:` as
  /// the other entries leave dims) or one int64 tensor (index_select generalised to its shape,
  /// at most one per call). Throws std::out_of_range for an integer outside the dim, more entries
  /// than dims, std::invalid_argument for a step <= 0, two Ellipsis or two tensors.
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  /// The same with the entries in a vector.
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  /// Python's `x[...] = values`, as libtorch's `Tensor::index_put_`: writes `values` into the
  /// elements `index(indices)` selects, in place (index's entries, checks and errors; since index
  /// returns a copy, `x[0] = v` would write into that copy, and does not compile). `values` is cast
  /// to this dtype and broadcast to the selection's shape after its leading 1s are dropped, as
  /// PyTorch's; a repeated tensor index keeps the last write. Throws std::invalid_argument when
  /// the values do not broadcast, std::runtime_error on a tensor or values requiring grad in grad
  /// mode (in-place ops are not recorded; see fill_).
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& values);
  /// The same with the entries in a vector.
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& values);
  /// `x[...] = 2.5`: every selected element set to the number.
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, Scalar value);
  /// The same with the entries in a vector.
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, Scalar value);
  /// Method spellings of the ops in autograd/ops.hpp, as PyTorch's Tensor methods: `x.sum(1)` is
  /// `sum(x, 1)`, `x.matmul(w)` is `matmul(x, w)`. Shapes, dtypes and errors are those of the free
  /// function of the same name.
  ///@{
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  Tensor reshape(const Shape& shape) const;
  Tensor view(const Shape& shape) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor matmul(const Tensor& other) const;
  Tensor pow(double exponent) const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor abs() const;
  Tensor neg() const;
  Tensor relu() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor sum() const;
  Tensor sum(int64_t dim, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(int64_t dim, bool keepdim = false) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor argmax() const;
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor var() const;
  Tensor var(const std::vector<int64_t>& dims, int64_t correction = 1, bool keepdim = false) const;
  Tensor var(int64_t dim, bool unbiased = true, bool keepdim = false) const;
  Tensor std() const;
  Tensor std(const std::vector<int64_t>& dims, int64_t correction = 1, bool keepdim = false) const;
  Tensor std(int64_t dim, bool unbiased = true, bool keepdim = false) const;
  Tensor cumsum(int64_t dim) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor masked_fill(const Tensor& mask, Scalar value) const;
  Tensor multinomial(int64_t num_samples, bool replacement = false) const;
  Tensor multinomial(int64_t num_samples, bool replacement, Generator& generator) const;
  bool equal(const Tensor& other) const;
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8) const;
  ///@}

  /// The implementation, for code inside the library.
  TensorImpl* impl() const { return impl_.get(); }
  /// The shared owner of the implementation, for library code that keeps a tensor alive.
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  // Frees the data when this is the last handle outside the graph and no backward reads it.
  void release_unread_data() noexcept;
  std::shared_ptr<TensorImpl> impl_;
};

/// What a Tensor handle points to. Library code reads and writes it; users go through Tensor.
struct TensorImpl {
  std::shared_ptr<std::byte[]> storage;  ///< shared by reshape/view/detach results
  std::shared_ptr<int64_t> version;      ///< in-place changes to storage, shared with it (`x._version`)
  Shape shape;                           ///< sizes, as Tensor::shape()
  Dtype dtype = kFloat32;                ///< element type, as Tensor::dtype()
  int64_t numel = 0;                     ///< product of the sizes, kept so loops need not recompute it
  bool requires_grad = false;            ///< as Tensor::requires_grad()
  bool retains_grad = false;             ///< set by Tensor::retain_grad() on a non-leaf
  bool is_parameter = false;             ///< registered by Module::register_parameter (an nn.Parameter)
  Tensor grad;                           ///< accumulated gradient (leaves, and retain_grad non-leaves)
  std::shared_ptr<Node> grad_fn;         ///< the op that made this tensor; null for a leaf
  std::string name;                      ///< optional label for errors and graph drawing
  /// (id, hook) per Tensor::register_post_accumulate_grad_hook, in registration order.
  std::vector<std::pair<int64_t, PostAccumulateGradHook>> post_accumulate_grad_hooks;
  /// How many of the graph's nodes hold this tensor as an input (a node using it twice counts
  /// twice). An op's result (not a leaf) that only nodes hold and that no backward reads has its
  /// data freed when its last other handle goes, if it is 64 KiB or more (PyTorch frees such
  /// intermediates as soon as Python drops them); the graph keeps its shape, dtype and node.
  std::atomic<int32_t> graph_refs{0};
  /// Whether some node's backward reads this tensor's data (detail::record's `reads`): then the
  /// data stays as long as the tensor.
  std::atomic<bool> data_read_by_graph{false};

  /// The first element's address (row-major, contiguous). Throws std::runtime_error if the data
  /// was freed (graph_refs above): nothing reads it through a user's handle, so only code walking
  /// the graph can get here.
  void* data() const {
    if (!storage) data_freed();
    return storage.get();
  }
  /// Throws the error data() throws for freed data, naming the shape and the op.
  [[noreturn]] void data_freed() const;
};

namespace detail {
/// A node's name, "MulBackward0": made only from a string literal (the constructor runs at compile
/// time), since the node keeps a view of those characters (Node::name), never a copy. A name
/// built at run time (a std::string's c_str(), a buffer) does not compile.
struct OpName {
  consteval OpName(const char* literal) : text(literal) {}  // NOLINT: implicit, from a literal
  const char* text;                                         ///< the literal
};
}  // namespace detail

/// One recorded op in the graph (PyTorch's `grad_fn`, e.g. `MulBackward0`).
/// `backward` gets the gradient of the op's output and the op's inputs, and returns one gradient
/// per input (undefined where the input does not require grad). It captures only saved data it
/// needs, never the output tensor itself, so no node can keep itself alive.
struct Node {
  /// Gradient of the op's output and its inputs in; one gradient per input out.
  using BackwardFn =
      std::function<std::vector<Tensor>(const Tensor& grad, const std::vector<Tensor>& inputs)>;

  /// "MulBackward0", as PyTorch names it (`grad_fn.name()`): a view of the literal the op gave
  /// detail::record, so that recording an op copies no name.
  std::string_view name() const { return name_; }
  /// Names the node (detail::record, detail::named_as): only from a string literal (OpName), which
  /// outlives every node.
  void set_name(detail::OpName name) { name_ = name.text; }
  std::vector<Tensor> inputs;  ///< the op's tensor inputs, in order
  BackwardFn backward;         ///< emptied after a backward() without retain_graph, if saves_tensors
  Shape output_shape;          ///< for error messages and graph drawing
  /// Per input: whether it required grad when the op ran. Only those get a gradient (PyTorch's
  /// edges are made then), so requires_grad_() on an input after the op changes nothing for it.
  std::vector<bool> input_requires_grad;
  /// Whether input i gets a gradient: it required grad when the op ran and still does.
  bool gets_gradient(size_t i) const { return input_requires_grad[i] && inputs[i].requires_grad(); }
  /// False for an op whose backward reads only shapes and numbers (add, sum, reshape, cat, ...,
  /// detail::Saves::nothing): nothing is freed after a backward, so a second one may run it again,
  /// and no version is checked, as PyTorch's nodes without saved tensors.
  bool saves_tensors = true;
  /// The version counter of each input (null where undefined), then the output's if the op keeps
  /// it for its backward (exp, relu, ...), with its value when the op ran. The backward reads these
  /// tensors, so the engine checks that none has been changed in place since (PyTorch's
  /// saved-variable check). An input whose data the backward does not read (detail::record's
  /// `reads`: relu's, softmax's, the side of a product whose partner needs no gradient) has a null
  /// counter and is not checked, as PyTorch does not save it.
  std::vector<std::pair<std::shared_ptr<const int64_t>, int64_t>> versions;
  /// Where the forward that recorded this node ran, noted only while anomaly detection is on
  /// (autograd/machinery/anomaly.hpp): "op #3 recorded since anomaly detection was turned on, in the forward
  /// of net.0 (Linear ...)"; empty otherwise.
  std::string forward_trace = detail::anomaly_note();

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  /// Frees the nodes behind this one iteratively, so dropping a graph of any depth and shape
  /// (chains, residual connections, an input used twice) cannot overflow the stack with nested
  /// destructor calls.
  ~Node();

 private:
  std::string_view name_;
};

// ---- grad mode -------------------------------------------------------------------------------

/// True while ops are recorded (`torch.is_grad_enabled()`); per thread.
bool is_grad_enabled();
/// Turns recording on or off for this thread (`torch.set_grad_enabled`).
void set_grad_enabled(bool enabled);

/// While alive, ops are not recorded (`torch::NoGradGuard`, Python's `with torch.no_grad():`).
class NoGradGuard {
 public:
  NoGradGuard() : previous_(is_grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// ---- factories (PyTorch's names; shapes are `{2, 128}`) ---------------------------------------

/// A new tensor of the given shape (`torch.empty`). PyTorch leaves the memory uninitialised; we
/// zero it, so a forgotten initialisation never reads garbage.
Tensor empty(const Shape& shape, TensorOptions options = {});
Tensor zeros(const Shape& shape, TensorOptions options = {});  ///< all 0 (`torch.zeros`)
Tensor ones(const Shape& shape, TensorOptions options = {});   ///< all 1 (`torch.ones`)
/// All `value` (`torch.full`); dtype float32 unless options say otherwise.
Tensor full(const Shape& shape, Scalar value, TensorOptions options = {});
/// 0-d tensor holding `value` (`torch.tensor(2.5)` / `torch.scalar_tensor`).
Tensor scalar_tensor(Scalar value, TensorOptions options = {});
/// Identity matrix [n, n] (`torch.eye`).
Tensor eye(int64_t n, TensorOptions options = {});
/// start, start+step, ... below end, 1-d (`torch.arange`). Dtype int64 when options.dtype is
/// left at its default and all three are integers, as PyTorch infers; an int64 arange converts
/// start, end and step to int64 first (arange(-5, 5, 2.5, int64) steps by 2, as PyTorch) and
/// counts exactly, without rounding through a double. Throws for step == 0, a step of the wrong
/// sign, or an int64 result with a value no int64 holds.
///@{
Tensor arange(Scalar end);
Tensor arange(Scalar start, Scalar end, Scalar step = 1);
Tensor arange(Scalar start, Scalar end, Scalar step, TensorOptions options);
///@}
/// `steps` evenly spaced values from start to end, both included, 1-d (`torch.linspace`); float32
/// unless options say otherwise (float64, or int64 with the values truncated toward zero). PyTorch's
/// formula: with step = (end - start) / (steps - 1) in the result's dtype (double for int64),
/// start + step * i for the first half and end - step * (steps - 1 - i) for the second, which puts
/// both ends exactly. PyTorch's vectorised kernel groups the products differently (and fuses
/// multiply-adds), so a float value may differ from PyTorch's in its last bit. Throws
/// std::invalid_argument for steps < 0, a bool dtype, or an int64 linspace with a non-finite end.
Tensor linspace(Scalar start, Scalar end, int64_t steps, TensorOptions options = {});

/// zeros, ones, empty (zeroed) or full with the shape and dtype of `other` (`torch.zeros_like`,
/// `torch.ones_like`, `torch.empty_like`, `torch.full_like`).
///@{
Tensor zeros_like(const Tensor& other);
Tensor ones_like(const Tensor& other);
Tensor empty_like(const Tensor& other);
Tensor full_like(const Tensor& other, Scalar value);
///@}

/// From data and a shape: `tensor(std::vector<double>{1, 2, 3, 4}, {2, 2})` (bare braces would fit
/// every overload; for numbers written out, nested braces read best: `tensor({{1, 2}, {3, 4}})`).
/// Throws std::invalid_argument if the element count does not match the shape, or for a float that
/// the int64 dtype cannot hold (nan, inf, 1e30), as PyTorch's "value cannot be converted".
///@{
Tensor tensor(const std::vector<double>& data, const Shape& shape, TensorOptions options = {});
Tensor tensor(const std::vector<float>& data, const Shape& shape, TensorOptions options = {});
Tensor tensor(const std::vector<int64_t>& data, const Shape& shape,
              TensorOptions options = {.dtype = kInt64});
Tensor tensor(const std::vector<bool>& data, const Shape& shape, TensorOptions options = {.dtype = kBool});
///@}

/// Numbers in nested braces, any depth: `{{1, 2}, {3, 4}}`. Each pair of braces is one dim, so
/// `{{0}, {1}, {1}, {0}}` is a [4, 1] column (with one overload per depth it was ambiguous: `{0}`
/// could also be the number 0). What tensor(NestedList) reads; users just write the braces.
class NestedList {
 public:
  /// A number: the innermost level.
  NestedList(double value) : value_(value), is_number_(true) {}  // NOLINT: braces must convert
  /// One dim's worth of entries, numbers or lists.
  NestedList(std::initializer_list<NestedList> items) : items_(items) {}
  /// True for a number, false for a braced list.
  bool is_number() const { return is_number_; }
  /// The number (is_number()).
  double value() const { return value_; }
  /// The entries of a braced list (not is_number()).
  const std::vector<NestedList>& items() const { return items_; }

 private:
  double value_ = 0;
  bool is_number_ = false;
  std::vector<NestedList> items_;
};
/// Older names of the nested list, one per depth; all three are NestedList.
///@{
using List1 = NestedList;
using List2 = NestedList;
using List3 = NestedList;
///@}

/// From nested braces, as `torch.tensor([[1, 2], [3, 4]])`: any depth, a column vector
/// `tensor({{0}, {1}, {1}, {0}})` included; a bare number gives a 0-d tensor. float32 unless
/// options say otherwise. Throws std::invalid_argument for ragged rows (`{{1, 2}, {3}}`).
///@{
Tensor tensor(const NestedList& values, TensorOptions options = {});
// A braced list binds here before it could bind to the std::vector overloads above (a conversion
// to std::initializer_list wins), so `tensor({0.5, -1.0}, {.requires_grad = true})` is not ambiguous.
Tensor tensor(std::initializer_list<NestedList> values, TensorOptions options = {});
///@}

// ---- random factories: same numbers as PyTorch's CPU generator for the same seed -------------

/// U[0, 1) (`torch.rand`), from the default generator or the one given. Floating dtypes only.
///@{
Tensor rand(const Shape& shape, TensorOptions options = {});
Tensor rand(const Shape& shape, Generator& generator, TensorOptions options = {});
///@}
/// N(0, 1) (`torch.randn`), from the default generator or the one given. Floating dtypes only.
///@{
Tensor randn(const Shape& shape, TensorOptions options = {});
Tensor randn(const Shape& shape, Generator& generator, TensorOptions options = {});
///@}
/// Integers in [low, high), int64 (`torch.randint`). Throws if low >= high, or for a bool dtype
/// with low < 0 or high > 2.
///@{
Tensor randint(int64_t low, int64_t high, const Shape& shape, TensorOptions options = {.dtype = kInt64});
Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator& generator,
               TensorOptions options = {.dtype = kInt64});
///@}
/// A random permutation of 0..n-1, int64 (`torch.randperm`).
///@{
Tensor randperm(int64_t n, TensorOptions options = {.dtype = kInt64});
Tensor randperm(int64_t n, Generator& generator, TensorOptions options = {.dtype = kInt64});
///@}

/// Prints as PyTorch does: `tensor([[ 0.1234, -1.0000]])`, summarised with `...` above 1000
/// elements, with `dtype=`, `requires_grad=True` or `grad_fn=<...>` suffixes where PyTorch adds them.
/// An undefined tensor (e.g. grad() before any backward) prints `None`, as Python prints x.grad.
std::ostream& operator<<(std::ostream& os, const Tensor& tensor);
/// The same text as operator<<.
std::string to_string(const Tensor& tensor);

/// What a failed tensor allocation throws: a std::bad_alloc whose what() says which op wanted how
/// much, e.g. `matmul: out of memory allocating a float32 tensor of shape [100000, 100000]
/// (40000000000 bytes)` (PyTorch's "DefaultCPUAllocator: not enough memory").
class OutOfMemoryError : public std::bad_alloc {
 public:
  /// The full message, op and shape included.
  explicit OutOfMemoryError(std::string message) : message_(std::move(message)) {}
  /// The message given to the constructor.
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// ---- internals shared by the op files ---------------------------------------------------------
namespace detail {
/// A new contiguous tensor, not recorded, with uninitialised data (ops overwrite every element).
/// Throws std::invalid_argument for a shape whose element count overflows, and OutOfMemoryError
/// (a std::bad_alloc) naming `op` (when given), the shape, dtype and bytes when the memory is not there.
Tensor new_tensor(const Shape& shape, Dtype dtype, const char* op = nullptr);
/// Throws std::runtime_error for an in-place write to a tensor that requires grad in grad mode.
void check_inplace(const Tensor& self, const char* op);
/// Counts one in-place change to self's data (Tensor::version()), after the write.
void bump_version(const Tensor& self);
/// Throws std::invalid_argument naming `op` for a finite number beyond float32's range, which a
/// float32 tensor cannot take (PyTorch's "value cannot be converted to type float without overflow").
void check_fits_float32(Scalar value, const char* op);
}  // namespace detail

}  // namespace minigrad
