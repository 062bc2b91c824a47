#include "llmbench/core/heap.hpp"

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

namespace llmbench {

HeapSetup use_huge_page_heap(std::size_t reserve_bytes) {
  HeapSetup out;
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  constexpr std::size_t kProbe = 256 * 1024;
  if (reserve_bytes < 2 * kHugePage || reserve_bytes > std::numeric_limits<int>::max() / 2)
    return out;
  const int reserve = static_cast<int>(reserve_bytes);
  // Allocations below 32 MiB come from the heap (glibc's largest M_MMAP_THRESHOLD), so large
  // vectors get huge pages too and freed memory is reused instead of unmapped and re-faulted;
  // the top of the heap is never trimmed below the reserve.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 2 * reserve);
  // The next growth of the heap adds the reserve: force one with a probe allocation.
  mallopt(M_TOP_PAD, reserve);
  char* const break_before = static_cast<char*>(sbrk(0));
  const auto before = reinterpret_cast<std::uintptr_t>(break_before);
  void* probe = std::malloc(kProbe);
  const auto after = reinterpret_cast<std::uintptr_t>(sbrk(0));
  const bool allocated = probe != nullptr;
  std::free(probe);
  mallopt(M_TOP_PAD, 128 * 1024);  // glibc's default: later growth is ordinary
  if (!allocated || after < before + reserve_bytes / 2)
    return out;  // the heap had room already, or brk failed (glibc then uses mmap)
  out.reserved = true;
  // The new memory starts at the old break; the probe's header lies at or below it (already a
  // 4 KiB page), so the advised range starts at the first 2 MiB boundary past it.
  const std::uintptr_t start = (before + 4096 + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t end = after & ~(kHugePage - 1);
  if (end <= start)
    return out;
  out.bytes = end - start;
  out.advised = madvise(break_before + (start - before), out.bytes, MADV_HUGEPAGE) == 0;
  return out;
}

void release_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  malloc_trim(0);
}

}  // namespace llmbench
