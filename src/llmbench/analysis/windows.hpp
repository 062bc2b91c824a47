#pragma once
/// @file
/// Fixed time windows over one run (issue 15 item 4; docs/sweep.md "Time windows"): per window
/// the completed requests, output tokens/s, requests in flight and TTFT / ITL percentiles, and
/// the stability rule over the last windows (GenAI-Perf / perf_analyzer's rule: the last three
/// measurements within 10% on throughput and latency). Pure functions of records.
///
/// Assignment rule (every sample lands in exactly one window, so the windows add up to the
/// run's totals): a request's TTFT belongs to the window of its first output chunk; an ITL
/// sample (docs/metrics.md: the gap to the previous chunk spread over the later chunk's tokens)
/// to the window of the later chunk; output tokens to the window of the chunk that carried them;
/// a completion or failure to the window of `done_ns`. Only completed, non-warm-up requests give
/// tokens, TTFT and ITL (as in `metrics::summarize`); every non-warm-up request counts in flight
/// from `sent_ns` to `done_ns`.

#include "llmbench/core/clock.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/metrics/statistics.hpp"
#include "llmbench/metrics/token_runs.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llmbench::analysis {

/// How `time_windows` cuts a run.
struct WindowOptions {
  TimeNs width_ns = 1'000'000'000;          ///< window length (`--window-s`, default 1 s); > 0
  std::vector<double> percentiles{50, 99};  ///< TTFT / ITL percentiles per window, in [0, 100]
};

/// One window [start_ns, end_ns) of a run. The windows start at the run's first send (the
/// start of `Summary::duration_s`) and end at its last completion; the last one may be shorter
/// (`full` false), and its rates are over its own length.
struct Window {
  TimeNs start_ns = 0;  ///< ns since run start
  TimeNs end_ns = 0;    ///< ns since run start (exclusive)
  bool full = true;     ///< false for a last window shorter than the width
  /// True when the window ends no later than the last measured send: the load was still being
  /// offered over all of it (the drain after the last send is not steady state).
  bool sending = true;
  std::size_t completed = 0;       ///< ok requests whose `done_ns` is in the window
  std::size_t failed = 0;          ///< failed requests whose `done_ns` is in the window
  std::int64_t output_tokens = 0;  ///< tokens of chunks received in the window
  double output_throughput = 0;    ///< output_tokens / window length (tok/s)
  double request_throughput = 0;   ///< completed / window length (req/s)
  double mean_in_flight = 0;       ///< time-weighted mean of requests between sent and done
  std::size_t max_in_flight = 0;   ///< most requests in flight at one instant
  metrics::Stats ttft_ms;          ///< TTFT of requests whose first chunk is in the window
  metrics::Stats itl_ms;           ///< ITL samples of chunks received in the window
  /// Field-by-field equality (`Stats` as its `operator==` says: NaN equals NaN).
  bool operator==(const Window&) const = default;
};

/// Cuts `records` (times in ns since run start) into windows of `options.width_ns`, by the
/// assignment rule of this file. Records with chunks are read as they are; no window when no
/// non-warm-up request was sent. Throws `Exception` naming `--window-s` when the width is ≤ 0.
std::vector<Window> time_windows(const std::vector<metrics::RequestRecord>& records,
                                 const WindowOptions& options);

/// `time_windows` of `records` with the simulator's token runs appended to their chunks
/// (`metrics::expand_token_runs`), computed without building the chunks. `records` must carry
/// no chunks of their own; throws `Exception` as `metrics::check_token_runs` does.
std::vector<Window> time_windows(const std::vector<metrics::RequestRecord>& records,
                                 const metrics::TokenRuns& tokens, const WindowOptions& options);

/// The stability rule: over the last `windows` full windows that end by the last send
/// (`Window::sending`: the load was offered throughout; a count-bounded run's drain, when
/// in-flight requests finish with no new ones arriving, is left out), max / min of the output token
/// throughput and of the latency percentile must each be ≤ 1 + `tolerance` (perf_analyzer's
/// `--stability-percentage`, default 10%, over its last 3 measurements; GenAI-Perf inherits it).
/// The latency is ITL at `latency_percentile`: per-token decode latency, the metric with enough
/// samples in a 1 s window (a window holds few TTFTs).
struct StabilityRule {
  std::size_t windows = 3;         ///< how many trailing full windows are compared (≥ 2)
  double tolerance = 0.10;         ///< allowed max/min − 1
  double latency_percentile = 99;  ///< must be one of `WindowOptions::percentiles`
};

/// The verdict of `stability` and why.
struct Stability {
  bool stable = false;
  std::string reason;                              ///< one sentence with the numbers compared
  double throughput_spread = metrics::kUndefined;  ///< max/min − 1 of output tok/s; NaN if unknown
  double latency_spread = metrics::kUndefined;     ///< max/min − 1 of the ITL percentile
};

/// Applies `rule` to `windows` (as `time_windows` made them). Not stable when there are fewer
/// than `rule.windows` full sending windows, when one of them has no output or no ITL sample, or
/// when a spread exceeds the tolerance; `reason` says which and by how much.
Stability stability(const std::vector<Window>& windows, const StabilityRule& rule);

}  // namespace llmbench::analysis
