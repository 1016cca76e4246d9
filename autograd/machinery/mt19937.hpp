// The 32-bit Mersenne Twister (mt19937) behind every random number, written out so that a whole
// block of words can be made at once. Its output is the standard one (the same words as
// std::mt19937, boost::random::mt19937 and PyTorch's at::mt19937, core/MT19937RNGEngine.h):
// tests/autograd/test_random.cpp compares it with Boost's engine word for word.
// Why not Boost's: one word per call keeps the twist and the tempering in a loop the compiler
// cannot vectorise; fill() twists the 624 state words in three vectorisable runs and tempers a
// block in one loop, several times faster for Dropout's millions of draws.
#pragma once

#include <cstdint>

namespace minigrad::detail {

/// mt19937: 624 words of state, twisted all at once when they are used up; each output word is
/// one state word "tempered" (a fixed invertible scramble of its bits).
class MT19937 {
 public:
  static constexpr int kStateSize = 624;  ///< n in the paper
  static constexpr int kShift = 397;      ///< m in the paper

  /// Seeds the state by the standard recurrence x[i] = 1812433253 (x[i-1] ^ (x[i-1] >> 30)) + i.
  explicit MT19937(uint32_t seed = 5489u) { seed_with(seed); }

  void seed_with(uint32_t seed) {
    state_[0] = seed;
    for (uint32_t i = 1; i < kStateSize; ++i)
      state_[i] = 1812433253u * (state_[i - 1] ^ (state_[i - 1] >> 30)) + i;
    next_ = kStateSize;
  }

  /// The next word of the stream.
  uint32_t operator()() {
    if (next_ == kStateSize) twist();
    return temper(state_[next_++]);
  }

  /// The next `count` words of the stream into out[0, count): the same words as `count` calls.
  void fill(uint32_t* out, int64_t count) {
    while (count > 0) {
      if (next_ == kStateSize) twist();
      const int64_t take = count < kStateSize - next_ ? count : kStateSize - next_;
      const uint32_t* from = state_ + next_;
      for (int64_t i = 0; i < take; ++i) out[i] = temper(from[i]);
      next_ += static_cast<int>(take);
      out += take;
      count -= take;
    }
  }

 private:
  // The top bit of `upper` and the low 31 bits of `lower`, shifted right once, xor `far`, xor the
  // twist matrix's constant when the joined word is odd (written without a branch).
  static uint32_t mix(uint32_t upper, uint32_t lower, uint32_t far) {
    const uint32_t y = (upper & 0x80000000u) | (lower & 0x7fffffffu);
    return far ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
  }

  static uint32_t temper(uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
  }

  // Word i becomes mix(x[i], x[i + 1], x[i + 397]), indices mod 624, in order of i. Split where
  // i + 397 wraps, each run reads only words it does not write, so each loop vectorises.
  void twist() {
    constexpr int n = kStateSize, m = kShift;
    uint32_t* x = state_;
    for (int i = 0; i < n - m; ++i) x[i] = mix(x[i], x[i + 1], x[i + m]);
    for (int i = n - m; i < n - 1; ++i) x[i] = mix(x[i], x[i + 1], x[i + m - n]);
    x[n - 1] = mix(x[n - 1], x[0], x[m - 1]);
    next_ = 0;
  }

  uint32_t state_[kStateSize];
  int next_ = kStateSize;
};

}  // namespace minigrad::detail
