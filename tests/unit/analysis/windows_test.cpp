#include "llmbench/analysis/windows.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/metrics/summary.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace llmbench::analysis {
namespace {

using metrics::Chunk;
using metrics::RequestRecord;
using ::testing::DoubleNear;
using ::testing::HasSubstr;

constexpr TimeNs kMs = 1'000'000;

/// A completed record sent at `sent_ms` with chunks given as (ms, tokens), done at `done_ms`.
RequestRecord make_record(std::int64_t id, double sent_ms,
                          const std::vector<std::pair<double, int>>& chunks, double done_ms) {
  RequestRecord r;
  r.id = id;
  r.scheduled_ns = ms_to_ns(sent_ms);
  r.sent_ns = ms_to_ns(sent_ms);
  std::int64_t n = 0;
  for (const auto& [ms, tokens] : chunks) {
    r.chunks.push_back(Chunk{.time_ns = ms_to_ns(ms), .tokens = tokens, .bytes = 4 * tokens});
    n += tokens;
  }
  r.done_ns = ms_to_ns(done_ms);
  r.http_status = 200;
  r.output_tokens = n;
  return r;
}

/// Three measured requests and a warm-up over 2.5 s; the expected windows are worked out by
/// hand in the test below.
std::vector<RequestRecord> three_requests() {
  std::vector<RequestRecord> records;
  records.push_back(make_record(0, 0, {{500, 1}, {1200, 2}, {1400, 1}}, 1500));
  records.push_back(make_record(1, 200, {{800, 1}, {2300, 1}}, 2500));
  RequestRecord failed;
  failed.id = 2;
  failed.scheduled_ns = 1000 * kMs;
  failed.sent_ns = 1000 * kMs;
  failed.done_ns = 1100 * kMs;
  failed.http_status = 503;
  failed.error_kind = metrics::ErrorKind::Http5xx;
  records.push_back(failed);
  RequestRecord warmup = make_record(3, 100, {{300, 5}, {900, 5}}, 3400);
  warmup.warmup = true;  // outside every window, and not in the span either
  records.push_back(warmup);
  return records;
}

double percentile(const metrics::Stats& s, double q) {
  for (const auto& [p, v] : s.percentiles) {
    if (p == q)
      return v;
  }
  return std::nan("");
}

TEST(TimeWindows, AssignsEverySampleToTheWindowOfItsTime) {
  const auto windows = time_windows(three_requests(), WindowOptions{.width_ns = 1000 * kMs});
  ASSERT_EQ(windows.size(), 3U);

  // [0, 1 s): R0's and R1's first tokens (TTFT 500 and 600 ms), R0 and R1 in flight.
  const auto& w0 = windows[0];
  EXPECT_EQ(w0.start_ns, 0);
  EXPECT_EQ(w0.end_ns, 1000 * kMs);
  EXPECT_TRUE(w0.full);
  EXPECT_TRUE(w0.sending);  // the last send (R2) is at 1 s
  EXPECT_EQ(w0.output_tokens, 2);
  EXPECT_DOUBLE_EQ(w0.output_throughput, 2.0);
  EXPECT_EQ(w0.completed, 0U);
  EXPECT_EQ(w0.ttft_ms.count, 2U);
  EXPECT_DOUBLE_EQ(w0.ttft_ms.min, 500.0);
  EXPECT_DOUBLE_EQ(w0.ttft_ms.max, 600.0);
  EXPECT_EQ(w0.itl_ms.count, 0U);
  EXPECT_THAT(w0.mean_in_flight, DoubleNear(1.8, 1e-12));  // R0 for 1.0 s + R1 for 0.8 s
  EXPECT_EQ(w0.max_in_flight, 2U);

  // [1 s, 2 s): R0's 2-token chunk at 1.2 s (700 ms gap → two ITLs of 350) and 1-token chunk at
  // 1.4 s (200); R0 completes, R2 fails; R0, R1 and R2 all in flight over [1.0, 1.1).
  const auto& w1 = windows[1];
  EXPECT_FALSE(w1.sending);
  EXPECT_EQ(w1.output_tokens, 3);
  EXPECT_EQ(w1.completed, 1U);
  EXPECT_EQ(w1.failed, 1U);
  EXPECT_DOUBLE_EQ(w1.request_throughput, 1.0);
  EXPECT_EQ(w1.itl_ms.count, 3U);
  EXPECT_DOUBLE_EQ(w1.itl_ms.min, 200.0);
  EXPECT_DOUBLE_EQ(percentile(w1.itl_ms, 50), 350.0);
  EXPECT_DOUBLE_EQ(percentile(w1.itl_ms, 99), 350.0);
  EXPECT_EQ(w1.ttft_ms.count, 0U);
  EXPECT_THAT(w1.mean_in_flight, DoubleNear(1.6, 1e-12));  // 0.5 + 1.0 + 0.1
  EXPECT_EQ(w1.max_in_flight, 3U);

  // [2 s, 2.5 s): shorter than the width; its rates are over 0.5 s.
  const auto& w2 = windows[2];
  EXPECT_EQ(w2.end_ns, 2500 * kMs);
  EXPECT_FALSE(w2.full);
  EXPECT_EQ(w2.output_tokens, 1);
  EXPECT_DOUBLE_EQ(w2.output_throughput, 2.0);
  EXPECT_DOUBLE_EQ(w2.request_throughput, 2.0);
  EXPECT_DOUBLE_EQ(w2.itl_ms.max, 1500.0);
  EXPECT_THAT(w2.mean_in_flight, DoubleNear(1.0, 1e-12));
  EXPECT_EQ(w2.max_in_flight, 1U);
}

TEST(TimeWindows, AddUpToTheRunSummary) {
  const auto records = three_requests();
  const auto summary = metrics::summarize(records, metrics::SummaryOptions{});
  const auto windows = time_windows(records, WindowOptions{.width_ns = 300 * kMs});
  std::int64_t tokens = 0;
  std::size_t completed = 0;
  std::size_t failed = 0;
  std::size_t ttfts = 0;
  std::size_t itls = 0;
  for (const auto& w : windows) {
    tokens += w.output_tokens;
    completed += w.completed;
    failed += w.failed;
    ttfts += w.ttft_ms.count;
    itls += w.itl_ms.count;
  }
  EXPECT_EQ(tokens, summary.total_output_tokens);
  EXPECT_EQ(completed, summary.completed);
  EXPECT_EQ(failed, summary.failed);
  EXPECT_EQ(ttfts, summary.ttft_ms.count);
  EXPECT_EQ(itls, summary.itl_ms.count);
  // 2.5 s in windows of 0.3 s: 8 full ones and a last of 0.1 s.
  ASSERT_EQ(windows.size(), 9U);
  EXPECT_EQ(windows.back().end_ns - windows.back().start_ns, 100 * kMs);
}

TEST(TimeWindows, TokenRunsGiveTheWindowsOfTheExpandedChunks) {
  std::vector<RequestRecord> records;
  for (int i = 0; i < 3; ++i) {
    RequestRecord r;
    r.id = i;
    r.scheduled_ns = i * 100 * kMs;
    r.sent_ns = r.scheduled_ns;
    r.done_ns = 4000 * kMs;
    r.output_tokens = 0;
    records.push_back(r);
  }
  metrics::TokenRuns runs;
  runs.grids.push_back({});
  for (int k = 0; k < 60; ++k) runs.grids[0].push_back(300 * kMs + k * 55 * kMs);
  runs.runs = {{.request = 0, .grid = 0, .first = 0, .count = 20},
               {.request = 1, .grid = 0, .first = 5, .count = 30},
               {.request = 0, .grid = 0, .first = 40, .count = 10},
               {.request = 2, .grid = 0, .first = 50, .count = 10}};
  for (const auto& run : runs.runs) records[run.request].output_tokens += run.count;
  const WindowOptions options{.width_ns = 700 * kMs};
  const auto from_runs = time_windows(records, runs, options);
  auto expanded = records;
  metrics::expand_token_runs(runs, expanded);
  const auto from_chunks = time_windows(expanded, options);
  ASSERT_EQ(from_runs.size(), 6U);  // 0 .. 4 s
  EXPECT_EQ(from_runs, from_chunks);
}

TEST(TimeWindows, RefusesAWidthOfZeroAndGivesNoWindowWithoutARequest) {
  EXPECT_THROW((void)time_windows(three_requests(), WindowOptions{.width_ns = 0}), Exception);
  EXPECT_TRUE(time_windows({}, WindowOptions{}).empty());
}

/// Full 1 s windows with the given output tok/s and p99 ITL.
std::vector<Window> windows_of(const std::vector<std::pair<double, double>>& values) {
  std::vector<Window> out;
  for (const auto& [throughput, p99] : values) {
    Window w;
    w.output_throughput = throughput;
    w.itl_ms.count = 10;
    w.itl_ms.percentiles = {{50, p99 / 2}, {99, p99}};
    out.push_back(w);
  }
  return out;
}

TEST(Stability, LastThreeWindowsWithinTenPercent) {
  // A ramp-up window first: only the last three count.
  const auto verdict =
      stability(windows_of({{20, 30}, {100, 10}, {105, 10.5}, {108, 10.9}}), StabilityRule{});
  EXPECT_TRUE(verdict.stable) << verdict.reason;
  EXPECT_DOUBLE_EQ(verdict.throughput_spread, 108.0 / 100.0 - 1);
  EXPECT_DOUBLE_EQ(verdict.latency_spread, 10.9 / 10.0 - 1);
}

TEST(Stability, ThroughputOrLatencyOutsideTheToleranceIsUnstable) {
  const auto throughput = stability(windows_of({{100, 10}, {100, 10}, {115, 10}}), StabilityRule{});
  EXPECT_FALSE(throughput.stable);
  EXPECT_THAT(throughput.reason, HasSubstr("+15.0%"));
  const auto latency = stability(windows_of({{100, 10}, {100, 12}, {100, 10}}), StabilityRule{});
  EXPECT_FALSE(latency.stable);
  EXPECT_DOUBLE_EQ(latency.latency_spread, 0.2);
  // A wider tolerance accepts the same windows.
  EXPECT_TRUE(
      stability(windows_of({{100, 10}, {100, 12}, {100, 10}}), StabilityRule{.tolerance = 0.25})
          .stable);
}

TEST(Stability, TooFewFullWindowsOrNoOutputIsUnstable) {
  auto windows = windows_of({{100, 10}, {100, 10}, {100, 10}});
  windows.back().full = false;  // a short last window is not compared
  const auto few = stability(windows, StabilityRule{});
  EXPECT_FALSE(few.stable);
  EXPECT_THAT(few.reason, HasSubstr("only 2 full window(s)"));
  // Nor is the drain after the last send.
  auto drain = windows_of({{100, 10}, {100, 10}, {100, 10}, {40, 30}});
  drain.back().sending = false;
  EXPECT_TRUE(stability(drain, StabilityRule{}).stable);
  drain.back().sending = true;
  EXPECT_FALSE(stability(drain, StabilityRule{}).stable);
  const auto idle = stability(windows_of({{100, 10}, {0, 10}, {100, 10}}), StabilityRule{});
  EXPECT_FALSE(idle.stable);
  EXPECT_TRUE(std::isnan(idle.throughput_spread));
}

}  // namespace
}  // namespace llmbench::analysis
