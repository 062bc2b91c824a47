#pragma once
/// @file
/// Whether a load point is a valid measurement (docs/sweep.md "Validity"), in
/// the spirit of MLPerf LoadGen's run rules (a minimum duration and query count, and early
/// stopping's question "is the tail latency supported by enough samples"): a minimum measured
/// duration and completed count, a cap on the error rate, and a distribution-free confidence
/// interval of the p99 from the order statistics.
///
/// The interval (e.g. Conover, "Practical Nonparametric Statistics", §3.2 "quantile test"): of n
/// independent samples of a continuous distribution, the number B below its q-quantile ξ is
/// Binomial(n, q), so P(X_(l) ≤ ξ ≤ X_(u)) = P(l ≤ B ≤ u − 1) = F(u − 1) − F(l − 1) with X_(k)
/// the k-th smallest and F the binomial CDF. The ranks taken are the largest l with
/// F(l − 1) ≤ α/2 and the smallest u with F(u − 1) ≥ 1 − α/2, a two-sided interval of at least
/// 1 − α. When u would exceed n there is no upper bound: the sample cannot bound the quantile
/// from above (for p99 at 95% that takes n ≥ 368), and the percentile is "not supported".

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace llmbench::analysis {

/// The order-statistic interval of a quantile: 1-based ranks into the sorted sample.
struct QuantileCi {
  std::size_t n = 0;
  double q = 0.99;             ///< the quantile, in (0, 1)
  double confidence = 0.95;    ///< asked for
  std::size_t lower_rank = 0;  ///< 0 = no lower bound (too few samples below)
  std::size_t upper_rank = 0;  ///< 0 = no upper bound: the quantile is not supported
  double coverage = std::numeric_limits<double>::quiet_NaN();  ///< P(l ≤ B ≤ u − 1) achieved
  [[nodiscard]] bool supported() const noexcept { return upper_rank != 0; }
};

/// The ranks for n samples. q in (0, 1), confidence in (0, 1); otherwise the ranks are 0.
/// O(width of the binomial's bulk): only ranks within 12 standard deviations of n·q are summed.
QuantileCi quantile_ci(std::size_t n, double q, double confidence);

/// The numpy-"linear" percentile (in [0, 100]) that reads exactly the k-th smallest of n values
/// (1-based): 100·(k − 1)/(n − 1); 0 for n ≤ 1.
double rank_percentile(std::size_t k, std::size_t n) noexcept;

/// The run rules a point is held to (ours; MLPerf's own are far longer: 600 s and 270,336
/// queries for a datacenter Server run).
struct ValidityRule {
  double min_duration_s = 10;       ///< measured duration at least this
  std::size_t min_completed = 100;  ///< completed requests at least this
  double max_error_rate = 0.01;     ///< failed / (completed + failed) at most this
};

/// What a point measured, for the verdict.
struct PointFacts {
  double duration_s = std::numeric_limits<double>::quiet_NaN();
  std::size_t completed = 0;
  std::size_t failed = 0;
  /// Each p99 checked (metric name, its interval): an unsupported one makes the point invalid.
  std::vector<std::pair<std::string, QuantileCi>> tails;
};

/// The verdict and every rule the point broke.
struct Validity {
  bool valid = false;
  std::vector<std::string> reasons;  ///< one sentence per broken rule; empty when valid
};

/// Applies `rule` to `facts`.
Validity validity(const PointFacts& facts, const ValidityRule& rule);

/// The smallest sample whose q-quantile the order-statistic interval bounds from above at
/// `confidence` (`quantile_ci`'s `supported`): 368 for p99 at 95%.
std::size_t samples_for_support(double q, double confidence);

/// What a point must reach to be valid under `rule` (the data an extension of the point needs,
/// `--min-duration` / `--min-requests`): at least `completed` requests and `duration_s` seconds.
/// Each unsupported tail asks for `samples_for_support` samples of its metric; a per-request
/// metric (TTFT, TPOT, E2EL) takes that many requests, ITL (several samples per request) none
/// beyond them. `met` is true when `facts` already reach both.
struct Extension {
  std::size_t completed = 0;
  double duration_s = 0;
  bool met = false;
};
Extension needed_to_be_valid(const PointFacts& facts, const ValidityRule& rule);

}  // namespace llmbench::analysis
