// Per-turn figures of a multi-turn run (metrics/turns.hpp).

#include "llmbench/metrics/turns.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace llmbench::metrics {
namespace {

/// A completed record of `turn` whose first output arrives `ttft_ms` after it was sent.
RequestRecord turn_record(std::int64_t turn, double ttft_ms, std::int64_t input,
                          std::int64_t cached = -1) {
  RequestRecord r;
  r.turn = turn;
  r.conversation_id = 0;
  r.scheduled_ns = r.slot_ns = r.sent_ns = 1'000'000;
  const auto first = r.sent_ns + static_cast<TimeNs>(ttft_ms * 1e6);
  r.chunks = {Chunk{first, 1, 4, Channel::Answer}, Chunk{first + 1'000'000, 1, 4, Channel::Answer}};
  r.done_ns = first + 2'000'000;
  r.http_status = 200;
  r.input_tokens = input;
  r.output_tokens = 2;
  r.cached_tokens = cached;
  return r;
}

TEST(SummarizeTurns, GroupsByTurnWithNumpyStatistics) {
  std::vector<RequestRecord> records;
  records.push_back(turn_record(1, 10, 100));
  records.push_back(turn_record(1, 20, 120));
  records.push_back(turn_record(1, 60, 140));
  records.push_back(turn_record(2, 5, 300, 96));
  records.push_back(turn_record(2, 7, 310));  // no cached count reported
  auto failed = turn_record(2, 1, 999, 999);
  failed.error_kind = ErrorKind::Http5xx;
  records.push_back(failed);
  auto warm = turn_record(1, 1000, 5);
  warm.warmup = true;
  records.push_back(warm);
  records.push_back(turn_record(-1, 1000, 5));  // a single-turn record: not a turn

  const auto turns = summarize_turns(records);
  ASSERT_EQ(turns.size(), 2U);
  EXPECT_EQ(turns[0].turn, 1);
  EXPECT_EQ(turns[0].count, 3U);
  EXPECT_EQ(turns[0].failed, 0U);
  EXPECT_DOUBLE_EQ(turns[0].ttft_ms.mean, 30.0);
  EXPECT_DOUBLE_EQ(turns[0].ttft_ms.median, 20.0);
  // numpy.percentile([10, 20, 60], 99) = 20 + (60 - 20) * 0.98
  EXPECT_DOUBLE_EQ(turns[0].p99_ttft_ms, 59.2);
  EXPECT_DOUBLE_EQ(turns[0].mean_input_tokens, 120.0);
  EXPECT_TRUE(std::isnan(turns[0].mean_cached_tokens));
  EXPECT_EQ(turns[0].cached_reported, 0U);

  EXPECT_EQ(turns[1].turn, 2);
  EXPECT_EQ(turns[1].count, 2U);
  EXPECT_EQ(turns[1].failed, 1U);
  EXPECT_DOUBLE_EQ(turns[1].ttft_ms.median, 6.0);
  EXPECT_DOUBLE_EQ(turns[1].mean_input_tokens, 305.0);
  EXPECT_DOUBLE_EQ(turns[1].mean_cached_tokens, 96.0);
  EXPECT_EQ(turns[1].cached_reported, 1U);
  EXPECT_EQ(turns, summarize_turns(records));  // NaN fields compare equal
}

TEST(SummarizeTurns, SingleTurnRunHasNone) {
  EXPECT_TRUE(summarize_turns({turn_record(-1, 5, 5), turn_record(-1, 6, 5)}).empty());
}

}  // namespace
}  // namespace llmbench::metrics
