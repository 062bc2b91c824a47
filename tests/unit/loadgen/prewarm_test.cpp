#include "llmbench/loadgen/detail/prewarm.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <numeric>
#include <vector>

namespace llmbench::loadgen::detail {
namespace {

using Shares = std::vector<std::size_t>;

TEST(Prewarm, SharesSumToTheCapAndGoToTheWorkersThatGetTheJobs) {
  // Concurrency 2 on 16 client threads: two connections, on the two loops the least-loaded
  // dispatcher fills first (before, one connection per thread: 16).
  Shares two(16, 0);
  two[0] = two[1] = 1;
  EXPECT_EQ(prewarm_shares(2, 16), two);
  EXPECT_EQ(prewarm_shares(6, 4), (Shares{2, 2, 1, 1}));
  EXPECT_EQ(prewarm_shares(8, 4), (Shares{2, 2, 2, 2}));
  EXPECT_EQ(prewarm_shares(1, 1), (Shares{1}));
  EXPECT_EQ(prewarm_shares(0, 3), (Shares{0, 0, 0}));
  EXPECT_EQ(prewarm_shares(-5, 2), (Shares{0, 0}));
  EXPECT_TRUE(prewarm_shares(4, 0).empty());
  for (const std::int64_t want : {1, 7, 63, 256, 1000}) {
    for (const std::size_t workers : {1U, 2U, 3U, 16U, 64U}) {
      const auto s = prewarm_shares(want, workers);
      EXPECT_EQ(std::accumulate(s.begin(), s.end(), std::size_t{0}),
                static_cast<std::size_t>(want));
      EXPECT_LE(s.front() - s.back(), 1U);  // as even as it can be, the extras first
    }
  }
}

}  // namespace
}  // namespace llmbench::loadgen::detail
