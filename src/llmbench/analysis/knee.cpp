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

}  // namespace llmbench::analysis
