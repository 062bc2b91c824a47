#include "llmbench/analysis/knee.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace llmbench::analysis {
namespace {

using Points = std::vector<std::pair<double, double>>;
using ::testing::HasSubstr;

constexpr KneeOptions kConcave{.shape = CurveShape::ConcaveIncreasing};
constexpr KneeOptions kConvex{.shape = CurveShape::ConvexIncreasing};

/// The queue clause of a knee line for a queue edge past `slots` concurrent requests.
std::string fmt_queue(int slots) {
  return "requests start to queue past max-concurrency=" + std::to_string(slots);
}

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

TEST(KneeStatement, NeverSaysThroughputStopsWhenItStillGrew) {
  // The sweep that said "throughput stops growing at max-concurrency=128 (2,794 tok/s);
  // saturation 4,151 tok/s": the statement now says how much it still grew past the knee.
  const std::vector<LadderPoint> ladder{
      {.load = 16, .output_throughput = 900, .p99_ttft_ms = 90},
      {.load = 32, .output_throughput = 1700, .p99_ttft_ms = 120},
      {.load = 64, .output_throughput = 2500, .p99_ttft_ms = 300},
      {.load = 128, .output_throughput = 2794, .p99_ttft_ms = 1029},
      {.load = 256, .output_throughput = 4151, .p99_ttft_ms = 40120}};
  const auto st = describe_knee(ladder, "max-concurrency");
  EXPECT_TRUE(st.geometric);
  EXPECT_DOUBLE_EQ(st.saturation_tok_s, 4151);
  EXPECT_FALSE(st.saturated);  // the last doubling gained 49%
  EXPECT_THAT(st.text, ::testing::Not(HasSubstr("stops growing")));
  EXPECT_THAT(st.text, HasSubstr("not saturated within the points: the last step "
                                 "(max-concurrency=256) still gained +48.6%"));
  // On log2 load this ladder has not bent: no knee is claimed at all.
  EXPECT_FALSE(st.knee.found);
  // A ladder with a real bend that still grows past it states the gain and the latency paid.
  std::vector<LadderPoint> bent{{.load = 1, .output_throughput = 100, .p99_ttft_ms = 50},
                                {.load = 2, .output_throughput = 200, .p99_ttft_ms = 50},
                                {.load = 4, .output_throughput = 400, .p99_ttft_ms = 55},
                                {.load = 8, .output_throughput = 800, .p99_ttft_ms = 60},
                                {.load = 16, .output_throughput = 900, .p99_ttft_ms = 400},
                                {.load = 32, .output_throughput = 1000, .p99_ttft_ms = 900},
                                {.load = 64, .output_throughput = 1120, .p99_ttft_ms = 2000}};
  const auto b = describe_knee(bent, "max-concurrency");
  ASSERT_TRUE(b.knee.found) << b.knee.reason;
  EXPECT_DOUBLE_EQ(b.knee.x, 8);
  EXPECT_NEAR(b.gained_past_knee, 0.4, 1e-12);
  EXPECT_THAT(b.text, HasSubstr("knee at max-concurrency=8 (800.0 tok/s, Kneedle on log2 load); "
                                "past it throughput still grew +40.0% (to 1120.0 tok/s at "
                                "max-concurrency=64) while p99 TTFT went from 60.0 to 2000.0 ms"));
  EXPECT_THAT(b.text, ::testing::Not(HasSubstr("stops growing")));
}

TEST(KneeStatement, ASaturatedLadderStopsGrowingAtItsKnee) {
  std::vector<LadderPoint> ladder;
  for (int c = 1; c <= 256; c *= 2) {
    ladder.push_back({.load = static_cast<double>(c),
                      .output_throughput = 10.0 * std::min(c, 32),
                      .p99_ttft_ms = c <= 32 ? 50.0 : 50.0 * c / 32});
  }
  const auto st = describe_knee(ladder, "max-concurrency");
  ASSERT_TRUE(st.knee.found);
  EXPECT_DOUBLE_EQ(st.knee.x, 32);
  EXPECT_TRUE(st.saturated);
  EXPECT_DOUBLE_EQ(st.gained_past_knee, 0);
  EXPECT_THAT(st.text, HasSubstr("knee at max-concurrency=32 (320.0 tok/s, Kneedle on log2 load)"));
  EXPECT_THAT(st.text, HasSubstr("throughput stops growing there"));
  EXPECT_THAT(st.text, HasSubstr("400.0 ms at max-concurrency=256"));
  EXPECT_THAT(st.text, HasSubstr("saturated: the last step (max-concurrency=256) gained +0.0%"));
}

/// A slot-limited server (llama.cpp's `-np N`): throughput grows with concurrency up to the slot
/// count, then stays (with a few percent of noise); the knee is the slot count, on a doubling
/// ladder and on every concurrency 1..16 alike. One slot is saturated from the first point.
TEST(KneeStatement, SlotLimitedLaddersKneeAtTheSlotCount) {
  const double noise[] = {0.0,    0.03,  -0.02, 0.025, -0.03, 0.01,   -0.01, 0.02,
                          -0.025, 0.015, 0.0,   -0.02, 0.03,  -0.015, 0.01,  0.0};
  for (const int slots : {1, 2, 4, 8}) {
    for (const bool doubling : {true, false}) {
      std::vector<LadderPoint> ladder;
      for (int c = 1; c <= 16; c = doubling ? 2 * c : c + 1) {
        const double flat = c > slots ? noise[c - 1] : 0.0;
        ladder.push_back({.load = static_cast<double>(c),
                          .output_throughput = 40.0 * std::min(c, slots) * (1 + flat),
                          .p99_ttft_ms = c <= slots ? 30.0 : 30.0 * c / slots});
      }
      const auto st = describe_knee(ladder, "max-concurrency");
      ASSERT_TRUE(st.knee.found) << slots << (doubling ? " doubling: " : " linear: ") << st.text;
      EXPECT_DOUBLE_EQ(st.knee.x, slots) << (doubling ? "doubling: " : "linear: ") << st.text;
      EXPECT_THAT(st.text, HasSubstr("throughput stops growing there")) << st.text;
    }
  }
}

/// Three H100 sweeps of llama-server (bench/sweep/h100-llamacpp/README.md: slots 1, 2, 4, 8 ×
/// concurrency 1..16, 64 requests a point). In the second, the two-slot setting's throughput was
/// noisy past the slot count (462 / 587 / 431 tok/s at 4 / 8 / 16) and Kneedle put its knee at 8;
/// the median TTFT, 20 → 308 ms from 2 to 4 while throughput gained 6%, marks the queue's edge.
TEST(KneeStatement, TheQueueEdgePlacesTheKneeOfMeasuredSlotLadders) {
  struct Setting {
    int slots;
    double expected_knee;
    std::vector<double> tok_s;
    std::vector<double> median_ttft_ms;
  };
  const std::vector<Setting> run1{
      {1, 2, {334, 427, 402, 437, 448}, {8.5, 309, 964, 2016, 4220}},
      {2, 2, {341, 473, 421, 435, 455}, {8.9, 10.8, 631, 1767, 3740}},
      {4, 4, {324, 400, 568, 634, 645}, {10.4, 13.4, 19.9, 853, 1992}},
      {8, 8, {315, 406, 551, 770, 765}, {12.3, 15.2, 30.8, 54.0, 1384}}};
  const std::vector<Setting> run2{{1, 2, {324, 499, 526, 461, 534}, {7.9, 130, 365, 904, 1775}},
                                  {2, 2, {304, 435, 462, 587, 431}, {10.3, 20.4, 308, 663, 2088}},
                                  {4, 4, {284, 451, 727, 793, 772}, {11.5, 16.0, 21.7, 327, 1014}},
                                  {8, 8, {278, 457, 521, 994, 954}, {13.7, 27.4, 42.3, 42.6, 542}}};
  // The fourth run (after the client stopped opening one idle connection per client thread).
  const std::vector<Setting> run4{
      {1, 1, {416.0, 456.6, 476.5, 443.8, 450.1}, {9.9, 153.0, 381.3, 1020.3, 1981.6}},
      {2, 2, {399.8, 461.2, 432.0, 501.0, 460.2}, {11.7, 13.0, 318.3, 718.3, 1882.1}},
      {4, 4, {405.1, 497.9, 796.0, 730.3, 701.7}, {11.5, 14.3, 19.8, 368.4, 1067.6}},
      {8, 8, {354.5, 426.8, 545.7, 765.0, 741.5}, {13.6, 18.5, 32.9, 60.4, 710.3}}};
  int moved = 0;
  for (const auto* run : {&run1, &run2, &run4}) {
    for (const Setting& s : *run) {
      std::vector<LadderPoint> ladder;
      const double loads[] = {1, 2, 4, 8, 16};
      for (std::size_t i = 0; i < 5; ++i) {
        ladder.push_back({.load = loads[i],
                          .output_throughput = s.tok_s[i],
                          .p99_ttft_ms = 2 * s.median_ttft_ms[i],
                          .median_ttft_ms = s.median_ttft_ms[i]});
      }
      const auto st = describe_knee(ladder, "max-concurrency");
      ASSERT_TRUE(st.knee.found) << s.slots << ": " << st.text;
      EXPECT_DOUBLE_EQ(st.knee.x, s.expected_knee) << s.slots << " slots: " << st.text;
      moved += st.queue_edge ? 1 : 0;
    }
  }
  // Kneedle (or the saturation rule) places eleven of the twelve itself, where a queue edge, if
  // any, is the same point; the queue edge moves the noisy two-slot setting's knee (run 2) and
  // the one-slot setting's of run 4 (from 2 to its slot count, 1).
  EXPECT_EQ(moved, 2);
  // Without median TTFT (older sweep files) the knee is Kneedle's: 8 for the noisy setting.
  std::vector<LadderPoint> bare;
  const double loads[] = {1, 2, 4, 8, 16};
  for (std::size_t i = 0; i < 5; ++i)
    bare.push_back({.load = loads[i], .output_throughput = run2[1].tok_s[i]});
  EXPECT_DOUBLE_EQ(describe_knee(bare, "max-concurrency").knee.x, 8);
  std::vector<LadderPoint> two;
  for (std::size_t i = 0; i < 5; ++i) {
    two.push_back({.load = loads[i],
                   .output_throughput = run2[1].tok_s[i],
                   .median_ttft_ms = run2[1].median_ttft_ms[i]});
  }
  EXPECT_THAT(describe_knee(two, "max-concurrency").text,
              HasSubstr("knee at max-concurrency=2 (435.0 tok/s, where requests start to queue: "
                        "median TTFT 20.4 → 308.0 ms at max-concurrency=4)"));
}

/// llama-server on this project's 2-core CPU machine (ds2-tiny, one thread, 16 requests of 32 in /
/// 16 out a point, load average 7; docs/sweep.md "Restarting the server per setting"): one busy
/// core cannot serve a batch faster than one request, so throughput is flat plus noise and the
/// throughput knee says little, but the queue edge names every slot count.
TEST(KneeStatement, TheQueueEdgeNamesTheSlotCountWhenThroughputCannotGrow) {
  struct Setting {
    int slots;
    std::vector<double> tok_s;
    std::vector<double> median_ttft_ms;
  };
  const std::vector<Setting> cpu{
      {1, {148.6, 101.4, 100.8, 112.3, 92.2}, {11.3, 177.4, 421.8, 949.0, 1129.8}},
      {2, {117.6, 111.6, 93.5, 117.0, 114.2}, {11.9, 24.5, 361.4, 546.2, 964.6}},
      {4, {77.5, 107.7, 151.0, 118.5, 108.4}, {22.3, 27.2, 42.0, 597.7, 861.9}},
      {8, {97.9, 118.1, 170.1, 120.2, 104.8}, {19.8, 15.8, 48.7, 129.2, 671.9}}};
  const double loads[] = {1, 2, 4, 8, 16};
  for (const Setting& s : cpu) {
    std::vector<LadderPoint> ladder;
    for (std::size_t i = 0; i < 5; ++i) {
      ladder.push_back({.load = loads[i],
                        .output_throughput = s.tok_s[i],
                        .median_ttft_ms = s.median_ttft_ms[i]});
    }
    const auto st = describe_knee(ladder, "max-concurrency");
    EXPECT_DOUBLE_EQ(st.queue_edge_load, s.slots) << st.text;
    EXPECT_THAT(st.text, HasSubstr(fmt_queue(s.slots))) << st.text;
  }
  // A ladder that queues nowhere states no edge.
  std::vector<LadderPoint> open;
  for (std::size_t i = 0; i < 5; ++i) {
    open.push_back(
        {.load = loads[i], .output_throughput = 100 * loads[i], .median_ttft_ms = 20 + loads[i]});
  }
  const auto st = describe_knee(open, "max-concurrency");
  EXPECT_TRUE(std::isnan(st.queue_edge_load));
  EXPECT_THAT(st.text, ::testing::Not(HasSubstr("queue")));
}

}  // namespace
}  // namespace llmbench::analysis
