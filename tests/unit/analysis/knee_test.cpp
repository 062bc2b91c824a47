#include "llmbench/analysis/knee.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace llmbench::analysis {
namespace {

using Points = std::vector<std::pair<double, double>>;
using ::testing::HasSubstr;

constexpr KneeOptions kConcave{.shape = CurveShape::ConcaveIncreasing};
constexpr KneeOptions kConvex{.shape = CurveShape::ConvexIncreasing};

TEST(Kneedle, SaturatingLineBendsWhereItFlattens) {
  Points points;
  for (int x = 1; x <= 20; ++x) points.emplace_back(x, std::min(x, 10));
  const Knee knee = find_knee(points, kConcave);
  ASSERT_TRUE(knee.found) << knee.reason;
  EXPECT_DOUBLE_EQ(knee.x, 10);
  EXPECT_DOUBLE_EQ(knee.y, 10);
  EXPECT_EQ(knee.index, 9U);
  EXPECT_NEAR(knee.difference, 1.0 - 9.0 / 19.0, 1e-12);
}

TEST(Kneedle, GeometricLadderOfConcurrencies) {
  // A concurrency ladder 1, 2, 4, ..., 256 on a server that saturates at 32 (shuffled input).
  Points points;
  for (int c = 256; c >= 1; c /= 2) points.emplace_back(c, 10.0 * std::min(c, 32));
  const Knee knee = find_knee(points, kConcave);
  ASSERT_TRUE(knee.found) << knee.reason;
  EXPECT_DOUBLE_EQ(knee.x, 32);
  EXPECT_DOUBLE_EQ(knee.y, 320);
}

TEST(Kneedle, HyperbolaKneeWhereTheNormalizedSlopeIsOne) {
  // y = −1/x on [1, 10]: the normalized slope (1/x²)·9/0.9 is 1 at x = √10 (the maximum of the
  // continuous difference curve); sampled every 0.1 it is the grid point 3.2.
  Points points;
  for (int i = 0; i <= 90; ++i) {
    const double x = 1 + 0.1 * i;
    points.emplace_back(x, -1 / x);
  }
  const Knee knee = find_knee(points, kConcave);
  ASSERT_TRUE(knee.found) << knee.reason;
  EXPECT_NEAR(knee.x, std::sqrt(10.0), 0.06);
}

TEST(Kneedle, NoisySaturatingCurve) {
  Points points;
  for (int x = 1; x <= 20; ++x) {
    const double noise = 0.15 * std::sin(1.7 * x * x);  // deterministic, |noise| ≤ 0.15
    points.emplace_back(x, std::min(x, 10) + noise);
  }
  const Knee knee = find_knee(points, kConcave);
  ASSERT_TRUE(knee.found) << knee.reason;
  EXPECT_GE(knee.x, 9);
  EXPECT_LE(knee.x, 11);
}

TEST(Kneedle, LatencyTakesOffAtTheKneeOfAConvexCurve) {
  // Latency against throughput: flat at 50 ms up to 10 req/s, then 20 ms more per req/s.
  Points points;
  for (int x = 1; x <= 20; ++x) points.emplace_back(x, 50.0 + 20.0 * std::max(0, x - 10));
  const Knee knee = find_knee(points, kConvex);
  ASSERT_TRUE(knee.found) << knee.reason;
  EXPECT_DOUBLE_EQ(knee.x, 10);
  // The same curve read as concave has no knee.
  EXPECT_FALSE(find_knee(points, kConcave).found);
}

TEST(Kneedle, NoKneeOnALineOrACurveThatHasNotBent) {
  Points line;
  Points rising;
  for (int x = 1; x <= 10; ++x) {
    line.emplace_back(x, 2.0 * x);
    rising.emplace_back(x, std::min(x, 30));
  }
  EXPECT_FALSE(find_knee(line, kConcave).found);
  const Knee none = find_knee(rising, kConcave);
  EXPECT_FALSE(none.found);
  EXPECT_THAT(none.reason, HasSubstr("does not bend"));
  EXPECT_THAT(find_knee({{1, 1}, {2, 2}}, kConcave).reason, HasSubstr("at least 3"));
  EXPECT_FALSE(find_knee({{1, 5}, {2, 5}, {3, 5}}, kConcave).found);
}

}  // namespace
}  // namespace llmbench::analysis
