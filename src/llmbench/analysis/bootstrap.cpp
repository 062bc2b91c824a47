#include "llmbench/analysis/bootstrap.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/metrics/statistics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

namespace llmbench::analysis {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The one name table of `Statistic`: its name and percentile (NaN for the mean).
struct StatisticName {
  Statistic statistic;
  std::string_view name;
  double q;
};
constexpr std::array<StatisticName, 4> kStatistics{{{Statistic::Mean, "mean", kNaN},
                                                    {Statistic::P50, "p50", 50.0},
                                                    {Statistic::P90, "p90", 90.0},
                                                    {Statistic::P99, "p99", 99.0}}};

/// A sample's values in ascending order with the unit of each, and each unit's value count.
struct SortedSample {
  std::vector<double> values{};
  std::vector<std::size_t> unit{};
  std::size_t units = 0;
  std::vector<std::size_t> unit_size{};
};

SortedSample sort_sample(const UnitSample& sample) {
  std::vector<std::size_t> order(sample.values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return sample.values[x] < sample.values[y];
  });
  SortedSample s{.units = sample.units, .unit_size = std::vector<std::size_t>(sample.units, 0)};
  s.values.reserve(order.size());
  s.unit.reserve(order.size());
  for (const std::size_t i : order) {
    s.values.push_back(sample.values[i]);
    s.unit.push_back(sample.unit[i]);
    ++s.unit_size[sample.unit[i]];
  }
  return s;
}

/// The value at 0-based position `k` of the sample with each value repeated by its unit's count,
/// walking forward from `(i, before)` (`before` = positions in values before i), which it moves.
double value_at(const SortedSample& s, const std::vector<std::uint32_t>& counts, std::size_t k,
                std::size_t& i, std::size_t& before) {
  while (i < s.values.size() && before + counts[s.unit[i]] <= k) {
    before += counts[s.unit[i]];
    ++i;
  }
  return s.values[std::min(i, s.values.size() - 1)];
}

/// Every statistic of the resample that counts unit u `counts[u]` times, into `out`: the mean,
/// and percentiles exactly as `metrics::percentile_sorted` interpolates the expanded sample
/// (numpy's virtual index q/100·(W−1) and its _lerp order of operations).
void resample_statistics(const SortedSample& s, const std::vector<std::uint32_t>& counts,
                         const std::vector<Statistic>& statistics, std::vector<double>& out) {
  std::size_t total = 0;
  double sum = 0;
  for (std::size_t i = 0; i < s.values.size(); ++i) {
    total += counts[s.unit[i]];
    sum += static_cast<double>(counts[s.unit[i]]) * s.values[i];
  }
  out.assign(statistics.size(), kNaN);
  if (total == 0)
    return;
  // Percentiles in ascending q share one forward walk.
  std::vector<std::size_t> order(statistics.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return percentile_of(statistics[x]) < percentile_of(statistics[y]);
  });
  std::size_t i = 0;
  std::size_t before = 0;
  const double last = static_cast<double>(total - 1);
  for (const std::size_t j : order) {
    const double q = percentile_of(statistics[j]);
    if (std::isnan(q)) {
      out[j] = sum / static_cast<double>(total);
      continue;
    }
    const double virtual_index = q / 100.0 * last;
    const double below = std::clamp(std::floor(virtual_index), 0.0, last);
    const double above = std::clamp(below + 1.0, 0.0, last);
    const double t = virtual_index - below;
    const double a = value_at(s, counts, static_cast<std::size_t>(below), i, before);
    const double b = value_at(s, counts, static_cast<std::size_t>(above), i, before);
    const double diff = b - a;
    out[j] = t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
  }
}

/// Draws `s.units` units with replacement into `counts`.
void draw_units(const SortedSample& s, Rng& rng, std::vector<std::uint32_t>& counts) {
  counts.assign(s.units, 0);
  const auto last = static_cast<std::int64_t>(s.units) - 1;
  for (std::size_t k = 0; k < s.units; ++k) {
    ++counts[static_cast<std::size_t>(rng.uniform_int(0, last))];
  }
}

}  // namespace

std::string_view to_string(Statistic statistic) noexcept {
  return kStatistics[static_cast<std::size_t>(statistic)].name;
}

double percentile_of(Statistic statistic) noexcept {
  return kStatistics[static_cast<std::size_t>(statistic)].q;
}

const std::vector<Statistic>& all_statistics() {
  static const std::vector<Statistic> all = [] {
    std::vector<Statistic> v;
    v.reserve(kStatistics.size());
    for (const auto& s : kStatistics) v.push_back(s.statistic);
    return v;
  }();
  return all;
}

UnitSample per_unit(std::vector<double> values) {
  UnitSample s{.values = std::move(values)};
  s.units = s.values.size();
  s.unit.resize(s.units);
  std::iota(s.unit.begin(), s.unit.end(), std::size_t{0});
  return s;
}

std::vector<double> unit_means(const UnitSample& sample) {
  std::vector<double> sums(sample.units, 0.0);
  std::vector<std::size_t> sizes(sample.units, 0);
  for (std::size_t i = 0; i < sample.values.size(); ++i) {
    sums[sample.unit[i]] += sample.values[i];
    ++sizes[sample.unit[i]];
  }
  std::vector<double> means{};
  means.reserve(sample.units);
  for (std::size_t u = 0; u < sample.units; ++u) {
    if (sizes[u] > 0)
      means.push_back(sums[u] / static_cast<double>(sizes[u]));
  }
  return means;
}

double statistic_of(const UnitSample& sample, Statistic statistic) {
  if (sample.values.empty())
    return kNaN;
  if (statistic == Statistic::Mean) {
    const double sum = std::accumulate(sample.values.begin(), sample.values.end(), 0.0);
    return sum / static_cast<double>(sample.values.size());
  }
  std::vector<double> sorted = sample.values;
  std::sort(sorted.begin(), sorted.end());
  return metrics::percentile_sorted(sorted, percentile_of(statistic));
}

std::vector<Interval> bootstrap_difference(const UnitSample& a, const UnitSample& b,
                                           const std::vector<Statistic>& statistics, double scale_a,
                                           double scale_b, std::string_view purpose,
                                           const BootstrapOptions& options) {
  if (options.resamples == 0 || !(options.confidence > 0 && options.confidence < 1)) {
    throw Exception(
        Error{"needs at least one resample and a confidence in (0, 1)", "bootstrap options", -1});
  }
  std::vector<Interval> intervals(statistics.size());
  if (a.values.empty() || b.values.empty())
    return intervals;
  const SortedSample sa = sort_sample(a);
  const SortedSample sb = sort_sample(b);
  Rng rng_a(options.seed, "bootstrap/a/" + std::string(purpose));
  Rng rng_b(options.seed, "bootstrap/b/" + std::string(purpose));
  std::vector<std::vector<double>> diffs(statistics.size());
  for (auto& d : diffs) d.reserve(options.resamples);
  std::vector<std::uint32_t> counts{};
  std::vector<double> stats_a{};
  std::vector<double> stats_b{};
  for (std::size_t r = 0; r < options.resamples; ++r) {
    draw_units(sa, rng_a, counts);
    resample_statistics(sa, counts, statistics, stats_a);
    draw_units(sb, rng_b, counts);
    resample_statistics(sb, counts, statistics, stats_b);
    for (std::size_t j = 0; j < statistics.size(); ++j) {
      // A resample may draw only units without values (e.g. requests without TPOT): skipped.
      const double d = stats_b[j] * scale_b - stats_a[j] * scale_a;
      if (!std::isnan(d))
        diffs[j].push_back(d);
    }
  }
  const double tail = (1.0 - options.confidence) / 2.0 * 100.0;
  for (std::size_t j = 0; j < statistics.size(); ++j) {
    std::sort(diffs[j].begin(), diffs[j].end());
    intervals[j] = Interval{.low = metrics::percentile_sorted(diffs[j], tail),
                            .high = metrics::percentile_sorted(diffs[j], 100.0 - tail)};
  }
  return intervals;
}

double mann_whitney_min_p(std::size_t n_a, std::size_t n_b) noexcept {
  if (n_a == 0 || n_b == 0)
    return 1.0;
  const auto na = static_cast<double>(n_a);
  const auto nb = static_cast<double>(n_b);
  const double sd = std::sqrt(na * nb * (na + nb + 1.0) / 12.0);
  const double z = (na * nb / 2.0 - 0.5) / sd;
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

RankTest mann_whitney(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<std::pair<double, bool>> pooled{};  // (value, from a)
  for (const double v : a) {
    if (!std::isnan(v))
      pooled.emplace_back(v, true);
  }
  const std::size_t n_a = pooled.size();
  for (const double v : b) {
    if (!std::isnan(v))
      pooled.emplace_back(v, false);
  }
  const std::size_t n = pooled.size();
  const std::size_t n_b = n - n_a;
  if (n_a == 0 || n_b == 0)
    return {};
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  double rank_sum_a = 0;
  double tie_term = 0;  // Σ (t³ − t) over tie groups
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    // Positions i..j-1 (0-based) share the midrank of ranks i+1..j.
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].second)
        rank_sum_a += midrank;
    }
    const auto t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  const auto na = static_cast<double>(n_a);
  const auto nb = static_cast<double>(n_b);
  const auto nn = static_cast<double>(n);
  RankTest test;
  test.u = rank_sum_a - na * (na + 1.0) / 2.0;
  const double mean = na * nb / 2.0;
  const double variance =
      na * nb / 12.0 * ((nn + 1.0) - (n > 1 ? tie_term / (nn * (nn - 1.0)) : 0.0));
  if (!(variance > 0)) {
    test.z = 0;
    test.p_value = 1;
    return test;
  }
  test.z = std::max(0.0, std::abs(test.u - mean) - 0.5) / std::sqrt(variance);
  test.p_value = std::min(1.0, std::erfc(test.z / std::sqrt(2.0)));
  return test;
}

std::vector<double> holm_adjust(const std::vector<double>& p_values) {
  std::vector<std::size_t> order{};
  for (std::size_t i = 0; i < p_values.size(); ++i) {
    if (!std::isnan(p_values[i]))
      order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return p_values[x] < p_values[y]; });
  std::vector<double> adjusted(p_values.size(), kNaN);
  const std::size_t m = order.size();
  double running = 0;
  for (std::size_t rank = 0; rank < m; ++rank) {
    const double p = p_values[order[rank]] * static_cast<double>(m - rank);
    running = std::max(running, std::min(1.0, p));
    adjusted[order[rank]] = running;
  }
  return adjusted;
}

}  // namespace llmbench::analysis
