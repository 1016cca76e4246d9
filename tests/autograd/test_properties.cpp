// Property test of the broadcasting, shape and reduction ops: thousands of random cases.
//
// Each case draws random shapes (rank 0..4, sizes 0..4, so 0-d tensors and zero-size dims come up
// often) and random dims (negative and out-of-range ones included), calls one op, and compares it
// with a reference written here as plain index arithmetic on std::vector<double>: the same values
// (and, for float64 inputs, the same gradients), or the exception type the op throws for that
// mistake (std::invalid_argument or std::out_of_range, with a message starting with the op's
// name). Anything else fails: another exception type, a wrong value, or a crash under the
// sanitizers. Case i of a family is drawn from its own seed, printed with the case on failure.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/ops.hpp"

namespace {

using namespace minigrad;

constexpr uint32_t kSeed = 20240607;
constexpr int kCasesPerFamily = 1200;  // three families: 3600 cases, a few seconds under ASan

// ---- random draws (our own arithmetic on mt19937's output, so every standard library draws the
// same cases) -----------------------------------------------------------------------------------

int64_t draw(std::mt19937& rng, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(rng() % static_cast<uint32_t>(hi - lo + 1));
}

bool chance(std::mt19937& rng, double p) { return rng() < p * 4294967296.0; }

/// 0 one time in ten, 1 three times in ten (so broadcasting has work to do), else 2..4.
int64_t random_size(std::mt19937& rng) {
  const int64_t r = draw(rng, 0, 9);
  return r == 0 ? 0 : (r <= 3 ? 1 : draw(rng, 2, 4));
}

Shape random_shape(std::mt19937& rng) {
  Shape shape(static_cast<size_t>(draw(rng, 0, 4)));
  for (int64_t& size : shape) size = random_size(rng);
  return shape;
}

/// A shape that usually broadcasts to `out`: leading dims dropped, some sizes made 1, and now and
/// then one size redrawn, or the whole shape (which often makes it incompatible).
Shape broadcast_operand(std::mt19937& rng, const Shape& out) {
  if (chance(rng, 0.1)) return random_shape(rng);
  Shape shape(out.begin() + draw(rng, 0, static_cast<int64_t>(out.size())), out.end());
  for (int64_t& size : shape)
    if (chance(rng, 0.3)) size = 1;
  if (!shape.empty() && chance(rng, 0.1))
    shape[draw(rng, 0, static_cast<int64_t>(shape.size()) - 1)] = random_size(rng);
  return shape;
}

/// A dim for a tensor of `rank` dims: valid (-rank..rank-1, or -1..0 for a 0-d tensor) but for
/// one time in six, when it is one or two past either end.
int64_t random_dim(std::mt19937& rng, size_t rank) {
  const int64_t r = std::max<int64_t>(static_cast<int64_t>(rank), 1);
  if (!chance(rng, 1.0 / 6)) return draw(rng, -r, r - 1);
  return chance(rng, 0.5) ? r + draw(rng, 0, 1) : -r - 1 - draw(rng, 0, 1);
}

Dtype numeric_dtype(std::mt19937& rng) {  // float64 most often, so that gradients get checked
  const int64_t r = draw(rng, 0, 9);
  return r <= 5 ? kFloat64 : (r <= 7 ? kFloat32 : kInt64);
}

Dtype any_dtype(std::mt19937& rng) { return chance(rng, 0.1) ? kBool : numeric_dtype(rng); }

std::vector<double> random_values(std::mt19937& rng, int64_t n, bool boolean = false) {
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(static_cast<double>(boolean ? draw(rng, 0, 1) : draw(rng, -3, 3)));
  return values;
}

// ---- the reference: shapes and row-major index arithmetic --------------------------------------

/// A tensor as the reference sees it. Values are small integers, exact in every dtype.
struct Ref {
  Shape shape;
  Dtype dtype = kFloat64;
  std::vector<double> values;
};

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t size : shape) n *= size;
  return n;
}

Ref random_ref(std::mt19937& rng, const Shape& shape, Dtype dtype) {
  return {shape, dtype, random_values(rng, numel(shape), dtype == kBool)};
}

std::vector<int64_t> unravel(const Shape& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

int64_t ravel(const Shape& shape, const std::vector<int64_t>& index) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

/// dim as 0..positions-1 (negative counts from the end), or nothing when out of range.
std::optional<int64_t> wrap_dim(int64_t dim, int64_t positions) {
  if (dim < -positions || dim >= positions) return std::nullopt;
  return dim < 0 ? dim + positions : dim;
}

std::optional<int64_t> wrap_dim(int64_t dim, const Shape& shape) {  // a 0-d tensor takes 0 and -1
  return wrap_dim(dim, std::max<int64_t>(static_cast<int64_t>(shape.size()), 1));
}

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  const size_t ndim = std::max(a.size(), b.size());
  Shape out(ndim);
  for (size_t i = 0; i < ndim; ++i) {  // from the right
    const int64_t sa = i < a.size() ? a[a.size() - 1 - i] : 1, sb = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (sa != sb && sa != 1 && sb != 1) return std::nullopt;
    out[ndim - 1 - i] = sa == 1 ? sb : sa;
  }
  return out;
}

/// For each element of `out`, the offset of the element of a tensor of shape `in` broadcast to it.
std::vector<int64_t> broadcast_offsets(const Shape& in, const Shape& out) {
  std::vector<int64_t> offsets;
  for (int64_t i = 0; i < numel(out); ++i) {
    const std::vector<int64_t> o = unravel(out, i);
    std::vector<int64_t> index(in.size());
    for (size_t d = 0; d < in.size(); ++d) index[d] = in[d] == 1 ? 0 : o[out.size() - in.size() + d];
    offsets.push_back(ravel(in, index));
  }
  return offsets;
}

// ---- cases and outcomes -------------------------------------------------------------------------

enum class Expect { Values, InvalidArgument, OutOfRange };

const char* name_of(Expect e) {
  return e == Expect::Values ? "a result"
                             : (e == Expect::InvalidArgument ? "std::invalid_argument" : "std::out_of_range");
}

/// What the reference says a call gives: the outputs, or the exception. When `grads` is set (one
/// entry per input; empty for inputs without a gradient), backward(cotangent) through outputs[0]
/// must give those gradients.
struct Outcome {
  Expect expect = Expect::Values;
  std::vector<Ref> outputs;
  std::vector<double> cotangent;
  std::vector<std::optional<std::vector<double>>> grads;
};

Outcome fails(Expect e) {
  Outcome outcome;
  outcome.expect = e;
  return outcome;
}

struct Case {
  std::string op;           ///< the op's name, which its error messages start with
  std::string description;  ///< op, input shapes and dtypes, and the other arguments
  std::vector<Ref> inputs;
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> run;
  Outcome want;
};

template <typename... Parts>
std::string text(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

Case make_case(const std::string& op, std::vector<Ref> inputs, const std::string& args,
               std::function<std::vector<Tensor>(const std::vector<Tensor>&)> run) {
  std::ostringstream os;
  os << op << "(";
  for (size_t k = 0; k < inputs.size(); ++k)
    os << (k ? ", " : "") << inputs[k].shape << " " << inputs[k].dtype;
  os << (args.empty() || inputs.empty() ? "" : ", ") << args << ")";
  return {op, os.str(), std::move(inputs), std::move(run), {}};
}

/// The case, expecting exception `e`.
Case failing(Case c, Expect e) {
  c.want = fails(e);
  return c;
}

bool all_float64(const std::vector<Ref>& refs) {
  return std::all_of(refs.begin(), refs.end(), [](const Ref& r) { return r.dtype == kFloat64; });
}

/// An output element copied from element `offset` of input `input`.
struct Source {
  size_t input;
  int64_t offset;
};

/// Sources for every element of `out_shape`, from a function of its multi-index.
template <typename F>
std::vector<Source> sources_of(const Shape& out_shape, F source_of) {
  std::vector<Source> sources;
  for (int64_t i = 0; i < numel(out_shape); ++i) sources.push_back(source_of(unravel(out_shape, i)));
  return sources;
}

/// The outcome of an op that only moves elements: out[i] = the element sources[i] names. Each
/// input's gradient is the cotangent added back to where its elements went.
Outcome gathered(std::mt19937& rng, const std::vector<Ref>& inputs, const Shape& out_shape,
                 const std::vector<Source>& sources, Dtype dtype) {
  Outcome outcome;
  Ref out{out_shape, dtype, {}};
  for (const Source& s : sources) out.values.push_back(inputs[s.input].values[s.offset]);
  outcome.outputs.push_back(out);
  if (!all_float64(inputs)) return outcome;
  outcome.cotangent = random_values(rng, numel(out_shape));
  for (const Ref& input : inputs) outcome.grads.emplace_back(std::vector<double>(input.values.size(), 0.0));
  for (size_t i = 0; i < sources.size(); ++i)
    (*outcome.grads[sources[i].input])[sources[i].offset] += outcome.cotangent[i];
  return outcome;
}

/// torch.result_type of two tensors, from PyTorch's type-promotion rules: tensors with dims
/// promote among themselves, and a 0-d tensor beside them counts only if its category (bool <
/// integer < floating) is higher, in which case its own dtype wins.
Dtype result_dtype(const Ref& a, const Ref& b) {
  if (a.shape.empty() == b.shape.empty()) return promote_types(a.dtype, b.dtype);
  const Ref& dims = a.shape.empty() ? b : a;
  const Ref& zero_d = a.shape.empty() ? a : b;
  auto category = [](Dtype d) { return d == kBool ? 0 : (d == kInt64 ? 1 : 2); };
  return category(zero_d.dtype) > category(dims.dtype) ? zero_d.dtype : dims.dtype;
}

Dtype promoted(const std::vector<Ref>& refs) {
  Dtype dtype = refs.front().dtype;
  for (const Ref& r : refs) dtype = promote_types(dtype, r.dtype);
  return dtype;
}

// ---- running a case -------------------------------------------------------------------------------

/// Equal, with nan equal to nan, infinities equal only to themselves, and float32 rounding allowed.
bool same_value(double got, double want, Dtype dtype) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (std::isinf(got) || std::isinf(want)) return got == want;
  const double rtol = dtype == kFloat32 ? 1e-5 : 1e-12;
  return std::abs(got - want) <= rtol * (1.0 + std::abs(want));
}

bool matches(const Tensor& got, const Ref& want, const std::string& what) {
  if (!got.defined()) {
    BOOST_TEST(false, what << " is undefined");
    return false;
  }
  if (got.shape() != want.shape || got.dtype() != want.dtype) {
    BOOST_TEST(false, what << " is " << got.shape() << " " << got.dtype() << ", want " << want.shape << " "
                           << want.dtype);
    return false;
  }
  const std::vector<double> values = got.to_vector<double>();
  for (size_t i = 0; i < values.size(); ++i) {
    if (!same_value(values[i], want.values[i], want.dtype)) {
      BOOST_TEST(false, what << " element " << i << " is " << values[i] << ", want " << want.values[i]);
      return false;
    }
  }
  return true;
}

/// Runs the op on tensors made from the case's inputs and compares with the reference. One
/// assertion names the first difference; returns whether the case passed.
bool check_case(const Case& c) {
  const Outcome& want = c.want;
  std::vector<Tensor> inputs;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    inputs.push_back(tensor(c.inputs[k].values, c.inputs[k].shape, {.dtype = c.inputs[k].dtype}));
    if (!want.grads.empty() && want.grads[k]) inputs.back().requires_grad_();
  }
  std::vector<Tensor> got;
  Expect outcome = Expect::Values;
  std::string message;
  try {
    got = c.run(inputs);
  } catch (const std::out_of_range& e) {
    outcome = Expect::OutOfRange;
    message = e.what();
  } catch (const std::invalid_argument& e) {
    outcome = Expect::InvalidArgument;
    message = e.what();
  } catch (const std::exception& e) {
    BOOST_TEST(false, "threw another exception type: " << e.what());
    return false;
  }
  if (outcome != want.expect) {
    BOOST_TEST(false, "gave " << name_of(outcome) << " " << message << ", want " << name_of(want.expect));
    return false;
  }
  if (outcome != Expect::Values) {
    BOOST_TEST(message.rfind(c.op + ":", 0) == 0,
               "the message does not start with \"" << c.op << ":\": " << message);
    return message.rfind(c.op + ":", 0) == 0;
  }

  if (got.size() != want.outputs.size()) {
    BOOST_TEST(false, got.size() << " outputs, want " << want.outputs.size());
    return false;
  }
  for (size_t k = 0; k < got.size(); ++k)
    if (!matches(got[k], want.outputs[k], text("output ", k))) return false;
  if (want.grads.empty()) return true;

  try {
    got[0].backward(tensor(want.cotangent, got[0].shape(), {.dtype = kFloat64}));
  } catch (const std::exception& e) {
    BOOST_TEST(false, "backward threw: " << e.what());
    return false;
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (want.grads[k] && !matches(inputs[k].grad(), {c.inputs[k].shape, kFloat64, *want.grads[k]},
                                  text("gradient of input ", k)))
      return false;
  }
  return true;
}

struct Tally {
  int results = 0;
  int errors = 0;
  int gradients = 0;  ///< results whose gradients were checked too
};

/// Runs kCasesPerFamily cases, case i made by makers[i % size] from seed `seed + i`; stops after
/// 10 failing cases. Then checks that every op both returned results and threw, so the generator
/// cannot silently stop reaching either side.
void run_family(const std::vector<std::function<Case(std::mt19937&)>>& makers, uint32_t seed) {
  std::map<std::string, Tally> tallies;
  int failing = 0;
  for (int i = 0; i < kCasesPerFamily && failing < 10; ++i) {
    std::mt19937 rng(seed + static_cast<uint32_t>(i));
    const Case c = makers[static_cast<size_t>(i) % makers.size()](rng);
    bool passed = false;
    BOOST_TEST_CONTEXT("case " << i << " (seed " << seed + static_cast<uint32_t>(i)
                               << "): " << c.description) {
      passed = check_case(c);
    }
    failing += passed ? 0 : 1;
    (c.want.expect == Expect::Values ? tallies[c.op].results : tallies[c.op].errors) += 1;
    tallies[c.op].gradients += c.want.grads.empty() ? 0 : 1;
  }
  for (const auto& [op, tally] : tallies) {
    BOOST_TEST_MESSAGE(op << ": " << tally.results << " results (" << tally.gradients << " with gradients), "
                          << tally.errors << " errors");
    BOOST_TEST(tally.results >= 10, op << " returned a result in only " << tally.results << " cases");
    BOOST_TEST(tally.errors >= 1, op << " never reached an error case");
  }
}

// ---- broadcasting ops --------------------------------------------------------------------------------

struct Binary {
  const char* name;
  Tensor (*run)(const Tensor&, const Tensor&);
  double (*f)(double, double);
  /// The gradients of a and b at (x, y) for the cotangent v; null for comparisons, which have none.
  std::pair<double, double> (*grad)(double x, double y, double v);
  bool true_division = false;  ///< integers divide as float32, as Python's `/`
};

using Pair = std::pair<double, double>;
const Binary kBinaryOps[] = {
    {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); },
     [](double x, double y) { return x + y; },
     [](double, double, double v) {
       return Pair{v, v};
     }},
    {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); },
     [](double x, double y) { return x - y; },
     [](double, double, double v) {
       return Pair{v, -v};
     }},
    {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); },
     [](double x, double y) { return x * y; },
     [](double x, double y, double v) {
       return Pair{v * y, v * x};
     }},
    {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); },
     [](double x, double y) { return x / y; },
     [](double x, double y, double v) {
       return Pair{v / y, -(v * x) / (y * y)};
     },
     true},
    {"lt", lt, [](double x, double y) -> double { return x < y; }, nullptr},
    {"le", le, [](double x, double y) -> double { return x <= y; }, nullptr},
    {"gt", gt, [](double x, double y) -> double { return x > y; }, nullptr},
    {"ge", ge, [](double x, double y) -> double { return x >= y; }, nullptr},
    {"eq", eq, [](double x, double y) -> double { return x == y; }, nullptr},
    {"ne", ne, [](double x, double y) -> double { return x != y; }, nullptr},
};

/// a op b over random shapes and dtypes: result dtype by promotion (div of integers gives
/// float32, comparisons bool), as torch.add ... torch.ne.
Case binary_case(std::mt19937& rng, const Binary& op) {
  const Shape out = random_shape(rng);
  Ref a = random_ref(rng, broadcast_operand(rng, out), numeric_dtype(rng));
  Ref b = random_ref(rng, broadcast_operand(rng, out), numeric_dtype(rng));
  Case c = make_case(op.name, {a, b}, "", [run = op.run](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{run(in[0], in[1])};
  });
  const std::optional<Shape> shape = broadcast(a.shape, b.shape);
  if (!shape) {
    c.want = fails(Expect::InvalidArgument);
    return c;
  }
  Dtype dtype = op.grad ? result_dtype(a, b) : kBool;
  if (op.true_division && !is_floating_point(dtype)) dtype = kFloat32;
  const std::vector<int64_t> ia = broadcast_offsets(a.shape, *shape), ib = broadcast_offsets(b.shape, *shape);
  Ref result{*shape, dtype, {}};
  for (size_t i = 0; i < ia.size(); ++i) result.values.push_back(op.f(a.values[ia[i]], b.values[ib[i]]));
  c.want.outputs = {result};
  if (!op.grad || !all_float64({a, b})) return c;

  c.want.cotangent = random_values(rng, numel(*shape));
  std::vector<double> ga(a.values.size(), 0.0), gb(b.values.size(), 0.0);
  for (size_t i = 0; i < ia.size(); ++i) {
    const auto [da, db] = op.grad(a.values[ia[i]], b.values[ib[i]], c.want.cotangent[i]);
    ga[ia[i]] += da;
    gb[ib[i]] += db;
  }
  c.want.grads = {ga, gb};
  return c;
}

/// where(cond, a, b): all three broadcast; out = cond ? a : b (torch.where).
Case where_case(std::mt19937& rng) {
  const Shape out = random_shape(rng);
  const Ref cond = random_ref(rng, broadcast_operand(rng, out), kBool);
  const Ref a = random_ref(rng, broadcast_operand(rng, out), numeric_dtype(rng));
  const Ref b = random_ref(rng, broadcast_operand(rng, out), numeric_dtype(rng));
  Case c = make_case("where", {cond, a, b}, "", [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{where(in[0], in[1], in[2])};
  });
  const std::optional<Shape> ab = broadcast(a.shape, b.shape);
  const std::optional<Shape> shape = ab ? broadcast(cond.shape, *ab) : std::nullopt;
  if (!shape) {
    c.want = fails(Expect::InvalidArgument);
    return c;
  }
  const auto ic = broadcast_offsets(cond.shape, *shape), ia = broadcast_offsets(a.shape, *shape),
             ib = broadcast_offsets(b.shape, *shape);
  Ref result{*shape, result_dtype(a, b), {}};
  for (size_t i = 0; i < ic.size(); ++i)
    result.values.push_back(cond.values[ic[i]] ? a.values[ia[i]] : b.values[ib[i]]);
  c.want.outputs = {result};
  if (!all_float64({a, b})) return c;

  c.want.cotangent = random_values(rng, numel(*shape));
  std::vector<double> ga(a.values.size(), 0.0), gb(b.values.size(), 0.0);
  for (size_t i = 0; i < ic.size(); ++i) (cond.values[ic[i]] ? ga[ia[i]] : gb[ib[i]]) += c.want.cotangent[i];
  c.want.grads = {std::nullopt, ga, gb};
  return c;
}

/// masked_fill(a, mask, value): a and the mask broadcast to the result's shape, as torch's
/// out-of-place masked_fill; a's gradient sums the cotangent where the mask is false.
Case masked_fill_case(std::mt19937& rng) {
  const Ref a = random_ref(rng, random_shape(rng), numeric_dtype(rng));
  const Shape mask_shape = chance(rng, 0.15) ? random_shape(rng) : broadcast_operand(rng, a.shape);
  const Ref mask = random_ref(rng, mask_shape, kBool);
  const auto value = static_cast<double>(draw(rng, -9, 9));
  Case c = make_case("masked_fill", {a, mask}, text("value ", value), [value](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{masked_fill(in[0], in[1], value)};
  });
  const std::optional<Shape> shape = broadcast(a.shape, mask.shape);
  if (!shape) {
    c.want = fails(Expect::InvalidArgument);
    return c;
  }
  const auto ia = broadcast_offsets(a.shape, *shape), im = broadcast_offsets(mask.shape, *shape);
  Ref result{*shape, a.dtype, {}};
  for (size_t i = 0; i < im.size(); ++i)
    result.values.push_back(mask.values[im[i]] ? value : a.values[ia[i]]);
  c.want.outputs = {result};
  if (a.dtype != kFloat64) return c;

  c.want.cotangent = random_values(rng, numel(*shape));
  std::vector<double> ga(a.values.size(), 0.0);
  for (size_t i = 0; i < im.size(); ++i)
    if (!mask.values[im[i]]) ga[ia[i]] += c.want.cotangent[i];
  c.want.grads = {ga, std::nullopt};
  return c;
}

// ---- shape ops: each output element is one input element, so the reference is a list of sources

std::vector<Source> in_order(int64_t n) {
  std::vector<Source> sources;
  for (int64_t i = 0; i < n; ++i) sources.push_back({0, i});
  return sources;
}

/// The same elements arranged otherwise (sizes shuffled, 1s added or dropped, two sizes merged),
/// then perhaps a -1, a second -1, or a wrong or negative size.
Shape reshape_target(std::mt19937& rng, const Shape& shape) {
  Shape target;
  for (int64_t size : shape)
    if (size != 1 || chance(rng, 0.5)) target.push_back(size);
  while (target.size() < 5 && chance(rng, 0.3))
    target.insert(target.begin() + draw(rng, 0, static_cast<int64_t>(target.size())), 1);
  for (int64_t i = static_cast<int64_t>(target.size()) - 1; i > 0; --i)
    std::swap(target[i], target[draw(rng, 0, i)]);
  if (target.size() >= 2 && chance(rng, 0.3)) {
    target[0] *= target[1];
    target.erase(target.begin() + 1);
  }
  const auto any = [&] { return draw(rng, 0, static_cast<int64_t>(target.size()) - 1); };
  if (!target.empty() && chance(rng, 0.5)) target[any()] = -1;
  if (!target.empty() && chance(rng, 0.1)) target[any()] = -1;
  if (!target.empty() && chance(rng, 0.1)) target[any()] = draw(rng, -2, 4);
  return target;
}

/// reshape / view (torch.reshape): one -1 is inferred; it cannot be inferred from a zero product.
Case reshape_case(std::mt19937& rng) {
  const Ref a = random_ref(rng, random_shape(rng), any_dtype(rng));
  const Shape target = reshape_target(rng, a.shape);
  const bool as_view = chance(rng, 0.5);
  Case c = make_case(as_view ? "view" : "reshape", {a}, text("shape ", target),
                     [=](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{as_view ? view(in[0], target) : reshape(in[0], target)};
                     });
  Shape out = target;
  int64_t known = 1, inferred = -1;
  for (size_t d = 0; d < target.size(); ++d) {
    if (target[d] < -1 || (target[d] == -1 && inferred >= 0))
      return failing(std::move(c), Expect::InvalidArgument);
    if (target[d] == -1)
      inferred = static_cast<int64_t>(d);
    else
      known *= target[d];
  }
  const int64_t n = numel(a.shape);
  if (inferred >= 0 && known != 0 && n % known == 0) out[inferred] = n / known;
  if (numel(out) != n || (inferred >= 0 && known == 0)) return failing(std::move(c), Expect::InvalidArgument);
  c.want = gathered(rng, {a}, out, in_order(n), a.dtype);
  return c;
}

/// flatten(start, end) (torch.flatten): a 0-d tensor becomes [1].
Case flatten_case(std::mt19937& rng) {
  const Ref a = random_ref(rng, random_shape(rng), any_dtype(rng));
  const int64_t start = random_dim(rng, a.shape.size()), end = random_dim(rng, a.shape.size());
  Case c = make_case(
      "flatten", {a}, text("start ", start, ", end ", end),
      [=](const std::vector<Tensor>& in) { return std::vector<Tensor>{flatten(in[0], start, end)}; });
  const auto s = wrap_dim(start, a.shape), e = wrap_dim(end, a.shape);
  if (!s || !e) return failing(std::move(c), Expect::OutOfRange);
  if (*s > *e) return failing(std::move(c), Expect::InvalidArgument);
  Shape out{1};
  if (!a.shape.empty()) {
    out.assign(a.shape.begin(), a.shape.begin() + *s);
    out.push_back(numel(Shape(a.shape.begin() + *s, a.shape.begin() + *e + 1)));
    out.insert(out.end(), a.shape.begin() + *e + 1, a.shape.end());
  }
  c.want = gathered(rng, {a}, out, in_order(numel(a.shape)), a.dtype);
  return c;
}

/// unsqueeze(dim): a size-1 dim inserted at one of rank + 1 positions.
Case unsqueeze_case(std::mt19937& rng) {
  const Ref a = random_ref(rng, random_shape(rng), any_dtype(rng));
  const auto rank = static_cast<int64_t>(a.shape.size());
  const int64_t dim = draw(rng, -rank - 2, rank + 1);
  Case c = make_case("unsqueeze", {a}, text("dim ", dim), [=](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{unsqueeze(in[0], dim)};
  });
  const auto d = wrap_dim(dim, rank + 1);
  if (!d) return failing(std::move(c), Expect::OutOfRange);
  Shape out = a.shape;
  out.insert(out.begin() + *d, 1);
  c.want = gathered(rng, {a}, out, in_order(numel(a.shape)), a.dtype);
  return c;
}

/// squeeze() drops every size-1 dim; squeeze(dim) drops that dim if its size is 1.
Case squeeze_case(std::mt19937& rng) {
  const Ref a = random_ref(rng, random_shape(rng), any_dtype(rng));
  const bool all = chance(rng, 0.3);
  const int64_t dim = random_dim(rng, a.shape.size());
  Case c = make_case("squeeze", {a}, all ? "" : text("dim ", dim), [=](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{all ? squeeze(in[0]) : squeeze(in[0], dim)};
  });
  Shape out;
  if (all) {
    for (int64_t size : a.shape)
      if (size != 1) out.push_back(size);
  } else {
    const auto d = wrap_dim(dim, a.shape);
    if (!d) return failing(std::move(c), Expect::OutOfRange);
    out = a.shape;
    if (!out.empty() && out[*d] == 1) out.erase(out.begin() + *d);
  }
  c.want = gathered(rng, {a}, out, in_order(numel(a.shape)), a.dtype);
  return c;
}

/// permute(dims): out.shape[k] = a.shape[dims[k]]; dims must name every dim once.
Case permute_case(std::mt19937& rng) {
  const Ref a = random_ref(rng, random_shape(rng), any_dtype(rng));
  const auto rank = static_cast<int64_t>(a.shape.size());
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) dims[i] = i;
  for (int64_t i = rank - 1; i > 0; --i) std::swap(dims[i], dims[draw(rng, 0, i)]);
  for (int64_t& d : dims)
    if (chance(rng, 0.3)) d -= rank;
  if (rank > 0 && chance(rng, 0.15)) dims[draw(rng, 0, rank - 1)] = random_dim(rng, a.shape.size());
  if (chance(rng, 0.08)) {
    if (rank > 0 && chance(rng, 0.5))
      dims.pop_back();
    else
      dims.push_back(draw(rng, 0, rank));
  }
  Case c = make_case("permute", {a}, text("dims ", Shape(dims)), [=](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{permute(in[0], dims)};
  });
  if (static_cast<int64_t>(dims.size()) != rank) return failing(std::move(c), Expect::InvalidArgument);
  std::vector<int64_t> order;
  for (int64_t dim : dims) {
    const auto d = wrap_dim(dim, a.shape);
    if (!d) return failing(std::move(c), Expect::OutOfRange);
    if (std::find(order.begin(), order.end(), *d) != order.end())
      return failing(std::move(c), Expect::InvalidArgument);
    order.push_back(*d);
  }
  Shape out;
  for (int64_t d : order) out.push_back(a.shape[d]);
  c.want = gathered(rng, {a}, out,
                    sources_of(out,
                               [&](const std::vector<int64_t>& o) {
                                 std::vector<int64_t> index(o.size());
                                 for (size_t k = 0; k < o.size(); ++k) index[order[k]] = o[k];
                                 return Source{0, ravel(a.shape, index)};
                               }),
                    a.dtype);
  return c;
}

/// transpose(dim0, dim1): the two dims swapped (a 0-d tensor takes dims 0 and -1 and stays).
Case transpose_case(std::mt19937& rng) {
  const Ref a = random_ref(rng, random_shape(rng), any_dtype(rng));
  const int64_t dim0 = random_dim(rng, a.shape.size()), dim1 = random_dim(rng, a.shape.size());
  Case c = make_case("transpose", {a}, text("dims ", dim0, ", ", dim1), [=](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{transpose(in[0], dim0, dim1)};
  });
  const auto d0 = wrap_dim(dim0, a.shape), d1 = wrap_dim(dim1, a.shape);
  if (!d0 || !d1) return failing(std::move(c), Expect::OutOfRange);
  Shape out = a.shape;
  if (!out.empty()) std::swap(out[*d0], out[*d1]);
  c.want = gathered(rng, {a}, out,
                    sources_of(out,
                               [&](std::vector<int64_t> o) {
                                 if (!o.empty()) std::swap(o[*d0], o[*d1]);
                                 return Source{0, ravel(a.shape, o)};
                               }),
                    a.dtype);
  return c;
}

/// select(dim, index): one entry of the dim, the dim removed; negative indices count from the end.
Case select_case(std::mt19937& rng) {
  const Ref a = random_ref(rng, random_shape(rng), any_dtype(rng));
  const int64_t dim = random_dim(rng, a.shape.size());
  const auto d = wrap_dim(dim, a.shape);
  const int64_t size = d && !a.shape.empty() ? a.shape[*d] : 1;
  const int64_t index = draw(rng, -size - 1, size);
  Case c = make_case("select", {a}, text("dim ", dim, ", index ", index), [=](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{select(in[0], dim, index)};
  });
  if (a.shape.empty()) return failing(std::move(c), Expect::InvalidArgument);
  if (!d || index < -size || index >= size) return failing(std::move(c), Expect::OutOfRange);
  Shape out = a.shape;
  out.erase(out.begin() + *d);
  c.want = gathered(rng, {a}, out,
                    sources_of(out,
                               [&](std::vector<int64_t> o) {
                                 o.insert(o.begin() + *d, index < 0 ? index + size : index);
                                 return Source{0, ravel(a.shape, o)};
                               }),
                    a.dtype);
  return c;
}

/// slice(dim, start, end): entries start..end-1 as Python's a[start:end] (negatives count from
/// the end, both clamped to the size, empty when start >= end).
Case slice_case(std::mt19937& rng) {
  const Ref a = random_ref(rng, random_shape(rng), any_dtype(rng));
  const int64_t dim = random_dim(rng, a.shape.size());
  const auto d = wrap_dim(dim, a.shape);
  const int64_t size = d && !a.shape.empty() ? a.shape[*d] : 1;
  const int64_t start = draw(rng, -size - 2, size + 2), end = draw(rng, -size - 2, size + 2);
  Case c = make_case(
      "slice", {a}, text("dim ", dim, ", start ", start, ", end ", end),
      [=](const std::vector<Tensor>& in) { return std::vector<Tensor>{slice(in[0], dim, start, end)}; });
  if (a.shape.empty()) return failing(std::move(c), Expect::InvalidArgument);
  if (!d) return failing(std::move(c), Expect::OutOfRange);
  const auto clamp_index = [size](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + size : i, 0, size); };
  const int64_t from = clamp_index(start), to = std::max(from, clamp_index(end));
  Shape out = a.shape;
  out[*d] = to - from;
  c.want = gathered(rng, {a}, out,
                    sources_of(out,
                               [&](std::vector<int64_t> o) {
                                 o[*d] += from;
                                 return Source{0, ravel(a.shape, o)};
                               }),
                    a.dtype);
  return c;
}

/// Zero to three tensors of one shape, now and then one of another shape or dtype.
std::vector<Ref> tensor_list(std::mt19937& rng, const Shape& base, const std::function<Shape(Shape)>& vary) {
  const int64_t count = chance(rng, 0.03) ? 0 : draw(rng, 1, 3);
  const Dtype dtype = any_dtype(rng);
  const bool mixed = chance(rng, 0.2);
  std::vector<Ref> refs;
  for (int64_t k = 0; k < count; ++k) {
    Shape shape = vary(base);
    if (chance(rng, 0.08)) shape = random_shape(rng);
    refs.push_back(random_ref(rng, shape, mixed ? any_dtype(rng) : dtype));
  }
  return refs;
}

/// cat(tensors, dim): joined along an existing dim; no 0-d tensors; dtypes promote (torch.cat).
Case cat_case(std::mt19937& rng) {
  const Shape base = random_shape(rng);
  const int64_t dim = random_dim(rng, base.size());
  const auto base_dim = wrap_dim(dim, base);
  const std::vector<Ref> refs = tensor_list(rng, base, [&](Shape s) {
    if (!s.empty() && base_dim) s[*base_dim] = draw(rng, 0, 3);
    return s;
  });
  Case c = make_case("cat", refs, text("dim ", dim),
                     [=](const std::vector<Tensor>& in) { return std::vector<Tensor>{cat(in, dim)}; });
  if (refs.empty()) return failing(std::move(c), Expect::InvalidArgument);
  for (const Ref& r : refs)
    if (r.shape.empty()) return failing(std::move(c), Expect::InvalidArgument);
  const auto d = wrap_dim(dim, refs[0].shape);
  if (!d) return failing(std::move(c), Expect::OutOfRange);
  Shape out = refs[0].shape;
  out[*d] = 0;
  for (const Ref& r : refs) {
    Shape other = r.shape;
    if (other.size() == out.size()) other[*d] = 0;
    if (other != out) return failing(std::move(c), Expect::InvalidArgument);
  }
  for (const Ref& r : refs) out[*d] += r.shape[*d];
  c.want = gathered(rng, refs, out,
                    sources_of(out,
                               [&](std::vector<int64_t> o) {
                                 size_t k = 0;
                                 while (o[*d] >= refs[k].shape[*d]) o[*d] -= refs[k++].shape[*d];
                                 return Source{k, ravel(refs[k].shape, o)};
                               }),
                    promoted(refs));
  return c;
}

/// stack(tensors, dim): equal shapes joined along a new dim at one of rank + 1 positions.
Case stack_case(std::mt19937& rng) {
  const std::vector<Ref> refs = tensor_list(rng, random_shape(rng), [](Shape s) { return s; });
  const int64_t rank = refs.empty() ? 0 : static_cast<int64_t>(refs[0].shape.size());
  const int64_t dim = draw(rng, -rank - 2, rank + 1);
  Case c = make_case("stack", refs, text("dim ", dim),
                     [=](const std::vector<Tensor>& in) { return std::vector<Tensor>{stack(in, dim)}; });
  if (refs.empty()) return failing(std::move(c), Expect::InvalidArgument);
  for (const Ref& r : refs)
    if (r.shape != refs[0].shape) return failing(std::move(c), Expect::InvalidArgument);
  const auto d = wrap_dim(dim, rank + 1);
  if (!d) return failing(std::move(c), Expect::OutOfRange);
  Shape out = refs[0].shape;
  out.insert(out.begin() + *d, static_cast<int64_t>(refs.size()));
  c.want = gathered(rng, refs, out,
                    sources_of(out,
                               [&](std::vector<int64_t> o) {
                                 const auto k = static_cast<size_t>(o[*d]);
                                 o.erase(o.begin() + *d);
                                 return Source{k, ravel(refs[k].shape, o)};
                               }),
                    promoted(refs));
  return c;
}

// ---- reductions: each output element comes from one lane of input elements ---------------------

enum class Reduce { Sum, Mean, Max, Min, Argmax, Softmax, LogSoftmax };
const char* const kReduceNames[] = {"sum", "mean", "max", "min", "argmax", "softmax", "log_softmax"};

/// The lanes of a reduction over `dim` (nothing: over all elements), one per output element, each
/// the offsets of its input elements; and the output shape (a 0-d input stays 0-d).
std::pair<Shape, std::vector<std::vector<int64_t>>> lanes_of(const Shape& shape, std::optional<int64_t> dim,
                                                             bool keepdim) {
  std::vector<std::vector<int64_t>> lanes;
  if (!dim || shape.empty()) {
    lanes.emplace_back();
    for (int64_t i = 0; i < numel(shape); ++i) lanes.back().push_back(i);
    return {Shape{}, lanes};
  }
  Shape kept = shape;
  kept[*dim] = 1;
  for (int64_t i = 0; i < numel(kept); ++i) {
    std::vector<int64_t> index = unravel(kept, i);
    lanes.emplace_back();
    for (index[*dim] = 0; index[*dim] < shape[*dim]; ++index[*dim])
      lanes.back().push_back(ravel(shape, index));
  }
  if (!keepdim) kept.erase(kept.begin() + *dim);
  return {kept, lanes};
}

/// What the reduction gives, as PyTorch: sum of bool/int64 is int64; mean and the softmaxes take
/// floats only; max/min/argmax need a non-empty reduced dim, argmax a non-bool input; max/min
/// pick the first extreme (over all elements, ties share the gradient); mean of nothing is nan.
Outcome reduction_outcome(std::mt19937& rng, const Ref& a, Reduce op, std::optional<int64_t> dim,
                          bool keepdim) {
  if (op == Reduce::Argmax && a.dtype == kBool) return fails(Expect::InvalidArgument);
  const std::optional<int64_t> d = dim ? wrap_dim(*dim, a.shape) : std::nullopt;
  if (dim && !d) return fails(Expect::OutOfRange);
  const bool floating_only = op == Reduce::Mean || op == Reduce::Softmax || op == Reduce::LogSoftmax;
  if (floating_only && !is_floating_point(a.dtype)) return fails(Expect::InvalidArgument);
  const bool extreme = op == Reduce::Max || op == Reduce::Min || op == Reduce::Argmax;
  const bool empty_lanes = d && !a.shape.empty() ? a.shape[*d] == 0 : numel(a.shape) == 0;
  if (extreme && empty_lanes) return fails(Expect::InvalidArgument);

  const auto [out_shape, lanes] = lanes_of(a.shape, d, keepdim);
  const bool per_element = op == Reduce::Softmax || op == Reduce::LogSoftmax;
  Outcome outcome;
  const Dtype dtype =
      op == Reduce::Argmax ? kInt64 : (op == Reduce::Sum && !is_floating_point(a.dtype) ? kInt64 : a.dtype);
  Ref values{per_element ? a.shape : out_shape, dtype,
             std::vector<double>(per_element ? a.values.size() : lanes.size())};
  Ref indices{out_shape, kInt64, std::vector<double>(lanes.size())};
  const bool with_grads = a.dtype == kFloat64 && op != Reduce::Argmax;
  if (with_grads) outcome.cotangent = random_values(rng, static_cast<int64_t>(values.values.size()));
  const std::vector<double>& v = outcome.cotangent;
  std::vector<double> grad(a.values.size(), 0.0);

  for (size_t lane = 0; lane < lanes.size(); ++lane) {
    std::vector<double> x;
    for (int64_t offset : lanes[lane]) x.push_back(a.values[offset]);
    const auto n = static_cast<int64_t>(x.size());
    double total = 0;
    for (double value : x) total += value;
    if (op == Reduce::Sum || op == Reduce::Mean) {
      const double divisor = op == Reduce::Mean ? static_cast<double>(n) : 1.0;
      values.values[lane] = total / divisor;
      for (int64_t k = 0; k < n && with_grads; ++k) grad[lanes[lane][k]] += v[lane] / divisor;
    } else if (extreme) {
      int64_t best = 0, ties = 0;
      for (int64_t k = 1; k < n; ++k)
        if (op == Reduce::Min ? x[k] < x[best] : x[k] > x[best]) best = k;
      for (int64_t k = 0; k < n; ++k) ties += x[k] == x[best] ? 1 : 0;
      values.values[lane] = op == Reduce::Argmax ? static_cast<double>(best) : x[best];
      indices.values[lane] = static_cast<double>(best);
      for (int64_t k = 0; k < n && with_grads; ++k) {
        if (!dim && x[k] == x[best]) grad[lanes[lane][k]] += v[lane] / static_cast<double>(ties);
        if (dim && k == best) grad[lanes[lane][k]] += v[lane];
      }
    } else if (n > 0) {  // softmax, log_softmax: y_k = e^(x_k - m) / sum_j e^(x_j - m), or its log
      const double m = *std::max_element(x.begin(), x.end());
      double sum_exp = 0;
      for (double value : x) sum_exp += std::exp(value - m);
      double sum_vy = 0, sum_v = 0;
      std::vector<double> y;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t at = lanes[lane][k];
        y.push_back(op == Reduce::Softmax ? std::exp(x[k] - m) / sum_exp : x[k] - m - std::log(sum_exp));
        values.values[at] = y[k];
        sum_vy += with_grads ? v[at] * y[k] : 0.0;
        sum_v += with_grads ? v[at] : 0.0;
      }
      for (int64_t k = 0; k < n && with_grads; ++k) {
        const int64_t at = lanes[lane][k];
        grad[at] = op == Reduce::Softmax ? y[k] * (v[at] - sum_vy) : v[at] - std::exp(y[k]) * sum_v;
      }
    }
  }
  outcome.outputs.push_back(values);
  if ((op == Reduce::Max || op == Reduce::Min) && dim) outcome.outputs.push_back(indices);
  if (with_grads) outcome.grads = {grad};
  return outcome;
}

/// One reduction over all elements or over a random dim, keepdim true or false.
Case reduction_case(std::mt19937& rng, Reduce op) {
  const Ref a = random_ref(rng, random_shape(rng), any_dtype(rng));
  const bool softmax_like = op == Reduce::Softmax || op == Reduce::LogSoftmax;
  const bool over_all = !softmax_like && chance(rng, 0.3);
  const int64_t dim = random_dim(rng, a.shape.size());
  const bool keepdim = !softmax_like && chance(rng, 0.5);
  const std::string args =
      over_all ? "" : (softmax_like ? text("dim ", dim) : text("dim ", dim, ", keepdim ", keepdim));
  Case c = make_case(kReduceNames[static_cast<int>(op)], {a}, args, [=](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    switch (op) {
      case Reduce::Sum:
        return std::vector<Tensor>{over_all ? sum(x) : sum(x, dim, keepdim)};
      case Reduce::Mean:
        return std::vector<Tensor>{over_all ? mean(x) : mean(x, dim, keepdim)};
      case Reduce::Argmax:
        return std::vector<Tensor>{over_all ? argmax(x) : argmax(x, dim, keepdim)};
      case Reduce::Softmax:
        return std::vector<Tensor>{softmax(x, dim)};
      case Reduce::LogSoftmax:
        return std::vector<Tensor>{log_softmax(x, dim)};
      default:
        break;
    }
    if (over_all) return std::vector<Tensor>{op == Reduce::Max ? max(x) : min(x)};
    const auto [values, indices] = op == Reduce::Max ? max(x, dim, keepdim) : min(x, dim, keepdim);
    return std::vector<Tensor>{values, indices};
  });
  c.want = reduction_outcome(rng, a, op, over_all ? std::nullopt : std::optional<int64_t>(dim), keepdim);
  return c;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(properties)

BOOST_AUTO_TEST_CASE(broadcasting_ops_match_the_reference_or_throw_the_documented_error) {
  std::vector<std::function<Case(std::mt19937&)>> makers;
  for (const Binary& op : kBinaryOps)
    makers.emplace_back([&op](std::mt19937& rng) { return binary_case(rng, op); });
  makers.emplace_back(where_case);
  makers.emplace_back(masked_fill_case);
  run_family(makers, kSeed);
}

BOOST_AUTO_TEST_CASE(shape_ops_match_the_reference_or_throw_the_documented_error) {
  run_family({reshape_case, flatten_case, unsqueeze_case, squeeze_case, permute_case, transpose_case,
              select_case, slice_case, cat_case, stack_case},
             kSeed + 100000);
}

BOOST_AUTO_TEST_CASE(reductions_match_the_reference_or_throw_the_documented_error) {
  std::vector<std::function<Case(std::mt19937&)>> makers;
  for (int op = 0; op <= static_cast<int>(Reduce::LogSoftmax); ++op)
    makers.emplace_back([op](std::mt19937& rng) { return reduction_case(rng, static_cast<Reduce>(op)); });
  run_family(makers, kSeed + 200000);
}

BOOST_AUTO_TEST_SUITE_END()
