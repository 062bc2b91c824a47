#include "llmbench/cli/cli.hpp"
#include "llmbench/core/heap.hpp"
#include "llmbench/dist/world.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

int main(int argc, char** argv) {
  // Transparent huge pages for the first 256 MiB of heap (virtual until touched): `simulate`
  // writes and reads one record chunk per token on the main thread, and 4 KiB first-touch page
  // faults were a third of its time (docs/performance.md). Not for `run`: its records live in
  // its event loops' own malloc arenas, which the setting does not reach, and the main heap
  // kept untrimmed in 2 MiB pages only raised its peak RSS (docs/performance.md, "Against the
  // previous round"). LLMBENCH_HUGE_PAGE_HEAP=0 keeps glibc's defaults for every command.
  const char* huge = std::getenv("LLMBENCH_HUGE_PAGE_HEAP");
  const bool client_run = argc > 1 && std::string_view(argv[1]) == "run";
  if (!client_run && (huge == nullptr || std::string_view(huge) != "0"))
    llmbench::use_huge_page_heap(std::size_t{256} << 20);
  // Under an MPI launcher (mpirun, srun --mpi=pmix): join the job before any thread starts;
  // alone, nothing is started (docs/distributed.md).
  try {
    llmbench::dist::World::join(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llmbench: %s\n", e.what());
    return 2;
  }
  const int code = llmbench::cli::run(argc, argv);
  llmbench::dist::World::leave();
  return code;
}
