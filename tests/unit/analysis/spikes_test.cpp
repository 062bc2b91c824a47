#include "llmbench/analysis/spikes.hpp"

#include "llmbench/core/error.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace llmbench::analysis {
namespace {

using ::testing::HasSubstr;

constexpr TimeNs kMs = 1'000'000;

/// A 1 s window `i` whose p99 ITL (gaps without a prefill) and TTFT are the given values (with
/// `n` samples each); the TTFT's explained value is 100 ms, so its ratio is TTFT / 100.
Window window(std::size_t i, double itl_p99, double ttft_p99, std::size_t n = 50) {
  Window w;
  w.start_ns = static_cast<TimeNs>(i) * 1000 * kMs;
  w.end_ns = w.start_ns + 1000 * kMs;
  w.itl_ms.count = std::isnan(itl_p99) ? 0 : n;
  w.itl_ms.percentiles = {{50, itl_p99 / 2}, {99, itl_p99}};
  w.itl_decode_ms = w.itl_ms;
  w.ttft_ms.count = std::isnan(ttft_p99) ? 0 : n;
  w.ttft_ms.percentiles = {{50, ttft_p99 / 2}, {99, ttft_p99}};
  w.ttft_ratio.count = w.ttft_ms.count;
  w.ttft_ratio.percentiles = {{50, ttft_p99 / 200}, {99, ttft_p99 / 100}};
  w.mean_in_flight = 4.0 + static_cast<double>(i);
  w.max_in_flight = 5 + i;
  w.completed = 10;
  return w;
}

TEST(Spikes, AWindowAboveThreeTimesTheMedianIsASpike) {
  std::vector<Window> windows;
  for (std::size_t i = 0; i < 10; ++i) windows.push_back(window(i, 10, 100));
  windows[4] = window(4, 50, 400);  // ITL 5x, TTFT 4x: both spike
  windows[7] = window(7, 25, 290);  // 2.5x and 2.9x: below the multiple
  const auto r = find_spikes(windows, SpikeRule{});
  EXPECT_DOUBLE_EQ(r.itl_baseline_ms, 10.0);
  EXPECT_DOUBLE_EQ(r.ttft_baseline_ms, 100.0);
  ASSERT_EQ(r.spikes.size(), 2U);
  EXPECT_EQ(r.spikes[0].metric, SpikeMetric::Itl);
  EXPECT_EQ(r.spikes[1].metric, SpikeMetric::Ttft);
  for (const auto& s : r.spikes) {
    EXPECT_EQ(s.window, 4U);
    EXPECT_EQ(s.start_ns, 4000 * kMs);
    EXPECT_EQ(s.end_ns, 5000 * kMs);
    EXPECT_DOUBLE_EQ(s.mean_in_flight, 8.0);
    EXPECT_EQ(s.max_in_flight, 9U);
    EXPECT_EQ(s.samples, 50U);
  }
  EXPECT_DOUBLE_EQ(r.spikes[0].ratio, 5.0);
  EXPECT_DOUBLE_EQ(r.spikes[1].value_ms, 400.0);
  EXPECT_DOUBLE_EQ(r.spikes[1].ratio, 4.0);  // TTFT 4 x what its prompt explains
  // One summary line, not a line per spike.
  const auto lines = spike_lines(r, SpikeRule{});
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0],
            "spikes: 2 (worst: p99 ITL 50.0 ms = 5.0x the median window at 4.0-5.0 s; windows "
            "at 4.0 s)");
  EXPECT_EQ(spike_summary(SpikeReport{}, SpikeRule{}), "none");
}

TEST(Spikes, GapsWithAPrefillAreSteadyBehaviourNotSpikes) {
  // Every other window holds a step that finished a prefill: its gaps stall to 38 ms against
  // 7.7 ms (the deterministic 0.5 req/s run that printed 41 spikes). Judged against their own
  // class they are steady; the interference is reported once.
  std::vector<Window> windows;
  for (std::size_t i = 0; i < 20; ++i) {
    Window w = window(i, 7.7, 100);
    if (i % 2 == 0) {
      w.itl_prefill_ms.count = 10;
      w.itl_prefill_ms.percentiles = {{50, 38}, {99, 38}};
      w.itl_ms.percentiles = {{50, 7.7}, {99, 38}};
    }
    windows.push_back(w);
  }
  const auto r = find_spikes(windows, SpikeRule{});
  EXPECT_TRUE(r.spikes.empty()) << spike_summary(r, SpikeRule{});
  EXPECT_TRUE(r.interference.found);
  EXPECT_DOUBLE_EQ(r.interference.with_prefill_ms, 38);
  EXPECT_DOUBLE_EQ(r.interference.without_prefill_ms, 7.7);
  EXPECT_EQ(r.interference.windows, 10U);
  EXPECT_EQ(interference_line(r, SpikeRule{}),
            "prefill interference: p99 ITL 38.0 ms in steps with prefill, 7.7 ms without "
            "(median window; steady behaviour, not spikes)");
  // A stall inside a prefill window still spikes against that class.
  windows[10].itl_prefill_ms.percentiles = {{50, 38}, {99, 400}};
  const auto stalled = find_spikes(windows, SpikeRule{});
  ASSERT_EQ(stalled.spikes.size(), 1U);
  EXPECT_TRUE(stalled.spikes[0].prefill_step);
  EXPECT_EQ(stalled.spikes[0].window, 10U);
}

TEST(Spikes, TheMultipleAndPercentileAreTheRules) {
  std::vector<Window> windows;
  for (std::size_t i = 0; i < 5; ++i) windows.push_back(window(i, 10, 100));
  windows[2] = window(2, 25, 100);
  EXPECT_TRUE(find_spikes(windows, SpikeRule{}).spikes.empty());
  const auto r = find_spikes(windows, SpikeRule{.multiple = 2.0});
  ASSERT_EQ(r.spikes.size(), 1U);
  EXPECT_EQ(r.spikes[0].window, 2U);
  // At p50 the values are halved, the baseline too: the same ratio.
  const auto p50 = find_spikes(windows, SpikeRule{.multiple = 2.0, .percentile = 50});
  ASSERT_EQ(p50.spikes.size(), 1U);
  EXPECT_DOUBLE_EQ(p50.spikes[0].value_ms, 12.5);
  EXPECT_THAT([&] { (void)find_spikes(windows, SpikeRule{.multiple = 1.0}); },
              ::testing::ThrowsMessage<Exception>(HasSubstr("--spike-multiple")));
}

TEST(Spikes, WindowsWithoutSamplesAreLeftOutOfTheBaseline) {
  // Median of {10, 12, 100, 10, 11, 10, 12, 10}: (10 + 11) / 2 = 10.5 (an even count); the NaN
  // window counts not.
  std::vector<Window> windows{window(0, 10, NAN),  window(1, NAN, NAN), window(2, 12, 100),
                              window(3, 100, NAN), window(4, 10, 100),  window(5, 11, NAN),
                              window(6, 10, NAN),  window(7, 12, NAN),  window(8, 10, NAN)};
  const auto r = find_spikes(windows, SpikeRule{});
  EXPECT_DOUBLE_EQ(r.itl_baseline_ms, 10.5);
  EXPECT_TRUE(std::isnan(r.ttft_baseline_ms));  // 2 windows with a TTFT: fewer than 3
  ASSERT_EQ(r.spikes.size(), 1U);
  EXPECT_EQ(r.spikes[0].window, 3U);
  EXPECT_TRUE(find_spikes({}, SpikeRule{}).spikes.empty());
}

/// Four streams with a token every 20 ms over [0, 8 s) that all pause over [2.3 s, 2.7 s):
/// the windows of the records put the one spike in [2 s, 3 s), where the 420 ms gaps land.
TEST(Spikes, AStallInTheRecordsIsFoundInTheWindowItEnds) {
  std::vector<metrics::RequestRecord> records;
  for (std::int64_t s = 0; s < 4; ++s) {
    metrics::RequestRecord r;
    r.id = s;
    r.http_status = 200;
    r.sent_ns = 0;
    r.scheduled_ns = 0;
    for (TimeNs t = 20 * kMs; t < 8000 * kMs; t += 20 * kMs) {
      if (t > 2300 * kMs && t < 2700 * kMs)
        continue;
      r.chunks.push_back(metrics::Chunk{.time_ns = t, .tokens = 1, .bytes = 4});
    }
    r.output_tokens = static_cast<std::int64_t>(r.chunks.size());
    r.done_ns = 8000 * kMs;
    records.push_back(r);
  }
  const auto windows = time_windows(records, WindowOptions{.width_ns = 1000 * kMs});
  ASSERT_EQ(windows.size(), 8U);
  const auto r = find_spikes(windows, SpikeRule{});
  EXPECT_DOUBLE_EQ(r.itl_baseline_ms, 20.0);
  ASSERT_EQ(r.spikes.size(), 1U);
  EXPECT_EQ(r.spikes[0].metric, SpikeMetric::Itl);
  EXPECT_EQ(r.spikes[0].start_ns, 2000 * kMs);
  EXPECT_EQ(r.spikes[0].max_in_flight, 4U);
  EXPECT_GT(r.spikes[0].value_ms, 300.0);
}

}  // namespace
}  // namespace llmbench::analysis
