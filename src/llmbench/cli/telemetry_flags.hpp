#pragma once
/// @file
/// `llmbench run`'s telemetry flags (docs/telemetry.md): `--gpu-telemetry[=MS]` with
/// `--gpu-devices LIST` and `--nvml-library PATH`, `--scrape-metrics[=URL]` with
/// `--scrape-interval-ms`. The samplers they start are in app/telemetry.hpp.

#include "llmbench/app/plan.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

namespace llmbench::cli {

/// The telemetry flags as typed.
struct TelemetryFlags {
  /// `--gpu-telemetry[=MS]`: sample NVML every MS ms (100 when given without a value);
  /// nullopt = off.
  std::optional<int> gpu_telemetry_ms;
  std::string gpu_devices;                         ///< `--gpu-devices 0,1`; "" = every GPU
  std::string nvml_library = "libnvidia-ml.so.1";  ///< `--nvml-library` (tests pass a fake)
  /// `--scrape-metrics[=URL]`: "" = the target's base URL + /metrics; nullopt = off.
  std::optional<std::string> scrape_metrics;
  int scrape_interval_ms = 500;  ///< `--scrape-interval-ms`
};

/// Registers the telemetry flags on `app`, bound to `flags`.
void add_telemetry_flags(CLI::App& app, TelemetryFlags& flags);

/// The requested-configuration keys of the telemetry flags (one per flag, its long name with
/// '_' for '-'; null for an option not given).
[[nodiscard]] nlohmann::json telemetry_flags_json(const TelemetryFlags& flags);

/// Parses `--gpu-devices` ("0,2,3"; blanks allowed). Throws `Exception` naming the flag and the
/// position of a bad entry.
[[nodiscard]] std::vector<unsigned int> parse_gpu_devices(const std::string& text);

/// The telemetry part of a plan: the flags with `--gpu-devices` parsed. Throws `Exception` as
/// `parse_gpu_devices` does.
[[nodiscard]] app::TelemetryPlan resolve_telemetry(const TelemetryFlags& flags);

}  // namespace llmbench::cli
