#pragma once
/// @file
/// Process-wide heap set-up for long, allocation-heavy commands (`simulate` writes one 24-byte
/// chunk per simulated token: 12 MB for 2,000 requests of 256 tokens; `summarize` reads them
/// back). In a fresh process every 4 KiB page of that memory costs a page fault on first touch,
/// which was a third to a half of `simulate`'s time; transparent huge pages cut the faults 512×.

#include <cstddef>

namespace llmbench {

/// What `use_huge_page_heap` did.
struct HeapSetup {
  bool reserved = false;  ///< the heap was grown by `reserve_bytes` (untouched, not resident)
  bool advised = false;   ///< madvise(MADV_HUGEPAGE) accepted the range
  std::size_t bytes = 0;  ///< length of the advised range
};

/// Grows glibc's main heap once by `reserve_bytes` of address space (M_TOP_PAD: virtual, only
/// the pages later touched become resident), keeps it from being trimmed back (M_TRIM_THRESHOLD),
/// and asks for transparent huge pages on it (madvise(2) MADV_HUGEPAGE; honoured when
/// /sys/kernel/mm/transparent_hugepage/enabled is `always` or `madvise`, a no-op under `never`).
/// The same effect as starting the process with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (glibc ≥
/// 2.35), for the first `reserve_bytes` of heap, without an environment variable. Call once, at
/// the start of `main`, before threads start. Never throws; on any failure the heap is left as
/// glibc made it.
HeapSetup use_huge_page_heap(std::size_t reserve_bytes);

}  // namespace llmbench
