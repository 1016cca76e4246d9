// Tests for the tensor memory cache (autograd/machinery/storage.cpp): a freed large block is handed to the
// next tensor of its size, small blocks and sanitizer builds bypass it, empty_cache empties it,
// and a reused block never leaks old values into a factory that promises zeros.
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <new>
#include <vector>

#include "autograd/machinery/storage.hpp"
#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"
#include "autograd/tensor.hpp"

using namespace minigrad;

namespace {

#ifdef MINIGRAD_NO_STORAGE_CACHE
constexpr bool kCacheOn = false;
#else
constexpr bool kCacheOn = true;
#endif

}  // namespace

BOOST_AUTO_TEST_SUITE(storage)

BOOST_AUTO_TEST_CASE(a_freed_large_block_is_reused_by_the_next_tensor_of_its_size) {
  empty_cache();
  const Shape big = {512, 512};  // 1 MiB of float32, above the 64 KiB threshold
  const void* first = nullptr;
  {
    Tensor t = ones(big);
    first = t.data_ptr<float>();
    BOOST_TEST(cached_storage_bytes() == 0);
  }
  BOOST_TEST(cached_storage_bytes() == (kCacheOn ? 512 * 512 * 4 : 0));
  Tensor again = zeros(big);
  if (kCacheOn) BOOST_TEST(static_cast<const void*>(again.data_ptr<float>()) == first);
  BOOST_TEST(cached_storage_bytes() == 0);
  // The block held ones; zeros must still be zeros.
  BOOST_TEST(sum(again).item<double>() == 0.0);
}

BOOST_AUTO_TEST_CASE(small_blocks_are_not_cached) {
  empty_cache();
  { Tensor t = ones({16, 16}); }  // 1 KiB
  BOOST_TEST(cached_storage_bytes() == 0);
}

BOOST_AUTO_TEST_CASE(empty_cache_returns_every_block) {
  empty_cache();
  { Tensor a = ones({256, 256}), b = ones({256, 512}), c = ones({256, 512}); }
  BOOST_TEST(cached_storage_bytes() == (kCacheOn ? (256 * 256 + 2 * 256 * 512) * 4 : 0));
  empty_cache();
  BOOST_TEST(cached_storage_bytes() == 0);
}

BOOST_AUTO_TEST_CASE(the_cache_never_holds_more_than_its_limit) {
  empty_cache();
  {
    // 40 blocks of 8 MiB: 320 MiB freed at once, more than the 256 MiB limit.
    std::vector<Tensor> blocks;
    for (int i = 0; i < 40; ++i) blocks.push_back(detail::new_tensor({2048, 1024}, kFloat32));
  }
  BOOST_TEST(cached_storage_bytes() <= kMaxCachedBytes);
  if (kCacheOn) BOOST_TEST(cached_storage_bytes() == 32 * (int64_t{8} << 20));
  empty_cache();
}

BOOST_AUTO_TEST_CASE(when_full_the_oldest_blocks_make_room_for_the_newest) {
  if (!kCacheOn) return;  // nothing is cached in sanitizer builds
  empty_cache();
  // 300 blocks of distinct sizes just over 1 MiB: more than the 256 MiB limit holds.
  const void* last = nullptr;
  for (int64_t i = 0; i < 300; ++i) {
    Tensor t = detail::new_tensor({(int64_t{1} << 18) + i * 1024}, kFloat32);
    last = t.data_ptr<float>();
  }
  BOOST_TEST(cached_storage_bytes() <= kMaxCachedBytes);
  // A new size freed into the full cache is kept (older blocks leave to make room)...
  const void* block = nullptr;
  {
    Tensor t = detail::new_tensor({3 << 18}, kFloat32);  // 3 MiB
    block = t.data_ptr<float>();
  }
  Tensor again = detail::new_tensor({3 << 18}, kFloat32);
  BOOST_TEST(static_cast<const void*>(again.data_ptr<float>()) == block);
  // ...and so is the block freed last in the loop.
  Tensor newest = detail::new_tensor({(int64_t{1} << 18) + 299 * 1024}, kFloat32);
  BOOST_TEST(static_cast<const void*>(newest.data_ptr<float>()) == last);
  empty_cache();
}

BOOST_AUTO_TEST_CASE(a_failed_allocation_empties_the_cache_before_it_gives_up) {
  if (!kCacheOn) return;  // AddressSanitizer aborts on an impossible allocation instead of throwing
  empty_cache();
  { Tensor t = ones({512, 512}); }
  BOOST_TEST(cached_storage_bytes() > 0);
  // 2^48 floats, 1 PiB: no machine has it.
  BOOST_CHECK_THROW(detail::new_tensor({int64_t{1} << 48}, kFloat32), std::bad_alloc);
  BOOST_TEST(cached_storage_bytes() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
