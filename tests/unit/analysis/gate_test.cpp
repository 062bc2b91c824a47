#include "llmbench/analysis/gate.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace llmbench::analysis {
namespace {

TEST(ParseGates, UserGatesAndUnits) {
  auto gates = parse_gates("p99_ttft_ms:+5%, mean_tpot_ms:+2ms,error_rate:<0.1%,median_itl_ms:±1");
  ASSERT_TRUE(gates) << gates.error().what();
  ASSERT_EQ(gates->size(), 4U);
  EXPECT_EQ((*gates)[0].metric, Metric::Ttft);
  EXPECT_EQ((*gates)[0].statistic, Statistic::P99);
  EXPECT_EQ((*gates)[0].bound, GateBound::RiseAtMost);
  EXPECT_DOUBLE_EQ((*gates)[0].value, 5.0);
  EXPECT_TRUE((*gates)[0].percent);
  EXPECT_EQ((*gates)[1].metric, Metric::Tpot);
  EXPECT_FALSE((*gates)[1].percent);
  EXPECT_EQ((*gates)[2].metric, Metric::ErrorRate);
  EXPECT_EQ((*gates)[2].bound, GateBound::Below);
  EXPECT_EQ((*gates)[3].statistic, Statistic::P50);
  EXPECT_EQ((*gates)[3].bound, GateBound::MoveAtMost);
}

TEST(ParseGates, CanaryExpands) {
  auto gates = parse_gates("canary,output_throughput:-5%");
  ASSERT_TRUE(gates) << gates.error().what();
  ASSERT_EQ(gates->size(), 7U);
  EXPECT_EQ((*gates)[0].text, "error_rate:<0.1%");
  EXPECT_EQ((*gates)[4].text, "p99_e2el_ms:+20%");
  // One-sided and relative: every latency item bounds a rise, in % of A.
  for (std::size_t i = 1; i <= 4; ++i) {
    EXPECT_EQ((*gates)[i].bound, GateBound::RiseAtMost) << (*gates)[i].text;
    EXPECT_TRUE((*gates)[i].percent) << (*gates)[i].text;
  }
  EXPECT_EQ((*gates)[5].text, "output_throughput:-10%");
  EXPECT_EQ((*gates)[5].bound, GateBound::FallAtMost);
  EXPECT_EQ((*gates)[6].bound, GateBound::FallAtMost);
}

TEST(ParseGates, ErrorsNameThePosition) {
  const auto expect_error = [](std::string_view spec, const std::string& part) {
    auto gates = parse_gates(spec);
    ASSERT_FALSE(gates) << spec;
    EXPECT_NE(gates.error().what().find(part), std::string::npos) << gates.error().what();
    EXPECT_NE(gates.error().what().find("--gate"), std::string::npos);
  };
  expect_error("p99_ttfx_ms:+5%", "unknown gate key 'p99_ttfx_ms' (did you mean 'p99_ttft_ms'?)");
  expect_error("p99_ttfx_ms:+5%", "(at byte 0)");
  expect_error("p99_ttft_ms:+5%, mean_tpot_ms:*2",
               "expected one of + - ± +- < <= > >= before the number (at byte 30)");
  expect_error("p99_ttft_ms:+5x", "unknown unit 'x' (valid: ms, %) (at byte 14)");
  expect_error("p99_ttft_ms:+abc", "expected a non-negative number, got 'abc' (at byte 13)");
  expect_error("p99_ttft_ms:+5%,", "empty gate (two commas, or a comma at an end) (at byte 16)");
  expect_error("error_rate:<2ms", "'ms' is the unit of latencies");
  expect_error("p99_ttft_ms:<5%", "'%' bounds a change");
  expect_error("p99_ttft_ms", "expected KEY:BOUND");
}

/// A comparison with one latency row and an error rate row.
std::vector<MetricComparison> comparison(double ttft_a, double ttft_b, double errors_b) {
  MetricComparison ttft{.metric = Metric::Ttft};
  for (const Statistic s : all_statistics()) {
    ttft.statistics.push_back(StatisticComparison{
        .statistic = s, .a = ttft_a, .b = ttft_b, .difference = ttft_b - ttft_a});
  }
  MetricComparison errors{.metric = Metric::ErrorRate};
  errors.statistics.push_back(StatisticComparison{
      .statistic = Statistic::Mean, .a = 0, .b = errors_b, .difference = errors_b});
  return {ttft, errors};
}

TEST(EvaluateGates, RelativeAbsoluteAndLimits) {
  const auto gates = parse_gates("p99_ttft_ms:+5%,mean_ttft_ms:±3ms,error_rate:<0.1%").value();
  // TTFT 40 → 41.5 ms: +3.75% passes +5% (2 ms); +1.5 ms passes ±3 ms; 0.05% errors pass.
  auto results = evaluate_gates(gates, comparison(40, 41.5, 0.0005));
  ASSERT_EQ(results.size(), 3U);
  for (const auto& r : results) EXPECT_TRUE(r.passed) << r.message;
  EXPECT_DOUBLE_EQ(results[0].limit, 2.0);
  EXPECT_DOUBLE_EQ(results[0].measured, 1.5);
  // 40 → 35 ms: −5 ms fails ±3 ms but passes +5%; 0.2% errors fail.
  results = evaluate_gates(gates, comparison(40, 35, 0.002));
  EXPECT_TRUE(results[0].passed);
  EXPECT_FALSE(results[1].passed);
  EXPECT_EQ(results[1].message,
            "mean_ttft_ms:±3ms: B − A = -5.00 ms (40.00 → 35.00), limit ±3.00 ms: FAIL");
  EXPECT_FALSE(results[2].passed);
  EXPECT_EQ(results[2].message, "error_rate:<0.1%: B = 0.2%, limit < 0.1%: FAIL");
}

TEST(EvaluateGates, TheCanaryFailsARegressionAndPassesAnImprovement) {
  const auto gates = parse_gates("canary").value();
  std::vector<Gate> ttft;  // the TTFT items and the error rate: what `comparison` carries
  for (const auto& g : gates) {
    if (g.metric == Metric::Ttft || g.metric == Metric::ErrorRate)
      ttft.push_back(g);
  }
  ASSERT_EQ(ttft.size(), 3U);
  // 95% faster: the old ±15 ms gate failed it; a one-sided gate passes it.
  for (const auto& r : evaluate_gates(ttft, comparison(400, 20, 0)))
    EXPECT_TRUE(r.passed) << r.message;
  // 400 → 430 ms (+7.5%): within +10% (mean) and +20% (p99).
  for (const auto& r : evaluate_gates(ttft, comparison(400, 430, 0)))
    EXPECT_TRUE(r.passed) << r.message;
  // 400 → 500 ms (+25%): both fail; the limit is read in ms of A.
  const auto slow = evaluate_gates(ttft, comparison(400, 500, 0));
  EXPECT_TRUE(slow[0].passed);
  EXPECT_FALSE(slow[1].passed);
  EXPECT_DOUBLE_EQ(slow[1].limit, 40.0);
  EXPECT_FALSE(slow[2].passed);
  EXPECT_DOUBLE_EQ(slow[2].limit, 80.0);
}

TEST(EvaluateGates, UndefinedFails) {
  const auto gates = parse_gates("p99_tpot_ms:+1ms").value();
  const auto results = evaluate_gates(gates, comparison(40, 41, 0));
  ASSERT_EQ(results.size(), 1U);
  EXPECT_FALSE(results[0].passed);
  EXPECT_NE(results[0].message.find("undefined"), std::string::npos);
}

}  // namespace
}  // namespace llmbench::analysis
