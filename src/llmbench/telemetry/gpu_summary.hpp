#pragma once
/// @file
/// The summary of the GPU samples of a run (nvml.hpp) and its results JSON: peak VRAM, mean and
/// peak power, energy from NVML's counter and cross-checked by integrating power over time, J per
/// output token, and the time spent throttled per reason. The arithmetic, stated once here and in
/// docs/telemetry.md:
/// - energy (counter) = the increase of `nvmlDeviceGetTotalEnergyConsumption` between the first
///   and the last sample (`counter_increase`);
/// - energy (integrated) = Σ over consecutive samples of (P_i + P_{i+1}) / 2 × (t_{i+1} − t_i)
///   (the trapezoid rule over `nvmlDeviceGetPowerUsage`), skipping pairs with a NaN power;
/// - a device's energy is the counter's when it has one, else the integral; the run's is the sum
///   over devices; J per output token = that sum / the run's output tokens (NaN for 0 tokens);
/// - time throttled by a reason = Σ (t_{i+1} − t_i) over the samples i whose reason mask has the
///   reason's bit (each interval takes the state read at its start); `any_except_idle` counts
///   the intervals with any bit but `gpu_idle`.
/// The energy and times cover the sampler's span, which brackets the run's load (started just
/// before the first request, stopped just after the last).

#include "llmbench/telemetry/nvml.hpp"
#include "llmbench/telemetry/series_stats.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace llmbench::telemetry {

/// Seconds a device spent with one throttle reason active.
struct ThrottleTime {
  std::string reason{};
  double seconds = 0;
};

/// One device over the run.
struct GpuDeviceSummary {
  GpuDeviceInfo info{};
  std::size_t samples = 0;
  double span_s = kNaN;                  ///< last − first sample time
  double peak_memory_used_bytes = kNaN;  ///< the largest `memory_used_bytes`
  SeriesStats power_w{};
  SeriesStats sm_util_pct{};
  SeriesStats mem_util_pct{};
  SeriesStats sm_clock_mhz{};
  SeriesStats mem_clock_mhz{};
  SeriesStats temperature_c{};
  SeriesStats pcie_tx_kbps{};
  SeriesStats pcie_rx_kbps{};
  double pcie_gen_min = kNaN;    ///< the lowest link generation seen (a link that trained down)
  double pcie_width_min = kNaN;  ///< the narrowest link width seen
  double energy_counter_j = kNaN;
  double energy_integrated_j = kNaN;
  double energy_j = kNaN;                 ///< counter when available, else integrated
  std::vector<ThrottleTime> throttled{};  ///< every reason of `kThrottleReasons`, table order
  double throttled_any_except_idle_s = 0;
  double ecc_corrected_increase = kNaN;
  double ecc_uncorrected_increase = kNaN;
};

/// All devices, and the energy per output token.
struct GpuTelemetrySummary {
  std::vector<GpuDeviceSummary> devices{};
  double energy_j = kNaN;  ///< Σ devices' `energy_j` (NaN when none has a value)
  std::int64_t output_tokens = 0;
  double joules_per_output_token = kNaN;
};

/// Summarizes one device's samples (the arithmetic in the file comment).
[[nodiscard]] GpuDeviceSummary summarize_gpu(const GpuSeries& series);

/// Summarizes every device and divides the energy by `output_tokens` (the run's output tokens).
[[nodiscard]] GpuTelemetrySummary summarize_gpus(const std::vector<GpuSeries>& series,
                                                 std::int64_t output_tokens);

/// The results JSON `telemetry.gpu` object: `available`, `message`, `notes`, driver versions,
/// interval, per device `info`, `series` (t_ms relative to `run_start_ns`, one array per field,
/// NaN as null, throttle masks as integers) and `summary`, and the run's energy and J/token.
[[nodiscard]] nlohmann::json gpu_telemetry_json(const GpuSampler& sampler,
                                                const GpuTelemetrySummary& summary,
                                                TimeNs run_start_ns);

}  // namespace llmbench::telemetry
