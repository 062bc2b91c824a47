#include "llmbench/app/tail_ci.hpp"

#include "llmbench/core/json_number.hpp"
#include "llmbench/metrics/catalog.hpp"

#include <cmath>

namespace llmbench::app {

namespace {

using nlohmann::json;

// The value at `q` among `s`'s extra percentiles (`tail_percentiles`); NaN when not asked.
double at(const metrics::Stats& s, double q) {
  for (const auto& [p, v] : s.extra_percentiles) {
    if (p == q)
      return v;
  }
  return std::nan("");
}

}  // namespace

metrics::ExtraPercentiles tail_percentiles(double q, double confidence) {
  return [q, confidence](std::size_t n) {
    const analysis::QuantileCi ci = analysis::quantile_ci(n, q, confidence);
    std::vector<double> out{100 * q};
    for (const std::size_t rank : {ci.lower_rank, ci.upper_rank}) {
      if (rank != 0)
        out.push_back(analysis::rank_percentile(rank, n));
    }
    return out;
  };
}

std::vector<TailCi> tail_cis(const metrics::Summary& summary, double q, double confidence) {
  std::vector<TailCi> out;
  for (const auto& metric : metrics::kLatencyMetrics) {
    if (!metric.tail_interval)
      continue;
    const metrics::Stats& st = summary.*(metric.stats);
    if (st.count == 0)
      continue;
    TailCi t{.metric = std::string(metric.key),
             .ci = analysis::quantile_ci(st.count, q, confidence)};
    t.value_ms = at(st, 100 * q);
    if (t.ci.lower_rank != 0)
      t.lower_ms = at(st, analysis::rank_percentile(t.ci.lower_rank, t.ci.n));
    if (t.ci.upper_rank != 0)
      t.upper_ms = at(st, analysis::rank_percentile(t.ci.upper_rank, t.ci.n));
    out.push_back(std::move(t));
  }
  return out;
}

json tail_cis_json(const std::vector<TailCi>& cis) {
  json out{{"method",
            "order statistics: ranks l, u with F(l-1) <= a/2 and F(u-1) >= 1-a/2, F the "
            "Binomial(n, 0.99) CDF"}};
  out["confidence"] = cis.empty() ? json(nullptr) : json(cis.front().ci.confidence);
  for (const auto& t : cis) {
    out[t.metric] = {{"n", t.ci.n},
                     {"p99_ms", finite_or_null(t.value_ms)},
                     {"lower_ms", finite_or_null(t.lower_ms)},
                     {"upper_ms", finite_or_null(t.upper_ms)},
                     {"lower_rank", t.ci.lower_rank},
                     {"upper_rank", t.ci.upper_rank},
                     {"coverage", finite_or_null(t.ci.coverage)},
                     {"supported", t.ci.supported()}};
  }
  return out;
}

}  // namespace llmbench::app
