// `World` in a build without MPI: a launch of several processes is refused, one runs alone.
#include "llmbench/core/error.hpp"
#include "llmbench/dist/world.hpp"

#include <fmt/core.h>

#include <cstdlib>

namespace llmbench::dist {

bool built_with_mpi() noexcept {
  return false;
}

World* World::join(int& /*argc*/, char**& /*argv*/) {
  if (!launched_by_mpi())
    return nullptr;
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* size = std::getenv(name);
    if (size != nullptr && std::atoi(size) > 1) {
      throw Exception(fmt::format(
          "started by an MPI launcher ({}={}) but this llmbench was built without MPI: each "
          "process would run the whole benchmark; rebuild with Open MPI (libopenmpi-dev, "
          "-DLLMBENCH_WITH_MPI=ON) or run one process",
          name, size));
    }
  }
  return nullptr;
}

World* World::current() noexcept {
  return nullptr;
}

void World::leave() noexcept {}

void World::abort(int code) noexcept {
  std::_Exit(code);
}

// A world is never made without MPI; the collectives of one process are the identity.
std::vector<ClockOffset> World::measure_offsets(int /*rounds*/) {
  return std::vector<ClockOffset>(1);
}
std::string World::broadcast(std::string value) {
  return value;
}
std::uint64_t World::broadcast(std::uint64_t value) {
  return value;
}
std::vector<std::string> World::gather(const std::string& text) {
  return {text};
}
std::int64_t World::max(std::int64_t value) {
  return value;
}
bool World::any(bool flag) {
  return flag;
}

}  // namespace llmbench::dist
