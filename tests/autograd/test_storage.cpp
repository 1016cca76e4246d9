// Tests for the tensor memory cache (autograd/storage.cpp): a freed large block is handed to the
// next tensor of its size, small blocks and sanitizer builds bypass it, empty_cache empties it,
// and a reused block never leaks old values into a factory that promises zeros.
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <vector>

#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"
#include "autograd/storage.hpp"
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

BOOST_AUTO_TEST_SUITE_END()
