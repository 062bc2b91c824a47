#include "llmbench/cli/cli.hpp"
#include "llmbench/core/heap.hpp"

#include <cstdlib>
#include <string_view>

int main(int argc, char** argv) {
  // Transparent huge pages for the first 256 MiB of heap (virtual until touched): `simulate`
  // and `summarize` write and read one record chunk per token, and 4 KiB first-touch page
  // faults were a third of their time (docs/performance.md). LLMBENCH_HUGE_PAGE_HEAP=0 keeps
  // glibc's defaults.
  const char* huge = std::getenv("LLMBENCH_HUGE_PAGE_HEAP");
  if (huge == nullptr || std::string_view(huge) != "0")
    llmbench::use_huge_page_heap(std::size_t{256} << 20);
  return llmbench::cli::run(argc, argv);
}
