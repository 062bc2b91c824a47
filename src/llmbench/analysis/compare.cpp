#include "llmbench/analysis/compare.hpp"

#include "llmbench/metrics/summary.hpp"

#include <array>
#include <cmath>
#include <string>
#include <utility>

namespace llmbench::analysis {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The one name table of `Metric`: name, whether it is a latency, whether higher is better.
struct MetricName {
  Metric metric;
  std::string_view name;
  bool latency;
  bool higher_better;
  bool rank_tested;  ///< one value per request (not a per-run throughput)
};
constexpr std::array<MetricName, 7> kMetrics{{
    {Metric::Ttft, "ttft", true, false, true},
    {Metric::Tpot, "tpot", true, false, true},
    {Metric::Itl, "itl", true, false, true},
    {Metric::E2el, "e2el", true, false, true},
    {Metric::ErrorRate, "error_rate", false, false, true},
    {Metric::OutputThroughput, "output_throughput", false, true, false},
    {Metric::RequestThroughput, "request_throughput", false, true, false},
}};

constexpr std::array<std::string_view, 3> kVerdicts{"better", "worse", "no significant difference"};

const MetricName& entry(Metric metric) noexcept {
  return kMetrics[static_cast<std::size_t>(metric)];
}

/// The per-request values that are defined, each its own unit.
UnitSample defined(const std::vector<double>& values) {
  std::vector<double> kept;
  for (const double v : values) {
    if (!std::isnan(v))
      kept.push_back(v);
  }
  return per_unit(std::move(kept));
}

/// The rows of one metric: point estimates and bootstrap intervals.
std::vector<StatisticComparison> statistic_rows(const MetricSample& a, const MetricSample& b,
                                                const std::vector<Statistic>& statistics,
                                                std::string_view purpose,
                                                const BootstrapOptions& options) {
  const auto intervals =
      bootstrap_difference(a.sample, b.sample, statistics, a.scale, b.scale, purpose, options);
  std::vector<StatisticComparison> rows;
  for (std::size_t j = 0; j < statistics.size(); ++j) {
    StatisticComparison row{.statistic = statistics[j],
                            .a = statistic_of(a.sample, statistics[j]) * a.scale,
                            .b = statistic_of(b.sample, statistics[j]) * b.scale,
                            .ci = intervals[j]};
    row.difference = row.b - row.a;
    row.relative = row.a != 0 ? row.difference / row.a : kNaN;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

std::string_view to_string(Metric metric) noexcept {
  return entry(metric).name;
}

std::optional<Metric> metric_from_string(std::string_view name) noexcept {
  for (const auto& m : kMetrics) {
    if (m.name == name)
      return m.metric;
  }
  return std::nullopt;
}

std::string_view valid_metric_names() noexcept {
  static const std::string names = [] {
    std::string s;
    for (const auto& m : kMetrics) s += (s.empty() ? "" : ", ") + std::string(m.name);
    return s;
  }();
  return names;
}

const std::vector<Metric>& all_metrics() {
  static const std::vector<Metric> all = [] {
    std::vector<Metric> v;
    v.reserve(kMetrics.size());
    for (const auto& m : kMetrics) v.push_back(m.metric);
    return v;
  }();
  return all;
}

bool is_latency(Metric metric) noexcept {
  return entry(metric).latency;
}

bool higher_is_better(Metric metric) noexcept {
  return entry(metric).higher_better;
}

std::string_view to_string(Verdict verdict) noexcept {
  return kVerdicts[static_cast<std::size_t>(verdict)];
}

RunSamples run_samples(const std::vector<metrics::RequestRecord>& records) {
  RunSamples run;
  for (const auto& r : records) {
    if (r.warmup)
      continue;
    const bool ok = r.ok();
    const auto lat = ok ? metrics::request_latency(r) : metrics::RequestLatency{};
    run.ttft_ms.push_back(lat.ttft_ms);
    run.tpot_ms.push_back(lat.tpot_ms);
    run.e2el_ms.push_back(lat.e2el_ms);
    run.itl_ms.emplace_back();
    if (ok)
      metrics::append_itl_ms(r, run.itl_ms.back());
    run.failed.push_back(!ok);
    run.output_tokens.push_back(ok ? metrics::output_token_count(r) : 0);
  }
  run.duration_s = metrics::summarize(records, metrics::SummaryOptions{}).duration_s;
  return run;
}

MetricSample metric_sample(const RunSamples& run, Metric metric) {
  const auto requests = static_cast<double>(run.failed.size());
  const double per_second = run.duration_s > 0 ? requests / run.duration_s : kNaN;
  std::vector<double> values;
  switch (metric) {
    case Metric::Ttft:
      return {.sample = defined(run.ttft_ms)};
    case Metric::Tpot:
      return {.sample = defined(run.tpot_ms)};
    case Metric::E2el:
      return {.sample = defined(run.e2el_ms)};
    case Metric::Itl: {
      UnitSample s;
      for (const auto& itls : run.itl_ms) {
        if (itls.empty())
          continue;
        for (const double v : itls) {
          s.values.push_back(v);
          s.unit.push_back(s.units);
        }
        ++s.units;
      }
      return {.sample = std::move(s)};
    }
    case Metric::ErrorRate:
      for (const bool f : run.failed) values.push_back(f ? 1.0 : 0.0);
      return {.sample = per_unit(std::move(values))};
    case Metric::OutputThroughput:
      for (const auto n : run.output_tokens) values.push_back(static_cast<double>(n));
      return {.sample = per_unit(std::move(values)), .scale = per_second};
    case Metric::RequestThroughput:
      for (const bool f : run.failed) values.push_back(f ? 0.0 : 1.0);
      return {.sample = per_unit(std::move(values)), .scale = per_second};
  }
  return {};
}

const StatisticComparison* MetricComparison::find(Statistic statistic) const noexcept {
  for (const auto& row : statistics) {
    if (row.statistic == statistic)
      return &row;
  }
  return nullptr;
}

std::vector<MetricComparison> compare_runs(const RunSamples& a, const RunSamples& b,
                                           const CompareOptions& options) {
  std::vector<MetricComparison> out;
  std::vector<double> p_values;
  for (const Metric metric : all_metrics()) {
    const MetricSample sa = metric_sample(a, metric);
    const MetricSample sb = metric_sample(b, metric);
    const std::vector<Statistic> stats =
        is_latency(metric) ? all_statistics() : std::vector<Statistic>{Statistic::Mean};
    MetricComparison c{.metric = metric, .units_a = sa.sample.units, .units_b = sb.sample.units};
    c.statistics = statistic_rows(sa, sb, stats, to_string(metric), options.bootstrap);
    if (entry(metric).rank_tested)
      c.rank = mann_whitney(unit_means(sa.sample), unit_means(sb.sample));
    p_values.push_back(c.rank.p_value);
    out.push_back(std::move(c));
  }
  const auto adjusted = holm_adjust(p_values);
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto& c = out[i];
    c.p_adjusted = adjusted[i];
    const StatisticComparison& mean = c.statistics.front();
    const bool tested = !std::isnan(c.rank.p_value);
    const bool significant = mean.ci.excludes_zero() && (!tested || (c.p_adjusted < options.alpha));
    if (significant) {
      const bool rose = mean.difference > 0;
      c.verdict = rose == higher_is_better(c.metric) ? Verdict::Better : Verdict::Worse;
    }
  }
  return out;
}

}  // namespace llmbench::analysis
