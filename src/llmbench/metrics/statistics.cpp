#include "llmbench/metrics/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>

namespace llmbench::metrics {

namespace {

// ---- numpy's percentile ranks ----

/// The two ranks numpy.percentile(method="linear") reads for quantile q/100 of n values, and the
/// interpolation weight t between them.
struct PercentileRanks {
  std::size_t below = 0;
  std::size_t above = 0;
  double t = 0;
};

PercentileRanks percentile_ranks(std::size_t n, double q) noexcept {
  // q is divided by 100 first and the virtual index is quantile·(n−1), as numpy does.
  const double quantile = q / 100.0;
  const double virtual_index = quantile * static_cast<double>(n - 1);
  const double last = static_cast<double>(n - 1);
  const double below = std::clamp(std::floor(virtual_index), 0.0, last);
  const double above = std::clamp(below + 1.0, 0.0, last);
  return PercentileRanks{.below = static_cast<std::size_t>(below),
                         .above = static_cast<std::size_t>(above),
                         .t = virtual_index - below};
}

/// The percentile between the values `a` (rank `below`) and `b` (rank `above`) at weight t, as
/// numpy's _lerp computes it: b − (b−a)·(1−t) when t ≥ 0.5, a + (b−a)·t otherwise; the same
/// operation order keeps results bit-identical.
double lerp_ranks(double a, double b, double t) noexcept {
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

// ---- numpy's summation order ----

/// Σ f(a[i]) for i < n in the order of numpy's pairwise summation (`pairwise_sum` in
/// numpy/_core/src/umath/loops_utils.h.src, numpy 1.x and 2.x): fewer than 8 terms are added one
/// by one to 0; up to 128, eight running sums take every eighth term, are combined as
/// ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), and the terms beyond the last multiple of 8
/// are added to that; more are split in two halves (the first a multiple of 8 long), each summed
/// so, and the halves added.
template <class F>
double pairwise_sum(const double* a, std::size_t n, const F& f) {
  if (n < 8) {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += f(a[i]);
    return sum;
  }
  if (n <= 128) {
    double r[8];
    for (std::size_t j = 0; j < 8; ++j) r[j] = f(a[j]);
    std::size_t i = 8;
    for (; i < n - n % 8; i += 8) {
      for (std::size_t j = 0; j < 8; ++j) r[j] += f(a[i + j]);
    }
    double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += f(a[i]);
    return sum;
  }
  std::size_t half = n / 2;
  half -= half % 8;
  return pairwise_sum(a, half, f) + pairwise_sum(a + half, n - half, f);
}

/// numpy.sum of f over `values` as numpy.mean and numpy.std compute it for a float64 array (a
/// Python list is converted to one): the reduction runs over blocks of 8,192 elements (numpy's
/// default buffer size), each summed pairwise, the block sums added in order to 0. Checked
/// bit for bit against numpy 1.24's mean and std on 945 arrays of 1 to 1,000,001 values.
constexpr std::size_t kNumpyBlock = 8192;

template <class F>
double numpy_sum(const std::vector<double>& values, const F& f) {
  double sum = 0.0;
  for (std::size_t first = 0; first < values.size(); first += kNumpyBlock)
    sum += pairwise_sum(values.data() + first, std::min(kNumpyBlock, values.size() - first), f);
  return sum;
}

/// `numpy_sum` of f over a sequence handed over in pieces (`add`), in the same order: the pieces
/// are gathered into blocks of 8,192 values, each summed pairwise, the block sums added in turn.
template <class F>
class StreamedNumpySum {
 public:
  // The block is left uninitialized: every value is written before it is read, and zeroing
  // 64 KiB per sum cost more than the sums of a small sample (a time window's).
  explicit StreamedNumpySum(F f)
      : f_(std::move(f)), block_(std::make_unique_for_overwrite<double[]>(kNumpyBlock)) {}
  /// Appends values[0 … n) to the sequence.
  void add(const double* values, std::size_t n) {
    while (n > 0) {
      const std::size_t take = std::min(n, kNumpyBlock - fill_);
      std::copy_n(values, take, block_.get() + fill_);
      fill_ += take;
      values += take;
      n -= take;
      if (fill_ == kNumpyBlock)
        flush();
    }
  }
  /// The sum of the whole sequence.
  double finish() {
    if (fill_ > 0)
      flush();
    return sum_;
  }

 private:
  void flush() {
    sum_ += pairwise_sum(block_.get(), fill_, f_);
    fill_ = 0;
  }
  F f_;
  std::unique_ptr<double[]> block_;
  std::size_t fill_ = 0;
  double sum_ = 0.0;
};

/// The squared deviation from `mean` that numpy.std sums.
struct SquaredDeviation {
  double mean;
  double operator()(double v) const noexcept {
    const double d = v - mean;
    return d * d;
  }
};

// ---- the statistics ----

Stats empty_stats(const std::vector<double>& qs) {
  Stats stats;
  for (double q : qs) {
    stats.percentiles.emplace_back(q, kUndefined);
  }
  return stats;
}

/// The values at `ranks` (ascending) of a sample given as its distinct values, ascending, with
/// their multiplicities (`describe_weighted`).
std::vector<double> values_at_ranks(const std::vector<std::pair<double, std::size_t>>& distinct,
                                    const std::vector<std::size_t>& ranks) {
  std::vector<double> out;
  out.reserve(ranks.size());
  std::size_t d = 0;
  std::size_t below = 0;  // values in distinct[0 … d)
  for (const std::size_t rank : ranks) {
    while (below + distinct[d].second <= rank) below += distinct[d++].second;
    out.push_back(distinct[d].first);
  }
  return out;
}

/// The values at `ranks` (ascending, distinct, each < values.size()) of `values` in sorted order
/// (`describe`), by std::nth_element on the part right of the previous rank: O(n) per rank where
/// a sort is O(n log n), and in place. Reorders `values`.
std::vector<double> select_ranks(std::vector<double>& values,
                                 const std::vector<std::size_t>& ranks) {
  std::vector<double> out;
  out.reserve(ranks.size());
  auto first = values.begin();
  for (const std::size_t rank : ranks) {
    const auto kth = values.begin() + static_cast<std::ptrdiff_t>(rank);
    std::nth_element(first, kth, values.end());
    out.push_back(*kth);
    first = kth + 1;
  }
  return out;
}

/// The Stats of `count` ≥ 1 values in [lo, hi] from their numpy-order sum and Σ (v − mean)²
/// (`squares(mean)`), with `values_at(ranks)` the values at ascending distinct ranks of their
/// sorted order (the one order-statistics path of both `describe`s).
template <class Squares, class ValuesAt>
Stats stats_from(std::size_t count, double sum, double lo, double hi, const Squares& squares,
                 const ValuesAt& values_at, const std::vector<double>& qs,
                 const ExtraPercentiles& extra) {
  Stats stats;
  const auto n = static_cast<double>(count);
  stats.count = count;
  // numpy.mean over vLLM's list, then the population standard deviation (numpy.std, ddof = 0),
  // both summed in numpy's order, so they are bit-identical to numpy's.
  stats.mean = sum / n;
  stats.stddev = std::sqrt(squares(stats.mean) / n);
  stats.min = lo;
  stats.max = hi;
  std::vector<std::size_t> ranks;
  const auto want = [&](double q) {
    const PercentileRanks r = percentile_ranks(count, q);
    ranks.push_back(r.below);
    ranks.push_back(r.above);
  };
  want(50);
  for (double q : qs) want(q);
  const std::vector<double> extra_qs = extra ? extra(count) : std::vector<double>{};
  for (double q : extra_qs) want(q);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  const std::vector<double> at_rank = values_at(ranks);
  // Interpolates exactly as `percentile_sorted` would over the sorted values.
  const auto value = [&](std::size_t rank) {
    return at_rank[static_cast<std::size_t>(std::lower_bound(ranks.begin(), ranks.end(), rank) -
                                            ranks.begin())];
  };
  const auto percentile = [&](double q) {
    const PercentileRanks r = percentile_ranks(count, q);
    return lerp_ranks(value(r.below), value(r.above), r.t);
  };
  stats.median = percentile(50);
  for (double q : qs) {
    stats.percentiles.emplace_back(q, percentile(q));
  }
  for (double q : extra_qs) {
    stats.extra_percentiles.emplace_back(q, percentile(q));
  }
  return stats;
}

// Equal, or both NaN.
bool same_value(double a, double b) noexcept {
  return a == b || (std::isnan(a) && std::isnan(b));
}

}  // namespace

bool operator==(const Stats& a, const Stats& b) noexcept {
  // Fails when a field is added to Stats and not compared below.
  static_assert(sizeof(Stats) == sizeof(std::size_t) + 5 * sizeof(double) +
                                     2 * sizeof(std::vector<std::pair<double, double>>));
  const auto same_pair = [](const std::pair<double, double>& x,
                            const std::pair<double, double>& y) {
    return same_value(x.first, y.first) && same_value(x.second, y.second);
  };
  const auto same_list = [&](const std::vector<std::pair<double, double>>& x,
                             const std::vector<std::pair<double, double>>& y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), same_pair);
  };
  return a.count == b.count && same_value(a.mean, b.mean) && same_value(a.median, b.median) &&
         same_value(a.stddev, b.stddev) && same_value(a.min, b.min) && same_value(a.max, b.max) &&
         same_list(a.percentiles, b.percentiles) &&
         same_list(a.extra_percentiles, b.extra_percentiles);
}

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) {
    return kUndefined;
  }
  const PercentileRanks r = percentile_ranks(sorted.size(), q);
  return lerp_ranks(sorted[r.below], sorted[r.above], r.t);
}

Stats describe(std::vector<double> values, const std::vector<double>& qs,
               const ExtraPercentiles& extra) {
  return describe_in_place(values, sample_sums(values), qs, extra);
}

SampleSums sample_sums(const std::vector<double>& values) {
  if (values.empty()) {
    return {};
  }
  const double sum = numpy_sum(values, [](double v) { return v; });
  const double mean = sum / static_cast<double>(values.size());
  return SampleSums{.sum = sum, .squares = numpy_sum(values, SquaredDeviation{mean})};
}

Stats describe_in_place(std::vector<double>& values, const SampleSums& sums,
                        const std::vector<double>& qs, const ExtraPercentiles& extra) {
  if (values.empty()) {
    return empty_stats(qs);
  }
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return stats_from(
      values.size(), sums.sum, *lo, *hi, [&sums](double) { return sums.squares; },
      [&](const std::vector<std::size_t>& ranks) { return select_ranks(values, ranks); }, qs,
      extra);
}

namespace {

/// `describe_weighted` with `numpy_order_sum(f)`, the sum of f over the sample in numpy's order.
template <class NumpyOrderSum>
Stats weighted_stats(std::vector<std::pair<double, std::size_t>> distinct,
                     const std::vector<double>& qs, const ExtraPercentiles& extra,
                     const NumpyOrderSum& numpy_order_sum) {
  std::size_t count = 0;
  for (const auto& d : distinct) count += d.second;
  if (count == 0) {
    return empty_stats(qs);
  }
  std::sort(distinct.begin(), distinct.end());
  const double sum = numpy_order_sum([](double v) { return v; });
  const auto squares = [&](double mean) { return numpy_order_sum(SquaredDeviation{mean}); };
  return stats_from(
      count, sum, distinct.front().first, distinct.back().first, squares,
      [&](const std::vector<std::size_t>& ranks) { return values_at_ranks(distinct, ranks); }, qs,
      extra);
}

}  // namespace

Stats describe_weighted(const SampleVisitor& visit,
                        std::vector<std::pair<double, std::size_t>> distinct,
                        const std::vector<double>& qs, const ExtraPercentiles& extra) {
  return weighted_stats(std::move(distinct), qs, extra, [&](const auto& f) {
    StreamedNumpySum sum(f);
    visit([&](const double* values, std::size_t n) { sum.add(values, n); });
    return sum.finish();
  });
}

Stats describe_weighted(const std::vector<double>& values,
                        std::vector<std::pair<double, std::size_t>> distinct,
                        const std::vector<double>& qs, const ExtraPercentiles& extra) {
  return weighted_stats(std::move(distinct), qs, extra,
                        [&](const auto& f) { return numpy_sum(values, f); });
}

}  // namespace llmbench::metrics
