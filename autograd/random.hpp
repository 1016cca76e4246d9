// Random numbers that match PyTorch's CPU generator draw for draw (PyTorch 1.13.1).
// A seeded minigrad program prints the numbers the same seeded PyTorch program prints:
// torch.manual_seed(0); torch.randn(4) gives the same four floats here.
// Teaches: one Mersenne Twister stream (mt19937) feeds every distribution; each fill takes
// 32-bit words (float) or 64-bit words (double, int64) from it in a fixed order, so a run is
// reproducible only if every call, in order, draws as PyTorch does.
// The rules, with the PyTorch files they come from, are written out in random.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "autograd/tensor.hpp"

namespace minigrad {

/// A pseudo-random stream: mt19937 plus the spare Box-Muller sample, as in torch.Generator
/// (at::CPUGeneratorImpl). Copying a Generator copies its state: both copies then draw the same
/// numbers. Fill functions write n values to a contiguous buffer in the order torch fills a
/// contiguous tensor. Not thread-safe: share one Generator between threads only with a lock.
class Generator {
 public:
  /// The seed a fresh generator starts from: PyTorch's default_rng_seed_val.
  static constexpr uint64_t default_seed = 67280421310721ULL;

  /// Starts the stream from `seed`; only its low 32 bits reach mt19937 (as in PyTorch).
  explicit Generator(uint64_t seed = default_seed);
  /// Copies the full state (mt19937 words, position, cached normal sample).
  Generator(const Generator& other);
  /// Copies the full state of `other` into this generator.
  Generator& operator=(const Generator& other);
  /// Releases the engine.
  ~Generator();
  /// Takes over the state of `other`, which is left without an engine: reseed it or assign to
  /// it before drawing from it again (a draw from it throws std::runtime_error).
  Generator(Generator&& other) noexcept;
  /// Takes over the state of `other`, which is left without an engine: reseed it or assign to
  /// it before drawing from it again.
  Generator& operator=(Generator&& other) noexcept;

  /// Restarts the stream from `seed` and forgets the cached normal sample
  /// (torch.Generator.manual_seed).
  void manual_seed(uint64_t seed);
  /// The seed last given to the constructor or manual_seed, all 64 bits
  /// (torch.Generator.initial_seed).
  uint64_t initial_seed() const;

  /// One 32-bit mt19937 output (CPUGeneratorImpl::random).
  uint32_t random();
  /// Two 32-bit outputs joined into one 64-bit word, the first as the high half
  /// (CPUGeneratorImpl::random64).
  uint64_t random64();

  /// Fills data[0, n) with uniform values in [from, to) (Tensor.uniform_(from, to); torch.rand is
  /// from = 0, to = 1). float: 24 random bits from one 32-bit draw; double: 53 bits from a
  /// 64-bit draw. Throws std::invalid_argument if n < 0, from > to, from or to is not a finite
  /// number of the type, or to - from exceeds the type's largest (PyTorch's checks).
  void uniform(float* data, int64_t n, double from, double to);
  /// Double-precision version of uniform(float*, ...); see there.
  void uniform(double* data, int64_t n, double from, double to);

  /// Fills data[0, n) with normal values of mean `mean` and standard deviation `std`
  /// (Tensor.normal_(mean, std); torch.randn is mean = 0, std = 1). n >= 16 transforms blocks of
  /// 16 uniforms (float: PyTorch's AVX2 kernel); n < 16 draws Box-Muller pairs one element at a
  /// time and keeps the spare sample for the next call. Throws std::invalid_argument if n < 0
  /// or std < 0.
  void normal(float* data, int64_t n, double mean, double std);
  /// Double-precision version of normal(float*, ...); see there.
  void normal(double* data, int64_t n, double mean, double std);

  /// Fills data[0, n) with integers in [from, to), `to` exclusive (torch.randint(from, to, ...),
  /// Tensor.random_(from, to)). Throws std::invalid_argument if n < 0 or from >= to.
  void random_from_to(int64_t* data, int64_t n, int64_t from, int64_t to);
  /// Fills data[0, n) with integers in [0, 2^63 - 1] (Tensor.random_() on an int64 tensor;
  /// DataLoader draws its base seed this way). Throws std::invalid_argument if n < 0.
  void random_full(int64_t* data, int64_t n);
  /// Writes a random permutation of 0, 1, ..., n - 1 to data[0, n) (torch.randperm(n), int64).
  /// Throws std::invalid_argument if n < 0.
  void randperm(int64_t* data, int64_t n);

  /// Fills data[0, n) with 1 (probability p) or 0 (Tensor.bernoulli_(p)). nn.Dropout(p) on the
  /// CPU keeps an element where bernoulli_(1 - p) gave 1, then scales by 1 / (1 - p).
  /// Throws std::invalid_argument if n < 0 or p is outside [0, 1].
  void bernoulli(float* data, int64_t n, double p);
  /// Double-precision version of bernoulli(float*, ...); see there.
  void bernoulli(double* data, int64_t n, double p);
  /// bernoulli(float*, ...) into a bool tensor (true for 1): the same draws and the same values,
  /// several times faster (the engine's words come in blocks, the test stays in integers).
  /// F::dropout draws its mask with it.
  void bernoulli(bool* data, int64_t n, double p);

  /// Fills data[0, n) with exponential values of rate `lambd`, density lambd * exp(-lambd * x)
  /// (Tensor.exponential_(lambd)): one 64-bit draw per element, computed in double.
  /// Throws std::invalid_argument if n < 0 or lambd < 0 (lambd = 0 gives inf, as in PyTorch).
  void exponential(float* data, int64_t n, double lambd);
  /// Double-precision version of exponential(float*, ...); see there.
  void exponential(double* data, int64_t n, double lambd);

  // ---- the state as a tensor, to save a run and resume it exactly --------------------------

  /// The whole state as PyTorch lays it out (`torch.Generator.get_state()`): 5056 bytes, one per
  /// element of a 1-d int64 tensor (minigrad has no uint8; each element is 0..255), byte for byte
  /// what torch.get_rng_state() returns for the same seed and the same draws. Holds the seed, the
  /// 624 Mersenne Twister words with the position in them, and the cached Box-Muller sample.
  Tensor get_state() const;
  /// Restores a state from get_state(), or from PyTorch's 5056-byte (or older 5048-byte) state as
  /// int64 bytes: the draws then continue exactly as they did after that get_state()
  /// (`torch.Generator.set_state`). Throws std::invalid_argument, leaving the generator as it
  /// was, for an undefined tensor, a dtype other than int64, not 1-d, another size, an element
  /// outside 0..255, or a position or word that no generator can be in.
  void set_state(const Tensor& state);

 private:
  struct Engine;                               // the Mersenne Twister (random_engine.hpp)
  double normal_one(double mean, double std);  // one Box-Muller sample, using the cache

  std::unique_ptr<Engine> engine_;
  uint64_t seed_ = default_seed;
  std::optional<double> next_normal_;  // the spare sample of the last Box-Muller pair
  // torch's cached float normal: no minigrad (or torch CPU) fill reads it; kept so that
  // get_state() returns what set_state() was given.
  std::optional<float> next_float_normal_;
};

/// The process-wide generator behind minigrad's random factories (torch's default CPU
/// generator). Starts from Generator::default_seed, the seed of a fresh torch.Generator();
/// PyTorch's own default starts from a nondeterministic seed, so seed both to compare runs.
/// Not thread-safe: draw from one thread at a time.
Generator& default_generator();

/// Reseeds default_generator() (torch.manual_seed).
void manual_seed(uint64_t seed);

/// default_generator().get_state(): 5056 int64 elements, each a byte (`torch.get_rng_state()`).
Tensor get_rng_state();
/// default_generator().set_state(state) (`torch.set_rng_state`); throws as Generator::set_state.
void set_rng_state(const Tensor& state);

// multinomial: out[r, j] = the category drawn for row r's j-th sample (not differentiable)
/// Draws `num_samples` category indices per row of `probs` (`torch.multinomial`), float32 or
/// float64, [C] -> int64 [num_samples] or [R, C] -> int64 [R, num_samples]; rows need not sum to 1.
/// Draw for draw as torch 1.13: without replacement, exponential_ fills q like probs and the
/// samples are the num_samples largest of probs / q in each row (largest first); with
/// replacement, one double uniform per sample located in the row's normalised cumulative sum.
/// Throws std::invalid_argument for probs that is not 1-d or 2-d or not floating, num_samples
/// < 1, num_samples > C without replacement, more than 2^24 categories, a negative, nan or inf
/// probability or a row of zeros (naming the row and the value).
///@{
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false);
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator& generator);
///@}

}  // namespace minigrad
