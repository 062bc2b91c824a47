#include "llmbench/core/error.hpp"
#include "llmbench/dist/world.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace llmbench::dist {

bool launched_by_mpi() noexcept {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_SIZE") != nullptr;
}

ClockOffset estimate_offset(std::span<const PingPong> rounds) {
  LLMBENCH_ASSERT(!rounds.empty(), "a clock offset needs at least one round");
  const auto best =
      std::min_element(rounds.begin(), rounds.end(), [](const auto& a, const auto& b) {
        return a.received_ns - a.sent_ns < b.received_ns - b.sent_ns;
      });
  const TimeNs rtt = best->received_ns - best->sent_ns;
  // The midpoint without overflow: steady clocks count from boot, far from the int64 limit.
  const TimeNs midpoint = best->sent_ns + rtt / 2;
  return ClockOffset{
      .offset_ns = best->peer_ns - midpoint, .bound_ns = (rtt + 1) / 2, .rtt_ns = rtt};
}

std::optional<std::vector<int>> gather_displacements(std::span<const int> lengths) {
  std::vector<int> starts(lengths.size());
  std::int64_t total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (total > std::numeric_limits<int>::max())
      return std::nullopt;
    starts[i] = static_cast<int>(total);
    total += lengths[i];
  }
  return starts;
}

}  // namespace llmbench::dist
