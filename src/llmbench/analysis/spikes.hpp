#pragma once
/// @file
/// P99 spikes over the time windows of one run (issue 15 item 5; docs/sweep.md "Spikes"): a
/// window whose p99 ITL or p99 TTFT exceeds a stated multiple of the run's typical window (the
/// median over the windows of that window percentile), with when it happened and what was in
/// flight. The median is the typical window because it ignores the spikes themselves as long as
/// fewer than half the windows spike.

#include "llmbench/analysis/windows.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::analysis {

/// The latency a spike is found in.
enum class SpikeMetric : std::uint8_t { Itl, Ttft };

/// Each metric's name in results and messages.
struct SpikeMetricName {
  SpikeMetric metric = SpikeMetric::Itl;
  std::string_view name;
};
inline constexpr std::array<SpikeMetricName, 2> kSpikeMetrics{{
    {.metric = SpikeMetric::Itl, .name = "itl"},
    {.metric = SpikeMetric::Ttft, .name = "ttft"},
}};

/// "itl" or "ttft".
std::string_view to_string(SpikeMetric metric) noexcept;

/// The rule's parameters.
struct SpikeRule {
  double multiple = 3.0;        ///< a window spikes when its percentile > multiple × the median
  double percentile = 99;       ///< the window percentile compared; one of the windows' percentiles
  std::size_t min_windows = 3;  ///< fewer windows with samples of a metric: no baseline for it
};

/// One spike: the window, the value against the typical window, and what was in flight.
struct Spike {
  SpikeMetric metric = SpikeMetric::Itl;
  std::size_t window = 0;  ///< index into the windows
  TimeNs start_ns = 0;     ///< the window's start (ns since run start)
  TimeNs end_ns = 0;
  double value_ms = std::numeric_limits<double>::quiet_NaN();     ///< the window's percentile
  double baseline_ms = std::numeric_limits<double>::quiet_NaN();  ///< the run's median window
  double ratio = std::numeric_limits<double>::quiet_NaN();        ///< value / baseline
  double mean_in_flight = 0;      ///< requests in flight in the window (time-weighted mean)
  std::size_t max_in_flight = 0;  ///< most requests in flight at once in the window
  std::size_t samples = 0;        ///< the window's samples of the metric
  std::size_t completed = 0;      ///< requests completed in the window
};

/// The spikes of one run and the baselines they were judged against.
struct SpikeReport {
  std::vector<Spike> spikes;  ///< in window order, ITL before TTFT within a window
  double itl_baseline_ms = std::numeric_limits<double>::quiet_NaN();   ///< NaN: too few windows
  double ttft_baseline_ms = std::numeric_limits<double>::quiet_NaN();  ///< NaN: too few windows
};

/// Applies `rule` to `windows` (`time_windows`'s, every window, partial and draining ones
/// included: a spike in the drain is still a spike). For each metric the baseline is the median
/// of the windows' `rule.percentile` over the windows with at least one sample of it; with
/// fewer than `rule.min_windows` such windows that metric has no baseline and no spike. Throws
/// `Exception` naming `--spike-multiple` when `rule.multiple` is not > 1 and finite.
SpikeReport find_spikes(const std::vector<Window>& windows, const SpikeRule& rule);

/// One console line per spike ("spike: p99 ITL 512.3 ms = 24.4 x the median window (21.0 ms)
/// at 2.00-3.00 s, 4.0 in flight (max 4)"); `multiple` is the rule's.
std::vector<std::string> spike_lines(const SpikeReport& report, const SpikeRule& rule);

}  // namespace llmbench::analysis
