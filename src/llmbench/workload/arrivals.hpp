#pragma once
/// @file
/// Arrival schedules for open-loop load (`--request-rate`, `--burstiness`), drawn up front from a
/// seed so a run is reproducible across standard libraries (core/rng.hpp).

#include "llmbench/core/clock.hpp"
#include "llmbench/workload/dataset.hpp"

#include <cstdint>
#include <vector>

namespace llmbench::workload {

/// Inter-arrival process parameters (vLLM `bench serve` semantics).
struct ArrivalOptions {
  double request_rate = 0;  ///< requests/s; +inf (or ≤ 0 treated as inf) = all at t = 0
  double burstiness = 1.0;  ///< gamma shape k: 1 = Poisson, < 1 burstier, > 1 smoother,
                            ///< +inf = constant spacing 1/rate
  std::uint64_t seed = 0;   ///< master seed; the "arrivals" stream is derived from it
};

/// Arrival times (ns from run start, non-decreasing; the first request at 0, each later one a
/// drawn gap after the one before) for `count` requests. Gaps are Gamma(k, 1/(rate·k)) so the mean
/// is 1/rate and CV 1/sqrt(k). Throws `Exception` on rate NaN or burstiness ≤ 0.
std::vector<TimeNs> arrival_times(std::int64_t count, const ArrivalOptions& options);

/// Arrival times until `duration_ns` (exclusive), for `--duration` runs; at most `max_count`.
std::vector<TimeNs> arrival_times_until(TimeNs duration_ns, std::int64_t max_count,
                                        const ArrivalOptions& options);

/// The dataset's own schedule (trace replay, `Sample::arrival_ns`): the arrival times of
/// samples first, first + 1, ... (at most `count` of them, never wrapping past the end), rebased
/// so the first is 0. Empty when sample `first` has no arrival time (the arrival process then
/// schedules the run). Throws `Exception` when a later sample has none or comes earlier.
std::vector<TimeNs> dataset_arrivals(const std::vector<Sample>& samples, std::size_t first,
                                     std::int64_t count);

}  // namespace llmbench::workload
