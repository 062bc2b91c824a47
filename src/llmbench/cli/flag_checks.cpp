#include "llmbench/cli/flag_checks.hpp"

#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/core/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unistd.h>

namespace llmbench::cli {

namespace {

constexpr double kMaxDouble = std::numeric_limits<double>::max();

}  // namespace

void check_engine_flags(const EngineFlags& f, const std::string& prefix) {
  const std::string p = "--" + prefix;
  if (f.block_size.value_or(0) < 0) {
    throw Exception(
        Error{fmt::format("must be a positive number of tokens (or 0 for the default), got {}",
                          *f.block_size),
              p + "block-size", -1});
  }
  if (f.step_overhead_us) {
    require_in_range(*f.step_overhead_us, 0, kMaxDouble, p + "step-overhead-us",
                     "a finite number of microseconds >= 0");
  }
  if (f.compute_efficiency) {
    require_in_range(*f.compute_efficiency, 0, 1, p + "compute-efficiency", "in (0, 1]");
  }
  if (f.memory_efficiency) {
    require_in_range(*f.memory_efficiency, 0, 1, p + "memory-efficiency", "in (0, 1]");
  }
}

void check_serve_flags(const ServeFlags& f, const std::string& prefix) {
  check_engine_flags(f.engine, prefix);
  if (f.max_model_len && *f.max_model_len < 1) {
    throw Exception(Error{fmt::format("must be a positive number of tokens, got {} (leave it out "
                                      "for the model profile's context length)",
                                      *f.max_model_len),
                          "--" + prefix + "max-model-len", -1});
  }
}

void check_plan_flags(std::int64_t block_size, std::optional<double> activation_peak_gib,
                      std::optional<double> non_torch_gib) {
  if (block_size < 0) {
    throw Exception(
        Error{fmt::format("must be a positive number of tokens (or 0 for the default), got {}",
                          block_size),
              "--block-size", -1});
  }
  if (activation_peak_gib) {
    require_in_range(*activation_peak_gib, 0, kMaxDouble, "--activation-peak-gib",
                     "a finite number of GiB >= 0");
  }
  if (non_torch_gib) {
    require_in_range(*non_torch_gib, 0, kMaxDouble, "--non-torch-gib",
                     "a finite number of GiB >= 0");
  }
}

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

}  // namespace llmbench::cli
