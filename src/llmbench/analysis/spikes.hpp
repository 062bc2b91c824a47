#pragma once
/// @file
/// P99 spikes over the time windows of one run (docs/sweep.md "Spikes"): windows whose p99
/// departs from what the run's own steady behaviour explains, with when it happened and what was
/// in flight, summarized (count, worst, when) rather than listed line by line.
///
/// What the steady behaviour explains, per metric (each judged only after the warm-up,
/// `find_warmup`):
/// - ITL is split by whether the gap held a prefill (`Window::itl_decode_ms`,
///   `Window::itl_prefill_ms`): a step that finishes a prefill stalls every decode in it, at the
///   rate requests arrive, which is steady behaviour; it is reported once as "prefill
///   interference" (`PrefillInterference`), and each class is judged against its own baseline.
/// - TTFT is judged as the ratio to the TTFT its prompt length explains (`Window::ttft_ratio`):
///   a long prompt's long TTFT is not a spike.
/// For each series the baseline is the median over the windows of the window's p99, and a window
/// spikes when its p99 exceeds both `multiple` × the baseline and Tukey's far-out fence Q3 +
/// `iqr_multiple` × (Q3 − Q1) of the windows' p99s (J. W. Tukey, "Exploratory Data Analysis",
/// 1977): the median ignores the spikes themselves, and the fence the run's own spread, so a
/// stall that recurs in a quarter of the windows or more is the run's steady behaviour (a
/// KV-starved engine's preemptions: the batching rule's finding), not a spike.

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
  double multiple = 3.0;        ///< a window spikes above multiple × the baseline ...
  double iqr_multiple = 3.0;    ///< ... and above Q3 + iqr_multiple × (Q3 − Q1)
  double percentile = 99;       ///< the window percentile compared; one of the windows' percentiles
  std::size_t min_windows = 3;  ///< fewer windows with samples of a series: no baseline for it
  /// Prefill interference is reported when the with-prefill baseline is at least this multiple
  /// of the decode-only one.
  double interference_ratio = 1.5;
};

/// One spike: the window, the value against the typical window, and what was in flight.
struct Spike {
  SpikeMetric metric = SpikeMetric::Itl;
  bool prefill_step = false;  ///< ITL: the spiking gaps held a prefill (judged as that class)
  std::size_t window = 0;     ///< index into the windows
  TimeNs start_ns = 0;        ///< the window's start (ns since run start)
  TimeNs end_ns = 0;
  double value_ms = std::numeric_limits<double>::quiet_NaN();     ///< the window's p99 (ms)
  double baseline_ms = std::numeric_limits<double>::quiet_NaN();  ///< the class's median window
  /// How far above its baseline: value / baseline for ITL; for TTFT the window's p99 of
  /// TTFT ÷ explained TTFT over the baseline of that ratio.
  double ratio = std::numeric_limits<double>::quiet_NaN();
  double mean_in_flight = 0;      ///< requests in flight in the window (time-weighted mean)
  std::size_t max_in_flight = 0;  ///< most requests in flight at once in the window
  std::size_t samples = 0;        ///< the window's samples of the metric
  std::size_t completed = 0;      ///< requests completed in the window
};

/// Prefill interference: the p99 ITL of the median window in gaps that held a prefill against
/// gaps that did not.
struct PrefillInterference {
  bool found = false;  ///< with-prefill ≥ `SpikeRule::interference_ratio` × without
  double with_prefill_ms = std::numeric_limits<double>::quiet_NaN();
  double without_prefill_ms = std::numeric_limits<double>::quiet_NaN();
  std::size_t windows = 0;  ///< windows with gaps that held a prefill
};

/// The spikes of one run and the baselines they were judged against.
struct SpikeReport {
  std::vector<Spike> spikes;  ///< in window order, ITL before TTFT within a window
  /// The decode-only ITL baseline (gaps without a prefill; the with-prefill one when every gap
  /// held one); NaN: too few windows.
  double itl_baseline_ms = std::numeric_limits<double>::quiet_NaN();
  double itl_prefill_baseline_ms = std::numeric_limits<double>::quiet_NaN();
  double ttft_baseline_ms = std::numeric_limits<double>::quiet_NaN();  ///< p99 TTFT, median window
  double ttft_ratio_baseline = std::numeric_limits<double>::quiet_NaN();
  PrefillInterference interference;
  std::size_t warmup_windows = 0;  ///< leading windows not judged (`find_warmup`)
  std::size_t judged_windows = 0;  ///< windows judged
  /// The spike with the largest ratio; null when none.
  [[nodiscard]] const Spike* worst() const noexcept;
};

/// Applies `rule` to `windows` (`time_windows`'s, every window after the warm-up, partial and
/// draining ones included: a spike in the drain is still a spike). Throws `Exception` naming
/// `--spike-multiple` when `rule.multiple` is not > 1 and finite.
SpikeReport find_spikes(const std::vector<Window>& windows, const SpikeRule& rule);

/// One line that summarizes the spikes: "none" or "2 (worst: p99 ITL 712.0 ms = 7.0x its
/// baseline at 5.0-6.0 s; windows at 2.0, 5.0 s)", times of at most 5 windows named.
std::string spike_summary(const SpikeReport& report, const SpikeRule& rule);

/// "prefill interference: p99 ITL 38.0 ms in steps with prefill, 7.7 ms without" or "" when
/// none was found.
std::string interference_line(const SpikeReport& report, const SpikeRule& rule);

/// At most one line (empty when there is no spike): "spikes: " + `spike_summary`. Kept for
/// callers that print lines per point.
std::vector<std::string> spike_lines(const SpikeReport& report, const SpikeRule& rule);

}  // namespace llmbench::analysis
