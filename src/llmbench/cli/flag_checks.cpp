#include "llmbench/cli/flag_checks.hpp"

#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/core/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

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

}  // namespace llmbench::cli
