#pragma once
/// @file
/// Distribution statistics of one metric's samples, as numpy computes them (docs/metrics.md
/// "Percentiles are exact over all samples"): mean and population standard deviation summed in
/// numpy's order, and percentiles by numpy's default linear interpolation, so every value is
/// bit-identical to what vLLM's `bench serve` reports for the same samples (docs/metrics.md,
/// "Statistics").

#include <cstddef>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

namespace llmbench::metrics {

/// The value of a metric that is undefined for a request or has no samples (NaN: printed "n/a",
/// written as JSON null).
inline constexpr double kUndefined = std::numeric_limits<double>::quiet_NaN();

/// Percentile of an ascending-sorted sample with linear interpolation between order statistics,
/// numpy's default (`numpy.percentile(a, q, method="linear")`): rank = (n-1)·q/100, value =
/// a[floor] + (a[ceil]-a[floor])·frac. `q` in [0, 100]. Returns NaN for an empty sample.
double percentile_sorted(const std::vector<double>& sorted, double q);

/// Distribution summary of one metric. `stddev` is the population standard deviation
/// (numpy.std, ddof=0, as vLLM reports it as `std_<metric>_ms`). For an empty sample `count` is 0
/// and every value is NaN (undefined: printed "n/a", written as JSON null), never 0.
struct Stats {
  std::size_t count = 0;
  double mean = kUndefined;
  double median = kUndefined;
  double stddev = kUndefined;
  double min = kUndefined;
  double max = kUndefined;
  std::vector<std::pair<double, double>> percentiles;  ///< (q, value) in the order asked
  /// (q, value) at the percentiles `ExtraPercentiles` gave for `count`, in its order; kept apart
  /// from `percentiles` (which are reported) and not written anywhere.
  std::vector<std::pair<double, double>> extra_percentiles;

  /// Equal when every field is, two undefined (NaN) values counting as equal, so that the
  /// summaries of one run computed two ways compare equal. Each field is compared; a
  /// static_assert in statistics.cpp fails when a field is added without being compared.
  friend bool operator==(const Stats& a, const Stats& b) noexcept;
};

/// Percentiles that depend on a sample's size, asked beside the reported ones and selected in the
/// same pass (the ranks of a p99 confidence interval, app/tail_ci.hpp): called with the count of
/// a non-empty sample; an empty function asks for none.
using ExtraPercentiles = std::function<std::vector<double>(std::size_t count)>;

/// Summarizes `values` (any order) at the percentiles `qs` (each in [0, 100]) and at `extra`'s:
/// the sums in the values' order, then the order statistics, selected in place (O(n) per
/// percentile asked).
Stats describe(std::vector<double> values, const std::vector<double>& qs,
               const ExtraPercentiles& extra = {});

/// The sums `describe` takes over a sample in its order, numpy's way: Σ v, and Σ (v − mean)²
/// about mean = Σ v / n.
struct SampleSums {
  double sum = 0;
  double squares = 0;
};

/// `SampleSums` of `values` in their order.
SampleSums sample_sums(const std::vector<double>& values);

/// `describe` of a sample whose sums were taken in its order before (`sample_sums`), now held by
/// `values` in any order, which the selection reorders. Lets one list serve two groupings of
/// its samples (a time window's ITLs with and without those that held a prefill) where
/// `describe` would need a copy of it.
Stats describe_in_place(std::vector<double>& values, const SampleSums& sums,
                        const std::vector<double>& qs, const ExtraPercentiles& extra = {});

/// Hands a sample to `emit` in its order, in pieces: `emit(values, n)` for each piece.
using SampleVisitor =
    std::function<void(const std::function<void(const double* values, std::size_t n)>& emit)>;

/// `describe` of a sample given twice, for samples too large to hold as one list (the simulator's
/// ITLs): `visit` hands over the sample in its order (for the sums; it is called twice), and
/// `distinct` holds its values with their multiplicities, in any order (for the order
/// statistics; the multiplicities sum to the sample size). All values are finite. Equal to
/// `describe` of the sample bit for bit.
Stats describe_weighted(const SampleVisitor& visit,
                        std::vector<std::pair<double, std::size_t>> distinct,
                        const std::vector<double>& qs, const ExtraPercentiles& extra = {});

/// `describe_weighted` of a sample held as one list in its order (a time window's ITLs): its sums
/// are taken where the values lie instead of from pieces copied into blocks. `distinct` holds the
/// same values with their multiplicities (summing to values.size()). Equal to `describe` of
/// `values` bit for bit.
Stats describe_weighted(const std::vector<double>& values,
                        std::vector<std::pair<double, std::size_t>> distinct,
                        const std::vector<double>& qs, const ExtraPercentiles& extra = {});

}  // namespace llmbench::metrics
