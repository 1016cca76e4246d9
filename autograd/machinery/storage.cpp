// The block cache behind every tensor's memory; see storage.hpp for why it exists.
#include "autograd/machinery/storage.hpp"

#include <algorithm>
#include <list>
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

// Freed blocks by size, and the same blocks oldest first. Sizes are exact (rounded up to the
// alignment): a training loop asks for the same handful of sizes over and over, so exact matches
// are what it needs. When a freed block does not fit under the limit, the oldest blocks make room:
// sizes no longer in use age out, and the sizes of the loop running now stay cached.
struct BlockCache {
  struct Block {
    std::byte* data;
    size_t size;
  };
  std::mutex mutex;
  std::list<Block> oldest_first;
  std::unordered_map<size_t, std::vector<std::list<Block>::iterator>> by_size;  // newest last
  size_t bytes = 0;

  // Takes a cached block of exactly `size` bytes, or returns nullptr. Caller holds the mutex.
  std::byte* take(size_t size) {
    auto bucket = by_size.find(size);
    if (bucket == by_size.end() || bucket->second.empty()) return nullptr;
    const auto block = bucket->second.back();
    bucket->second.pop_back();
    std::byte* data = block->data;
    oldest_first.erase(block);
    bytes -= size;
    return data;
  }

  // Frees the oldest cached block. Caller holds the mutex; the cache is not empty.
  void evict_oldest() {
    const Block block = oldest_first.front();
    auto& bucket = by_size[block.size];
    bucket.erase(std::find(bucket.begin(), bucket.end(), oldest_first.begin()));
    oldest_first.pop_front();
    bytes -= block.size;
    ::operator delete[](block.data, kAlignment);
  }
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

bool cacheable(size_t size) {
  return kCacheEnabled && size >= static_cast<size_t>(kMinCachedBytes) &&
         size <= static_cast<size_t>(kMaxCachedBytes);
}

// Blocks below kMinCachedBytes come from plain operator new: the C library's fast path for small
// sizes, 16-byte aligned. An aligned request costs it several times more (memalign splits a larger
// chunk), which showed in the 1-row forward's profile; the larger blocks, where vector loops
// spend their time, stay 64-byte aligned.
bool small(size_t size) { return size < static_cast<size_t>(kMinCachedBytes); }

std::byte* new_block(size_t size) {
  if (small(size)) return static_cast<std::byte*>(::operator new(size));
  return static_cast<std::byte*>(::operator new[](size, kAlignment));
}

void delete_block(std::byte* block, size_t size) {
  if (small(size))
    ::operator delete(block);
  else
    ::operator delete[](block, kAlignment);
}

void release(std::byte* block, size_t size) {
  if (cacheable(size)) {
    BlockCache& c = cache();
    std::lock_guard lock(c.mutex);
    while (c.bytes + size > static_cast<size_t>(kMaxCachedBytes)) c.evict_oldest();
    c.by_size[size].push_back(c.oldest_first.insert(c.oldest_first.end(), {block, size}));
    c.bytes += size;
    return;
  }
  delete_block(block, size);
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
  while (!c.oldest_first.empty()) c.evict_oldest();
  c.by_size.clear();
}

namespace detail {

std::shared_ptr<std::byte[]> allocate_storage(int64_t bytes) {
  const size_t size = rounded(bytes);
  std::byte* block = nullptr;
  if (cacheable(size)) {
    BlockCache& c = cache();
    std::lock_guard lock(c.mutex);
    block = c.take(size);
  }
  if (block == nullptr) {
    try {
      block = new_block(size);
    } catch (const std::bad_alloc&) {
      empty_cache();  // the memory the cache holds may be what is missing: hand it back, try once more
      block = new_block(size);
    }
  }
  return {block, [size](std::byte* p) { release(p, size); }};
}

}  // namespace detail
}  // namespace minigrad
