// The per-turn report of a multi-turn run (report/turns.hpp): when the prefix-cache finding is
// said, its numbers, the by_turn JSON and the console table.

#include "llmbench/report/turns.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace llmbench::report {
namespace {

using metrics::RequestRecord;

RequestRecord turn_record(std::int64_t turn, double ttft_ms, std::int64_t input,
                          std::int64_t cached) {
  RequestRecord r;
  r.turn = turn;
  r.conversation_id = 0;
  r.scheduled_ns = r.slot_ns = r.sent_ns = 0;
  const auto first = static_cast<TimeNs>(ttft_ms * 1e6);
  r.chunks = {metrics::Chunk{first, 1, 4, metrics::Channel::Answer}};
  r.done_ns = first + 1;
  r.http_status = 200;
  r.input_tokens = input;
  r.output_tokens = 1;
  r.cached_tokens = cached;
  return r;
}

/// `n` conversations: turn 1 TTFT 100 + i ms at 100 input tokens, turn 2 `t2` + i ms at 250
/// input tokens with `cached2` cached.
std::vector<RequestRecord> two_turns(int n, double t2, std::int64_t cached2) {
  std::vector<RequestRecord> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(turn_record(1, 100 + i, 100, 0));
    out.push_back(turn_record(2, t2 + i, 250, cached2));
  }
  return out;
}

TEST(TurnFinding, SaidWhenTurnTwoIsLowerBeyondTheInterval) {
  const auto records = two_turns(20, 50, 150);
  const auto by_turn = metrics::summarize_turns(records);
  const auto f = turn_finding(records, by_turn);
  ASSERT_TRUE(f.evaluated);
  EXPECT_TRUE(f.said);
  // Medians 109.5 and 59.5 ms.
  EXPECT_NEAR(f.ttft_change_pct, (59.5 / 109.5 - 1) * 100, 1e-9);
  EXPECT_DOUBLE_EQ(f.input_change_pct, 150.0);
  EXPECT_DOUBLE_EQ(f.cached_pct, 60.0);
  EXPECT_LT(f.ci_high_ms, 0);
  EXPECT_LE(f.ci_low_ms, -50.0 + 1e-9);  // the interval holds the true difference, -50 ms
  EXPECT_GE(f.ci_high_ms, -50.0 - 1e-9);
  EXPECT_NE(f.text.find("turn 2 TTFT is 46% lower than turn 1"), std::string::npos) << f.text;
  EXPECT_NE(f.text.find("+150% input tokens"), std::string::npos) << f.text;
  EXPECT_NE(f.text.find("prefix cache; 60% of turn-2 input tokens cached"), std::string::npos)
      << f.text;
  const auto j = turn_finding_json(f);
  EXPECT_EQ(j.at("said"), true);
  EXPECT_DOUBLE_EQ(j.at("cached_pct").get<double>(), 60.0);
}

TEST(TurnFinding, NotSaidWithinNoiseOrWithTooFewRequests) {
  // The same TTFTs in both turns: the interval holds 0.
  auto records = two_turns(20, 100, -1);
  auto f = turn_finding(records, metrics::summarize_turns(records));
  ASSERT_TRUE(f.evaluated);
  EXPECT_FALSE(f.said);
  EXPECT_NE(f.text.find("not lower than turn 1 beyond noise"), std::string::npos) << f.text;
  EXPECT_LT(f.cached_pct, 0);  // not reported
  EXPECT_TRUE(turn_finding_json(f).at("cached_pct").is_null());
  // Nine conversations are too few.
  records = two_turns(9, 10, 150);
  f = turn_finding(records, metrics::summarize_turns(records));
  EXPECT_FALSE(f.evaluated);
  EXPECT_FALSE(f.said);
  EXPECT_NE(f.text.find("9 completed turn-1 and 9 turn-2"), std::string::npos) << f.text;
  EXPECT_FALSE(turn_finding_json(f).contains("ttft_change_pct"));
}

TEST(ByTurn, JsonRowsAndConsoleTable) {
  const auto records = two_turns(20, 50, 150);
  const auto by_turn = metrics::summarize_turns(records);
  const auto rows = by_turn_json(by_turn);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].at("turn"), 1);
  EXPECT_EQ(rows[0].at("count"), 20);
  EXPECT_DOUBLE_EQ(rows[0].at("median_ttft_ms").get<double>(), 109.5);
  EXPECT_DOUBLE_EQ(rows[1].at("mean_ttft_ms").get<double>(), 59.5);
  EXPECT_DOUBLE_EQ(rows[1].at("mean_input_tokens").get<double>(), 250.0);
  EXPECT_DOUBLE_EQ(rows[1].at("mean_cached_tokens").get<double>(), 150.0);
  const auto none = by_turn_json(metrics::summarize_turns(two_turns(2, 5, -1)));
  EXPECT_TRUE(none[1].at("mean_cached_tokens").is_null());

  const std::string text = turns_console_text(by_turn, turn_finding(records, by_turn));
  EXPECT_NE(text.find("TTFT by Turn"), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), 50U);  // the 50-wide header of the console table
  EXPECT_NE(text.find("   2     20     59.50     59.50"), std::string::npos) << text;
  EXPECT_NE(text.find("46% lower"), std::string::npos) << text;
  EXPECT_EQ(turns_console_text({}, TurnFinding{}), "");
}

}  // namespace
}  // namespace llmbench::report
