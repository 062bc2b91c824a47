// The engine's queue per window, the warm-up rule and the stability rule over a run's time
// windows (declared in windows.hpp; docs/sweep.md "Time windows" and "Stability").
#include "llmbench/analysis/trend.hpp"
#include "llmbench/analysis/windows.hpp"
#include "llmbench/metrics/summary.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace llmbench::analysis {

std::vector<EngineWindow> engine_windows(const std::vector<Window>& windows,
                                         const std::vector<EngineSample>& samples) {
  std::vector<EngineWindow> out(windows.size());
  if (windows.empty() || samples.empty())
    return out;
  struct Sums {
    double weight = 0;
    double running = 0;
    double waiting = 0;
  };
  std::vector<Sums> sums(windows.size());
  const TimeNs start = windows.front().start_ns;
  const TimeNs width = windows.front().end_ns - windows.front().start_ns;
  for (const auto& s : samples) {
    if (s.late || s.t_ns < start || s.t_ns >= windows.back().end_ns || width <= 0 ||
        !(s.weight > 0))
      continue;
    const auto i = std::min(windows.size() - 1, static_cast<std::size_t>((s.t_ns - start) / width));
    sums[i].weight += s.weight;
    sums[i].running += s.weight * s.running;
    sums[i].waiting += s.weight * s.waiting;
    ++out[i].samples;
  }
  for (std::size_t i = 0; i < windows.size(); ++i) {
    if (out[i].samples > 0) {
      out[i].mean_running = sums[i].running / sums[i].weight;
      out[i].mean_waiting = sums[i].waiting / sums[i].weight;
    }
  }
  return out;
}

std::vector<std::size_t> Warmup::steady() const {
  return {judged.begin() + static_cast<std::ptrdiff_t>(std::min(warmup, judged.size())),
          judged.end()};
}

namespace {

/// A warm-up is dropped only when it differs materially from what follows: the means of the
/// dropped and the kept windows differ by more than this share of the kept mean. MSER alone
/// trims a few windows of pure noise, and on a noiseless slight trend (a deterministic
/// simulation) it always points at the end.
constexpr double kMaterialWarmup = 0.10;

/// The window statistic's value at percentile `q`, NaN without samples or without `q`.
double stats_percentile(const metrics::Stats& s, double q) {
  if (s.count == 0)
    return metrics::kUndefined;
  for (const auto& [p, value] : s.percentiles) {
    if (p == q)
      return value;
  }
  return metrics::kUndefined;
}

double mean_of(const std::vector<double>& v, std::size_t from, std::size_t to) {
  double sum = 0;
  for (std::size_t i = from; i < to; ++i) sum += v[i];
  return to > from ? sum / static_cast<double>(to - from) : std::nan("");
}

/// Whether dropping the first `d` of `finite` removes a material transient: the medians of the
/// dropped and kept values differ by more than kMaterialWarmup (a few stall windows among the
/// dropped ones move the mean, MSER's statistic, but not the median), and the means by more
/// than three standard errors of their difference (the noise of a few small windows).
bool material(const std::vector<double>& finite, std::size_t d) {
  if (d == 0 || d >= finite.size())
    return false;
  const auto cut = finite.begin() + static_cast<std::ptrdiff_t>(d);
  const double median_dropped = median_of(std::vector<double>(finite.begin(), cut));
  const double median_kept = median_of(std::vector<double>(cut, finite.end()));
  if (!(std::abs(median_dropped - median_kept) > kMaterialWarmup * std::abs(median_kept)))
    return false;
  const double dropped = mean_of(finite, 0, d);
  const double kept = mean_of(finite, d, finite.size());
  double var = 0;
  for (std::size_t i = d; i < finite.size(); ++i) var += (finite[i] - kept) * (finite[i] - kept);
  const auto n_kept = static_cast<double>(finite.size() - d);
  var /= std::max(1.0, n_kept - 1);
  const double se = std::sqrt(var * (1 / static_cast<double>(d) + 1 / n_kept));
  const double diff = std::abs(dropped - kept);
  return diff > kMaterialWarmup * std::abs(kept) && diff > 3 * se;
}

/// The MSER truncation of one series over the judged windows, as a count of judged windows
/// (the series' NaN windows keep their place: the truncation is mapped back to them), kept
/// only when material; `settled` is false when that material warm-up reaches the cap of half
/// the series (White's sign of a run that had not settled: the transient may go on beyond it).
Truncation truncation_of(const std::vector<double>& series) {
  std::vector<std::size_t> where;
  std::vector<double> finite;
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (std::isfinite(series[i])) {
      where.push_back(i);
      finite.push_back(series[i]);
    }
  }
  Truncation t = mser_truncation(finite);
  const bool keep = material(finite, t.drop);
  // A material warm-up that runs into the rule's cap (half the windows): the transient may go
  // on beyond it.
  t.settled = !(keep && finite.size() >= 2 * 5 && t.drop >= finite.size() / 2);
  if (!keep)
    t.drop = 0;
  if (t.drop > 0 && t.drop <= where.size())
    t.drop = t.drop < where.size() ? where[t.drop] : series.size();
  return t;
}

}  // namespace

Warmup find_warmup(const std::vector<Window>& windows, const std::vector<EngineWindow>& engine) {
  Warmup w;
  for (std::size_t i = 0; i < windows.size(); ++i) {
    if (windows[i].full && windows[i].sending)
      w.judged.push_back(i);
  }
  const std::size_t n = w.judged.size();
  std::vector<double> throughput;
  std::vector<double> itl;
  std::vector<double> ttft;
  for (const std::size_t i : w.judged) {
    throughput.push_back(windows[i].output_throughput);
    itl.push_back(windows[i].itl_ms.count > 0 ? windows[i].itl_ms.mean : metrics::kUndefined);
    // The window's p99 of TTFT over its explained value: the requests a start-up burst queues
    // last are the few slow ones of a window (its mean hides them), and the spike rule reads
    // this very series.
    ttft.push_back(stats_percentile(windows[i].ttft_ratio, 99));
  }
  const auto take = [&](const Truncation& t, std::string_view series) {
    if (!t.settled && w.settled)
      w.unsettled = series;
    w.settled = w.settled && t.settled;
    if (t.drop > w.warmup) {
      w.warmup = t.drop;
      w.note = fmt::format("{} (MSER)", series);
    }
  };
  take(truncation_of(throughput), "output tok/s");
  take(truncation_of(itl), "mean ITL");
  take(truncation_of(ttft), "TTFT over its explained value");
  if (engine.size() == windows.size() && n >= 2) {
    std::vector<double> later;
    for (std::size_t k = n / 2; k < n; ++k) later.push_back(engine[w.judged[k]].mean_running);
    // A ramp window holds a batch under 90% of its later level while requests wait for it.
    const double target = 0.9 * median_of(later);
    std::size_t ramp = 0;
    while (ramp < n / 2 && !(engine[w.judged[ramp]].mean_running >= target) &&
           engine[w.judged[ramp]].mean_waiting >= 1)
      ++ramp;
    if (std::isfinite(target) && ramp > w.warmup) {
      w.warmup = ramp;
      w.note = "the engine's batch ramp";
    }
  }
  w.warmup =
      std::min(w.warmup, n / 2);  // a truncation mapped past NaN windows stays in the first half
  return w;
}

// ---- stability ----

std::string_view to_string(Steadiness state) noexcept {
  for (const auto& s : kSteadinessNames) {
    if (s.state == state)
      return s.name;
  }
  return "unstable";
}

namespace {

/// A series' trend over the steady windows, with its level (the mean of its finite values).
struct SeriesTrend {
  Trend trend;
  double level = metrics::kUndefined;
  /// The Theil-Sen change over the span relative to the level (NaN when the level is 0).
  [[nodiscard]] double relative() const noexcept {
    return level > 0 ? trend.change() / level : metrics::kUndefined;
  }
};

SeriesTrend series_trend(const std::vector<double>& values) {
  SeriesTrend s{.trend = trend_test(values)};
  double sum = 0;
  std::size_t n = 0;
  for (const double v : values) {
    if (std::isfinite(v)) {
      sum += v;
      ++n;
    }
  }
  s.level = n > 0 ? sum / static_cast<double>(n) : metrics::kUndefined;
  return s;
}

/// Whether a queue series grows without bound over the span: a significant rising trend, a
/// material growth, and its second half still rising.
bool queue_grows(const std::vector<double>& values, const StabilityRule& rule, double& growth) {
  const Trend t = trend_test(values);
  growth = t.change();
  if (!(t.p_value < rule.alpha) || !(t.slope > 0))
    return false;
  const double start = std::max(0.0, t.fitted_first);
  if (!(growth >= rule.queue_growth) || !(growth >= rule.queue_growth_rel * start))
    return false;
  const std::vector<double> second(values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2),
                                   values.end());
  const Trend late = trend_test(second);
  return late.slope > 0.5 * t.slope;
}

}  // namespace

Stability stability(const std::vector<Window>& windows, const std::vector<EngineSample>& engine,
                    const StabilityRule& rule) {
  Stability out;
  const std::vector<EngineWindow> by_window = engine_windows(windows, engine);
  const bool observed = std::any_of(by_window.begin(), by_window.end(),
                                    [](const EngineWindow& e) { return e.samples > 0; });
  const Warmup warm = find_warmup(windows, observed ? by_window : std::vector<EngineWindow>{});
  const std::vector<std::size_t> steady = warm.steady();
  out.judged_windows = warm.judged.size();
  out.warmup_windows = warm.warmup;
  const std::string excluded =
      warm.warmup == 0
          ? std::string()
          : fmt::format(" after {} warm-up window(s) set by {}", warm.warmup, warm.note);
  if (steady.size() < std::max<std::size_t>(3, rule.min_windows)) {
    out.state = Steadiness::TooShort;
    out.reason =
        fmt::format("{} steady window(s) of {} full ones before the last send{}; the rule needs {}",
                    steady.size(), warm.judged.size(), excluded, rule.min_windows);
    return out;
  }
  out.steady_start_ns = windows[steady.front()].start_ns;
  std::vector<double> throughput;
  std::vector<double> itl;
  std::vector<double> ttft;
  std::vector<double> outstanding;
  std::vector<double> waiting;
  std::size_t waited = 0;
  for (const std::size_t i : steady) {
    const Window& w = windows[i];
    // Output tok/s per request in flight: the server's pace, whatever the offered load (an
    // open loop's throughput follows its arrivals, which vary by chance).
    throughput.push_back(w.mean_in_flight > 0 ? w.output_throughput / w.mean_in_flight
                                              : metrics::kUndefined);
    itl.push_back(w.itl_ms.count > 0 ? w.itl_ms.mean : metrics::kUndefined);
    // TTFT over what the prefill queued ahead explains (`TtftModel`): a burst of arrivals
    // raises TTFT without the server changing; a slower server raises the ratio.
    ttft.push_back(w.ttft_ratio.count > 0 ? w.ttft_ratio.mean : metrics::kUndefined);
    outstanding.push_back(w.mean_in_flight + w.mean_queued);
    if (observed) {
      waiting.push_back(by_window[i].mean_waiting);
      waited += by_window[i].mean_waiting >= 1 ? 1 : 0;
    }
  }
  const SeriesTrend tp = series_trend(throughput);
  const SeriesTrend lat = series_trend(itl);
  const SeriesTrend first = series_trend(ttft);
  out.throughput_spread = tp.relative();
  out.latency_spread = lat.relative();
  out.ttft_change = first.relative();
  const std::string span = fmt::format("{} steady window(s) from {:.1f} s{}", steady.size(),
                                       ns_to_s(out.steady_start_ns), excluded);
  // Saturation: the queue grows without bound, or the engine holds a standing queue.
  double growth = 0;
  if (queue_grows(outstanding, rule, growth)) {
    out.queue_growth = growth;
    out.state = Steadiness::Saturated;
    out.reason = fmt::format(
        "requests outstanding (in flight + queued in the client) grew by {:.1f} over {}: the "
        "load is above what the server completes",
        growth, span);
    return out;
  }
  double engine_growth = 0;
  if (observed && queue_grows(waiting, rule, engine_growth)) {
    out.queue_growth = engine_growth;
    out.state = Steadiness::Saturated;
    out.reason =
        fmt::format("requests waiting at the engine grew by {:.1f} over {}", engine_growth, span);
    return out;
  }
  const double share = static_cast<double>(waited) / static_cast<double>(steady.size());
  if (observed && share >= rule.standing_queue_share) {
    out.state = Steadiness::Saturated;
    out.reason = fmt::format(
        "a standing queue: requests waited at the engine in {} of {}: the server ran at its "
        "capacity",
        waited, span);
    return out;
  }
  if (!warm.settled) {
    out.state = Steadiness::Unstable;
    out.reason = fmt::format(
        "not settled: the warm-up rule (MSER) found {} still changing materially in the second "
        "half of the {} full windows",
        warm.unsettled, warm.judged.size());
    return out;
  }
  // A material, significant trend in throughput, TTFT or ITL.
  struct Named {
    const SeriesTrend* t;
    std::string_view name;
    double tolerance;
  };
  for (const Named& m : {Named{&tp, "output tok/s per request in flight", rule.tolerance},
                         Named{&first, "mean TTFT over its explained value", rule.ttft_tolerance},
                         Named{&lat, "mean ITL", rule.tolerance}}) {
    const double rel = m.t->relative();
    if (m.t->trend.p_value < rule.alpha && std::abs(rel) > m.tolerance) {
      out.state = Steadiness::Unstable;
      out.reason = fmt::format("{} moved {:+.1f}% over {} (Mann-Kendall p = {:.2g} < {:g})", m.name,
                               100 * rel, span, m.t->trend.p_value, rule.alpha);
      return out;
    }
  }
  out.state = Steadiness::Stable;
  out.stable = true;
  out.reason = fmt::format(
      "{}: output tok/s per request {:+.1f}%, TTFT/explained {:+.1f}%, mean ITL {:+.1f}% (no "
      "trend beyond {:g}% ({:g}% for TTFT) at p < {:g}), no growing queue",
      span, 100 * (std::isfinite(tp.relative()) ? tp.relative() : 0.0),
      100 * (std::isfinite(first.relative()) ? first.relative() : 0.0),
      100 * (std::isfinite(lat.relative()) ? lat.relative() : 0.0), 100 * rule.tolerance,
      100 * rule.ttft_tolerance, rule.alpha);
  return out;
}

Stability stability(const std::vector<Window>& windows, const StabilityRule& rule) {
  return stability(windows, {}, rule);
}

}  // namespace llmbench::analysis
