#include "llmbench/analysis/pareto.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace llmbench::analysis {
namespace {

using ::testing::ElementsAre;

TEST(Pareto, KeepsThePointsNoOtherBeatsOnBoth) {
  // (interactivity, throughput per GPU): a concurrency ladder trades one for the other; (3, 2)
  // is beaten by (4, 5), (6, 1) by (6, 3), and a duplicate of (1, 9) keeps the first.
  const std::vector<std::pair<double, double>> pts{{1, 9}, {3, 2}, {4, 5},   {6, 3},
                                                   {6, 1}, {1, 9}, {8, 0.5}, {NAN, 100}};
  EXPECT_THAT(pareto_front(pts), ElementsAre(0, 2, 3, 6));
}

TEST(Pareto, OneDominantPointAndEmptyInput) {
  EXPECT_THAT(pareto_front({{1, 1}, {2, 2}, {3, 3}}), ElementsAre(2));
  EXPECT_TRUE(pareto_front({}).empty());
  // Equal x: only the higher y stays; equal y: only the higher x.
  EXPECT_THAT(pareto_front({{2, 1}, {2, 4}, {1, 4}}), ElementsAre(1));
}

}  // namespace
}  // namespace llmbench::analysis
