#include "llmbench/analysis/spikes.hpp"

#include "llmbench/analysis/trend.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/metrics/statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace llmbench::analysis {
namespace {

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

/// A series' baseline and the threshold a window must pass to spike.
struct Baseline {
  double median = std::nan("");
  double threshold = std::nan("");
  [[nodiscard]] bool known() const noexcept { return std::isfinite(median); }
};

/// The baseline of `values` (one per judged window; NaN = no sample).
Baseline baseline_of(const std::vector<double>& values, const SpikeRule& rule) {
  std::size_t n = 0;
  for (const double v : values) n += std::isfinite(v) ? 1 : 0;
  Baseline b;
  if (n < std::max<std::size_t>(1, rule.min_windows))
    return b;
  std::vector<double> sorted;
  for (const double v : values) {
    if (std::isfinite(v))
      sorted.push_back(v);
  }
  std::sort(sorted.begin(), sorted.end());
  b.median = metrics::percentile_sorted(sorted, 50);
  const double q1 = metrics::percentile_sorted(sorted, 25);
  const double q3 = metrics::percentile_sorted(sorted, 75);
  b.threshold = std::max(rule.multiple * b.median, q3 + rule.iqr_multiple * (q3 - q1));
  return b;
}

Spike make_spike(const Window& w, std::size_t i, SpikeMetric metric, double value, double base,
                 double ratio, std::size_t samples) {
  return Spike{.metric = metric,
               .prefill_step = false,
               .window = i,
               .start_ns = w.start_ns,
               .end_ns = w.end_ns,
               .value_ms = value,
               .baseline_ms = base,
               .ratio = ratio,
               .mean_in_flight = w.mean_in_flight,
               .max_in_flight = w.max_in_flight,
               .samples = samples,
               .completed = w.completed};
}

}  // namespace

std::string_view to_string(SpikeMetric metric) noexcept {
  for (const auto& m : kSpikeMetrics) {
    if (m.metric == metric)
      return m.name;
  }
  return "itl";
}

const Spike* SpikeReport::worst() const noexcept {
  const Spike* best = nullptr;
  for (const auto& s : spikes) {
    if (best == nullptr || s.ratio > best->ratio)
      best = &s;
  }
  return best;
}

SpikeReport find_spikes(const std::vector<Window>& windows, const SpikeRule& rule) {
  if (!(rule.multiple > 1) || !std::isfinite(rule.multiple)) {
    throw Exception(Error{fmt::format("must be a finite number > 1, got {}", rule.multiple),
                          "--spike-multiple", -1});
  }
  SpikeReport out;
  const Warmup warm = find_warmup(windows, {});
  out.warmup_windows = warm.warmup;
  // Every window from the first steady one on (drain and partial windows included).
  std::size_t from = 0;
  if (warm.warmup > 0)
    from = warm.warmup < warm.judged.size() ? warm.judged[warm.warmup] : windows.size();
  out.judged_windows = windows.size() - std::min(from, windows.size());
  const double q = rule.percentile;
  std::vector<double> decode;
  std::vector<double> prefill;
  std::vector<double> ttft_ratio;
  std::vector<double> ttft;
  for (std::size_t i = from; i < windows.size(); ++i) {
    decode.push_back(percentile_of(windows[i].itl_decode_ms, q));
    prefill.push_back(percentile_of(windows[i].itl_prefill_ms, q));
    ttft_ratio.push_back(percentile_of(windows[i].ttft_ratio, q));
    ttft.push_back(percentile_of(windows[i].ttft_ms, q));
  }
  const Baseline bd = baseline_of(decode, rule);
  const Baseline bp = baseline_of(prefill, rule);
  const Baseline bt = baseline_of(ttft_ratio, rule);
  out.itl_baseline_ms = bd.known() ? bd.median : bp.median;
  out.itl_prefill_baseline_ms = bp.median;
  out.ttft_ratio_baseline = bt.median;
  out.ttft_baseline_ms = bt.known() ? median_of(ttft) : std::nan("");
  for (const double v : prefill) out.interference.windows += std::isfinite(v) ? 1 : 0;
  if (bd.known() && bp.known()) {
    out.interference.with_prefill_ms = bp.median;
    out.interference.without_prefill_ms = bd.median;
    out.interference.found = bp.median >= rule.interference_ratio * bd.median;
  }
  for (std::size_t k = 0; k < decode.size(); ++k) {
    const std::size_t i = from + k;
    const Window& w = windows[i];
    // ITL: each class against its own baseline; the window's spike is the larger departure.
    Spike itl;
    bool itl_spike = false;
    if (bd.known() && decode[k] > bd.threshold && decode[k] > 0) {
      itl = make_spike(w, i, SpikeMetric::Itl, decode[k], bd.median,
                       bd.median > 0 ? decode[k] / bd.median : std::nan(""), w.itl_decode_ms.count);
      itl_spike = true;
    }
    if (bp.known() && prefill[k] > bp.threshold && prefill[k] > 0) {
      const double ratio = bp.median > 0 ? prefill[k] / bp.median : std::nan("");
      if (!itl_spike || ratio > itl.ratio) {
        itl = make_spike(w, i, SpikeMetric::Itl, prefill[k], bp.median, ratio,
                         w.itl_prefill_ms.count);
        itl.prefill_step = true;
        itl_spike = true;
      }
    }
    if (itl_spike)
      out.spikes.push_back(itl);
    if (bt.known() && ttft_ratio[k] > bt.threshold && ttft_ratio[k] > 0) {
      out.spikes.push_back(make_spike(w, i, SpikeMetric::Ttft, ttft[k], out.ttft_baseline_ms,
                                      bt.median > 0 ? ttft_ratio[k] / bt.median : std::nan(""),
                                      w.ttft_ms.count));
    }
  }
  return out;
}

std::string spike_summary(const SpikeReport& report, const SpikeRule& rule) {
  const Spike* worst = report.worst();
  if (worst == nullptr)
    return "none";
  std::string when;
  std::size_t named = 0;
  TimeNs last = -1;
  constexpr std::size_t kNamed = 5;
  for (const auto& s : report.spikes) {
    if (s.start_ns == last)
      continue;
    last = s.start_ns;
    if (named == kNamed) {
      when += ", ...";
      break;
    }
    when += fmt::format("{}{:.1f}", named == 0 ? "" : ", ", ns_to_s(s.start_ns));
    ++named;
  }
  return fmt::format(
      "{} (worst: p{:g} {} {:.1f} ms = {:.1f}x {} at {:.1f}-{:.1f} s; windows at {} s)",
      report.spikes.size(), rule.percentile, worst->metric == SpikeMetric::Itl ? "ITL" : "TTFT",
      worst->value_ms, worst->ratio,
      worst->metric == SpikeMetric::Ttft ? "what its prompts explain" : "the median window",
      ns_to_s(worst->start_ns), ns_to_s(worst->end_ns), when);
}

std::string interference_line(const SpikeReport& report, const SpikeRule& rule) {
  if (!report.interference.found)
    return {};
  return fmt::format(
      "prefill interference: p{:g} ITL {:.1f} ms in steps with prefill, {:.1f} ms without "
      "(median window; steady behaviour, not spikes)",
      rule.percentile, report.interference.with_prefill_ms, report.interference.without_prefill_ms);
}

std::vector<std::string> spike_lines(const SpikeReport& report, const SpikeRule& rule) {
  if (report.spikes.empty())
    return {};
  return {"spikes: " + spike_summary(report, rule)};
}

}  // namespace llmbench::analysis
