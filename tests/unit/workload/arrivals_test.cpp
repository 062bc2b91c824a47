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

// vLLM's --ramp-up-strategy (benchmarks/serve.py `_get_current_request_rate`): request i of N at
// rate r_i, p = i / (N - 1). With burstiness inf the gaps are exactly 1 / r_i.
TEST(ArrivalsTest, LinearRampRatesPerRequest) {
  const ArrivalOptions o{.burstiness = std::numeric_limits<double>::infinity(),
                         .ramp_up = RampUp::Linear,
                         .ramp_up_start_rps = 1,
                         .ramp_up_end_rps = 5};
  // r = 1, 2, 3, 4, 5: gaps 1/2, 1/3, 1/4, 1/5 after the first request at 0.
  const auto t = arrival_times(5, o);
  ASSERT_EQ(t.size(), 5U);
  EXPECT_EQ(t[0], 0);
  EXPECT_EQ(t[1], 500'000'000);
  EXPECT_EQ(t[2], std::llround((0.5 + 1.0 / 3) * 1e9));
  EXPECT_EQ(t[3], std::llround((0.5 + 1.0 / 3 + 0.25) * 1e9));
  EXPECT_EQ(t[4], std::llround((0.5 + 1.0 / 3 + 0.25 + 0.2) * 1e9));
}

TEST(ArrivalsTest, ExponentialRampAndItsChecks) {
  ArrivalOptions o{.burstiness = std::numeric_limits<double>::infinity(),
                   .ramp_up = RampUp::Exponential,
                   .ramp_up_start_rps = 1,
                   .ramp_up_end_rps = 16};
  // r = 16^(i/4) = 1, 2, 4, 8, 16: gaps 1/2, 1/4, 1/8, 1/16.
  EXPECT_EQ(arrival_times(5, o),
            (std::vector<TimeNs>{0, 500'000'000, 750'000'000, 875'000'000, 937'500'000}));
  // Poisson gaps at the ramp's rates: over the last tenth (r from 16^0.9 to 16) the mean gap is
  // the mean of 1/r, (16^-0.9 - 16^-1) / (0.1 ln 16) = 0.0720 s; the seed is fixed.
  o.burstiness = 1;
  const auto t = arrival_times(2000, o);
  double late = 0;
  for (std::size_t i = 1801; i < t.size(); ++i) late += static_cast<double>(t[i] - t[i - 1]);
  EXPECT_NEAR(late / 199 / 1e9, (std::pow(16.0, -0.9) - 1.0 / 16) / (0.1 * std::log(16.0)), 0.02);
  o.ramp_up_start_rps = 0;  // exponential from 0 is undefined
  EXPECT_THROW((void)arrival_times(3, o), Exception);
  EXPECT_THROW(
      (void)arrival_times_until(
          1'000'000'000, 10,
          ArrivalOptions{.ramp_up = RampUp::Linear, .ramp_up_start_rps = 1, .ramp_up_end_rps = 2}),
      Exception);
  EXPECT_EQ(parse_ramp_up("linear"), RampUp::Linear);
  EXPECT_THROW((void)parse_ramp_up("step"), Exception);
}

}  // namespace
}  // namespace llmbench::workload
