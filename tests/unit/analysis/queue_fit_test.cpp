#include "llmbench/analysis/queue_fit.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace llmbench::analysis {
namespace {

TEST(QueueFit, Mm1RecoversTheCurveItWasDrawnFrom) {
  // L = 100 / (1 − X/50) at X = 5, 10, ..., 45: exact, so the fit is exact.
  std::vector<std::pair<double, double>> pts;
  for (double x = 5; x < 50; x += 5) pts.emplace_back(x, 100 / (1 - x / 50));
  const auto f = fit_mm1_latency(pts);
  ASSERT_TRUE(f.ok) << f.reason;
  EXPECT_NEAR(f.a, 100, 1e-9);
  EXPECT_NEAR(f.b, 50, 1e-9);
  EXPECT_NEAR(f.rms_relative_error, 0, 1e-12);
  EXPECT_EQ(f.points, 9U);
  // 10% noise on alternate points: a fit error of about 10%.
  for (std::size_t i = 0; i < pts.size(); i += 2) pts[i].second *= 1.1;
  EXPECT_GT(fit_mm1_latency(pts).rms_relative_error, 0.02);
}

TEST(QueueFit, Mm1RefusesALatencyThatFallsOrOnePoint) {
  EXPECT_FALSE(fit_mm1_latency({{1, 100}, {2, 90}, {3, 80}}).ok);
  EXPECT_FALSE(fit_mm1_latency({{1, 100}}).ok);
  EXPECT_FALSE(fit_mm1_latency({{1, 100}, {1, 120}}).ok);
}

TEST(QueueFit, KneeModelRecoversMuAndRho) {
  // X = 2000 (1 − 0.9) / (1 + Q (1 − 0.9)) at Q = 1, 2, 4, ..., 128.
  std::vector<std::pair<double, double>> pts;
  for (double q = 1; q <= 128; q *= 2) pts.emplace_back(q, 2000 * 0.1 / (1 + q * 0.1));
  const auto f = fit_knee_model(pts);
  ASSERT_TRUE(f.ok);
  EXPECT_NEAR(f.b, 0.9, 1e-9);
  EXPECT_NEAR(f.a, 2000, 1e-6);
  EXPECT_NEAR(f.rms_relative_error, 0, 1e-9);
}

TEST(QueueFit, AFitIsReportedOnlyWithinItsErrorBound) {
  std::vector<std::pair<double, double>> mm1;
  for (double x = 1; x <= 9; x += 1) mm1.emplace_back(x, 50 / (1 - x / 10));
  const QueueFit good = fit_mm1_latency(mm1);
  EXPECT_TRUE(within_bound(good));
  // A ladder whose throughput still rises: the knee model misses it by far.
  std::vector<std::pair<double, double>> rising;
  for (double q = 1; q <= 256; q *= 2) rising.emplace_back(q, 10 * q);
  const QueueFit bad = fit_knee_model(rising);
  ASSERT_TRUE(bad.ok);
  EXPECT_GT(bad.rms_relative_error, kFitErrorBound);
  EXPECT_FALSE(within_bound(bad));
  // By default the finding alone, in one short clause; the parameters and errors with --verbose.
  EXPECT_EQ(fits_line(good, bad), "queue fits: M/M/1 within 15%, Xmax 10.00 req/s");
  const std::string line = fits_line(good, bad, true);
  EXPECT_THAT(line, ::testing::StartsWith("queue fits: M/M/1 fit: L0 50.0 ms, Xmax 10.00 req/s"));
  EXPECT_THAT(line, ::testing::HasSubstr("; no fit within 15% (knee model "));
  EXPECT_EQ(fits_line(fit_mm1_latency({{1, 10}}), bad), "queue fits: no fit within 15%");
  const std::string none = fits_line(fit_mm1_latency({{1, 10}}), bad, true);
  EXPECT_THAT(none, ::testing::StartsWith("queue fits: no fit within 15% (M/M/1 needs at least 2"));
}

}  // namespace
}  // namespace llmbench::analysis
