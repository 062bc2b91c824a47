#include "llmbench/report/history.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace llmbench::report {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

json summary(double ttft, double throughput, double goodput, double error_rate = 0) {
  json s{{"mean_ttft_ms", ttft},
         {"mean_tpot_ms", 10.0},
         {"mean_itl_ms", 10.0},
         {"mean_e2el_ms", 1000.0},
         {"output_throughput", throughput},
         {"request_throughput", throughput / 100},
         {"error_rate", error_rate}};
  if (goodput >= 0)
    s["request_goodput"] = goodput;
  return s;
}

TEST(SummaryRegressions, QuietOnHealthyChangesAndNamesEveryRegression) {
  const json base = summary(100, 1000, 8);
  // Healthy: identical, 5% noise either way, faster and more throughput.
  EXPECT_THAT(summary_regressions(base, base, 0.05, RegressionScope::Everything), IsEmpty());
  EXPECT_THAT(summary_regressions(base, summary(105, 950, 7.7), 0.05, RegressionScope::Everything),
              IsEmpty());
  EXPECT_THAT(summary_regressions(base, summary(50, 2000, 16), 0.05, RegressionScope::Everything),
              IsEmpty());
  // A 31.6% throughput drop (the case `history regress` used to leave out), and the goodput.
  EXPECT_THAT(summary_regressions(base, summary(100, 684, 5.2), 0.05, RegressionScope::Everything),
              ElementsAre("output_throughput -31.6%", "request_throughput -31.6%",
                          "request_goodput -35.0%"));
  // Latency and error rate, then throughput; the throughput-only scope skips the first two.
  const json slow = summary(130, 800, -1, 0.002);
  EXPECT_THAT(summary_regressions(base, slow, 0.05, RegressionScope::Everything),
              ElementsAre("mean_ttft_ms +30.0%", "error_rate +0.20 points",
                          "output_throughput -20.0%", "request_throughput -20.0%"));
  EXPECT_THAT(summary_regressions(base, slow, 0.05, RegressionScope::ThroughputOnly),
              ElementsAre("output_throughput -20.0%", "request_throughput -20.0%"));
}

TEST(SummaryKeys, SortedAndUniqueOverTheEntries) {
  std::vector<HistoryEntry> entries(2);
  entries[0].summary = {{"p99_ttft_ms", 1}, {"completed", 3}};
  entries[1].summary = {{"p99_ttft_ms", 2}, {"error_rate", 0}};
  EXPECT_THAT(summary_keys(entries), ElementsAre("completed", "error_rate", "p99_ttft_ms"));
}

}  // namespace
}  // namespace llmbench::report
