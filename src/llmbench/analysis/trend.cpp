#include "llmbench/analysis/trend.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace llmbench::analysis {

namespace {

/// Positions of the finite values.
struct Points {
  std::vector<double> x;
  std::vector<double> y;
};

Points finite_points(const std::vector<double>& values) {
  Points p;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isfinite(values[i])) {
      p.x.push_back(static_cast<double>(i));
      p.y.push_back(values[i]);
    }
  }
  return p;
}

/// The median of `v` (not empty), reordering it.
double median_inplace(std::vector<double>& v) {
  const std::size_t n = v.size();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  const double hi = *mid;
  if (n % 2 == 1)
    return hi;
  return (*std::max_element(v.begin(), mid) + hi) / 2;
}

/// At most `limit` points: consecutive groups averaged (in x and y).
Points grouped(const Points& p, std::size_t limit) {
  if (p.x.size() <= limit)
    return p;
  const std::size_t per = (p.x.size() + limit - 1) / limit;
  Points out;
  for (std::size_t i = 0; i < p.x.size(); i += per) {
    const std::size_t end = std::min(p.x.size(), i + per);
    double sx = 0;
    double sy = 0;
    for (std::size_t k = i; k < end; ++k) {
      sx += p.x[k];
      sy += p.y[k];
    }
    const auto m = static_cast<double>(end - i);
    out.x.push_back(sx / m);
    out.y.push_back(sy / m);
  }
  return out;
}

/// The Theil-Sen slope of `g` (NaN when no two x differ).
double theil_sen(const Points& g) {
  std::vector<double> slopes;
  slopes.reserve(g.x.size() * (g.x.size() - 1) / 2);
  for (std::size_t i = 0; i + 1 < g.x.size(); ++i) {
    for (std::size_t j = i + 1; j < g.x.size(); ++j) {
      if (g.x[j] != g.x[i])
        slopes.push_back((g.y[j] - g.y[i]) / (g.x[j] - g.x[i]));
    }
  }
  return slopes.empty() ? std::nan("") : median_inplace(slopes);
}

/// The lags the autocorrelation correction sums over: the dependence between windows comes from
/// requests that span a few of them and bursts of arrivals. Longer lags would read a level shift
/// left in the detrended series (a step the straight Theil-Sen line cannot follow) as
/// autocorrelation and hide the very change the test is for.
constexpr std::size_t kMaxLag = 3;

/// Hamed and Rao's variance correction n/n* (≥ 1) for the autocorrelation of the ranks of the
/// series detrended by `slope`: 1 + 2 / (n(n − 1)(n − 2)) Σ (n − k)(n − k − 1)(n − k − 2) ρ_k
/// over the lags k ≤ kMaxLag whose rank autocorrelation ρ_k is significant at 5%
/// (|ρ_k| > 1.96/√n).
double autocorrelation_factor(const Points& p, double slope) {
  const std::size_t n = p.y.size();
  if (n < 4 || std::isnan(slope))
    return 1.0;
  std::vector<std::pair<double, std::size_t>> residual;
  for (std::size_t i = 0; i < n; ++i) residual.emplace_back(p.y[i] - slope * p.x[i], i);
  std::sort(residual.begin(), residual.end());
  std::vector<double> rank(n);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && residual[j].first == residual[i].first) ++j;
    const double mid = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k) rank[residual[k].second] = mid;
    i = j;
  }
  const auto nd = static_cast<double>(n);
  const double mean = (nd + 1) / 2;
  double denom = 0;
  for (const double r : rank) denom += (r - mean) * (r - mean);
  if (!(denom > 0))
    return 1.0;
  const double limit = 1.96 / std::sqrt(nd);
  double sum = 0;
  for (std::size_t k = 1; k <= kMaxLag && k + 2 < n; ++k) {
    double num = 0;
    for (std::size_t i = 0; i + k < n; ++i) num += (rank[i] - mean) * (rank[i + k] - mean);
    const double rho = num / denom;
    if (std::abs(rho) > limit) {
      const auto m = static_cast<double>(n - k);
      sum += m * (m - 1) * (m - 2) * rho;
    }
  }
  return std::max(1.0, 1 + 2 * sum / (nd * (nd - 1) * (nd - 2)));
}

}  // namespace

double median_of(std::vector<double> values) {
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  if (values.empty())
    return std::nan("");
  return median_inplace(values);
}

double mad_of(const std::vector<double>& values) {
  const double m = median_of(values);
  if (std::isnan(m))
    return m;
  std::vector<double> dev;
  for (const double v : values) {
    if (std::isfinite(v))
      dev.push_back(std::abs(v - m));
  }
  return median_inplace(dev);
}

Trend trend_test(const std::vector<double>& values) {
  Trend t;
  const Points p = finite_points(values);
  const std::size_t n = p.y.size();
  t.n = n;
  if (n < 3)
    return t;
  double s = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      s += static_cast<double>((p.y[j] > p.y[i]) - (p.y[j] < p.y[i]));
    }
  }
  // Tie groups of equal values correct the variance (Kendall 1975).
  std::vector<double> sorted = p.y;
  std::sort(sorted.begin(), sorted.end());
  double ties = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && sorted[j] == sorted[i]) ++j;
    const auto g = static_cast<double>(j - i);
    ties += g * (g - 1) * (2 * g + 5);
    i = j;
  }
  const auto nd = static_cast<double>(n);
  t.s = s;
  const Points g0 = grouped(p, 400);
  t.variance_factor = autocorrelation_factor(p, theil_sen(g0));
  const double var = (nd * (nd - 1) * (2 * nd + 5) - ties) / 18 * t.variance_factor;
  if (var > 0) {
    const double corrected = s > 0 ? s - 1 : (s < 0 ? s + 1 : 0);
    t.z = corrected / std::sqrt(var);
    t.p_value = std::min(1.0, std::erfc(std::abs(t.z) / std::sqrt(2.0)));
  } else {
    t.z = 0;
    t.p_value = 1;  // every value tied: no evidence of a trend
  }
  t.slope = theil_sen(g0);
  if (std::isnan(t.slope))
    return t;
  std::vector<double> residual;
  residual.reserve(n);
  for (std::size_t i = 0; i < n; ++i) residual.push_back(p.y[i] - t.slope * p.x[i]);
  t.intercept = median_inplace(residual);
  t.fitted_first = t.intercept + t.slope * p.x.front();
  t.fitted_last = t.intercept + t.slope * p.x.back();
  return t;
}

Truncation mser_truncation(const std::vector<double>& values, double max_fraction,
                           std::size_t min_left) {
  std::vector<double> v;
  for (const double x : values) {
    if (std::isfinite(x))
      v.push_back(x);
  }
  Truncation out;
  const std::size_t n = v.size();
  if (n < min_left + 1)
    return out;
  // Suffix sums of x and x² give Σ_{i≥d} (x_i − mean)² = Σx² − (Σx)²/m in O(1) per d; values
  // are centred first so the difference does not cancel.
  double centre = 0;
  for (const double x : v) centre += x;
  centre /= static_cast<double>(n);
  std::vector<double> stat(n - min_left + 1);
  double sum = 0;
  double sum2 = 0;
  for (std::size_t k = n; k-- > 0;) {
    const double x = v[k] - centre;
    sum += x;
    sum2 += x * x;
    if (k < stat.size()) {
      const auto m = static_cast<double>(n - k);
      stat[k] = std::max(0.0, sum2 - sum * sum / m) / (m * m);
    }
  }
  const auto limit = std::min(
      stat.size() - 1, static_cast<std::size_t>(std::floor(max_fraction * static_cast<double>(n))));
  const double lowest =
      *std::min_element(stat.begin(), stat.begin() + static_cast<std::ptrdiff_t>(limit) + 1);
  const double overall = *std::min_element(stat.begin(), stat.end());
  // The first d at the minimum (a floor keeps a series that is constant after its start from
  // chasing rounding noise).
  const double scale = sum2 / static_cast<double>(n) / static_cast<double>(n);
  const double near = lowest + 1e-12 * scale;
  std::size_t d = 0;
  while (d < limit && stat[d] > near) ++d;
  out.drop = d;
  out.settled = overall + 1e-12 * scale >= lowest;
  return out;
}

}  // namespace llmbench::analysis
