#include "llmbench/analysis/validity.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace llmbench::analysis {
namespace {

using ::testing::HasSubstr;

// Expected ranks and coverages computed exactly with Python's math.comb (the binomial CDF
// summed term by term): the textbook median interval of n = 100 is [X(40), X(61)].
TEST(QuantileCi, OrderStatisticRanksOfKnownSamples) {
  const auto median = quantile_ci(100, 0.5, 0.95);
  EXPECT_EQ(median.lower_rank, 40U);
  EXPECT_EQ(median.upper_rank, 61U);
  EXPECT_NEAR(median.coverage, 0.9647997997822952, 1e-9);
  const auto small = quantile_ci(10, 0.5, 0.95);
  EXPECT_EQ(small.lower_rank, 2U);
  EXPECT_EQ(small.upper_rank, 9U);
  EXPECT_NEAR(small.coverage, 0.978515625, 1e-9);
  const auto p99 = quantile_ci(1000, 0.99, 0.95);
  EXPECT_EQ(p99.lower_rank, 983U);
  EXPECT_EQ(p99.upper_rank, 997U);
  EXPECT_NEAR(p99.coverage, 0.9760947634979772, 1e-9);
  EXPECT_TRUE(p99.supported());
}

TEST(QuantileCi, P99NeedsAtLeast368SamplesForAnUpperBound) {
  // 0.99^367 > 0.025 >= 0.99^368.
  const auto short_of = quantile_ci(367, 0.99, 0.95);
  EXPECT_FALSE(short_of.supported());
  EXPECT_EQ(short_of.lower_rank, 359U);
  const auto enough = quantile_ci(368, 0.99, 0.95);
  ASSERT_TRUE(enough.supported());
  EXPECT_EQ(enough.lower_rank, 360U);
  EXPECT_EQ(enough.upper_rank, 368U);
  EXPECT_NEAR(enough.coverage, 0.9624158204108586, 1e-9);
  EXPECT_FALSE(quantile_ci(0, 0.99, 0.95).supported());
  EXPECT_FALSE(quantile_ci(100, 1.0, 0.95).supported());
  // A large sample: the interval is narrow around n·q (normal approximation ± 1.96 σ).
  const auto big = quantile_ci(1'000'000, 0.99, 0.95);
  EXPECT_NEAR(static_cast<double>(big.lower_rank), 990000 - 1.96 * 99.5, 3);
  EXPECT_NEAR(static_cast<double>(big.upper_rank), 990000 + 1.96 * 99.5, 3);
}

TEST(QuantileCi, RankPercentileReadsTheRankExactly) {
  EXPECT_DOUBLE_EQ(rank_percentile(1, 10), 0.0);
  EXPECT_DOUBLE_EQ(rank_percentile(10, 10), 100.0);
  EXPECT_DOUBLE_EQ(rank_percentile(983, 1000), 100.0 * 982 / 999);
}

TEST(Validity, EachRuleGivesItsReason) {
  PointFacts ok{.duration_s = 30, .completed = 1000, .failed = 5, .tails = {}};
  ok.tails.emplace_back("ttft", quantile_ci(1000, 0.99, 0.95));
  EXPECT_TRUE(validity(ok, ValidityRule{}).valid);
  PointFacts bad{.duration_s = 4, .completed = 50, .failed = 2, .tails = {}};
  bad.tails.emplace_back("ttft", quantile_ci(50, 0.99, 0.95));
  const auto v = validity(bad, ValidityRule{});
  EXPECT_FALSE(v.valid);
  ASSERT_EQ(v.reasons.size(), 4U);
  EXPECT_THAT(v.reasons[0], HasSubstr("measured for 4.00 s, under the minimum 10 s"));
  EXPECT_THAT(v.reasons[1], HasSubstr("50 requests completed, under the minimum 100"));
  EXPECT_THAT(v.reasons[2], HasSubstr("2 of 52 requests failed (3.85%), above the cap 1%"));
  EXPECT_THAT(v.reasons[3], HasSubstr("p99 ttft is not supported: 50 samples"));
  EXPECT_TRUE(
      validity(bad, ValidityRule{.min_duration_s = 1, .min_completed = 10, .max_error_rate = 0.05})
          .reasons.size() == 1);
}

}  // namespace
}  // namespace llmbench::analysis
