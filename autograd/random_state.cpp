// A generator's state as a tensor of bytes, laid out as PyTorch 1.13 lays it out, so that a
// checkpoint can save a seeded run's generator and a resumed run draws what the first would have.
// The layout is CPUGeneratorImplState (CPUGeneratorImpl.cpp), little-endian, 5056 bytes:
//   offset 0     u64  the seed               offset 5016  f64  unused (0)
//          8     i32  left                          5024  f64  cached double normal sample
//         12     i32  seeded (1)                    5032  f64  unused (0)
//         16     u64  next                          5040  i32  whether that sample is cached
//         24     u64  the 624 words, each < 2^32    5048  f32  cached float normal sample
//                                                   5052  u8   whether that one is cached
// The other bytes are padding and zero. The older 5048-byte layout stops before offset 5048.
#include <bit>
#include <cstring>
#include <vector>

#include "autograd/op_support.hpp"
#include "autograd/random.hpp"
#include "autograd/random_engine.hpp"

namespace minigrad {

namespace {

constexpr int64_t state_size = 5056;         // sizeof(CPUGeneratorImplState)
constexpr int64_t legacy_state_size = 5048;  // sizeof(THGeneratorState), still accepted by torch
constexpr int64_t words_offset = 24;
constexpr int64_t words = 624;

// Little-endian reads and writes of `size` bytes at `offset`.
void put(std::vector<int64_t>& bytes, int64_t offset, uint64_t value, int size) {
  for (int i = 0; i < size; ++i) bytes[offset + i] = static_cast<int64_t>((value >> (8 * i)) & 0xFF);
}

uint64_t get(const std::vector<int64_t>& bytes, int64_t offset, int size) {
  uint64_t value = 0;
  for (int i = 0; i < size; ++i) value |= static_cast<uint64_t>(bytes[offset + i]) << (8 * i);
  return value;
}

// The bytes of a state tensor, after checking what any state tensor must be.
std::vector<int64_t> state_bytes(const Tensor& state) {
  using detail::check;
  check(state.defined(), "set_state: the state is an undefined tensor");
  check(state.dtype() == kInt64,
        "set_state: the state must be an int64 tensor of bytes (as get_state() returns), got ",
        dtype_name(state.dtype()));
  check(state.dim() == 1 && (state.numel() == state_size || state.numel() == legacy_state_size),
        "set_state: expected a 1-d state of ", state_size, " (or ", legacy_state_size, ") bytes, got shape ",
        state.shape());
  std::vector<int64_t> bytes = state.to_vector<int64_t>();
  for (size_t i = 0; i < bytes.size(); ++i) {
    check(bytes[i] >= 0 && bytes[i] <= 255, "set_state: element ", i, " is ", bytes[i],
          ", not a byte (0..255)");
  }
  return bytes;
}

}  // namespace

Tensor Generator::get_state() const {
  detail::check(engine_ != nullptr, "get_state: this generator was moved from; reseed it first");
  std::vector<int64_t> bytes(state_size, 0);
  put(bytes, 0, seed_, 8);
  put(bytes, 8, static_cast<uint32_t>(engine_->left), 4);
  put(bytes, 12, 1, 4);
  put(bytes, 16, engine_->next, 8);
  for (int64_t j = 0; j < words; ++j) put(bytes, words_offset + 8 * j, engine_->state[j], 8);
  if (next_normal_) {
    put(bytes, 5024, std::bit_cast<uint64_t>(*next_normal_), 8);
    put(bytes, 5040, 1, 4);
  }
  if (next_float_normal_) {
    put(bytes, 5048, std::bit_cast<uint32_t>(*next_float_normal_), 4);
    put(bytes, 5052, 1, 1);
  }
  return tensor(bytes, {state_size});
}

// A draw reads word `next` after decrementing `left`, and twists when left reaches 0, so a state
// is usable when 1 <= left and the left - 1 words read before the twist lie inside the 624.
void Generator::set_state(const Tensor& state) {
  using detail::check;
  const std::vector<int64_t> bytes = state_bytes(state);
  const auto left = static_cast<int64_t>(static_cast<int32_t>(get(bytes, 8, 4)));
  const uint64_t next = get(bytes, 16, 8);
  check(left >= 1 && left <= words && next <= static_cast<uint64_t>(words - left + 1),
        "set_state: position left = ", left, ", next = ", next,
        " is not one a generator can be in (1 <= left, next + left <= ", words + 1, ")");
  Engine engine;
  for (int64_t j = 0; j < words; ++j) {
    const uint64_t word = get(bytes, words_offset + 8 * j, 8);
    check(word <= 0xFFFFFFFFu, "set_state: Mersenne Twister word ", j, " is ", word, ", more than 32 bits");
    engine.state[j] = static_cast<uint32_t>(word);
  }
  engine.left = static_cast<int32_t>(left);
  engine.next = static_cast<uint32_t>(next);

  // Everything is checked: now change the generator.
  engine_ = std::make_unique<Engine>(engine);
  seed_ = get(bytes, 0, 8);
  next_normal_.reset();
  if (get(bytes, 5040, 4) != 0) next_normal_ = std::bit_cast<double>(get(bytes, 5024, 8));
  next_float_normal_.reset();
  if (state.numel() == state_size && get(bytes, 5052, 1) != 0) {
    next_float_normal_ = std::bit_cast<float>(static_cast<uint32_t>(get(bytes, 5048, 4)));
  }
}

Tensor get_rng_state() { return default_generator().get_state(); }

void set_rng_state(const Tensor& state) { default_generator().set_state(state); }

}  // namespace minigrad
