#pragma once
/// @file
/// The metric catalog: every number of a run's `Summary` with its name, unit and results-JSON
/// key, in one place. The console table and the results document (report), the `--percentile-
/// metrics` and `--slo` help texts, the p99 intervals of the validity verdict (app) and the
/// sweep's rows read it, instead of spelling the keys again. Key spellings are vLLM's `vllm
/// bench serve` ones where it has the metric (docs/metrics.md).

#include "llmbench/metrics/summary.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::metrics {

/// A per-request latency with a distribution (milliseconds). Its results-JSON keys are
/// `<stat>_<key>_ms` for stat in mean, median, std, p<q>, min, max (`latency_key`).
struct LatencyMetric {
  std::string_view key;     ///< `--percentile-metrics` name and JSON infix ("ttft")
  std::string_view label;   ///< short console label ("TTFT")
  std::string_view header;  ///< console section header ("Time to First Token")
  Stats Summary::*stats;    ///< its statistics in the summary
  bool tail_interval;       ///< its p99 gets a confidence interval (the validity verdict)
};

/// Every latency, vLLM's four first (with vLLM's names and headers), in the order the console
/// and `--percentile-metrics` list them.
inline constexpr std::array<LatencyMetric, 10> kLatencyMetrics{{
    {"ttft", "TTFT", "Time to First Token", &Summary::ttft_ms, true},
    {"tpot", "TPOT", "Time per Output Token (excl. 1st token)", &Summary::tpot_ms, true},
    {"itl", "ITL", "Inter-token Latency", &Summary::itl_ms, true},
    {"e2el", "E2EL", "End-to-end Latency", &Summary::e2el_ms, true},
    {"ttfat", "TTFAT", "Time to First Answer Token", &Summary::ttfat_ms, false},
    {"inter_chunk", "ICL", "Inter-chunk Latency", &Summary::inter_chunk_ms, false},
    {"ttft_sched", "TTFT-sched", "Time to First Token (from scheduled)", &Summary::ttft_sched_ms,
     false},
    {"e2el_sched", "E2EL-sched", "End-to-end Latency (from scheduled)", &Summary::e2el_sched_ms,
     false},
    {"lateness", "Lateness", "Client Send Lateness", &Summary::lateness_ms, false},
    {"queue_wait", "Queue wait", "Queue Wait (behind max concurrency)", &Summary::queue_wait_ms,
     false},
}};

/// The latency named `key` ("ttft"); null for an unknown name.
const LatencyMetric* find_latency_metric(std::string_view key) noexcept;

/// "ttft, tpot, itl, ..." (help texts and the "known: ..." of errors).
std::string latency_metric_names();

/// vLLM's spelling of a percentile in key names and labels: "99" for 99.0, "99.9" for 99.9
/// (Python's `str(int(p)) if int(p) == p else str(p)`).
std::string percentile_label(double q);

/// The results-JSON key of one statistic of a latency: `latency_key("mean", "ttft")` =
/// "mean_ttft_ms"; `latency_key(99.0, "ttft")` = "p99_ttft_ms".
std::string latency_key(std::string_view stat, std::string_view metric);
/// As above for the percentile `q` ("p<label>").
std::string latency_key(double q, std::string_view metric);

/// A whole-run number of the summary with its results-JSON key and unit.
struct SummaryNumber {
  std::string_view key;   ///< results-JSON key (vLLM's where it has one)
  std::string_view unit;  ///< "s", "req/s", "tok/s", "requests", "tokens"
  double (*value)(const Summary&);
  /// A count, written as a JSON integer (the units "requests" and "tokens").
  [[nodiscard]] constexpr bool integer() const noexcept {
    return unit == "requests" || unit == "tokens";
  }
};

/// The scalar numbers of the results document, in its order.
extern const std::array<SummaryNumber, 19> kSummaryNumbers;

/// "duration, completed, ...": the keys of `kSummaryNumbers` (help texts).
std::string summary_number_names();

/// The value of the results-JSON number `key` of `summary`, as `report::results_json` writes
/// it with `percentiles` as its `--metric-percentiles` (a p<q> key of a percentile not asked
/// for, or not in the statistics, is NaN; with no `percentiles`, the statistics' own, which the
/// document writes as null); nullopt for a key that is not a number of the summary. `has_slo`:
/// `request_goodput` is NaN without a
/// `--goodput` SLO, as the document writes null.
std::optional<double> summary_value(const Summary& summary, std::string_view key,
                                    const std::vector<double>& percentiles, bool has_slo);

}  // namespace llmbench::metrics
