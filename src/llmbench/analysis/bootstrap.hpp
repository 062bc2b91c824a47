#pragma once
/// @file
/// Two-sample statistics for `llmbench compare` (docs/compare.md "Statistics"): the percentile
/// bootstrap over requests (Efron & Tibshirani, "An Introduction to the Bootstrap", Chapman &
/// Hall 1993, ch. 13), the Mann-Whitney U test (Mann & Whitney, "On a test of whether one of two
/// random variables is stochastically larger than the other", Ann. Math. Statist. 18(1), 1947)
/// with the normal approximation and tie correction, and Holm's step-down adjustment (Holm, "A
/// simple sequentially rejective multiple test procedure", Scand. J. Statist. 6(2), 1979).
/// Percentiles are those of `metrics::percentile_sorted` (numpy's linear interpolation).

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

namespace llmbench::analysis {

/// A statistic of one metric's distribution that `compare` reports.
enum class Statistic : std::uint8_t { Mean, P50, P90, P99 };

/// A statistic's name ("mean", "p50", "p90", "p99"), as in results keys (`p99_ttft_ms`).
std::string_view to_string(Statistic statistic) noexcept;
/// The percentile q in [0, 100] of a percentile statistic; NaN for `Mean`.
double percentile_of(Statistic statistic) noexcept;
/// Every statistic, in report order.
const std::vector<Statistic>& all_statistics();

/// One run's samples of one metric, grouped into resampling units (requests). Value i belongs to
/// unit `unit[i]` < `units`. A per-request metric (TTFT) has one value per unit; ITL has one per
/// token, all of one request in one unit, so resampling keeps a request's tokens together (the
/// tokens of a request are not independent).
struct UnitSample {
  std::vector<double> values{};
  std::vector<std::size_t> unit{};  ///< same length as `values`
  std::size_t units = 0;
};

/// A sample of one value per unit (each value its own unit).
UnitSample per_unit(std::vector<double> values);

/// The value of each unit for the rank test: the mean of its values (a per-request metric: the
/// value itself; ITL: the request's mean ITL), in unit order. A unit with no value is left out.
std::vector<double> unit_means(const UnitSample& sample);

/// `statistic` of `sample` over all its values (the point estimate): the mean, or
/// `metrics::percentile_sorted` of the sorted values. NaN for an empty sample.
double statistic_of(const UnitSample& sample, Statistic statistic);

/// How the bootstrap is drawn.
struct BootstrapOptions {
  std::size_t resamples = 2000;  ///< B, the number of bootstrap resamples (>= 1)
  double confidence = 0.95;      ///< level of the two-sided interval, in (0, 1)
  std::uint64_t seed = 0;        ///< master seed of the resampling streams (core Rng)
};

/// A percentile bootstrap interval of a difference, NaN-bounded when a sample is empty.
struct Interval {
  double low = std::numeric_limits<double>::quiet_NaN();
  double high = std::numeric_limits<double>::quiet_NaN();
  /// True when the interval lies strictly above or strictly below 0.
  [[nodiscard]] bool excludes_zero() const noexcept { return low > 0 || high < 0; }
};

/// Percentile bootstrap intervals of `statistic(b) − statistic(a)`, one per entry of
/// `statistics`, times `scale` for each (a throughput: mean × units / duration). Each resample
/// draws `a.units` units of `a` and `b.units` units of `b` with replacement (independent streams
/// "bootstrap/a/<purpose>" and "bootstrap/b/<purpose>" of `options.seed`), computes every
/// statistic over the values of the drawn units (a unit drawn k times counts k times), and the
/// interval is the (1−c)/2 and (1+c)/2 percentiles of the resampled differences. Time
/// O(B · (values + units)) after one sort. Intervals are NaN when either sample is empty.
std::vector<Interval> bootstrap_difference(const UnitSample& a, const UnitSample& b,
                                           const std::vector<Statistic>& statistics, double scale_a,
                                           double scale_b, std::string_view purpose,
                                           const BootstrapOptions& options);

/// The Mann-Whitney U test of two samples (two-sided).
struct RankTest {
  double u = std::numeric_limits<double>::quiet_NaN();  ///< U of the first sample
  double z = std::numeric_limits<double>::quiet_NaN();  ///< normal score, continuity-corrected
  double p_value = std::numeric_limits<double>::quiet_NaN();  ///< two-sided, in [0, 1]
};

/// Mann-Whitney U of `a` against `b`: midranks over the pooled sample, U_a = R_a − n_a(n_a+1)/2;
/// mean n_a·n_b/2; variance n_a·n_b/12 · ((n+1) − Σ(t³−t)/(n(n−1))) over the tie groups t (the
/// tie correction); z = (|U_a − mean| − 1/2)/sd (continuity correction, as scipy's
/// `mannwhitneyu(method="asymptotic")`); p = erfc(z/√2), capped at 1. p = 1 when every value is
/// tied (variance 0); all NaN when a sample is empty. NaN values are ignored.
RankTest mann_whitney(const std::vector<double>& a, const std::vector<double>& b);

/// The smallest two-sided p `mann_whitney` can give for samples of `n_a` and `n_b` values: that
/// of complete separation without ties (U = 0; z = (n_a·n_b/2 − 1/2)/√(n_a·n_b(n_a + n_b + 1)/12)).
/// A test that cannot go below α cannot find a difference, whatever the data; 1 when a sample
/// is empty.
double mann_whitney_min_p(std::size_t n_a, std::size_t n_b) noexcept;

/// Holm's step-down adjusted p-values, in the order given: the i-th smallest p times (m − i + 1),
/// made monotone and capped at 1. NaN entries are left NaN and do not count in m.
std::vector<double> holm_adjust(const std::vector<double>& p_values);

}  // namespace llmbench::analysis
