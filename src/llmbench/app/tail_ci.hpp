#pragma once
/// @file
/// The confidence interval of each per-request latency's p99 of one point (docs/sweep.md
/// "Validity"): the order-statistic interval of `analysis::quantile_ci`, read from the run's
/// own samples at the percentiles that hit the interval's ranks exactly (numpy's "linear" rule,
/// as every percentile of the results), which the run's summary selects beside the reported
/// ones (`metrics::SummaryOptions::extra_percentiles`).

#include "llmbench/analysis/validity.hpp"
#include "llmbench/metrics/summary.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace llmbench::app {

/// The interval of one metric's p99, in ms (NaN where a bound does not exist).
struct TailCi {
  std::string metric;
  analysis::QuantileCi ci;
  double value_ms = std::numeric_limits<double>::quiet_NaN();  ///< the p99 itself
  double lower_ms = std::numeric_limits<double>::quiet_NaN();
  double upper_ms = std::numeric_limits<double>::quiet_NaN();
};

/// The percentiles `tail_cis` reads, for `SummaryOptions::extra_percentiles`: for a sample of
/// `count`, the p(100·`q`) itself and the percentiles at the ranks of its interval at
/// `confidence`.
metrics::ExtraPercentiles tail_percentiles(double q = 0.99, double confidence = 0.95);

/// The intervals of p99 (`q` = 0.99) at `confidence` of each latency the metric catalog marks
/// (`metrics::LatencyMetric::tail_interval`: TTFT, TPOT, ITL, E2EL) with samples in
/// `summary`, which was summarized with `tail_percentiles(q, confidence)`.
std::vector<TailCi> tail_cis(const metrics::Summary& summary, double q = 0.99,
                             double confidence = 0.95);

/// The results JSON `p99_ci` object: {confidence, method, <metric>: {n, p99_ms, lower_ms,
/// upper_ms, lower_rank, upper_rank, coverage, supported}}.
nlohmann::json tail_cis_json(const std::vector<TailCi>& cis);

}  // namespace llmbench::app
