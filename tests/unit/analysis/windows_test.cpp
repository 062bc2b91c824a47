#include "llmbench/analysis/windows.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/metrics/summary.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
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

TEST(TimeWindows, ChunksOutOfTimeOrderStillCountInTheWindowOfTheirTime) {
  // The windows take each record's chunks window by window when they come in time order; a
  // record whose chunk times go back (a hand-edited or foreign records file) has every sample
  // taken at once instead, so none is lost: 700 ms at 1.2 s, then -400 ms at 0.8 s.
  std::vector<RequestRecord> records;
  records.push_back(make_record(0, 0, {{500, 1}, {1200, 1}, {800, 1}}, 1500));
  const auto windows = time_windows(records, WindowOptions{.width_ns = 1000 * kMs});
  ASSERT_EQ(windows.size(), 2U);
  EXPECT_EQ(windows[0].itl_ms.count, 1U);
  EXPECT_DOUBLE_EQ(windows[0].itl_ms.min, -400.0);
  EXPECT_EQ(windows[1].itl_ms.count, 1U);
  EXPECT_DOUBLE_EQ(windows[1].itl_ms.min, 700.0);
  EXPECT_EQ(windows[0].output_tokens + windows[1].output_tokens, 3);
  // Every sample is of one kind here (no other request's first chunk): the decode statistics
  // are the whole window's, the prefill ones empty.
  EXPECT_EQ(windows[1].itl_decode_ms.count, 1U);
  EXPECT_EQ(windows[1].itl_prefill_ms.count, 0U);
}

TEST(TimeWindows, AWindowOfBothKindsDescribesAllDecodeAndPrefillSamples) {
  // R1's first chunk (25 ms) lies in R0's gap (21, 33] (with the 1 ms tolerance): that ITL of
  // 12 ms held a prefill; every other gap held none. One window holds them all, and its three
  // statistics are those of the three lists in the order the samples came (R0's, then R1's).
  std::vector<RequestRecord> records;
  records.push_back(make_record(0, 0, {{10, 1}, {21, 1}, {33, 1}, {46, 1}, {60, 1}}, 60));
  records.push_back(make_record(1, 22, {{25, 1}, {40, 1}, {56, 1}}, 56));
  const WindowOptions options{.width_ns = 1000 * kMs, .percentiles = {50, 90, 99}};
  const auto windows = time_windows(records, options);
  ASSERT_EQ(windows.size(), 1U);
  const auto& w = windows[0];
  EXPECT_TRUE(w.itl_ms == metrics::describe({11, 12, 13, 14, 15, 16}, options.percentiles));
  EXPECT_TRUE(w.itl_decode_ms == metrics::describe({11, 13, 14, 15, 16}, options.percentiles));
  EXPECT_TRUE(w.itl_prefill_ms == metrics::describe({12}, options.percentiles));
  EXPECT_EQ(w.itl_decode_ms.count, 5U);
  EXPECT_DOUBLE_EQ(w.itl_prefill_ms.min, 12.0);
  EXPECT_DOUBLE_EQ(w.itl_ms.median, 13.5);
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

TEST(TimeWindows, TokenRunsOnIrregularGridsGiveTheWindowsOfTheExpandedChunks) {
  // Two replicas' step ends 20-60 ms apart; 30 requests of 1-3 runs each (the runs listed
  // request by request, the order of the expanded chunks), one failed and one warm-up; many
  // windows hold ITL gaps both with and without another request's first chunk.
  Rng rng(11, "windows-test");
  metrics::TokenRuns runs;
  for (int g = 0; g < 2; ++g) {
    runs.grids.emplace_back();
    TimeNs t = 100 * kMs;
    for (int k = 0; k < 400; ++k) {
      t += rng.uniform_int(20 * kMs, 60 * kMs);
      runs.grids.back().push_back(t);
    }
  }
  std::vector<RequestRecord> records;
  for (std::size_t i = 0; i < 30; ++i) {
    const auto g = static_cast<std::uint32_t>(i % 2);
    const auto& grid = runs.grids[g];
    std::int64_t k = rng.uniform_int(0, 300);
    RequestRecord r;
    r.id = static_cast<std::int64_t>(i);
    r.sent_ns = grid[static_cast<std::size_t>(k)] - rng.uniform_int(50 * kMs, 500 * kMs);
    r.scheduled_ns = r.sent_ns;
    r.http_status = 200;
    r.output_tokens = 0;
    for (int j = 0; j < 3 && k < 400; ++j) {
      const std::int64_t count = std::min<std::int64_t>(rng.uniform_int(1, 30), 400 - k);
      runs.runs.push_back({.request = i, .grid = g, .first = k, .count = count});
      r.output_tokens += count;
      k += count + rng.uniform_int(0, 10);
    }
    r.done_ns = grid[static_cast<std::size_t>(runs.runs.back().first + runs.runs.back().count - 1)];
    records.push_back(r);
  }
  records[3].http_status = 503;
  records[3].error_kind = metrics::ErrorKind::Http5xx;
  records[5].warmup = true;
  const WindowOptions options{.width_ns = 250 * kMs, .percentiles = {50, 90, 99}};
  const auto from_runs = time_windows(records, runs, options);
  auto expanded = records;
  metrics::expand_token_runs(runs, expanded);
  const auto from_chunks = time_windows(expanded, options);
  EXPECT_EQ(from_runs, from_chunks);
  std::size_t mixed = 0;
  for (const auto& w : from_runs)
    mixed += w.itl_decode_ms.count > 0 && w.itl_prefill_ms.count > 0 ? 1 : 0;
  EXPECT_GT(mixed, 5U);
}

TEST(TimeWindows, RefusesAWidthOfZeroAndGivesNoWindowWithoutARequest) {
  EXPECT_THROW((void)time_windows(three_requests(), WindowOptions{.width_ns = 0}), Exception);
  EXPECT_TRUE(time_windows({}, WindowOptions{}).empty());
}

/// `n` full, sending 1 s windows whose output tok/s, mean ITL, mean TTFT and requests in
/// flight are given by `at(i)` (a tuple), each with 50 ITL and 5 TTFT samples.
template <typename At>
std::vector<Window> series(std::size_t n, At at) {
  std::vector<Window> out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto [throughput, itl, ttft, in_flight] = at(i);
    Window w;
    w.start_ns = static_cast<TimeNs>(i) * 1000 * kMs;
    w.end_ns = w.start_ns + 1000 * kMs;
    w.output_throughput = throughput;
    w.itl_ms.count = 50;
    w.itl_ms.mean = itl;
    w.ttft_ms.count = 5;
    w.ttft_ms.mean = ttft;
    w.mean_in_flight = in_flight;
    out.push_back(w);
  }
  return out;
}

/// Independent uniform factors in [1 − a, 1 + a], one per window (seeded core Rng).
struct Noise {
  Rng rng;
  double operator()(double a) { return 1 + a * (2 * rng.uniform01() - 1); }
};

TEST(Stability, NoisyWindowsWithoutATrendAreStable) {
  // A Poisson run at 2 req/s: each window's throughput varies ±75% by chance, nothing trends.
  // Twenty such runs: none is called anything but stable.
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Noise noise{Rng(seed, "stability-test")};
    const auto w = series(30, [&](std::size_t) {
      return std::tuple{100 * noise(0.75), 10 * noise(0.3), 50 * noise(0.5), 4 * noise(0.5)};
    });
    const auto v = stability(w, StabilityRule{});
    EXPECT_EQ(v.state, Steadiness::Stable) << "seed " << seed << ": " << v.reason;
    EXPECT_EQ(v.judged_windows, 30U);
  }
}

TEST(Stability, AGrowingQueueIsSaturatedWhateverTheThroughput) {
  // An open loop above capacity: throughput flat at the server's rate, requests outstanding
  // (and TTFT) growing by one per second.
  Noise noise{Rng(3, "stability-test")};
  const auto w = series(20, [&](std::size_t i) {
    const double k = static_cast<double>(i);
    return std::tuple{100 * noise(0.02), 10.0, 100 + 50 * k, 10 + k};
  });
  const auto v = stability(w, StabilityRule{});
  EXPECT_EQ(v.state, Steadiness::Saturated) << v.reason;
  EXPECT_NEAR(v.queue_growth, 19, 0.5);  // the Theil-Sen line over the 20 windows
  EXPECT_THAT(v.reason, HasSubstr("outstanding"));
  // The client's own queue counts too (an open loop capped by --max-concurrency).
  auto capped = series(20, [](std::size_t) { return std::tuple{100.0, 10.0, 100.0, 16.0}; });
  for (std::size_t i = 0; i < capped.size(); ++i)
    capped[i].mean_queued = 2.0 * static_cast<double>(i);
  EXPECT_EQ(stability(capped, StabilityRule{}).state, Steadiness::Saturated);
}

TEST(Stability, AThroughputOrLatencyTrendIsUnstable) {
  const auto falling = series(20, [](std::size_t i) {
    return std::tuple{100 - 2.0 * static_cast<double>(i), 10.0, 50.0, 8.0};
  });
  const auto v = stability(falling, StabilityRule{});
  EXPECT_EQ(v.state, Steadiness::Unstable) << v.reason;
  // A series that falls all along never settles: its warm-up would run past half the run.
  EXPECT_THAT(v.reason, HasSubstr("not settled"));
  // A fall in the second half of a flat run: no warm-up explains it.
  const auto dip = series(30, [](std::size_t i) {
    const double k = static_cast<double>(i);
    return std::tuple{i < 18 ? 100.0 : 100 - 2.5 * (k - 17), 10.0, 50.0, 8.0};
  });
  const auto d = stability(dip, StabilityRule{});
  EXPECT_EQ(d.state, Steadiness::Unstable) << d.reason;
  // A trend smaller than the tolerance is no instability, however significant.
  const auto slight = series(20, [](std::size_t i) {
    return std::tuple{100 - 0.2 * static_cast<double>(i), 10.0, 50.0, 8.0};
  });
  EXPECT_EQ(stability(slight, StabilityRule{}).state, Steadiness::Stable);
}

TEST(Stability, AStartUpRampIsLeftOutByTheWarmUpRule) {
  // Four windows of ramp, then flat: MSER drops the ramp, and what is left is stable.
  Noise noise{Rng(4, "stability-test")};
  const auto w = series(20, [&](std::size_t i) {
    const double tp = i < 4 ? 25.0 * static_cast<double>(i + 1) : 100 * noise(0.05);
    return std::tuple{tp, i < 4 ? 30.0 : 10.0, 50.0, 8.0};
  });
  const auto v = stability(w, StabilityRule{});
  EXPECT_EQ(v.state, Steadiness::Stable) << v.reason;
  EXPECT_GE(v.warmup_windows, 3U);
  EXPECT_LE(v.warmup_windows, 5U);
  EXPECT_EQ(v.steady_start_ns, static_cast<TimeNs>(v.warmup_windows) * 1000 * kMs);
  // A ramp that lasts past half the run: not settled.
  const auto long_ramp = series(24, [](std::size_t i) {
    return std::tuple{10.0 * static_cast<double>(i + 1), 10.0, 50.0, 8.0};
  });
  EXPECT_EQ(stability(long_ramp, StabilityRule{}).state, Steadiness::Unstable);
}

TEST(Stability, TooFewWindowsAndTheDrainAreNotJudged) {
  auto w = series(14, [](std::size_t) { return std::tuple{100.0, 10.0, 50.0, 8.0}; });
  EXPECT_EQ(stability(w, StabilityRule{}).state, Steadiness::Stable);
  for (std::size_t i = 8; i < w.size(); ++i) w[i].sending = false;  // the drain
  const auto v = stability(w, StabilityRule{});
  EXPECT_EQ(v.state, Steadiness::TooShort) << v.reason;
  EXPECT_EQ(v.judged_windows, 8U);
  EXPECT_FALSE(v.stable);
  // Five windows drifting all along: a trend test that short cannot see it, so it is too
  // short, never stable.
  const auto drifting = series(5, [](std::size_t i) {
    return std::tuple{100.0 - 10.0 * static_cast<double>(i), 10.0, 50.0, 8.0};
  });
  EXPECT_EQ(stability(drifting, StabilityRule{}).state, Steadiness::TooShort);
}

TEST(Stability, AStandingQueueAtTheEngineIsSaturated) {
  const auto w = series(12, [](std::size_t) { return std::tuple{100.0, 10.0, 50.0, 64.0}; });
  std::vector<EngineSample> engine;
  for (std::size_t i = 0; i < 12; ++i) {
    engine.push_back(
        {.t_ns = static_cast<TimeNs>(i) * 1000 * kMs + 500 * kMs, .running = 16, .waiting = 48});
  }
  EXPECT_EQ(stability(w, StabilityRule{}).state, Steadiness::Stable);
  const auto v = stability(w, engine, StabilityRule{});
  EXPECT_EQ(v.state, Steadiness::Saturated) << v.reason;
  EXPECT_THAT(v.reason, HasSubstr("standing queue"));
  // Late scrapes are left out: nothing observed, the client's view alone.
  for (auto& e : engine) e.late = true;
  EXPECT_EQ(stability(w, engine, StabilityRule{}).state, Steadiness::Stable);
}

TEST(TtftModel, ExplainsTtftByThePromptLength) {
  std::vector<std::pair<double, double>> points;
  for (int i = 1; i <= 50; ++i) points.emplace_back(100.0 * i, 20 + 0.5 * i * 100);
  const TtftModel m = fit_ttft_model(points);
  EXPECT_NEAR(m.slope_ms_per_token, 0.5, 1e-9);
  EXPECT_NEAR(m.intercept_ms, 20, 1e-9);
  EXPECT_NEAR(m.expected_ms(4000), 2020, 1e-6);
  // All one length: the median TTFT.
  const TtftModel flat = fit_ttft_model({{10, 5}, {10, 7}, {10, 6}});
  EXPECT_DOUBLE_EQ(flat.slope_ms_per_token, 0);
  EXPECT_DOUBLE_EQ(flat.expected_ms(10), 6);
}

}  // namespace
}  // namespace llmbench::analysis
