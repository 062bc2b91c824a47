#include "llmbench/core/heap.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <unistd.h>
#include <vector>

namespace llmbench {
namespace {

// The reserve is real heap: after it, 40 MiB of small allocations (below glibc's mmap
// threshold) fit without the break moving, and the advised range is 2 MiB aligned inside it.
TEST(HugePageHeap, ReservesAdvisesAndServesLaterAllocations) {
  constexpr std::size_t kReserve = std::size_t{64} << 20;
  const auto before = reinterpret_cast<std::uintptr_t>(sbrk(0));
  const HeapSetup setup = use_huge_page_heap(kReserve);
  const auto after = reinterpret_cast<std::uintptr_t>(sbrk(0));
  if (!setup.reserved)
    GTEST_SKIP() << "the heap could not grow by brk here (e.g. under a sanitizer's allocator)";
  EXPECT_GE(after - before, kReserve);
  EXPECT_GE(setup.bytes, kReserve - (std::size_t{4} << 20));
  EXPECT_LE(setup.bytes, after - before);
  EXPECT_EQ(setup.bytes % (std::size_t{2} << 20), 0U);

  std::vector<void*> blocks;
  for (int i = 0; i < 40 * 160; ++i) blocks.push_back(std::malloc(6400));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(sbrk(0)), after) << "the reserve was not used";
  for (void* p : blocks) {
    ASSERT_NE(p, nullptr);
    EXPECT_LT(reinterpret_cast<std::uintptr_t>(p), after);  // heap, not an mmap chunk
    std::free(p);
  }
  // Too small or too large a reserve is refused without touching the heap.
  EXPECT_FALSE(use_huge_page_heap(1024).reserved);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(sbrk(0)), after);
}

}  // namespace
}  // namespace llmbench
