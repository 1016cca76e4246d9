// The block cache behind every tensor's memory; see storage.hpp for why it exists.
#include "autograd/storage.hpp"

#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace minigrad {

namespace {

// 64-byte aligned so that vector loads in the BLAS and our loops never straddle a cache line.
constexpr std::align_val_t kAlignment{64};

#ifdef MINIGRAD_NO_STORAGE_CACHE
constexpr bool kCacheEnabled = false;
#else
constexpr bool kCacheEnabled = true;
#endif

// Freed blocks by size. Sizes are exact (rounded up to the alignment): a training loop asks for
// the same handful of sizes over and over, so exact matches are what it needs.
struct BlockCache {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<std::byte*>> free_blocks;
  size_t bytes = 0;
};

// Never destroyed: a tensor in a static object may die after main returns and still free into it.
// The blocks it holds then stay reachable, so leak checkers do not report them.
BlockCache& cache() {
  static auto* instance = new BlockCache;
  return *instance;
}

size_t rounded(int64_t bytes) {
  const auto align = static_cast<size_t>(kAlignment);
  const size_t n = bytes > 0 ? static_cast<size_t>(bytes) : 1;
  return (n + align - 1) / align * align;
}

void release(std::byte* block, size_t size) {
  if (kCacheEnabled && size >= static_cast<size_t>(kMinCachedBytes)) {
    BlockCache& c = cache();
    std::lock_guard lock(c.mutex);
    if (c.bytes + size <= static_cast<size_t>(kMaxCachedBytes)) {
      c.free_blocks[size].push_back(block);
      c.bytes += size;
      return;
    }
  }
  ::operator delete[](block, kAlignment);
}

}  // namespace

int64_t cached_storage_bytes() {
  BlockCache& c = cache();
  std::lock_guard lock(c.mutex);
  return static_cast<int64_t>(c.bytes);
}

void empty_cache() {
  BlockCache& c = cache();
  std::lock_guard lock(c.mutex);
  for (auto& [size, blocks] : c.free_blocks)
    for (std::byte* block : blocks) ::operator delete[](block, kAlignment);
  c.free_blocks.clear();
  c.bytes = 0;
}

namespace detail {

std::shared_ptr<std::byte[]> allocate_storage(int64_t bytes) {
  const size_t size = rounded(bytes);
  std::byte* block = nullptr;
  if (kCacheEnabled && size >= static_cast<size_t>(kMinCachedBytes)) {
    BlockCache& c = cache();
    std::lock_guard lock(c.mutex);
    if (auto it = c.free_blocks.find(size); it != c.free_blocks.end() && !it->second.empty()) {
      block = it->second.back();
      it->second.pop_back();
      c.bytes -= size;
    }
  }
  if (block == nullptr) block = static_cast<std::byte*>(::operator new[](size, kAlignment));
  return {block, [size](std::byte* p) { release(p, size); }};
}

}  // namespace detail
}  // namespace minigrad
