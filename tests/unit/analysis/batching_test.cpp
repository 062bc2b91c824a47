#include "llmbench/analysis/batching.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace llmbench::analysis {
namespace {

using ::testing::HasSubstr;

constexpr TimeNs kMs = 1'000'000;

std::vector<Window> windows(std::size_t n) {
  std::vector<Window> out;
  for (std::size_t i = 0; i < n; ++i) {
    Window w;
    w.start_ns = static_cast<TimeNs>(i) * 1000 * kMs;
    w.end_ns = w.start_ns + 1000 * kMs;
    out.push_back(w);
  }
  return out;
}

/// Ten equal samples of (running, waiting) in window `i`.
void fill(std::vector<EngineSample>& out, std::size_t i, double running, double waiting) {
  for (int k = 0; k < 10; ++k) {
    out.push_back(EngineSample{.t_ns = static_cast<TimeNs>(i) * 1000 * kMs + k * 100 * kMs,
                               .running = running,
                               .waiting = waiting,
                               .weight = 1});
  }
}

TEST(Batching, ThreeWindowsOfASmallBatchWhileRequestsWaitFire) {
  std::vector<EngineSample> s;
  fill(s, 0, 60, 4);  // share 60 / 64
  fill(s, 1, 60, 4);
  fill(s, 2, 10, 50);  // 10 / min(100, 60) = 0.17
  fill(s, 3, 10, 50);
  fill(s, 4, 10, 50);
  fill(s, 5, 0, 5);  // a stall: nothing runs while 5 wait
  const auto v = batching_failure(windows(6), s, 100, BatchingRule{});
  ASSERT_TRUE(v.evaluated);
  EXPECT_TRUE(v.fired);
  EXPECT_EQ(v.first_window, 2U);
  EXPECT_EQ(v.longest_failed_run, 4U);
  ASSERT_EQ(v.windows.size(), 6U);
  EXPECT_FALSE(v.windows[1].failed);
  EXPECT_NEAR(v.windows[1].share, 60.0 / 64.0, 1e-12);
  EXPECT_NEAR(v.windows[2].share, 10.0 / 60.0, 1e-12);
  EXPECT_TRUE(v.windows[5].failed);
  EXPECT_DOUBLE_EQ(v.windows[5].share, 0.0);
  EXPECT_THAT(v.reason, HasSubstr("from 2.0 s the batch held 10.0 requests while 50.0 waited"));

  // Two failed windows in a row are not enough.
  std::vector<EngineSample> two;
  fill(two, 0, 60, 4);
  fill(two, 1, 10, 50);
  fill(two, 2, 10, 50);
  fill(two, 3, 60, 4);
  const auto no = batching_failure(windows(4), two, 100, BatchingRule{});
  EXPECT_FALSE(no.fired);
  EXPECT_EQ(no.longest_failed_run, 2U);
  EXPECT_TRUE(batching_failure(windows(4), two, 100, BatchingRule{.consecutive = 2}).fired);
}

TEST(Batching, ABatchAtItsCapIsNotAFailure) {
  // Four slots busy, twelve requests deferred (llama.cpp at its slot count): with the cap
  // unknown, the largest batch seen (4) is the cap and the batch is full.
  std::vector<EngineSample> s;
  for (std::size_t i = 0; i < 5; ++i) fill(s, i, 4, 12);
  const auto unknown = batching_failure(windows(5), s, std::nan(""), BatchingRule{});
  EXPECT_DOUBLE_EQ(unknown.capacity, 4.0);
  EXPECT_FALSE(unknown.fired);
  EXPECT_DOUBLE_EQ(unknown.windows[0].share, 1.0);
  // The same queue on an engine that could run 16 at once: 4 / min(16, 16) = 0.25.
  EXPECT_TRUE(batching_failure(windows(5), s, 16, BatchingRule{}).fired);
  // Nobody waiting: never a failure, however small the batch.
  std::vector<EngineSample> idle;
  for (std::size_t i = 0; i < 5; ++i) fill(idle, i, 1, 0);
  EXPECT_FALSE(batching_failure(windows(5), idle, 256, BatchingRule{}).fired);
}

TEST(Batching, StepsAreWeightedByTheirDurationAndEmptyInputIsNotEvaluated) {
  const std::vector<EngineSample> s{
      {.t_ns = 100 * kMs, .running = 0, .waiting = 6, .weight = 3},
      {.t_ns = 400 * kMs, .running = 8, .waiting = 2, .weight = 1},
      {.t_ns = 5000 * kMs, .running = 8, .waiting = 2, .weight = 1},  // after the last window
  };
  const auto v = batching_failure(windows(1), s, 100, BatchingRule{});
  ASSERT_EQ(v.windows.size(), 1U);
  EXPECT_EQ(v.windows[0].samples, 2U);
  EXPECT_DOUBLE_EQ(v.windows[0].mean_running, 2.0);
  EXPECT_DOUBLE_EQ(v.windows[0].mean_waiting, 5.0);
  EXPECT_FALSE(batching_failure(windows(3), {}, 100, BatchingRule{}).evaluated);
  EXPECT_FALSE(batching_failure({}, s, 100, BatchingRule{}).evaluated);
}

}  // namespace
}  // namespace llmbench::analysis
