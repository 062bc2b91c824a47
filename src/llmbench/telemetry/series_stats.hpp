#pragma once
/// @file
/// Small statistics over a telemetry series (server gauges, GPU samples): NaN entries (a sample
/// the source did not give) are skipped. Percentiles interpolate linearly between order
/// statistics (numpy's default "linear" method, as docs/metrics.md states for request metrics),
/// so the numbers line up with the rest of the results. Not in `metrics` on purpose: telemetry
/// may use only core and http (docs/architecture.md "Modules").

#include <cstddef>
#include <limits>
#include <span>

namespace llmbench::telemetry {

/// Mean, min, max and p50/p90/p99 of the finite values of a series; every field NaN (count 0)
/// when there is none.
struct SeriesStats {
  std::size_t count = 0;
  double mean = std::numeric_limits<double>::quiet_NaN();
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
  double p50 = std::numeric_limits<double>::quiet_NaN();
  double p90 = std::numeric_limits<double>::quiet_NaN();
  double p99 = std::numeric_limits<double>::quiet_NaN();
};

/// Statistics of the non-NaN values of `values`.
[[nodiscard]] SeriesStats describe_series(std::span<const double> values);

/// How much a counter grew over a series of its readings: the sum of the rises between
/// consecutive non-NaN readings, where a drop is a reset (the counter restarted from 0, so the
/// new reading is all rise: Prometheus's `increase()` rule). NaN with fewer than two readings.
[[nodiscard]] double counter_increase(std::span<const double> values);

}  // namespace llmbench::telemetry
