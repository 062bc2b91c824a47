#pragma once
/// @file
/// Fixed time windows over one run (docs/sweep.md "Time windows"): per window
/// the completed requests, output tokens/s, requests in flight and TTFT / ITL percentiles, and
/// the warm-up left out of every rule, and the stability verdict (stable, unstable, saturated:
/// a trend test over the steady windows, trend.hpp). Pure functions of records.
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

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench::analysis {

/// How close another request's first chunk must lie to the end of an ITL gap to count as
/// finished in that gap: chunks of one engine step reach the client within this of each other.
inline constexpr TimeNs kPrefillTolerance = 1'000'000;

/// The TTFT the prefill work explains: max(intercept + slope × tokens, floor), fitted over the
/// completed requests of one run (`fit_ttft_model`) with tokens = the request's own prompt plus
/// the prompts of the requests sent before it that had no first chunk yet (the prefill queued
/// ahead of it, as the client sees it). TTFT = queueing + prefill, both growing with those
/// tokens: a 4k-token prompt's TTFT is not a spike beside 100-token ones, nor is the last
/// request of a burst.
struct TtftModel {
  double intercept_ms = 0;
  double slope_ms_per_token = 0;  ///< ≥ 0
  double floor_ms = 0;            ///< the run's 10th-percentile TTFT: the least a TTFT can be
  std::size_t points = 0;         ///< requests the fit used
  /// The explained TTFT of a prompt of `tokens` (ms, > 0 when the floor is).
  [[nodiscard]] double expected_ms(double tokens) const noexcept;
};

/// Fits `TtftModel` to (prompt tokens, TTFT ms) pairs by Theil-Sen (the median of pairwise
/// slopes over at most 400 evenly spaced pairs of the list, clamped at 0; the intercept the
/// median of TTFT − slope × tokens). Pairs with a NaN are left out; none: a model of zeros.
TtftModel fit_ttft_model(const std::vector<std::pair<double, double>>& points);

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
  /// Time-weighted mean of requests scheduled but not yet sent (`scheduled_ns` to `sent_ns`):
  /// the client's own queue (the wait behind `--max-concurrency`, and lateness).
  double mean_queued = 0;
  metrics::Stats ttft_ms;  ///< TTFT of requests whose first chunk is in the window
  metrics::Stats itl_ms;   ///< ITL samples of chunks received in the window
  /// The ITL samples whose gap held no other request's first output chunk (decode steps that
  /// finished no prefill) and those whose gap held one (`kPrefillTolerance`): a step that
  /// finishes a prefill stalls every decode in it, which is the engine's steady behaviour,
  /// not a spike (docs/sweep.md "Spikes").
  metrics::Stats itl_decode_ms;
  metrics::Stats itl_prefill_ms;
  /// Each TTFT divided by the TTFT its prefill work explains (`TtftModel` fitted over the run):
  /// 1 is a request as fast as its prompt and the prompts queued ahead of it predict.
  metrics::Stats ttft_ratio;
  /// Field-by-field equality (`Stats` as its `operator==` says: NaN equals NaN).
  bool operator==(const Window&) const = default;
};

/// Cuts `records` (times in ns since run start) into windows of `options.width_ns`, by the
/// assignment rule of this file. Records with chunks are read as they are; no window when no
/// non-warm-up request was sent. Throws `Exception` naming `--window-s` when the width is ≤ 0.
std::vector<Window> time_windows(const std::vector<metrics::RequestRecord>& records,
                                 const WindowOptions& options);

/// `time_windows` of `records` with the simulator's token runs appended to their chunks
/// (`metrics::expand_token_runs`), computed without building the chunks and without a step per
/// token where a run's tokens follow its grid (the ITL samples of one grid instant share its
/// gap). A window's ITL samples are summed in the runs' order: bit-identical to the expanded
/// chunks' windows when the runs are listed request by request. `records` must carry no chunks
/// of their own; throws `Exception` as `metrics::check_token_runs` does.
std::vector<Window> time_windows(const std::vector<metrics::RequestRecord>& records,
                                 const metrics::TokenRuns& tokens, const WindowOptions& options);

/// One observation of the engine's queue (the simulator's steps, or a real server's `/metrics`
/// scrapes; docs/sweep.md "Batching failure").
struct EngineSample {
  TimeNs t_ns = 0;     ///< ns since run start (a step's start, or a scrape's time)
  double running = 0;  ///< requests in the running batch
  double waiting = 0;  ///< requests queued, not scheduled
  double weight = 1;   ///< a step's duration (any unit), 1 for a scrape
  /// A scrape served far later than asked (docs/telemetry.md "Late scrapes"): its gauges could
  /// be from any time in a long interval, so the rules leave it out.
  bool late = false;
};

/// The engine's queue over one window: the weighted means of its samples (late ones left out).
struct EngineWindow {
  std::size_t samples = 0;
  double mean_running = std::numeric_limits<double>::quiet_NaN();
  double mean_waiting = std::numeric_limits<double>::quiet_NaN();
};

/// `samples` averaged over `windows` (a sample belongs to the window its time falls in; those
/// outside every window and late ones are left out). One entry per window.
std::vector<EngineWindow> engine_windows(const std::vector<Window>& windows,
                                         const std::vector<EngineSample>& samples);

/// The windows a rule judges and the start-up transient it leaves out (docs/sweep.md
/// "Warm-up"): the full windows that end by the last send (the load was offered over all of
/// them), minus their first `warmup` ones. The warm-up is the largest of (a) the MSER truncation
/// (trend.hpp, over the first half) of the output tok/s series, (b) those of the mean ITL and of
/// the p99 of TTFT over its explained value (`ttft_ratio`), each kept only when material (the
/// medians of the dropped and kept windows differ by more than 10%, and their means by more
/// than three standard errors), and (c) when the engine's queue is observed, the start-up ramp
/// of its batch: the windows, from the first, whose mean running batch is under 90% of the
/// median batch of the second half while requests wait (a closed loop whose requests all
/// arrive at once fills its batch over several steps).
struct Warmup {
  std::vector<std::size_t> judged;  ///< indices into the windows, in time order
  std::size_t warmup = 0;           ///< leading entries of `judged` left out
  /// False when a series' material MSER warm-up reached the cap of half the judged windows
  /// (White's sign of a run that had not settled: the transient may go on beyond it; the
  /// stability rule calls it unstable). The warm-up itself is at most half the judged windows.
  bool settled = true;
  std::string unsettled;  ///< the first series that had not settled ("" when all had)
  std::string note;       ///< which series set the warm-up ("" when none was dropped)
  /// Indices of the steady windows (`judged` after the warm-up).
  [[nodiscard]] std::vector<std::size_t> steady() const;
};

/// Applies the warm-up rule to `windows`; `engine` (one entry per window, from
/// `engine_windows`) may be empty when the engine's queue was not observed.
Warmup find_warmup(const std::vector<Window>& windows, const std::vector<EngineWindow>& engine);

/// The steady-state verdict (docs/sweep.md "Stability").
enum class Steadiness : std::uint8_t {
  Stable,     ///< no trend in throughput, TTFT or ITL after the warm-up
  Unstable,   ///< not settled within the run, or a material trend after the warm-up
  Saturated,  ///< the queue grows without bound (or a standing queue at the engine)
  TooShort,   ///< fewer steady windows than the rule needs to judge
};

/// Each state's name in results and consoles.
struct SteadinessName {
  Steadiness state = Steadiness::Stable;
  std::string_view name;
};
inline constexpr std::array<SteadinessName, 4> kSteadinessNames{{
    {.state = Steadiness::Stable, .name = "stable"},
    {.state = Steadiness::Unstable, .name = "unstable"},
    {.state = Steadiness::Saturated, .name = "saturated"},
    {.state = Steadiness::TooShort, .name = "too short"},
}};

/// "stable", "unstable", "saturated", "too short".
std::string_view to_string(Steadiness state) noexcept;

/// The stability rule's thresholds (ours, stated in docs/sweep.md "Stability").
struct StabilityRule {
  /// Steady windows needed to judge at all: fewer cannot show a trend (a Mann-Kendall test of 5
  /// windows cannot go below p = 0.028, so a drift would read as stable; of 10, 8e-5).
  std::size_t min_windows = 10;
  double alpha = 0.01;      ///< Mann-Kendall two-sided significance of a trend
  double tolerance = 0.10;  ///< least relative change of tok/s or ITL that matters
  /// Least relative change of TTFT over its explained value that matters: TTFT is the noisiest
  /// of the three (a few requests queued move it; a 2 x drift moves it 100%).
  double ttft_tolerance = 0.25;
  double queue_growth = 2;        ///< least growth of queued requests (count) for saturation
  double queue_growth_rel = 0.2;  ///< and relative to its level at the start of the span
  /// Engine observed: a standing queue is requests waiting (window mean ≥ 1) in at least this
  /// share of the steady windows.
  double standing_queue_share = 0.9;
};

/// The verdict of `stability` and why.
struct Stability {
  bool stable = false;  ///< state == Stable
  Steadiness state = Steadiness::TooShort;
  std::string reason;  ///< one sentence with the numbers that decided
  /// Relative change of output tok/s and of mean ITL over the steady span (Theil-Sen line, end
  /// against start, over its level); NaN when unknown.
  double throughput_spread = metrics::kUndefined;
  double latency_spread = metrics::kUndefined;
  double ttft_change = metrics::kUndefined;   ///< relative change of the mean TTFT
  double queue_growth = metrics::kUndefined;  ///< growth of queued requests over the span
  std::size_t judged_windows = 0;             ///< full windows that end by the last send
  std::size_t warmup_windows = 0;             ///< of which left out as warm-up
  TimeNs steady_start_ns = 0;                 ///< start of the first steady window
};

/// Applies `rule` to `windows` (as `time_windows` made them) after the warm-up (`find_warmup`):
/// - Saturated when the requests queued grow through the steady span (Mann-Kendall p < alpha,
///   the Theil-Sen growth ≥ `queue_growth` and ≥ `queue_growth_rel` of its starting level, and
///   the second half still growing): the client's outstanding requests (in flight + queued in
///   the client) and, when observed, the engine's waiting requests; or, engine observed, a
///   standing queue (requests waiting in ≥ `standing_queue_share` of the steady windows).
/// - Unstable when the run had not settled (`Warmup::settled`), or output tok/s per request in
///   flight (the server's pace, whatever the offered load), mean TTFT over its explained value
///   or mean ITL trends (p < alpha) by more than `tolerance` (TTFT: `ttft_tolerance`) of its
///   level over the steady span.
/// - TooShort under `min_windows` steady windows; else Stable.
/// `engine` may be empty (not observed).
Stability stability(const std::vector<Window>& windows, const std::vector<EngineSample>& engine,
                    const StabilityRule& rule);
/// `stability` without the engine's queue.
Stability stability(const std::vector<Window>& windows, const StabilityRule& rule);

}  // namespace llmbench::analysis
