#include "llmbench/server/time_warp.hpp"

#include "llmbench/core/error.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace llmbench::server {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr TimeNs kMs = 1'000'000;

TEST(TimeWarp, AStallStopsTheClockAndShiftsEverythingAfterIt) {
  const TimeWarp w(TimingPerturbation{
      .stalls = {{.at_s = 3.0, .for_s = 0.25}, {.at_s = 1.0, .for_s = 0.5}}, .drift = {}});
  EXPECT_EQ(w.to_wall(900 * kMs), 900 * kMs);
  EXPECT_EQ(w.to_wall(1000 * kMs), 1500 * kMs);  // due at the stall's start: after it
  EXPECT_EQ(w.to_wall(2000 * kMs), 2500 * kMs);
  EXPECT_EQ(w.to_wall(2499 * kMs), 2999 * kMs);
  EXPECT_EQ(w.to_wall(2500 * kMs), 3250 * kMs);    // reaches the second stall: both shifts
  EXPECT_EQ(w.to_engine(1200 * kMs), 1000 * kMs);  // inside a stall: its start
  EXPECT_EQ(w.to_engine(2500 * kMs), 2000 * kMs);
  EXPECT_EQ(w.to_engine(3100 * kMs), 2500 * kMs);
  EXPECT_EQ(w.to_engine(4000 * kMs), 3250 * kMs);
  EXPECT_EQ(w.to_wall(-5), -5);
}

TEST(TimeWarp, ADriftSlowsTheClockThenSettles) {
  // factor 3 over 4 s: wall(τ) = 3τ − τ²/4 up to 4 s (wall 8 s), then 1:1.
  const TimeWarp w(TimingPerturbation{.stalls = {}, .drift = {.factor = 3, .over_s = 4}});
  EXPECT_EQ(w.to_wall(2000 * kMs), 5000 * kMs);
  EXPECT_EQ(w.to_wall(4000 * kMs), 8000 * kMs);
  EXPECT_EQ(w.to_wall(6000 * kMs), 10000 * kMs);
  // 10 ms of engine time at the origin take 30 ms of wall time; after 4 s, 10 ms.
  EXPECT_NEAR(static_cast<double>(w.to_wall(10 * kMs)), 30.0 * kMs, 0.1 * kMs);
  EXPECT_EQ(w.to_wall(5010 * kMs) - w.to_wall(5000 * kMs), 10 * kMs);
  for (TimeNs t = 0; t < 9000 * kMs; t += 333 * kMs) {
    EXPECT_NEAR(static_cast<double>(w.to_engine(w.to_wall(t))), static_cast<double>(t), 2.0) << t;
  }
  // A server that starts fast (factor 0.5) and settles to the set latency.
  const TimeWarp fast(TimingPerturbation{.stalls = {}, .drift = {.factor = 0.5, .over_s = 2}});
  EXPECT_EQ(fast.to_wall(2000 * kMs), 1500 * kMs);
  EXPECT_NEAR(static_cast<double>(fast.to_engine(1500 * kMs)), 2000.0 * kMs, 2.0);
}

TEST(TimeWarp, ParsingAndValidationNameTheFlag) {
  const Stall s = parse_stall("2.5:0.4", "--stall");
  EXPECT_DOUBLE_EQ(s.at_s, 2.5);
  EXPECT_DOUBLE_EQ(s.for_s, 0.4);
  const Drift d = parse_drift("3:8", "--server-drift");
  EXPECT_DOUBLE_EQ(d.factor, 3);
  EXPECT_DOUBLE_EQ(d.over_s, 8);
  EXPECT_THAT([] { (void)parse_stall("2.5", "--stall"); },
              ThrowsMessage<Exception>(HasSubstr("--stall: '2.5' is not AT_S:FOR_S")));
  EXPECT_THAT([] { (void)parse_stall("1:x", "--stall"); },
              ThrowsMessage<Exception>(HasSubstr("bad number at byte 2")));
  const auto overlap = TimingPerturbation{
      .stalls = {{.at_s = 1, .for_s = 1}, {.at_s = 1.5, .for_s = 1}}, .drift = {}};
  EXPECT_THAT([&] { validate_perturbation(overlap); },
              ThrowsMessage<Exception>(HasSubstr("starts inside the one at 1 s")));
  EXPECT_THAT([] { validate_perturbation({.stalls = {}, .drift = {.factor = 2, .over_s = 0}}); },
              ThrowsMessage<Exception>(HasSubstr("--drift")));
  EXPECT_NO_THROW(validate_perturbation(
      {.stalls = {{.at_s = 1, .for_s = 0.5}, {.at_s = 1.5, .for_s = 1}}, .drift = {}}));
  EXPECT_FALSE(TimingPerturbation{}.active());
}

}  // namespace
}  // namespace llmbench::server
