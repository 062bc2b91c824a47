#include "llmbench/analysis/validity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace llmbench::analysis {

QuantileCi quantile_ci(std::size_t n, double q, double confidence) {
  QuantileCi ci{.n = n, .q = q, .confidence = confidence};
  if (n == 0 || !(q > 0 && q < 1) || !(confidence > 0 && confidence < 1))
    return ci;
  const double alpha = 1 - confidence;
  const double nd = static_cast<double>(n);
  const double sd = std::sqrt(nd * q * (1 - q));
  const double lo_d = std::max(0.0, std::floor(nd * q - 12 * sd - 12));
  const double hi_d = std::min(nd, std::ceil(nd * q + 12 * sd + 12));
  const auto lo = static_cast<std::size_t>(lo_d);
  const auto hi = static_cast<std::size_t>(hi_d);
  // pmf(k) = C(n, k) q^k (1 − q)^(n − k), in logs; the mass below `lo` is < 1e-30.
  const double lq = std::log(q);
  const double lp = std::log1p(-q);
  const double lgn = std::lgamma(nd + 1);
  double cdf = 0;           // F(k − 1) at the top of the loop
  double cdf_at_lower = 0;  // F(l − 1)
  std::size_t lower = 0;
  std::size_t upper = 0;
  for (std::size_t k = lo; k <= hi; ++k) {
    // Here cdf = F(k − 1): rank k + 1 would have F(k) below it, rank k has F(k − 1).
    if (cdf <= alpha / 2 && k >= 1) {
      lower = k;
      cdf_at_lower = cdf;
    }
    const double kd = static_cast<double>(k);
    cdf +=
        std::exp(lgn - std::lgamma(kd + 1) - std::lgamma(nd - kd + 1) + kd * lq + (nd - kd) * lp);
    if (cdf >= 1 - alpha / 2) {
      upper = k + 1;  // F(u − 1) = F(k) ≥ 1 − α/2
      break;
    }
  }
  ci.lower_rank = lower;
  ci.upper_rank = upper <= n ? upper : 0;
  if (ci.upper_rank != 0)
    ci.coverage = std::min(1.0, cdf) - (lower == 0 ? 0.0 : cdf_at_lower);
  return ci;
}

double rank_percentile(std::size_t k, std::size_t n) noexcept {
  if (n <= 1 || k <= 1)
    return 0;
  return 100.0 * static_cast<double>(std::min(k, n) - 1) / static_cast<double>(n - 1);
}

Validity validity(const PointFacts& facts, const ValidityRule& rule) {
  Validity v;
  if (!(facts.duration_s >= rule.min_duration_s)) {
    v.reasons.push_back(fmt::format("measured for {:.2f} s, under the minimum {:g} s",
                                    facts.duration_s, rule.min_duration_s));
  }
  if (facts.completed < rule.min_completed) {
    v.reasons.push_back(fmt::format("{} requests completed, under the minimum {}", facts.completed,
                                    rule.min_completed));
  }
  const std::size_t total = facts.completed + facts.failed;
  const double rate =
      total > 0 ? static_cast<double>(facts.failed) / static_cast<double>(total) : 0.0;
  if (rate > rule.max_error_rate) {
    v.reasons.push_back(fmt::format("{} of {} requests failed ({:.2f}%), above the cap {:g}%",
                                    facts.failed, total, 100 * rate, 100 * rule.max_error_rate));
  }
  for (const auto& [name, ci] : facts.tails) {
    if (ci.n > 0 && !ci.supported()) {
      v.reasons.push_back(
          fmt::format("p{:g} {} is not supported: {} samples give no {:g}% upper confidence bound",
                      100 * ci.q, name, ci.n, 100 * ci.confidence));
    }
  }
  v.valid = v.reasons.empty();
  return v;
}

std::size_t samples_for_support(double q, double confidence) {
  // Doubling then bisection over n: `supported` is monotone in n (more samples below the
  // quantile only tighten the upper rank).
  if (!(q > 0 && q < 1) || !(confidence > 0 && confidence < 1))
    return 0;
  std::size_t hi = 1;
  while (!quantile_ci(hi, q, confidence).supported() && hi < (std::size_t{1} << 40)) hi *= 2;
  std::size_t lo = hi / 2;
  while (lo + 1 < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    (quantile_ci(mid, q, confidence).supported() ? hi : lo) = mid;
  }
  return hi;
}

Extension needed_to_be_valid(const PointFacts& facts, const ValidityRule& rule) {
  Extension e{.completed = rule.min_completed, .duration_s = rule.min_duration_s, .met = false};
  for (const auto& [name, ci] : facts.tails) {
    if (ci.n > 0 && !ci.supported() && name != "itl")
      e.completed = std::max(e.completed, samples_for_support(ci.q, ci.confidence));
  }
  e.met = facts.completed >= e.completed && facts.duration_s >= e.duration_s;
  return e;
}

}  // namespace llmbench::analysis
