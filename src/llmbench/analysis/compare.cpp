#include "llmbench/analysis/compare.hpp"

#include "llmbench/metrics/summary.hpp"

#include <algorithm>
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

constexpr std::array<std::string_view, 5> kVerdicts{"better", "worse", "no significant difference",
                                                    "not tested (one value per run)",
                                                    "too few samples to test"};

const MetricName& entry(Metric metric) noexcept {
  return kMetrics[static_cast<std::size_t>(metric)];
}

/// The rows of one metric: point estimates and bootstrap intervals.
std::vector<StatisticComparison> statistic_rows(const MetricSample& a, const MetricSample& b,
                                                const std::vector<Statistic>& statistics,
                                                std::string_view purpose, bool with_intervals,
                                                const BootstrapOptions& options) {
  const auto intervals = with_intervals ? bootstrap_difference(a.sample, b.sample, statistics,
                                                               a.scale, b.scale, purpose, options)
                                        : std::vector<Interval>(statistics.size());
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
  // In schedule order (the records file is in completion order): blocks of consecutive
  // requests are blocks of time.
  std::vector<const metrics::RequestRecord*> ordered;
  ordered.reserve(records.size());
  for (const auto& r : records) ordered.push_back(&r);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto* x, const auto* y) { return x->id < y->id; });
  for (const auto* rp : ordered) {
    const auto& r = *rp;
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

std::size_t block_length(std::size_t requests, std::size_t block_requests) noexcept {
  if (block_requests > 0)
    return block_requests;
  return std::max<std::size_t>(
      1, static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(requests)))));
}

MetricSample metric_sample(const RunSamples& run, Metric metric, std::size_t block_requests) {
  const std::size_t n = run.failed.size();
  const std::size_t block = block_length(n, block_requests);
  MetricSample out;
  if (metric == Metric::OutputThroughput || metric == Metric::RequestThroughput)
    out.scale = run.duration_s > 0 ? static_cast<double>(n) / run.duration_s : kNaN;
  UnitSample& s = out.sample;
  std::size_t last_block = std::numeric_limits<std::size_t>::max();
  const auto add = [&](std::size_t request, double value) {
    if (std::isnan(value))
      return;
    // Units are the blocks that hold a value, numbered in order.
    if (request / block != last_block) {
      last_block = request / block;
      ++s.units;
    }
    s.values.push_back(value);
    s.unit.push_back(s.units - 1);
  };
  for (std::size_t i = 0; i < n; ++i) {
    switch (metric) {
      case Metric::Ttft:
        add(i, run.ttft_ms[i]);
        break;
      case Metric::Tpot:
        add(i, run.tpot_ms[i]);
        break;
      case Metric::E2el:
        add(i, run.e2el_ms[i]);
        break;
      case Metric::Itl:
        for (const double v : run.itl_ms[i]) add(i, v);
        break;
      case Metric::ErrorRate:
        add(i, run.failed[i] ? 1.0 : 0.0);
        break;
      case Metric::OutputThroughput:
        add(i, static_cast<double>(run.output_tokens[i]));
        break;
      case Metric::RequestThroughput:
        add(i, run.failed[i] ? 0.0 : 1.0);
        break;
    }
  }
  return out;
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
    const MetricSample sa = metric_sample(a, metric, options.block_requests);
    const MetricSample sb = metric_sample(b, metric, options.block_requests);
    const std::vector<Statistic> stats =
        is_latency(metric) ? all_statistics() : std::vector<Statistic>{Statistic::Mean};
    MetricComparison c{.metric = metric, .units_a = sa.sample.units, .units_b = sb.sample.units};
    const bool tested = entry(metric).rank_tested;
    c.statistics = statistic_rows(sa, sb, stats, to_string(metric), tested, options.bootstrap);
    if (tested)
      c.rank = mann_whitney(unit_means(sa.sample), unit_means(sb.sample));
    else
      c.verdict = Verdict::NotTested;
    p_values.push_back(c.rank.p_value);
    out.push_back(std::move(c));
  }
  const auto adjusted = holm_adjust(p_values);
  // What the test could give at best with these units (docs/compare.md "Power").
  std::size_t tested_count = 0;
  double least = 1.0;
  std::vector<double> min_p(out.size(), kNaN);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (std::isnan(p_values[i]))
      continue;
    ++tested_count;
    min_p[i] = mann_whitney_min_p(out[i].units_a, out[i].units_b);
    least = std::min(least, min_p[i]);
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto& c = out[i];
    c.p_adjusted = adjusted[i];
    if (!std::isnan(min_p[i])) {
      c.min_attainable_p =
          std::min(1.0, std::max(min_p[i], static_cast<double>(tested_count) * least));
    }
    const StatisticComparison& mean = c.statistics.front();
    const bool tested = !std::isnan(c.rank.p_value);
    const bool significant = mean.ci.excludes_zero() && (!tested || (c.p_adjusted < options.alpha));
    if (significant) {
      const bool rose = mean.difference > 0;
      c.verdict = rose == higher_is_better(c.metric) ? Verdict::Better : Verdict::Worse;
    } else if (tested && !(c.min_attainable_p < options.alpha)) {
      c.verdict = Verdict::TooFewSamples;
    }
  }
  return out;
}

}  // namespace llmbench::analysis
