#include "llmbench/workload/arrivals.hpp"

#include "llmbench/core/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace llmbench::workload {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct GapStats {
  double mean_ms;
  double cv;
};

GapStats gap_stats(const std::vector<TimeNs>& t) {
  double sum = 0;
  double sum2 = 0;
  const auto n = static_cast<double>(t.size() - 1);
  for (std::size_t i = 1; i < t.size(); ++i) {
    const double g = static_cast<double>(t[i] - t[i - 1]) / 1e6;
    sum += g;
    sum2 += g * g;
  }
  const double mean = sum / n;
  const double var = sum2 / n - mean * mean;
  return {mean, std::sqrt(var) / mean};
}

std::vector<TimeNs> draw(double rate, double k, std::int64_t count = 20000) {
  return arrival_times(count, ArrivalOptions{rate, k, 2024});
}

void expect_valid_schedule(const std::vector<TimeNs>& t) {
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t[0], 0);
  for (std::size_t i = 1; i < t.size(); ++i) {
    ASSERT_GE(t[i], t[i - 1]) << i;
  }
}

TEST(Arrivals, PoissonMeanAndCv) {
  const auto t = draw(20, 1.0);
  ASSERT_EQ(t.size(), 20000U);
  expect_valid_schedule(t);
  const auto s = gap_stats(t);
  EXPECT_NEAR(s.mean_ms, 50.0, 1.0);  // within 2%
  EXPECT_NEAR(s.cv, 1.0, 0.03);
}

TEST(Arrivals, SmoothGammaCvHalf) {
  const auto t = draw(20, 4.0);
  expect_valid_schedule(t);
  const auto s = gap_stats(t);
  EXPECT_NEAR(s.mean_ms, 50.0, 1.0);
  EXPECT_NEAR(s.cv, 0.5, 0.03);  // 1/sqrt(4)
}

TEST(Arrivals, BurstyGammaCvSqrtTwo) {
  const auto t = draw(20, 0.5);
  expect_valid_schedule(t);
  const auto s = gap_stats(t);
  EXPECT_NEAR(s.mean_ms, 50.0, 1.5);
  EXPECT_NEAR(s.cv, std::sqrt(2.0), 0.05);  // 1/sqrt(0.5)
}

TEST(Arrivals, InfiniteBurstinessIsConstantSpacing) {
  const auto t = draw(20, kInf, 1000);
  for (std::size_t i = 0; i < t.size(); ++i) {
    ASSERT_EQ(t[i], static_cast<TimeNs>(i) * 50'000'000) << i;
  }
  // 1/3 s spacing rounds to the nearest ns: 333333333, 666666667, 1000000000.
  const auto thirds = arrival_times(4, ArrivalOptions{3, kInf, 0});
  EXPECT_EQ(thirds, (std::vector<TimeNs>{0, 333'333'333, 666'666'667, 1'000'000'000}));
}

TEST(Arrivals, InfiniteOrNonPositiveRateIsAllAtOnce) {
  for (const double rate : {kInf, 0.0, -5.0}) {
    const auto t = arrival_times(100, ArrivalOptions{rate, 1.0, 1});
    ASSERT_EQ(t.size(), 100U);
    for (const auto x : t) {
      ASSERT_EQ(x, 0);
    }
  }
}

TEST(Arrivals, DeterministicPerSeed) {
  const auto a = arrival_times(500, ArrivalOptions{10, 1.0, 7});
  const auto b = arrival_times(500, ArrivalOptions{10, 1.0, 7});
  const auto c = arrival_times(500, ArrivalOptions{10, 1.0, 8});
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Arrivals, RejectsBadParameters) {
  EXPECT_THROW(arrival_times(10, ArrivalOptions{std::nan(""), 1.0, 0}), Exception);
  EXPECT_THROW(arrival_times(10, ArrivalOptions{10, 0.0, 0}), Exception);
  EXPECT_THROW(arrival_times(10, ArrivalOptions{10, -1.0, 0}), Exception);
  EXPECT_THROW(arrival_times(10, ArrivalOptions{10, std::nan(""), 0}), Exception);
  EXPECT_THROW(arrival_times(-1, ArrivalOptions{10, 1.0, 0}), Exception);
  EXPECT_TRUE(arrival_times(0, ArrivalOptions{10, 1.0, 0}).empty());
}

TEST(ArrivalsUntil, StopsBeforeDurationAndMatchesFixedCount) {
  const ArrivalOptions options{20, 1.0, 99};
  const TimeNs duration = 10'000'000'000;  // 10 s, about 200 arrivals
  const auto until = arrival_times_until(duration, 100000, options);
  const auto fixed = arrival_times(static_cast<std::int64_t>(until.size()) + 1, options);
  ASSERT_GT(until.size(), 150U);
  ASSERT_LT(until.size(), 250U);
  for (std::size_t i = 0; i < until.size(); ++i) {
    ASSERT_EQ(until[i], fixed[i]);
    ASSERT_LT(until[i], duration);
  }
  EXPECT_GE(fixed.back(), duration);  // the next arrival would be past the end

  EXPECT_EQ(arrival_times_until(duration, 10, options).size(), 10U);  // capped by max_count
  // Constant spacing, 50 ms: arrivals at 0, 50, ..., 950 ms before a 1 s end (1000 ms excluded).
  EXPECT_EQ(arrival_times_until(1'000'000'000, 1000, ArrivalOptions{20, kInf, 0}).size(), 20U);
  // All at once: max_count arrivals at 0; none for a zero duration.
  EXPECT_EQ(arrival_times_until(duration, 7, ArrivalOptions{kInf, 1.0, 0}),
            std::vector<TimeNs>(7, 0));
  EXPECT_TRUE(arrival_times_until(0, 7, options).empty());
}

}  // namespace
}  // namespace llmbench::workload
