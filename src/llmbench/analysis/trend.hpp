#pragma once
/// @file
/// Statistics over a series of time windows (docs/sweep.md "Stability"): whether a series
/// trends, by how much, and where its start-up transient ends.
///
/// - The Mann-Kendall trend test (H. B. Mann, "Nonparametric tests against trend",
///   Econometrica 13(3), 1945; M. G. Kendall, "Rank Correlation Methods", 1975): S = Σ_{i<j}
///   sign(x_j − x_i), Var(S) = [n(n − 1)(2n + 5) − Σ_t t(t − 1)(2t + 5)] / 18 over the groups of
///   t tied values, z = (S − sign S) / √Var(S) (continuity-corrected), two-sided p = erfc(|z|/√2).
///   It asks whether later windows tend to be larger than earlier ones, whatever the noise of one
///   window: a series of small, noisy windows (a Poisson run at 2 req/s holds a handful of
///   requests a second) is judged by the test, not by comparing a few of them. Consecutive
///   windows are not independent (a request spans several; a burst of arrivals lasts a few
///   seconds), which would overstate significance, so Var(S) is scaled by Hamed and Rao's
///   correction for the autocorrelation of the detrended ranks (K. H. Hamed and A. R. Rao, "A
///   modified Mann-Kendall trend test for autocorrelated data", J. Hydrology 204, 1998), over
///   the significant lags up to 3 (ours: the dependence is short-range; longer lags would read a
///   level shift as autocorrelation).
/// - The Theil-Sen slope (H. Theil 1950; P. K. Sen, "Estimates of the regression coefficient
///   based on Kendall's tau", JASA 63, 1968): the median of the pairwise slopes, the size of the
///   trend, robust to the outliers (a stall) a least-squares line follows.
/// - MSER truncation (K. P. White Jr., "An effective truncation heuristic for bias reduction in
///   simulation output", Simulation 69(6), 1997; White, Cobb and Spratt, WSC 2000): the warm-up
///   to drop is the d that minimizes the marginal standard error Σ_{i≥d} (x_i − x̄_d)² / (n − d)²
///   over d in the first half of the series; a minimum only in the second half means the series
///   did not settle within the run.

#include <cstddef>
#include <limits>
#include <vector>

namespace llmbench::analysis {

/// A trend test of one series (values at equally spaced positions; NaN positions are left out
/// and keep their place).
struct Trend {
  std::size_t n = 0;           ///< finite values tested
  double s = 0;                ///< Mann-Kendall S
  double variance_factor = 1;  ///< Hamed-Rao n/n* applied to Var(S) (≥ 1)
  double z = std::numeric_limits<double>::quiet_NaN();
  double p_value = std::numeric_limits<double>::quiet_NaN();    ///< two-sided; NaN when n < 3
  double slope = std::numeric_limits<double>::quiet_NaN();      ///< Theil-Sen, per position
  double intercept = std::numeric_limits<double>::quiet_NaN();  ///< median of x_i − slope·i
  /// The Theil-Sen line's value at the first and last tested position.
  double fitted_first = std::numeric_limits<double>::quiet_NaN();
  double fitted_last = std::numeric_limits<double>::quiet_NaN();
  /// fitted_last − fitted_first: how much the series moved over its span.
  [[nodiscard]] double change() const noexcept { return fitted_last - fitted_first; }
};

/// Mann-Kendall and Theil-Sen over `values` (position i is x = i). Time O(n²) for S; the slope
/// is computed over at most 400 positions (longer series are averaged in equal consecutive
/// groups first, which keeps the slope per position and its median nature).
Trend trend_test(const std::vector<double>& values);

/// The MSER truncation of `values` (finite values only; NaN entries are left out first).
struct Truncation {
  std::size_t drop = 0;  ///< values to drop from the start (of the finite ones)
  /// False when the statistic's minimum over every d ≤ n − `min_left` lies beyond
  /// `max_fraction` of the series (White's sign of a run too short to settle); informational:
  /// the stability rule asks a trend test of the kept part instead.
  bool settled = true;
};

/// The d in [0, max_fraction·n] that minimizes the MSER statistic over that range (the first of
/// equal ones). Series shorter than `min_left` + 1: no truncation.
Truncation mser_truncation(const std::vector<double>& values, double max_fraction = 0.5,
                           std::size_t min_left = 5);

/// The median of the finite values of `values`; NaN when there is none.
double median_of(std::vector<double> values);

/// The median absolute deviation from the median of the finite values (unscaled); NaN when
/// there is none.
double mad_of(const std::vector<double>& values);

}  // namespace llmbench::analysis
