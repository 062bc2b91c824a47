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

/// Between two phases of a process (`run`'s load and its end-of-run analysis): hands the memory
/// freed so far back to the kernel (malloc_trim(3), every arena) and, from then on, gives each
/// block of 128 KiB or more a mapping of its own, unmapped when freed (M_MMAP_THRESHOLD fixed at
/// glibc's default; glibc otherwise raises it up to 32 MiB as large blocks are freed, and the
/// analysis's sample lists then grew the main heap, which is trimmed only from its top). Lowers
/// the peak RSS of a 50-request `run` from about 69 to 58 MB (docs/performance.md, "Against the
/// previous round"); later large blocks cost a mapping and first-touch page faults each. Never
/// throws.
void release_freed_memory();

}  // namespace llmbench
