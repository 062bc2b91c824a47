#include "llmbench/analysis/knee.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace llmbench::analysis {

Knee find_knee(std::vector<std::pair<double, double>> points, const KneeOptions& options) {
  Knee knee;
  std::erase_if(points,
                [](const auto& p) { return !std::isfinite(p.first) || !std::isfinite(p.second); });
  std::stable_sort(points.begin(), points.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const std::size_t n = points.size();
  if (n < 3) {
    knee.reason = fmt::format("{} point(s); Kneedle needs at least 3", n);
    return knee;
  }
  const auto [ymin, ymax] =
      std::minmax_element(points.begin(), points.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; });
  const double x0 = points.front().first;
  const double xr = points.back().first - x0;
  const double y0 = ymin->second;
  const double yr = ymax->second - y0;
  if (!(xr > 0) || !(yr > 0)) {
    knee.reason = "the points do not vary in both x and y";
    return knee;
  }
  std::vector<double> d(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double xn = (points[i].first - x0) / xr;
    const double yn = (points[i].second - y0) / yr;
    d[i] = options.shape == CurveShape::ConcaveIncreasing ? yn - xn : xn - yn;
  }
  // Local maxima of d (interior points; a plateau counts at its first point).
  std::vector<std::size_t> maxima;
  for (std::size_t i = 1; i + 1 < n; ++i) {
    if (d[i] > d[i - 1] && d[i] >= d[i + 1])
      maxima.push_back(i);
  }
  const double drop = options.sensitivity / static_cast<double>(n - 1);
  for (std::size_t m = 0; m < maxima.size(); ++m) {
    const std::size_t lmx = maxima[m];
    const std::size_t next = m + 1 < maxima.size() ? maxima[m + 1] : n;
    const double threshold = d[lmx] - drop;
    for (std::size_t j = lmx + 1; j < next; ++j) {
      if (d[j] < threshold) {
        knee.found = true;
        knee.index = lmx;
        knee.x = points[lmx].first;
        knee.y = points[lmx].second;
        knee.difference = d[lmx];
        return knee;
      }
    }
  }
  knee.reason = maxima.empty()
                    ? "the curve does not bend within the points (no maximum of the difference "
                      "curve before the last point)"
                    : "the difference curve never falls below the threshold after a maximum";
  return knee;
}

namespace {

/// True when the sorted positive loads grow by one factor > 1.25 (each ratio within 25% of the
/// median ratio): a doubling or `LO:HI:xF` ladder.
bool is_geometric(const std::vector<LadderPoint>& p) {
  if (p.size() < 3 || !(p.front().load > 0))
    return false;
  std::vector<double> ratios;
  for (std::size_t i = 1; i < p.size(); ++i) ratios.push_back(p[i].load / p[i - 1].load);
  std::vector<double> sorted = ratios;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  if (!(median > 1.25))
    return false;
  return std::all_of(ratios.begin(), ratios.end(),
                     [&](double r) { return std::abs(r / median - 1) <= 0.25; });
}

/// The lowest index whose throughput no later point exceeds by `kSaturationGain` or more
/// (points sorted by load).
std::size_t saturation_knee(const std::vector<LadderPoint>& p) {
  for (std::size_t k = 0; k < p.size(); ++k) {
    bool grows = false;
    for (std::size_t j = k + 1; j < p.size() && !grows; ++j)
      grows = p[j].output_throughput >= (1 + kSaturationGain) * p[k].output_throughput;
    if (!grows)
      return k;
  }
  return p.size();
}

/// The lower index of the first step that gained under `kSaturationGain` of throughput while its
/// median TTFT grew by `kQueueEdgeFactor` or more (points sorted by load); `p.size()` when none.
std::size_t queue_edge(const std::vector<LadderPoint>& p) {
  for (std::size_t i = 0; i + 1 < p.size(); ++i) {
    const double before = p[i].median_ttft_ms;
    const double after = p[i + 1].median_ttft_ms;
    if (!(before > 0) || !std::isfinite(after) || !(p[i].output_throughput > 0))
      continue;
    const bool stalled =
        p[i + 1].output_throughput < (1 + kSaturationGain) * p[i].output_throughput;
    if (stalled && after >= kQueueEdgeFactor * before)
      return i;
  }
  return p.size();
}

/// A knee found by a rule (not Kneedle) at index `i` of the sorted points.
Knee knee_at(const std::vector<LadderPoint>& p, std::size_t i) {
  return Knee{.found = true,
              .index = i,
              .x = p[i].load,
              .y = p[i].output_throughput,
              .difference = std::nan(""),
              .reason = {}};
}

/// Places `st.knee` on the sorted, non-empty points (Kneedle, the saturation rule, the queue
/// edge) and sets `geometric`, `saturation_rule`, `queue_edge` and its fields; returns the queue
/// edge's lower index (`points.size()` when the ladder queues nowhere).
std::size_t place_knee(const std::vector<LadderPoint>& points, KneeStatement& st) {
  st.geometric = is_geometric(points);
  std::vector<std::pair<double, double>> curve;
  curve.reserve(points.size());
  for (const auto& p : points) {
    curve.emplace_back(st.geometric ? std::log2(p.load) : p.load, p.output_throughput);
  }
  st.knee = find_knee(curve, {.shape = CurveShape::ConcaveIncreasing});
  // Where Kneedle cannot see the bend, the saturation rule places it: a ladder that never gains
  // kSaturationGain over its first point is saturated there (Kneedle would normalize its noise
  // into a knee); a saturated ladder whose bend is its second-to-last point (the difference
  // curve can fall by at most 1/(n-1) after it) bends at the lowest load that no later point
  // betters by kSaturationGain.
  const std::size_t at = saturation_knee(points);
  const bool flat = at == 0 && points.size() >= 2;
  if (flat || (!st.knee.found && at + 1 < points.size() && at + 2 >= points.size())) {
    st.knee = knee_at(points, at);
    st.saturation_rule = true;
  }
  // A queue edge before that knee moves it down: throughput stalled there while requests began
  // to wait (the later "knee" is noise on a flat ladder).
  const std::size_t edge = queue_edge(points);
  if (edge < points.size())
    st.queue_edge_load = points[edge].load;
  if (edge < points.size() && (!st.knee.found || edge < st.knee.index)) {
    st.knee = knee_at(points, edge);
    st.saturation_rule = false;
    st.queue_edge = true;
  }
  if (st.knee.found)
    st.knee.x = points[st.knee.index].load;
  return edge;
}

}  // namespace

KneeStatement describe_knee(std::vector<LadderPoint> points, std::string_view load_name) {
  KneeStatement st;
  std::erase_if(points, [](const LadderPoint& p) {
    return !std::isfinite(p.load) || !std::isfinite(p.output_throughput);
  });
  std::stable_sort(points.begin(), points.end(),
                   [](const auto& a, const auto& b) { return a.load < b.load; });
  if (points.empty()) {
    st.text = "no knee: no point with a throughput";
    st.knee.reason = "no point";
    return st;
  }
  const std::size_t edge = place_knee(points, st);
  std::string queue_clause;  // the queue edge past the knee (at the knee, the method says it)
  if (edge < points.size() && !st.queue_edge) {
    queue_clause = fmt::format(
        "; requests start to queue past {}={:g} (median TTFT {:.1f} → {:.1f} ms at {}={:g})",
        load_name, points[edge].load, points[edge].median_ttft_ms, points[edge + 1].median_ttft_ms,
        load_name, points[edge + 1].load);
  }
  const auto top = std::max_element(points.begin(), points.end(), [](const auto& a, const auto& b) {
    return a.output_throughput < b.output_throughput;
  });
  st.saturation_tok_s = top->output_throughput;
  st.saturation_load = top->load;
  st.ttft_at_saturation_ms = top->p99_ttft_ms;
  if (points.size() >= 2) {
    const double before = points[points.size() - 2].output_throughput;
    st.last_step_gain = before > 0 ? points.back().output_throughput / before - 1 : std::nan("");
    st.saturated = st.last_step_gain < kSaturationGain;
  }
  const std::string saturation =
      std::isnan(st.last_step_gain) ? std::string("one point: saturation unknown")
      : st.saturated ? fmt::format("saturated: the last step ({}={:g}) gained {:+.1f}%", load_name,
                                   points.back().load, 100 * st.last_step_gain)
                     : fmt::format(
                           "not saturated within the points: the last step ({}={:g}) still "
                           "gained {:+.1f}%",
                           load_name, points.back().load, 100 * st.last_step_gain);
  if (!st.knee.found) {
    st.text = fmt::format("no knee ({}); highest throughput {:.1f} tok/s at {}={:g}{}; {}",
                          st.knee.reason, st.saturation_tok_s, load_name, st.saturation_load,
                          queue_clause, saturation);
    return st;
  }
  const LadderPoint& k = points[st.knee.index];
  st.ttft_at_knee_ms = k.p99_ttft_ms;
  st.gained_past_knee =
      k.output_throughput > 0 ? st.saturation_tok_s / k.output_throughput - 1 : std::nan("");
  std::string past;
  if (st.saturation_load > k.load && st.gained_past_knee >= kSaturationGain) {
    past = fmt::format(
        "past it throughput still grew {:+.1f}% (to {:.1f} tok/s at {}={:g}) while p99 TTFT went "
        "from {:.1f} to {:.1f} ms",
        100 * st.gained_past_knee, st.saturation_tok_s, load_name, st.saturation_load,
        k.p99_ttft_ms, st.ttft_at_saturation_ms);
  } else {
    const LadderPoint& last = points.back();
    past = fmt::format(
        "throughput stops growing there (at most {:+.1f}% more past it) while p99 TTFT went "
        "from {:.1f} ms to {:.1f} ms at {}={:g}",
        100 * std::max(0.0, st.gained_past_knee), k.p99_ttft_ms, last.p99_ttft_ms, load_name,
        last.load);
  }
  const std::string method =
      st.queue_edge ? fmt::format(
                          ", where requests start to queue: median TTFT {:.1f} → {:.1f} ms "
                          "at {}={:g}",
                          k.median_ttft_ms, points[st.knee.index + 1].median_ttft_ms, load_name,
                          points[st.knee.index + 1].load)
      : st.saturation_rule
          ? (st.knee.index == 0 ? ", saturated from the first point" : ", by the saturation rule")
      : st.geometric ? ", Kneedle on log2 load"
                     : "";
  st.text = fmt::format("knee at {}={:g} ({:.1f} tok/s{}); {}{}; {}", load_name, k.load,
                        k.output_throughput, method, past, queue_clause, saturation);
  return st;
}

}  // namespace llmbench::analysis
