#include "llmbench/telemetry/series_stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace llmbench::telemetry {

namespace {

/// numpy.percentile(x, q, method="linear") over sorted `x`: rank q/100 × (n − 1), interpolated.
double percentile_sorted(const std::vector<double>& x, double q) {
  const double rank = q / 100.0 * static_cast<double>(x.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, x.size() - 1);
  return x[lo] + (x[hi] - x[lo]) * (rank - static_cast<double>(lo));
}

}  // namespace

SeriesStats describe_series(std::span<const double> values) {
  std::vector<double> x;
  x.reserve(values.size());
  for (const double v : values) {
    if (!std::isnan(v))
      x.push_back(v);
  }
  SeriesStats s;
  if (x.empty())
    return s;
  std::sort(x.begin(), x.end());
  double sum = 0;
  for (const double v : x) sum += v;
  s.count = x.size();
  s.mean = sum / static_cast<double>(x.size());
  s.min = x.front();
  s.max = x.back();
  s.p50 = percentile_sorted(x, 50);
  s.p90 = percentile_sorted(x, 90);
  s.p99 = percentile_sorted(x, 99);
  return s;
}

double counter_increase(std::span<const double> values) {
  double total = 0;
  double prev = std::nan("");
  std::size_t readings = 0;
  for (const double v : values) {
    if (std::isnan(v))
      continue;
    if (readings > 0)
      total += v >= prev ? v - prev : v;
    prev = v;
    ++readings;
  }
  return readings >= 2 ? total : std::nan("");
}

}  // namespace llmbench::telemetry
