#pragma once
/// @file
/// A/B comparison of two runs for `llmbench compare` and `llmbench history regress`
/// (docs/compare.md): per metric the difference of B against A (B − A, absolute and relative)
/// of its mean, p50, p90 and p99 with a percentile bootstrap interval over requests, a
/// Mann-Whitney rank test, and a verdict (bootstrap.hpp has the statistics and their sources).
///
/// The verdict rule (docs/compare.md "Verdict"): a rank-tested metric differs significantly when
/// its Holm-adjusted rank-test p-value (over the rank-tested metrics of one comparison) is below
/// `alpha` AND the bootstrap interval of its mean difference excludes 0. The sign of the mean
/// difference and the metric's direction (lower latency and error rate are better) make it
/// `Better` or `Worse`. A throughput is one value per run: resampling requests does not vary
/// the run's duration, so no honest interval or test exists within one run; its difference is
/// reported with the verdict `NotTested` (repeated runs in `llmbench history` measure its
/// run-to-run spread).

#include "llmbench/analysis/bootstrap.hpp"
#include "llmbench/metrics/record.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

namespace llmbench::analysis {

/// A metric `compare` reports.
enum class Metric : std::uint8_t {
  Ttft,               ///< time to first token, ms per request
  Tpot,               ///< time per output token, ms per request (N ≥ 2)
  Itl,                ///< inter-token latency, ms per token (resampled by request)
  E2el,               ///< end-to-end latency, ms per request
  ErrorRate,          ///< failed / measured requests (a fraction; printed in %)
  OutputThroughput,   ///< Σ N of completed requests / duration, tok/s
  RequestThroughput,  ///< completed requests / duration, req/s
};

/// Stable name ("ttft", "tpot", "itl", "e2el", "error_rate", "output_throughput",
/// "request_throughput"), as in the results keys (`mean_ttft_ms`, `output_throughput`).
std::string_view to_string(Metric metric) noexcept;
/// The metric named `name` (`to_string`'s names), or none.
std::optional<Metric> metric_from_string(std::string_view name) noexcept;
/// "ttft, tpot, ..." for error messages and help.
std::string_view valid_metric_names() noexcept;
/// Every metric, in report order.
const std::vector<Metric>& all_metrics();
/// True for the latencies (ms), which have the four statistics; the others have the mean only.
bool is_latency(Metric metric) noexcept;
/// True when a higher value is better (the throughputs).
bool higher_is_better(Metric metric) noexcept;

/// One run's per-request values, one entry per measured (non-warm-up) request in schedule order.
/// Latencies in ms; NaN where undefined (TPOT for N < 2) and for every failed request.
struct RunSamples {
  std::vector<double> ttft_ms{};
  std::vector<double> tpot_ms{};
  std::vector<double> e2el_ms{};
  std::vector<std::vector<double>> itl_ms{};  ///< per-token ITL samples; empty when failed
  std::vector<bool> failed{};
  std::vector<std::int64_t> output_tokens{};  ///< N of a completed request, 0 when failed
  /// First send to last completion (metrics::Summary::duration_s), s; NaN when unknown.
  double duration_s = std::numeric_limits<double>::quiet_NaN();
};

/// The samples of `records` as `metrics::summarize` sees them (`request_latency`,
/// `append_itl_ms`, `output_token_count`, `Summary::duration_s`); warm-ups are left out.
RunSamples run_samples(const std::vector<metrics::RequestRecord>& records);

/// Requests per resampling block: `block_requests` when > 0, else ⌈√n⌉ for a run of n requests.
std::size_t block_length(std::size_t requests, std::size_t block_requests) noexcept;

/// `metric`'s sample of `run` with its resampling units, and the factor that turns its mean into
/// the metric (requests / duration for a throughput, else 1). A unit is a block of
/// `block_length(n, block_requests)` consecutive requests in schedule order (docs/compare.md
/// "Why blocks": requests of one run share batches and are not independent, so resampling
/// single requests makes intervals too narrow); blocks without a value are left out. ITL values
/// of a request stay in its block.
struct MetricSample {
  UnitSample sample{};
  double scale = 1.0;
};
MetricSample metric_sample(const RunSamples& run, Metric metric, std::size_t block_requests);

/// Whether a metric moved, and which way.
enum class Verdict : std::uint8_t {
  Better,
  Worse,
  NoSignificantDifference,
  NotTested,      ///< a throughput: one value per run
  TooFewSamples,  ///< the test cannot reach significance with these many units, whatever the data
};
/// "better", "worse", "no significant difference", "not tested (one value per run)", "too few
/// samples to test".
std::string_view to_string(Verdict verdict) noexcept;

/// One statistic of one metric in A and B.
struct StatisticComparison {
  Statistic statistic = Statistic::Mean;
  double a = std::numeric_limits<double>::quiet_NaN();
  double b = std::numeric_limits<double>::quiet_NaN();
  double difference = std::numeric_limits<double>::quiet_NaN();  ///< b − a
  double relative = std::numeric_limits<double>::quiet_NaN();    ///< (b − a)/a; NaN when a is 0
  Interval ci{};  ///< bootstrap interval of b − a at `BootstrapOptions::confidence`
};

/// One metric of B compared with A.
struct MetricComparison {
  Metric metric = Metric::Ttft;
  std::size_t units_a = 0;  ///< blocks with a value in A (the bootstrap's and rank test's units)
  std::size_t units_b = 0;
  std::vector<StatisticComparison> statistics{};  ///< mean first, then p50, p90, p99 (latencies)
  RankTest rank{};  ///< over one value per block (the mean of its values); NaN for a throughput
  double p_adjusted = std::numeric_limits<double>::quiet_NaN();  ///< Holm-adjusted p
  /// The smallest Holm-adjusted p the test could give with these units, whatever the data:
  /// max(p_min, m × the smallest p_min of the m tested metrics), p_min = `mann_whitney_min_p`
  /// of this metric's units (Holm multiplies the smallest p by m, and never lowers one below
  /// its own). At or above alpha the verdict is `TooFewSamples`.
  double min_attainable_p = std::numeric_limits<double>::quiet_NaN();
  Verdict verdict = Verdict::NoSignificantDifference;
  /// The row of `statistic`, or null when the metric does not have it.
  [[nodiscard]] const StatisticComparison* find(Statistic statistic) const noexcept;
};

/// Options of `compare_runs`.
struct CompareOptions {
  BootstrapOptions bootstrap{};
  /// Requests per resampling block (`--block-requests`); 0 = ⌈√n⌉ per run (`block_length`).
  std::size_t block_requests = 0;
  double alpha = 0.05;  ///< significance level of the adjusted rank test
};

/// Every metric of `all_metrics()` of `b` against `a`, with verdicts by this file's rule. A
/// metric without samples on one side gets NaN values and no significant difference; a
/// throughput gets no interval (NaN) and `NotTested`; a rank-tested metric whose
/// `min_attainable_p` is not below alpha gets `TooFewSamples` (its difference and interval are
/// reported all the same: the effect size either way).
std::vector<MetricComparison> compare_runs(const RunSamples& a, const RunSamples& b,
                                           const CompareOptions& options);

}  // namespace llmbench::analysis
