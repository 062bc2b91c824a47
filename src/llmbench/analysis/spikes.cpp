#include "llmbench/analysis/spikes.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace llmbench::analysis {
namespace {

const metrics::Stats& stats_of(const Window& w, SpikeMetric metric) {
  return metric == SpikeMetric::Itl ? w.itl_ms : w.ttft_ms;
}

/// The window's value at percentile `q`, NaN when it has no sample or was not asked for `q`.
double percentile_of(const metrics::Stats& s, double q) {
  if (s.count == 0)
    return std::nan("");
  for (const auto& [at, v] : s.percentiles) {
    if (at == q)
      return v;
  }
  return std::nan("");
}

/// The median of `values` (not empty): the mean of the two middle ones for an even count.
double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

std::string_view to_string(SpikeMetric metric) noexcept {
  for (const auto& m : kSpikeMetrics) {
    if (m.metric == metric)
      return m.name;
  }
  return "itl";
}

SpikeReport find_spikes(const std::vector<Window>& windows, const SpikeRule& rule) {
  if (!(rule.multiple > 1) || !std::isfinite(rule.multiple)) {
    throw Exception(Error{fmt::format("must be a finite number > 1, got {}", rule.multiple),
                          "--spike-multiple", -1});
  }
  SpikeReport out;
  for (const auto& m : kSpikeMetrics) {
    std::vector<double> values;
    for (const auto& w : windows) {
      const double v = percentile_of(stats_of(w, m.metric), rule.percentile);
      if (std::isfinite(v))
        values.push_back(v);
    }
    if (values.size() < std::max<std::size_t>(1, rule.min_windows))
      continue;
    const double baseline = median(values);
    (m.metric == SpikeMetric::Itl ? out.itl_baseline_ms : out.ttft_baseline_ms) = baseline;
    for (std::size_t i = 0; i < windows.size(); ++i) {
      const Window& w = windows[i];
      const double v = percentile_of(stats_of(w, m.metric), rule.percentile);
      // A zero baseline (every window's percentile 0) makes any positive value a spike.
      if (!(v > rule.multiple * baseline) || !(v > 0))
        continue;
      out.spikes.push_back(Spike{.metric = m.metric,
                                 .window = i,
                                 .start_ns = w.start_ns,
                                 .end_ns = w.end_ns,
                                 .value_ms = v,
                                 .baseline_ms = baseline,
                                 .ratio = baseline > 0 ? v / baseline : std::nan(""),
                                 .mean_in_flight = w.mean_in_flight,
                                 .max_in_flight = w.max_in_flight,
                                 .samples = stats_of(w, m.metric).count,
                                 .completed = w.completed});
    }
  }
  std::stable_sort(out.spikes.begin(), out.spikes.end(),
                   [](const Spike& a, const Spike& b) { return a.window < b.window; });
  return out;
}

std::vector<std::string> spike_lines(const SpikeReport& report, const SpikeRule& rule) {
  std::vector<std::string> lines;
  lines.reserve(report.spikes.size());
  for (const auto& s : report.spikes) {
    lines.push_back(fmt::format(
        "spike: p{:g} {} {:.1f} ms = {:.1f} x the median window ({:.1f} ms; rule > {:g} x) at "
        "{:.2f}-{:.2f} s, {:.1f} in flight (max {}), {} sample(s)",
        rule.percentile, s.metric == SpikeMetric::Itl ? "ITL" : "TTFT", s.value_ms, s.ratio,
        s.baseline_ms, rule.multiple, ns_to_s(s.start_ns), ns_to_s(s.end_ns), s.mean_in_flight,
        s.max_in_flight, s.samples));
  }
  return lines;
}

}  // namespace llmbench::analysis
