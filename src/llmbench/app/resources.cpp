#include "llmbench/app/resources.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <unistd.h>

namespace llmbench::app {

std::int64_t bytes_per_request_estimate(const workload::DatasetOptions& d) {
  double input = 2048;
  double output = d.output_len > 0 ? static_cast<double>(d.output_len) : 2048;
  if (d.kind == workload::DatasetKind::Random) {
    input = static_cast<double>(d.random_prefix_len) +
            static_cast<double>(d.random_input_len) * (1 + d.random_range_ratio);
    output = static_cast<double>(d.random_output_len) * (1 + d.random_range_ratio);
  } else if (d.kind == workload::DatasetKind::Sonnet) {
    input = static_cast<double>(d.sonnet_input_len);
    output = static_cast<double>(d.sonnet_output_len);
  }
  const double bytes = 8 * std::max(input, 0.0) + 48 * std::max(output, 0.0) + 2048;
  return static_cast<std::int64_t>(std::min(bytes, 1e15));
}

void check_memory_budget(std::int64_t count, const workload::DatasetOptions& dataset,
                         std::int64_t memory_bytes) {
  if (memory_bytes <= 0 || count <= 0) {
    return;
  }
  const double need =
      static_cast<double>(count) * static_cast<double>(bytes_per_request_estimate(dataset));
  if (need > static_cast<double>(memory_bytes)) {
    constexpr double kGB = 1e9;
    throw Exception(
        Error{fmt::format("{} requests would need about {:.0f} GB of memory for their prompts and "
                          "records, more than this machine's {:.0f} GB: use fewer requests (or "
                          "--duration)",
                          count, need / kGB, static_cast<double>(memory_bytes) / kGB),
              "--num-prompts", -1});
  }
}

std::int64_t physical_memory_bytes() noexcept {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) {
    return 0;
  }
  return static_cast<std::int64_t>(pages) * static_cast<std::int64_t>(page_size);
}

}  // namespace llmbench::app
