#include "llmbench/metrics/token_runs.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/metrics/summary.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace llmbench::metrics {
namespace {

using ::testing::HasSubstr;

constexpr TimeNs kMs = 1'000'000;

RequestRecord completed(std::int64_t id, TimeNs sent_ns, TimeNs done_ns, std::int64_t tokens) {
  RequestRecord r;
  r.id = id;
  r.scheduled_ns = r.sent_ns = r.headers_ns = sent_ns;
  r.done_ns = done_ns;
  r.http_status = 200;
  r.output_tokens = r.output_tokens_local = tokens;
  r.input_tokens = r.prompt_len = 100 + id;
  return r;
}

TEST(TokenRuns, ExpandWritesOneChunkPerTokenInRunOrder) {
  TokenRuns t;
  t.grids = {{0, 10 * kMs, 20 * kMs, 30 * kMs}, {5 * kMs, 15 * kMs}};
  t.runs = {{1, 1, 0, 2}, {0, 0, 1, 2}, {0, 0, 3, 1}};
  std::vector<RequestRecord> records(2);
  expand_token_runs(t, records);
  ASSERT_EQ(records[0].chunks.size(), 3u);
  EXPECT_EQ(records[0].chunks[0].time_ns, 10 * kMs);
  EXPECT_EQ(records[0].chunks[1].time_ns, 20 * kMs);
  EXPECT_EQ(records[0].chunks[2].time_ns, 30 * kMs);
  ASSERT_EQ(records[1].chunks.size(), 2u);
  EXPECT_EQ(records[1].chunks[1].time_ns, 15 * kMs);
  for (const auto& c : records[0].chunks) {
    EXPECT_EQ(c.tokens, 1);
    EXPECT_EQ(c.bytes, 0);
    EXPECT_EQ(c.channel, Channel::Answer);
  }
}

TEST(TokenRuns, SummaryOfHandBuiltRunsEqualsTheSummaryOfTheirChunks) {
  // Request 0: tokens at 10, 20, 30 ms (grid 0), then after a break at 45 and 60 ms: ITLs 10,
  // 10, 15 (across the break), 15. Request 1: 5, 15, 40 ms on grid 1: ITLs 10, 25. Request 2
  // failed, request 3 is a warm-up, request 4 has one token and no usage (N from its runs).
  TokenRuns t;
  t.grids = {{0, 10 * kMs, 20 * kMs, 30 * kMs, 45 * kMs, 60 * kMs}, {5 * kMs, 15 * kMs, 40 * kMs}};
  t.runs = {{0, 0, 1, 3}, {1, 1, 0, 3}, {3, 0, 0, 2}, {4, 0, 2, 1}, {0, 0, 4, 2}};
  std::vector<RequestRecord> records{
      completed(0, 0, 61 * kMs, 5), completed(1, 2 * kMs, 41 * kMs, 3),
      completed(2, 1 * kMs, 9 * kMs, 0), completed(3, 0, 31 * kMs, 2),
      completed(4, 3 * kMs, 21 * kMs, -1)};
  records[2].error_kind = ErrorKind::Http5xx;
  records[2].http_status = 500;
  records[3].warmup = true;
  records[4].output_tokens_local = -1;
  SummaryOptions options;
  options.percentiles = {0, 25, 50, 90, 100};
  options.slo.ttft_ms = 9.5;
  const Summary compact = summarize(records, t, options);
  EXPECT_EQ(compact.itl_ms.count, 6u);
  EXPECT_EQ(compact.itl_ms.median, 12.5);  // 10 10 10 | 15 15 25
  EXPECT_DOUBLE_EQ(compact.itl_ms.mean, 85.0 / 6);
  EXPECT_EQ(compact.itl_ms.min, 10.0);
  EXPECT_EQ(compact.itl_ms.max, 25.0);
  EXPECT_EQ(compact.completed, 3u);
  EXPECT_EQ(compact.failed, 1u);
  EXPECT_EQ(compact.total_output_tokens, 5 + 3 + 1);
  EXPECT_EQ(compact.usage_missing, 1u);
  EXPECT_EQ(compact.good_requests, 1u);  // TTFT 10, 3 and 17 ms against 9.5 ms
  EXPECT_EQ(compact.max_output_tokens_per_s, 9.0);
  EXPECT_EQ(compact.tpot_ms.count, 2u);  // (60 − 10) / 4 and (40 − 5) / 2
  EXPECT_EQ(compact.tpot_ms.max, 17.5);
  auto expanded = records;
  expand_token_runs(t, expanded);
  EXPECT_TRUE(compact == summarize(expanded, options)) << "hand-built";
}

TEST(TokenRuns, SummaryEqualsTheSummaryOfTheirChunksOnRandomRuns) {
  // Large enough for describe's bucket selection (≥ 16,384 ITLs) and several of numpy's 8,192-
  // value blocks, with breaks between runs, two grids, ties, failures and warm-ups.
  std::uint64_t x = 777;
  const auto next = [&x](std::uint64_t bound) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (x >> 33) % bound;
  };
  for (int round = 0; round < 3; ++round) {
    TokenRuns t;
    t.grids.resize(2);
    for (auto& grid : t.grids) {
      TimeNs now = static_cast<TimeNs>(next(1000)) * 1000;
      for (int k = 0; k < 3000; ++k) {
        now += static_cast<TimeNs>(round == 2 ? 25 : 1 + next(60)) * 100'000;  // ties in round 2
        grid.push_back(now);
      }
    }
    std::vector<RequestRecord> records;
    for (std::size_t i = 0; i < 300; ++i) {
      const auto g = static_cast<std::uint32_t>(next(2));
      auto first = static_cast<std::int64_t>(next(2000));
      std::int64_t tokens = 0;
      const auto runs = 1 + next(3);
      for (std::uint64_t r = 0; r < runs && first < 2999; ++r) {
        const auto count =
            std::min<std::int64_t>(1 + static_cast<std::int64_t>(next(150)), 3000 - first);
        t.runs.push_back({i, g, first, count});
        tokens += count;
        first += count + static_cast<std::int64_t>(next(30));
      }
      const TimeNs sent = t.grids[g][0] - static_cast<TimeNs>(next(50)) * kMs;
      records.push_back(completed(static_cast<std::int64_t>(i), sent, t.grids[g].back(), tokens));
      if (i % 37 == 5) {
        records.back().warmup = true;
      }
      if (i % 41 == 7) {
        records.back().error_kind = ErrorKind::Timeout;
      }
      if (i % 11 == 3) {
        records.back().output_tokens = -1;
      }
    }
    // Runs of different requests interleave, as the simulator closes them.
    for (std::size_t k = 0; k + 7 < t.runs.size(); k += 7) std::swap(t.runs[k], t.runs[k + 7]);
    std::size_t tokens = 0;
    for (const auto& r : t.runs) tokens += static_cast<std::size_t>(r.count);
    ASSERT_GT(tokens, 20'000u);
    SummaryOptions options;
    options.percentiles = {0, 1, 50, 90, 99, 99.9, 100};
    options.slo.tpot_ms = 3.0;
    auto expanded = records;
    // Interleaving must not reorder one request's runs: expand in the same run order.
    expand_token_runs(t, expanded);
    EXPECT_TRUE(summarize(records, t, options) == summarize(expanded, options))
        << "round " << round;
  }
}

TEST(TokenRuns, BadRunsAndRecordsWithChunksAreNamed) {
  TokenRuns t;
  t.grids = {{0, 1, 2}};
  t.runs = {{0, 0, 0, 1}, {0, 0, 2, 2}};
  std::vector<RequestRecord> records(1);
  try {
    expand_token_runs(t, records);
    FAIL() << "a run past its grid was accepted";
  } catch (const Exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("run 1 (request 0, grid 0, first 2, count 2)"));
  }
  t.runs = {{3, 0, 0, 1}};
  EXPECT_THROW(summarize(records, t, SummaryOptions{}), Exception);
  t.runs = {{0, 1, 0, 1}};
  EXPECT_THROW(check_token_runs(t, 1), Exception);
  t.runs = {{0, 0, 0, 1}};
  records[0].chunks.push_back(Chunk{5, 1, 0, Channel::Answer});
  try {
    (void)summarize(records, t, SummaryOptions{});
    FAIL() << "a record with its own chunks was accepted";
  } catch (const Exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("record 0 (id 0) has 1 chunks"));
  }
}

}  // namespace
}  // namespace llmbench::metrics
