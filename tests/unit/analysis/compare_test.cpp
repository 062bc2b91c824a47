#include "llmbench/analysis/compare.hpp"

#include "llmbench/analysis/bootstrap.hpp"
#include "llmbench/core/rng.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace llmbench::analysis {
namespace {

TEST(MannWhitney, SeparatedSamplesByHand) {
  // Ranks of a: 1, 2, 3 → R = 6, U = 0; mean 4.5, variance 9/12·7 = 5.25;
  // z = (4.5 − 0.5)/√5.25 = 1.745743..., p = erfc(z/√2) = 0.0808556 (scipy's asymptotic value).
  const RankTest t = mann_whitney({1, 2, 3}, {4, 5, 6});
  EXPECT_DOUBLE_EQ(t.u, 0.0);
  EXPECT_NEAR(t.z, 1.7457431218879391, 1e-12);
  EXPECT_NEAR(t.p_value, 0.0808555983700523, 1e-12);
  // The test is symmetric: U of the other side is n_a·n_b − U.
  const RankTest back = mann_whitney({4, 5, 6}, {1, 2, 3});
  EXPECT_DOUBLE_EQ(back.u, 9.0);
  EXPECT_NEAR(back.p_value, t.p_value, 1e-15);
}

TEST(MannWhitney, TiesGetMidranksAndTheTieCorrection) {
  // Pooled 1 2 2 2 3 3 4: midranks 1, 3, 3, 3, 5.5, 5.5, 7. R_a = 1+3+3+5.5 = 12.5, U = 2.5;
  // Σ(t³−t) = 24 + 6 = 30; variance 12/12·(8 − 30/42) = 7.2857...; z = 3/√7.2857 = 1.111438.
  const RankTest t = mann_whitney({1, 2, 2, 3}, {2, 3, 4});
  EXPECT_DOUBLE_EQ(t.u, 2.5);
  EXPECT_NEAR(t.z, 1.1114378604524227, 1e-12);
  EXPECT_NEAR(t.p_value, 0.2663799233424826, 1e-12);
}

TEST(MannWhitney, IdenticalAndAllTiedSamplesGiveOne) {
  EXPECT_DOUBLE_EQ(mann_whitney({1, 2, 3, 4}, {1, 2, 3, 4}).p_value, 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney({0, 0, 0}, {0, 0}).p_value, 1.0);
  EXPECT_TRUE(std::isnan(mann_whitney({}, {1.0}).p_value));
}

TEST(Holm, StepDownAdjustedAndMonotone) {
  const auto adjusted = holm_adjust({0.01, 0.04, 0.03, std::nan("")});
  EXPECT_DOUBLE_EQ(adjusted[0], 0.03);  // smallest of 3: ×3
  EXPECT_DOUBLE_EQ(adjusted[2], 0.06);  // second: ×2
  EXPECT_DOUBLE_EQ(adjusted[1], 0.06);  // third: ×1 = 0.04, raised to the running maximum
  EXPECT_TRUE(std::isnan(adjusted[3]));
}

TEST(Bootstrap, ConstantSamplesGiveAPointInterval) {
  const auto ci = bootstrap_difference(per_unit({2, 2, 2}), per_unit({5, 5}), all_statistics(), 1.0,
                                       1.0, "t", BootstrapOptions{.resamples = 50});
  ASSERT_EQ(ci.size(), 4U);
  for (const auto& i : ci) {
    EXPECT_DOUBLE_EQ(i.low, 3.0);
    EXPECT_DOUBLE_EQ(i.high, 3.0);
    EXPECT_TRUE(i.excludes_zero());
  }
}

TEST(Bootstrap, MeanIntervalHasTheNormalWidthAndCoversTheShift) {
  // Two normal samples of 400, sd 1, shifted by 0.5: the standard error of the difference of
  // means is √(2/400) = 0.0707, so the 95% interval is about ±0.139 wide around the observed
  // difference.
  Rng rng(7);
  std::vector<double> a;
  std::vector<double> b;
  for (int i = 0; i < 400; ++i) {
    a.push_back(rng.normal());
    b.push_back(rng.normal() + 0.5);
  }
  const UnitSample sa = per_unit(a);
  const UnitSample sb = per_unit(b);
  const double observed = statistic_of(sb, Statistic::Mean) - statistic_of(sa, Statistic::Mean);
  const auto ci = bootstrap_difference(sa, sb, {Statistic::Mean}, 1.0, 1.0, "t",
                                       BootstrapOptions{.resamples = 2000, .seed = 3});
  EXPECT_LT(ci[0].low, observed);
  EXPECT_GT(ci[0].high, observed);
  EXPECT_NEAR(ci[0].high - ci[0].low, 2 * 1.96 * std::sqrt(2.0 / 400), 0.03);
  EXPECT_TRUE(ci[0].excludes_zero());
  EXPECT_LT(ci[0].low, 0.5);
  EXPECT_GT(ci[0].high, 0.5);
}

TEST(Bootstrap, SameSeedSameInterval) {
  const UnitSample a = per_unit({1, 4, 2, 8, 5, 7});
  const UnitSample b = per_unit({3, 9, 4, 6, 2, 5, 1});
  const BootstrapOptions o{.resamples = 300, .seed = 11};
  const auto x = bootstrap_difference(a, b, all_statistics(), 1, 1, "t", o);
  const auto y = bootstrap_difference(a, b, all_statistics(), 1, 1, "t", o);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x[i].low, y[i].low);
    EXPECT_EQ(x[i].high, y[i].high);
  }
}

TEST(Bootstrap, UnitsKeepTheirValuesTogether) {
  // A has one unit of values {0, 10}; every resample draws it whole, so its mean is always 5
  // and its p50 always 5. B is constant 5: the interval of every statistic is exactly [0, 0].
  const UnitSample a{.values = {0, 10}, .unit = {0, 0}, .units = 1};
  const auto ci = bootstrap_difference(a, per_unit({5, 5}), {Statistic::Mean, Statistic::P50}, 1, 1,
                                       "t", BootstrapOptions{.resamples = 100});
  EXPECT_DOUBLE_EQ(ci[0].low, 0.0);
  EXPECT_DOUBLE_EQ(ci[0].high, 0.0);
  EXPECT_DOUBLE_EQ(ci[1].low, 0.0);
  EXPECT_DOUBLE_EQ(ci[1].high, 0.0);
  EXPECT_FALSE(ci[0].excludes_zero());
}

TEST(StatisticOf, UsesTheMetricsPercentile) {
  const UnitSample s = per_unit({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(statistic_of(s, Statistic::Mean), 2.5);
  EXPECT_DOUBLE_EQ(statistic_of(s, Statistic::P50), 2.5);
  EXPECT_DOUBLE_EQ(statistic_of(s, Statistic::P90), 3.7);  // numpy: 1 + 0.9·3 → 3.7
  EXPECT_DOUBLE_EQ(statistic_of(s, Statistic::P99), 3.97);
}

/// A run of `n` requests with TPOT ~ base·(1 + 0.1·normal), the rest derived from it; every
/// (n/failed)-th request failed.
RunSamples synthetic_run(std::uint64_t seed, double tpot_ms, std::size_t n, std::size_t failed) {
  Rng rng(seed);
  RunSamples run;
  for (std::size_t i = 0; i < n; ++i) {
    const bool fail = failed > 0 && i % (n / failed) == 0;
    const double tpot = tpot_ms * (1 + 0.1 * rng.normal());
    const double ttft = 40 * (1 + 0.2 * rng.normal());
    run.ttft_ms.push_back(fail ? std::nan("") : ttft);
    run.tpot_ms.push_back(fail ? std::nan("") : tpot);
    run.e2el_ms.push_back(fail ? std::nan("") : ttft + 31 * tpot);
    run.itl_ms.emplace_back(fail ? 0 : 31, tpot);
    run.failed.push_back(fail);
    run.output_tokens.push_back(fail ? 0 : 32);
  }
  run.duration_s = 10;
  return run;
}

TEST(CompareRuns, DetectsATenPercentTpotShift) {
  const auto rows =
      compare_runs(synthetic_run(1, 20, 300, 0), synthetic_run(2, 22, 300, 0), CompareOptions{});
  ASSERT_EQ(rows.size(), all_metrics().size());
  const auto& tpot = rows[static_cast<std::size_t>(Metric::Tpot)];
  ASSERT_EQ(tpot.metric, Metric::Tpot);
  EXPECT_EQ(tpot.verdict, Verdict::Worse);
  const auto* mean = tpot.find(Statistic::Mean);
  ASSERT_NE(mean, nullptr);
  EXPECT_NEAR(mean->relative, 0.10, 0.03);
  EXPECT_GT(mean->ci.low, 0.0);
  EXPECT_LT(tpot.p_adjusted, 1e-4);  // 18 blocks of 17 requests a side, fully separated
  EXPECT_EQ(rows[static_cast<std::size_t>(Metric::Itl)].verdict, Verdict::Worse);
  // TTFT did not move.
  EXPECT_EQ(rows[static_cast<std::size_t>(Metric::Ttft)].verdict, Verdict::NoSignificantDifference);
}

TEST(CompareRuns, IdenticalRunsDifferInNothing) {
  const RunSamples run = synthetic_run(5, 20, 200, 3);
  for (const auto& row : compare_runs(run, run, CompareOptions{})) {
    EXPECT_NE(row.verdict, Verdict::Better) << to_string(row.metric);
    EXPECT_NE(row.verdict, Verdict::Worse) << to_string(row.metric);
    EXPECT_DOUBLE_EQ(row.statistics.front().difference, 0.0);
    if (!std::isnan(row.rank.p_value)) {
      EXPECT_DOUBLE_EQ(row.rank.p_value, 1.0);
    }
  }
}

TEST(CompareRuns, ErrorRateAndThroughputDirections) {
  // B fails 40 of 400 requests against none in A: error rate worse, request throughput worse.
  const auto rows =
      compare_runs(synthetic_run(1, 20, 400, 0), synthetic_run(2, 20, 400, 40), CompareOptions{});
  const auto& errors = rows[static_cast<std::size_t>(Metric::ErrorRate)];
  EXPECT_DOUBLE_EQ(errors.statistics.front().b, 0.1);
  EXPECT_EQ(errors.verdict, Verdict::Worse);
  // Throughput: one value per run, the difference without an interval or a verdict.
  const auto& reqs = rows[static_cast<std::size_t>(Metric::RequestThroughput)];
  EXPECT_DOUBLE_EQ(reqs.statistics.front().a, 40.0);  // 400 completed in 10 s
  EXPECT_DOUBLE_EQ(reqs.statistics.front().b, 36.0);
  EXPECT_DOUBLE_EQ(reqs.statistics.front().relative, -0.1);
  EXPECT_EQ(reqs.verdict, Verdict::NotTested);
  EXPECT_TRUE(std::isnan(reqs.statistics.front().ci.low));
  EXPECT_TRUE(std::isnan(reqs.rank.p_value));
}

TEST(CompareRuns, TwentyAgainstFortyRequestsAreTooFewToTest) {
  // A real llama.cpp comparison: 20 requests against 40, TPOT 2.2 x. Blocks of ceil(sqrt(n))
  // requests give 4 and 6 units; Mann-Whitney can reach p = 0.0142 at best (complete
  // separation), Holm over the 5 tested metrics 0.071: no data could be significant at 0.05,
  // so "no significant difference" would be a false comfort.
  EXPECT_NEAR(mann_whitney_min_p(4, 6), 0.01423, 1e-4);
  const auto rows =
      compare_runs(synthetic_run(1, 10, 20, 0), synthetic_run(2, 22, 40, 0), CompareOptions{});
  const auto& tpot = rows[static_cast<std::size_t>(Metric::Tpot)];
  EXPECT_EQ(tpot.units_a, 4U);
  EXPECT_EQ(tpot.units_b, 6U);
  EXPECT_NEAR(tpot.min_attainable_p, 5 * 0.01423, 1e-3);
  EXPECT_EQ(tpot.verdict, Verdict::TooFewSamples);
  EXPECT_EQ(to_string(tpot.verdict), "too few samples to test");
  // The effect size and its interval are reported all the same: +120%, the interval above 0.
  const auto* mean = tpot.find(Statistic::Mean);
  ASSERT_NE(mean, nullptr);
  EXPECT_NEAR(mean->relative, 1.2, 0.2);
  EXPECT_GT(mean->ci.low, 0.0);
  // With enough requests the same change is tested and found.
  const auto big =
      compare_runs(synthetic_run(1, 10, 200, 0), synthetic_run(2, 22, 400, 0), CompareOptions{});
  EXPECT_EQ(big[static_cast<std::size_t>(Metric::Tpot)].verdict, Verdict::Worse);
  EXPECT_LT(big[static_cast<std::size_t>(Metric::Tpot)].min_attainable_p, 0.05);
  EXPECT_EQ(to_string(Verdict::NotTested), "not tested (one value per run)");
}

TEST(MetricNames, RoundTrip) {
  for (const Metric m : all_metrics()) {
    EXPECT_EQ(metric_from_string(to_string(m)), m);
  }
  EXPECT_FALSE(metric_from_string("ttfx").has_value());
  EXPECT_EQ(to_string(Statistic::P99), "p99");
}

}  // namespace
}  // namespace llmbench::analysis
