// Generator: PyTorch's CPU random numbers rebuilt draw for draw on a Mersenne Twister kept as
// torch keeps it (its state as a tensor: random_state.cpp).
// Each fill below states the rule PyTorch 1.13.1 follows and the file it lives in (paths under
// aten/src/ATen/). Every rule was checked against the installed torch: see
// tools/reference/random_reference.py and tests/autograd/test_random.cpp.
// Float normals with n >= 16 copy PyTorch's AVX2 kernel operation by operation (Cephes log and
// sincos in float): libm's logf/cosf, which PyTorch uses on CPUs without AVX2, land up to 3e-6
// away. PyTorch's kernels are built with FMA, so every x * a + b here is one std::fma: that
// makes all fills bit-identical to torch (checked on a million values per fill).
#include "autograd/random.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "autograd/random_engine.hpp"

namespace minigrad {

namespace {

template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream message;
  (message << ... << parts);
  throw std::invalid_argument(message.str());
}

void check_count(const char* op, int64_t n) {
  if (n < 0) {
    fail(op, ": number of elements (", n, ") must be non-negative");
  }
}

// Uniform in [0, 1) (core/TransformationHelper.h, uniform_real): keep as many low bits of the
// draw as the type has mantissa digits (24 for float, 53 for double) and scale by 2^-digits.
// float takes a 32-bit draw, double a 64-bit one (core/DistributionsHelper.h).
float unit_float(uint32_t bits) { return static_cast<float>(bits & 0xFFFFFFu) * (1.0f / 16777216.0f); }

double unit_double(uint64_t bits) {
  return static_cast<double>(bits & 0x1FFFFFFFFFFFFFull) * (1.0 / 9007199254740992.0);
}

template <typename T>
T draw_unit(Generator& gen) {
  if constexpr (std::is_same_v<T, float>) {
    return unit_float(gen.random());
  } else {
    return unit_double(gen.random64());
  }
}

// ---- float Box-Muller for 16 values, as PyTorch's AVX2 kernel computes it -------------------
// native/cpu/DistributionTemplates.h (normal_fill_16_AVX2) calls log256_ps and sincos256_ps from
// native/cpu/avx_mathfun.h: Cephes polynomials in float. That file is compiled with FMA enabled,
// so the compiler fuses a product into the sum that uses it; std::fma below marks the places it
// does (plain arithmetic there is 1-2 ulp off for about a third of the values).

// Natural log of x in (0, 1]: split x = m * 2^e with m in [sqrt(1/2), sqrt(2)), then a degree-9
// polynomial in m - 1.
float cephes_log(float x) {
  constexpr float sqrt_half = 0.707106781186547524;
  constexpr float p[9] = {7.0376836292E-2,  -1.1514610310E-1, 1.1676998740E-1,
                          -1.2420140846E-1, 1.4249322787E-1,  -1.6668057665E-1,
                          2.0000714765E-1,  -2.4999993993E-1, 3.3333331174E-1};
  constexpr float q1 = -2.12194440e-4;
  constexpr float q2 = 0.693359375;

  const auto bits = std::bit_cast<uint32_t>(x);
  float e = static_cast<float>(static_cast<int32_t>(bits >> 23) - 0x7f) + 1.0f;
  float m = std::bit_cast<float>((bits & ~0x7f800000u) | std::bit_cast<uint32_t>(0.5f));
  const bool small = m < sqrt_half;  // m in [0.5, 1): move it to [sqrt(1/2), sqrt(2))
  const float extra = small ? m : 0.0f;
  m = m - 1.0f;
  e = e - (small ? 1.0f : 0.0f);
  m = m + extra;

  const float z = m * m;
  float y = p[0];
  for (int k = 1; k < 9; ++k) {
    y = std::fma(y, m, p[k]);
  }
  y = y * m;
  y = std::fma(y, z, e * q1);
  y = std::fma(-z, 0.5f, y);
  return std::fma(e, q2, m + y);
}

// sin and cos of x >= 0: reduce x by multiples of pi/4 (in three parts for precision), then
// pick the sine or cosine polynomial and the sign by the octant j.
void cephes_sincos(float x, float& sin_x, float& cos_x) {
  constexpr float four_over_pi = 1.27323954473516;
  constexpr float dp1 = -0.78515625, dp2 = -2.4187564849853515625e-4, dp3 = -3.77489497744594108e-8;
  constexpr float sin_p0 = -1.9515295891E-4, sin_p1 = 8.3321608736E-3, sin_p2 = -1.6666654611E-1;
  constexpr float cos_p0 = 2.443315711809948E-005, cos_p1 = -1.388731625493765E-003,
                  cos_p2 = 4.166664568298827E-002;

  int32_t j = static_cast<int32_t>(x * four_over_pi);  // truncation, as cvttps
  j = (j + 1) & ~1;
  const float y = static_cast<float>(j);
  const bool negate_sin = (j & 4) != 0;
  const bool negate_cos = ((j - 2) & 4) == 0;
  const bool sin_uses_sin_poly = (j & 2) == 0;

  x = std::fma(y, dp1, x);
  x = std::fma(y, dp2, x);
  x = std::fma(y, dp3, x);
  const float z = x * x;

  float cos_poly = std::fma(cos_p0, z, cos_p1);
  cos_poly = std::fma(cos_poly, z, cos_p2);
  cos_poly = cos_poly * z;
  cos_poly = std::fma(cos_poly, z, -(z * 0.5f));
  cos_poly = cos_poly + 1.0f;

  float sin_poly = std::fma(sin_p0, z, sin_p1);
  sin_poly = std::fma(sin_poly, z, sin_p2);
  sin_poly = sin_poly * z;
  sin_poly = std::fma(sin_poly, x, x);

  sin_x = sin_uses_sin_poly ? sin_poly : cos_poly;
  cos_x = sin_uses_sin_poly ? cos_poly : sin_poly;
  if (negate_sin) sin_x = -sin_x;
  if (negate_cos) cos_x = -cos_x;
}

// Turns 16 uniforms in place into 16 normals: pair j (j < 8) uses u1 = 1 - data[j] for the
// radius and u2 = data[j + 8] for the angle; cos goes to data[j], sin to data[j + 8].
void box_muller_16(float* data, float mean, float std) {
  const float two_pi = static_cast<float>(2.0 * std::numbers::pi);
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - data[j];
    const float u2 = data[j + 8];
    const float radius = std::sqrt(-2.0f * cephes_log(u1));
    float sin_theta = 0.0f;
    float cos_theta = 0.0f;
    cephes_sincos(two_pi * u2, sin_theta, cos_theta);
    data[j] = std::fma(radius * cos_theta, std, mean);
    data[j + 8] = std::fma(radius * sin_theta, std, mean);
  }
}

// The same for double (normal_fill_16 in native/cpu/DistributionTemplates.h), with libm.
void box_muller_16(double* data, double mean, double std) {
  for (int j = 0; j < 8; ++j) {
    const double u1 = 1.0 - data[j];
    const double u2 = data[j + 8];
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double theta = 2.0 * std::numbers::pi * u2;
    data[j] = std::fma(radius * std::cos(theta), std, mean);
    data[j + 8] = std::fma(radius * std::sin(theta), std, mean);
  }
}

// normal_fill (native/cpu/DistributionTemplates.h), used when n >= 16: first n uniforms, then
// Box-Muller on each full block of 16; if n is not a multiple of 16, draw 16 fresh uniforms
// into the last 16 slots (overwriting normals already made there) and transform them again.
template <typename T>
void normal_fill(Generator& gen, T* data, int64_t n, T mean, T std) {
  for (int64_t i = 0; i < n; ++i) {
    data[i] = draw_unit<T>(gen);
  }
  for (int64_t i = 0; i + 16 <= n; i += 16) {
    box_muller_16(data + i, mean, std);
  }
  if (n % 16 != 0) {
    T* last = data + n - 16;
    for (int i = 0; i < 16; ++i) {
      last[i] = draw_unit<T>(gen);
    }
    box_muller_16(last, mean, std);
  }
}

}  // namespace

// ---- construction and raw draws ------------------------------------------------------------

Generator::Generator(uint64_t seed) : engine_(std::make_unique<Engine>()) { manual_seed(seed); }

// A copy of a moved-from generator is moved-from too (no engine), rather than a null dereference.
Generator::Generator(const Generator& other)
    : engine_(other.engine_ ? std::make_unique<Engine>(*other.engine_) : nullptr),
      seed_(other.seed_),
      next_normal_(other.next_normal_),
      next_float_normal_(other.next_float_normal_) {}

Generator& Generator::operator=(const Generator& other) {
  if (this != &other) {
    engine_ = other.engine_ ? std::make_unique<Engine>(*other.engine_) : nullptr;
    seed_ = other.seed_;
    next_normal_ = other.next_normal_;
    next_float_normal_ = other.next_float_normal_;
  }
  return *this;
}

Generator::~Generator() = default;
Generator::Generator(Generator&& other) noexcept = default;
Generator& Generator::operator=(Generator&& other) noexcept = default;

// set_current_seed (CPUGeneratorImpl.cpp) also drops the cached normal samples.
void Generator::manual_seed(uint64_t seed) {
  if (!engine_) {  // a moved-from generator comes back to life here
    engine_ = std::make_unique<Engine>();
  }
  seed_ = seed;
  engine_->seed(static_cast<uint32_t>(seed & 0xFFFFFFFFu));
  next_normal_.reset();
  next_float_normal_.reset();
}

uint64_t Generator::initial_seed() const { return seed_; }

// Every draw passes through here, so this one check covers them all.
uint32_t Generator::random() {
  if (!engine_) [[unlikely]] {
    throw std::runtime_error(
        "Generator: drawing from a moved-from generator; call manual_seed() on it or assign another "
        "generator to it first");
  }
  return (*engine_)();
}

uint64_t Generator::random64() {
  const uint64_t high = random();
  const uint64_t low = random();
  return (high << 32) | low;
}

// ---- uniform ---------------------------------------------------------------------------------
// uniform_kernel (native/cpu/DistributionTemplates.h): from and to are first rounded to the
// tensor's type, then each value is unit * (to - from) + from in that type, one draw per element
// (fused into one fma by torch's AVX2 build of the kernel).

namespace {

// PyTorch's checks (uniform_impl_, native/DistributionTemplates.h): from and to finite numbers of
// the tensor's type, from <= to, and to - from no larger than the type's largest number, or the
// values would be inf or nan.
template <typename T>
void check_uniform_bounds(double from, double to, const char* type) {
  const auto lowest = static_cast<double>(std::numeric_limits<T>::lowest());
  const auto largest = static_cast<double>(std::numeric_limits<T>::max());
  if (!(from >= lowest && from <= largest)) fail("uniform_: from (", from, ") is out of bounds for ", type);
  if (!(to >= lowest && to <= largest)) fail("uniform_: to (", to, ") is out of bounds for ", type);
  if (!(from <= to)) fail("uniform_: from (", from, ") must not be greater than to (", to, ")");
  if (!(to - from <= largest)) {
    fail("uniform_: to - from must be at most the largest ", type, " (", largest, "), but to is ", to,
         " and from is ", from);
  }
}

}  // namespace

void Generator::uniform(float* data, int64_t n, double from, double to) {
  check_count("uniform_", n);
  check_uniform_bounds<float>(from, to, "float32");
  const auto lo = static_cast<float>(from);
  const auto hi = static_cast<float>(to);
  for (int64_t i = 0; i < n; ++i) {
    data[i] = std::fma(unit_float(random()), hi - lo, lo);
  }
}

void Generator::uniform(double* data, int64_t n, double from, double to) {
  check_count("uniform_", n);
  check_uniform_bounds<double>(from, to, "float64");
  for (int64_t i = 0; i < n; ++i) {
    data[i] = std::fma(unit_double(random64()), to - from, from);
  }
}

// ---- normal ----------------------------------------------------------------------------------
// normal_kernel (native/cpu/DistributionTemplates.h): n >= 16 goes through normal_fill (float
// through the AVX2 version on AVX2 machines, as here). n < 16 draws one at a time from
// normal_distribution<double> (core/DistributionsHelper.h) and rounds to the tensor's type.

// One Box-Muller sample in double: u1 sets the angle, u2 the radius (log of 1 - u2 avoids
// log 0). The sine half of the pair is cached in the generator and returned by the next small
// normal call, even after other calls have drawn in between; manual_seed drops it.
double Generator::normal_one(double mean, double std) {
  if (next_normal_) {
    const double z = *next_normal_;
    next_normal_.reset();
    return std::fma(z, std, mean);
  }
  const double u1 = unit_double(random64());
  const double u2 = unit_double(random64());
  const double radius = std::sqrt(-2.0 * std::log(1.0 - u2));
  const double theta = 2.0 * std::numbers::pi * u1;
  next_normal_ = radius * std::sin(theta);
  return std::fma(radius * std::cos(theta), std, mean);
}

void Generator::normal(float* data, int64_t n, double mean, double std) {
  check_count("normal_", n);
  if (!(std >= 0.0)) {
    fail("normal_: std (", std, ") must be non-negative");
  }
  if (n >= 16) {
    normal_fill(*this, data, n, static_cast<float>(mean), static_cast<float>(std));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    data[i] = static_cast<float>(normal_one(mean, std));
  }
}

void Generator::normal(double* data, int64_t n, double mean, double std) {
  check_count("normal_", n);
  if (!(std >= 0.0)) {
    fail("normal_: std (", std, ") must be non-negative");
  }
  if (n >= 16) {
    normal_fill(*this, data, n, mean, std);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    data[i] = normal_one(mean, std);
  }
}

// ---- integers --------------------------------------------------------------------------------

// random_from_to_kernel + uniform_int_from_to_distribution (core/DistributionsHelper.h):
// range = to - from; a 32-bit draw if range < 2^32, else a 64-bit draw; value = from + draw % range.
// (The modulo is slightly biased for ranges that do not divide 2^32; PyTorch accepts that.)
void Generator::random_from_to(int64_t* data, int64_t n, int64_t from, int64_t to) {
  check_count("randint", n);
  if (from >= to) {
    fail("randint: from (", from, ") must be less than to (", to, ")");
  }
  const uint64_t range = static_cast<uint64_t>(to) - static_cast<uint64_t>(from);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t draw = range >= (1ull << 32) ? random64() : random();
    data[i] = static_cast<int64_t>(draw % range + static_cast<uint64_t>(from));
  }
}

// random_kernel + uniform_int_distribution<int64_t> (core/TransformationHelper.h, uniform_int):
// a 64-bit draw modulo 2^63, i.e. with its top bit cleared.
void Generator::random_full(int64_t* data, int64_t n) {
  check_count("random_", n);
  for (int64_t i = 0; i < n; ++i) {
    data[i] = static_cast<int64_t>(random64() & 0x7FFFFFFFFFFFFFFFull);
  }
}

// randperm_cpu (native/TensorFactories.cpp): start from 0..n-1, then for i = 0..n-2 swap
// element i with element i + (32-bit draw % (n - i)). A Fisher-Yates shuffle, n - 1 draws.
void Generator::randperm(int64_t* data, int64_t n) {
  check_count("randperm", n);
  for (int64_t i = 0; i < n; ++i) {
    data[i] = i;
  }
  for (int64_t i = 0; i + 1 < n; ++i) {
    const int64_t z = static_cast<int64_t>(random() % static_cast<uint64_t>(n - i));
    std::swap(data[i], data[i + z]);
  }
}

// ---- bernoulli -------------------------------------------------------------------------------
// bernoulli_kernel(self, double p) (native/cpu/DistributionTemplates.h), used by
// bernoulli_scalar_kernel (native/cpu/DistributionKernels.cpp) when PyTorch is built without
// MKL, as Debian's is: per element a double uniform (64-bit draw) compared with p, whatever the
// tensor's type. (An MKL build on an Intel CPU instead seeds MKL's own stream with one 32-bit
// draw, and its masks cannot be reproduced here.) F.dropout(x, p) on the CPU (native/Dropout.cpp)
// is x * (bernoulli_(1 - p) / (1 - p)) on a tensor shaped like x: the same draws.

void Generator::bernoulli(float* data, int64_t n, double p) {
  check_count("bernoulli_", n);
  if (!(p >= 0.0 && p <= 1.0)) {
    fail("bernoulli_: p (", p, ") must be in [0, 1]");
  }
  for (int64_t i = 0; i < n; ++i) {
    data[i] = unit_double(random64()) < p ? 1.0f : 0.0f;
  }
}

void Generator::bernoulli(double* data, int64_t n, double p) {
  check_count("bernoulli_", n);
  if (!(p >= 0.0 && p <= 1.0)) {
    fail("bernoulli_: p (", p, ") must be in [0, 1]");
  }
  for (int64_t i = 0; i < n; ++i) {
    data[i] = unit_double(random64()) < p ? 1.0 : 0.0;
  }
}

// After `left - 1` words since the last twist the next draw twists first; a twist leaves all 624
// words to read (left = n + 1 in the count operator() keeps, which decrements before it reads).
[[gnu::target_clones("arch=x86-64-v4", "avx2", "default")]] void Generator::Engine::fill(uint32_t* out,
                                                                                         int64_t count) {
  while (count > 0) {
    if (left == 1) {
      twist();
      left = n + 1;
    }
    const int64_t take = std::min<int64_t>(count, left - 1);
    const uint32_t* words = state + next;
    for (int64_t i = 0; i < take; ++i) out[i] = temper(words[i]);
    next += static_cast<uint32_t>(take);
    left -= static_cast<int32_t>(take);
    out += take;
    count -= take;
  }
}

// The same draws for a bool tensor (bernoulli_ draws a double uniform per element whatever the
// tensor's type), made in blocks for Dropout's masks: the words of a block come from one fill of
// the engine, and u < p is tested in integers. u is x * 2^-53 for the 53-bit integer x, and
// scaling by 2^-53 is exact, so u < p exactly when x < p * 2^53, that is when x < ceil(p * 2^53).
// tests/autograd/test_random.cpp checks it against the float version above, value for value.
// Both loops are compiled three times, for AVX-512 (x86-64-v4), AVX2 and any x86-64, and the CPU
// picks at load time (clang before 18 may pass over the x86-64-v4 one: the same bits, slower);
// they are integer code, so every version gives the same words and masks.
namespace {

// out[i] = the 53-bit integer x of words 2i (its high 21 bits) and 2i + 1 (its low 32) is below
// threshold (at most 2^53). The two words are read as one 64-bit number, on a little-endian CPU
// w0 + 2^32 w1; swapping its halves gives 2^32 w0 + w1, whose low 53 bits are x. x and threshold
// are below 2^63, so they compare as signed numbers, which AVX2 does 4 at a time.
[[gnu::target_clones("arch=x86-64-v4", "avx2", "default")]] void words_below(const uint32_t* words, int64_t n,
                                                                             int64_t threshold, bool* out) {
  constexpr uint64_t kLow53 = (uint64_t{1} << 53) - 1;
  auto* bytes = reinterpret_cast<uint8_t*>(out);  // written as bytes 0 and 1, which vectorises
  for (int64_t i = 0; i < n; ++i) {
    uint64_t pair;
    std::memcpy(&pair, words + 2 * i, sizeof pair);
    const uint64_t high_first = std::endian::native == std::endian::little ? std::rotl(pair, 32) : pair;
    const auto x = static_cast<int64_t>(high_first & kLow53);
    bytes[i] = static_cast<uint8_t>(x < threshold);
  }
}

}  // namespace

void Generator::bernoulli(bool* data, int64_t n, double p) {
  check_count("bernoulli_", n);
  if (!(p >= 0.0 && p <= 1.0)) {
    fail("bernoulli_: p (", p, ") must be in [0, 1]");
  }
  const auto threshold = static_cast<int64_t>(std::ceil(std::ldexp(p, 53)));
  constexpr int64_t block = 2048;  // elements per block: 4096 words, 16 KiB
  uint32_t words[2 * block];
  for (int64_t start = 0; start < n; start += block) {
    const int64_t count = std::min(block, n - start);
    engine_->fill(words, 2 * count);
    words_below(words, count, threshold, data + start);
  }
}

// ---- exponential -----------------------------------------------------------------------------
// exponential_kernel (native/cpu/DistributionKernels.cpp) without MKL, as Debian builds torch:
// per element in memory order, exponential_distribution<double> (core/DistributionsHelper.h),
// a double uniform u from a 64-bit draw and value = (-1 / lambd) * log(1 - u)
// (core/TransformationHelper.h, exponential), in double, then rounded to the tensor's type.
// Inverting the distribution function: P(X <= x) = 1 - exp(-lambd * x) = u.

template <typename T>
void exponential_fill(Generator& gen, T* data, int64_t n, double lambd) {
  check_count("exponential_", n);
  if (!(lambd >= 0.0)) {
    fail("exponential_: lambd (", lambd, ") must be non-negative");
  }
  const double scale = -1.0 / lambd;
  for (int64_t i = 0; i < n; ++i) {
    data[i] = static_cast<T>(scale * std::log(1.0 - unit_double(gen.random64())));
  }
}

void Generator::exponential(float* data, int64_t n, double lambd) { exponential_fill(*this, data, n, lambd); }

void Generator::exponential(double* data, int64_t n, double lambd) {
  exponential_fill(*this, data, n, lambd);
}

// ---- the default generator -------------------------------------------------------------------

Generator& default_generator() {
  static Generator generator;
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace minigrad
