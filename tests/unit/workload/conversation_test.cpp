// Conversations for `--multi-turn` (docs/workloads.md "Conversations"): ShareGPT's human turns
// with the length of each reply, MT-Bench's two turns, the --max-turns cut, and the datasets
// that have no conversations.

#include "llmbench/core/error.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/workload/dataset.hpp"
#include "llmbench/workload/detail/loaders.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"
#include <algorithm>
#include <string>

namespace llmbench::workload {
namespace {

using testing::bundled_data_dir;
using testing::TempDir;

// a_0: three human turns, the first two answered (40 and 8 bytes), the third not; a system turn
// between the second reply and the third human turn. b_0: a reply before any human turn. c_0:
// two human turns in a row (the first has no reply).
constexpr std::string_view kConversations = R"([
  {"id": "a_0", "conversations": [
     {"from": "human", "value": "Hello there"},
     {"from": "gpt", "value": "0123456789012345678901234567890123456789"},
     {"from": "human", "value": "And then?"},
     {"from": "chatgpt", "value": "abcdefgh"},
     {"from": "system", "value": "be brief"},
     {"from": "human", "value": "Last one"}]},
  {"id": "b_0", "conversations": [
     {"from": "gpt", "value": "no human turn yet"},
     {"from": "user", "value": "Only question"},
     {"from": "gpt", "value": "0123456789ab"}]},
  {"id": "c_0", "conversations": [
     {"from": "human", "value": "one"},
     {"from": "human", "value": "two"},
     {"from": "gpt", "value": "0123"}]}
])";

TEST(Conversations, ShareGptKeepsEveryHumanTurnWithItsReplyLength) {
  const auto all = detail::parse_sharegpt(std::string(kConversations), "sg.json", -1, 100);
  ASSERT_EQ(all.size(), 3U);
  const auto& a = all[0];
  ASSERT_EQ(a.turns.size(), 3U);
  EXPECT_EQ(a.turns[0].content, "Hello there");
  EXPECT_EQ(a.turns[0].output_len, 10);  // 40 bytes / 4
  EXPECT_EQ(a.turns[1].content, "And then?");
  EXPECT_EQ(a.turns[1].output_len, 2);  // 8 bytes / 4
  EXPECT_EQ(a.turns[2].content, "Last one");
  EXPECT_EQ(a.turns[2].output_len, 256);  // no reply: the default
  // Turn 1 is also the sample's prompt, as in a single-turn run.
  EXPECT_EQ(a.prompt, "Hello there");
  EXPECT_EQ(a.output_len, 10);
  EXPECT_EQ(a.prompt_len, estimate_text_tokens("Hello there"));

  ASSERT_EQ(all[1].turns.size(), 1U);
  EXPECT_EQ(all[1].turns[0].content, "Only question");
  EXPECT_EQ(all[1].turns[0].output_len, 3);

  ASSERT_EQ(all[2].turns.size(), 2U);
  EXPECT_EQ(all[2].turns[0].content, "one");
  EXPECT_EQ(all[2].turns[0].output_len, 256);  // answered by a human turn: no reply
  EXPECT_EQ(all[2].turns[1].content, "two");
  EXPECT_EQ(all[2].turns[1].output_len, 1);
}

TEST(Conversations, MaxTurnsCutsAndOutputLenOverrides) {
  const auto cut = detail::parse_sharegpt(std::string(kConversations), "sg.json", -1, 2);
  ASSERT_EQ(cut[0].turns.size(), 2U);
  EXPECT_EQ(cut[0].turns[1].content, "And then?");
  EXPECT_EQ(cut[0].turns[1].output_len, 2);
  const auto fixed = detail::parse_sharegpt(std::string(kConversations), "sg.json", 50, 100);
  for (const auto& t : fixed[0].turns) EXPECT_EQ(t.output_len, 50);
}

TEST(Conversations, SingleTurnShareGptNeedsAReply) {
  const auto single = detail::parse_sharegpt(std::string(kConversations), "sg.json", -1);
  // c_0's first question is followed by another human turn: no reply, dropped as vLLM does.
  ASSERT_EQ(single.size(), 2U);
  for (const auto& s : single) EXPECT_TRUE(s.turns.empty());
  EXPECT_EQ(single[0].prompt, "Hello there");
  EXPECT_EQ(single[0].output_len, 10);
  EXPECT_EQ(single[1].prompt, "Only question");
  EXPECT_EQ(single[1].output_len, 3);
}

TEST(Conversations, MtBenchHasTwoTurns) {
  DatasetOptions options;  // MT-Bench, the bundled file
  options.data_dir = bundled_data_dir();
  options.num_prompts = 80;
  options.multi_turn = true;
  const auto samples = load_samples(options);
  ASSERT_EQ(samples.size(), 80U);
  for (const auto& s : samples) {
    ASSERT_EQ(s.turns.size(), 2U) << s.source_id;
    EXPECT_EQ(s.turns[0].content, s.prompt);
    EXPECT_EQ(s.turns[0].output_len, 256);
    EXPECT_EQ(s.turns[1].output_len, 256);
  }
  const auto q81 = std::find_if(samples.begin(), samples.end(),
                                [](const Sample& s) { return s.source_id == "mtbench:81"; });
  ASSERT_NE(q81, samples.end());
  EXPECT_TRUE(q81->turns[1].content.starts_with("Rewrite your previous response."));

  options.max_turns = 1;
  for (const auto& s : load_samples(options)) EXPECT_EQ(s.turns.size(), 1U);
  options.multi_turn = false;
  for (const auto& s : load_samples(options)) EXPECT_TRUE(s.turns.empty());
}

TEST(Conversations, MtBenchTurnMustBeAString) {
  EXPECT_THROW(
      detail::parse_mtbench("{\"question_id\": 1, \"turns\": [\"a\", 2]}\n", "q.jsonl", -1, 2),
      Exception);
  // Single-turn reads only the first turn, as before.
  EXPECT_EQ(
      detail::parse_mtbench("{\"question_id\": 1, \"turns\": [\"a\", 2]}\n", "q.jsonl", -1).size(),
      1U);
}

TEST(Conversations, OtherDatasetsAndNegativeMaxTurnsAreErrors) {
  DatasetOptions options;
  options.data_dir = bundled_data_dir();
  options.num_prompts = 4;
  options.multi_turn = true;
  options.kind = DatasetKind::Random;
  try {
    (void)load_samples(options);
    ADD_FAILURE() << "random with --multi-turn was accepted";
  } catch (const Exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--multi-turn"), std::string::npos) << what;
    EXPECT_NE(what.find("sharegpt, mtbench"), std::string::npos) << what;
  }
  options.kind = DatasetKind::MtBench;
  options.max_turns = -1;
  EXPECT_THROW((void)load_samples(options), Exception);
}

TEST(Conversations, ShareGptFileThroughLoadSamples) {
  TempDir dir;
  DatasetOptions options;
  options.kind = DatasetKind::ShareGpt;
  options.path = dir.write("sg.json", kConversations);
  options.num_prompts = 3;
  options.multi_turn = true;
  options.max_turns = 2;
  const auto samples = load_samples(options);
  ASSERT_EQ(samples.size(), 3U);
  std::size_t turns = 0;
  for (const auto& s : samples) turns += s.turns.size();
  EXPECT_EQ(turns, 5U);  // a_0 cut to 2, b_0 1, c_0 2
}

}  // namespace
}  // namespace llmbench::workload
