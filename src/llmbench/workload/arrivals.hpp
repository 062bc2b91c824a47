#pragma once
/// @file
/// Arrival schedules for open-loop load (`--request-rate`, `--burstiness`), drawn up front from a
/// seed so a run is reproducible across standard libraries (core/rng.hpp).

#include "llmbench/core/clock.hpp"
#include "llmbench/core/name_table.hpp"
#include "llmbench/workload/dataset.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

namespace llmbench::workload {

/// `--ramp-up-strategy` (vLLM `bench serve`): the request rate moves from a start to an end rate
/// over the requests of the run instead of staying at `--request-rate`.
enum class RampUp : std::uint8_t { None, Linear, Exponential };

/// The names `--ramp-up-strategy` takes (the one table behind parsing, messages and help).
inline constexpr auto kRampUpNames = make_name_table<RampUp>({
    {RampUp::Linear, "linear"},
    {RampUp::Exponential, "exponential"},
});

/// Parses a `--ramp-up-strategy` name; throws `Exception` naming the flag and the valid names.
RampUp parse_ramp_up(std::string_view name);

/// Inter-arrival process parameters (vLLM `bench serve` semantics).
struct ArrivalOptions {
  double request_rate = 0;  ///< requests/s; +inf (or ≤ 0 treated as inf) = all at t = 0
  double burstiness = 1.0;  ///< gamma shape k: 1 = Poisson, < 1 burstier, > 1 smoother,
                            ///< +inf = constant spacing 1/rate
  std::uint64_t seed = 0;   ///< master seed; the "arrivals" stream is derived from it
  /// With a ramp, request i of N (0-based) is drawn at rate r_i instead of `request_rate`, as
  /// vLLM's `_get_current_request_rate` does (benchmarks/serve.py): progress p = i / max(N − 1,
  /// 1); linear r_i = start + (end − start)·p; exponential r_i = start·(end/start)^p. The gap
  /// before request i is Gamma(k, 1/(r_i·k)); the first request is at 0, as without a ramp.
  RampUp ramp_up = RampUp::None;
  double ramp_up_start_rps = 0;  ///< `--ramp-up-start-rps`
  double ramp_up_end_rps = 0;    ///< `--ramp-up-end-rps`
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

/// The one open-loop rule, for `run` (loadgen) and `simulate` alike: requests go at planned
/// times when the dataset brings its own schedule (`own_schedule`: trace replay), when a finite
/// positive `request_rate` is asked, or under a ramp; otherwise the loop is closed, each request
/// sent when a concurrency slot frees. In an open loop a record's `scheduled_ns` is its planned
/// time and the wait behind `--max-concurrency` is `slot_ns` − `scheduled_ns`
/// (docs/metrics.md).
constexpr bool is_open_loop(bool own_schedule, double request_rate, RampUp ramp_up) noexcept {
  // NaN fails both comparisons.
  return own_schedule ||
         (request_rate > 0 && request_rate < std::numeric_limits<double>::infinity()) ||
         ramp_up != RampUp::None;
}

}  // namespace llmbench::workload
