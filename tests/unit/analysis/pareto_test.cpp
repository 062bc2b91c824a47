#include "llmbench/analysis/pareto.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace llmbench::analysis {
namespace {

using ::testing::ElementsAre;

TEST(ParetoFrontier, KeepsOnlyUndominatedPointsByAscendingGain) {
  // gain = tok/s (more is better), cost = p99 TTFT ms (less is better).
  const std::vector<ParetoPoint> points{
      {.gain = 100, .cost = 50},   // 0: on it (cheapest)
      {.gain = 300, .cost = 80},   // 1: on it
      {.gain = 250, .cost = 90},   // 2: dominated by 1
      {.gain = 500, .cost = 400},  // 3: on it (most gain)
      {.gain = 300, .cost = 120},  // 4: dominated by 1 (same gain, dearer)
      {.gain = 90, .cost = 50},    // 5: dominated by 0 (same cost, less gain)
  };
  EXPECT_THAT(pareto_frontier(points), ElementsAre(0, 1, 3));
}

TEST(ParetoFrontier, DuplicatesKeepTheFirstAndNonFinitePointsNever) {
  const std::vector<ParetoPoint> points{{.gain = 10, .cost = 5},
                                        {.gain = 10, .cost = 5},
                                        {.gain = std::nan(""), .cost = 1},
                                        {.gain = 1e9, .cost = std::nan("")},
                                        {.gain = 20, .cost = 7}};
  EXPECT_THAT(pareto_frontier(points), ElementsAre(0, 4));
  EXPECT_TRUE(pareto_frontier({}).empty());
}

TEST(ParetoFrontier, AMonotoneCurveIsAllFrontier) {
  std::vector<ParetoPoint> points;
  for (int i = 5; i >= 1; --i) points.push_back({.gain = i * 100.0, .cost = i * i * 10.0});
  EXPECT_THAT(pareto_frontier(points), ElementsAre(4, 3, 2, 1, 0));
}

}  // namespace
}  // namespace llmbench::analysis
