// Memory for tensor data: aligned blocks, with freed large blocks kept for reuse.
//
// A training loop allocates the same sizes every step (activations, gradients, temporaries), and
// blocks of a few MiB come from the kernel as fresh pages each time: page faults and zeroing that
// cost about 15% of a 2,048-row training step here. So blocks of at least kMinCachedBytes are not
// returned to the system when their last tensor dies; the next tensor of the same size takes one
// back. The cache holds at most kMaxCachedBytes: past that, the blocks freed longest ago are
// returned to the system first. empty_cache() hands everything back, and so does an allocation
// that fails, before it tries once more.
// Sanitizer builds turn the cache off, so that AddressSanitizer still sees every use after free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace minigrad {

/// Smallest block kept for reuse when freed (64 KiB); smaller ones go straight back to malloc,
/// which is fast at those sizes.
inline constexpr int64_t kMinCachedBytes = int64_t{64} << 10;
/// Most bytes the cache holds (256 MiB); beyond that the oldest cached blocks are returned to the
/// system to make room.
inline constexpr int64_t kMaxCachedBytes = int64_t{256} << 20;

/// Bytes held by the cache now, in freed blocks waiting for reuse (0 in sanitizer builds).
int64_t cached_storage_bytes();

/// Returns every cached block to the system, as `torch.cuda.empty_cache()` does for its caching
/// allocator. Tensors alive keep their memory. Thread-safe.
void empty_cache();

namespace detail {

/// A block of at least `bytes` bytes (1 when bytes is 0), not initialised, 64-byte aligned from
/// kMinCachedBytes up and 16-byte aligned below (the C library's fast path for small sizes); freed
/// (or cached) when the last shared_ptr to it goes. Throws std::bad_alloc when memory runs out
/// even after the cache is emptied.
/// Thread-safe.
std::shared_ptr<std::byte[]> allocate_storage(int64_t bytes);

}  // namespace detail
}  // namespace minigrad
