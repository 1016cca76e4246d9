// The Mersenne Twister behind every Generator, inside the library only (random.cpp draws from
// it, random_state.cpp reads and writes its words). Kept in the form PyTorch keeps it, so that
// its state is the state torch.get_rng_state() shows.
#pragma once

#include <cstdint>

#include "autograd/random.hpp"

namespace minigrad {

// The engine: the standard 32-bit Mersenne Twister, kept as at::mt19937 keeps it
// (core/MT19937RNGEngine.h), so that get_state() can write the words torch writes: 624 state
// words, `left` (outputs before the next twist, plus one) and `next` (the word read next).
// Seeding fills the words by the standard recurrence from the low 32 bits of the seed and leaves
// them untwisted (left = 1, next = 0): the first draw twists. random64() is two words, the first
// as the high half (CPUGeneratorImpl.cpp, make64BitsFrom32Bits).
/// The 32-bit Mersenne Twister in at::mt19937's form: 624 words, `left` and `next`.
struct Generator::Engine {
  static constexpr int n = 624;  ///< words of state
  static constexpr int m = 397;  ///< the twist's middle offset
  uint32_t state[n] = {};        ///< the words
  int32_t left = 1;              ///< draws until the next twist, plus one
  uint32_t next = 0;             ///< the word the next draw reads

  /// Fills the words from `seed` by the standard recurrence; the first draw twists.
  void seed(uint32_t seed) {
    state[0] = seed;
    for (int j = 1; j < n; ++j) state[j] = 1812433253u * (state[j - 1] ^ (state[j - 1] >> 30)) + j;
    left = 1;
    next = 0;
  }

  /// Word j becomes word j + m mixed with the top bit of word j and the low bits of word j + 1.
  static uint32_t mix(uint32_t far, uint32_t here, uint32_t after) {
    const uint32_t y = (here & 0x80000000u) | (after & 0x7FFFFFFFu);
    return far ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908B0DFu);  // the constant when y is odd, without a branch
  }

  /// Renews all 624 words.
  void twist() {
    for (int j = 0; j < n - m; ++j) state[j] = mix(state[j + m], state[j], state[j + 1]);
    for (int j = n - m; j < n - 1; ++j) state[j] = mix(state[j + m - n], state[j], state[j + 1]);
    state[n - 1] = mix(state[m - 1], state[n - 1], state[0]);
    left = n;
    next = 0;
  }

  /// A word's output: a fixed invertible scramble of its bits.
  static uint32_t temper(uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9D2C5680u;
    y ^= (y << 15) & 0xEFC60000u;
    return y ^ (y >> 18);
  }

  /// The next tempered 32-bit output.
  uint32_t operator()() {
    if (--left == 0) twist();
    return temper(state[next++]);
  }

  /// The next `count` outputs into out[0, count), the same words as `count` calls and the same
  /// state after, made a run of the state at a time (Dropout's masks draw millions of words; the
  /// loops vectorise). Defined in random.cpp, for AVX-512, AVX2 and any x86-64.
  void fill(uint32_t* out, int64_t count);
};

}  // namespace minigrad
