#pragma once
/// @file
/// The confidence interval of each per-request latency's p99 of one point (docs/sweep.md
/// "Validity"): the order-statistic interval of `analysis::quantile_ci`, read from the run's
/// own samples by summarizing them again at the percentiles that hit the interval's ranks
/// exactly (numpy's "linear" rule, as every percentile of the results).

#include "llmbench/analysis/validity.hpp"
#include "llmbench/metrics/summary.hpp"

#include <nlohmann/json.hpp>

#include <functional>
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

/// Summarizes the run's samples again with other percentiles (the same records, the same
/// options otherwise).
using Resummarize = std::function<metrics::Summary(const metrics::SummaryOptions&)>;

/// The intervals of p99 (`q` = 0.99) at `confidence` of each latency the metric catalog marks
/// (`metrics::LatencyMetric::tail_interval`: TTFT, TPOT, ITL, E2EL) with samples in
/// `summary`; `again` is called once, with the percentiles of every rank needed.
std::vector<TailCi> tail_cis(const metrics::Summary& summary, const Resummarize& again,
                             double q = 0.99, double confidence = 0.95);

/// The results JSON `p99_ci` object: {confidence, method, <metric>: {n, p99_ms, lower_ms,
/// upper_ms, lower_rank, upper_rank, coverage, supported}}.
nlohmann::json tail_cis_json(const std::vector<TailCi>& cis);

}  // namespace llmbench::app
