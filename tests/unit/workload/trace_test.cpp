// Trace readers, the replay window and trace samples (workload/trace.hpp, trace_samples.cpp).

#include "llmbench/workload/trace.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/workload/arrivals.hpp"
#include "llmbench/workload/dataset.hpp"
#include "llmbench/workload/detail/loaders.hpp"

#include <gtest/gtest.h>

#include "../tokenizer/test_data.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"
#include <algorithm>
#include <functional>
#include <string>

namespace llmbench::workload {
namespace {

constexpr TimeNs kMs = 1'000'000;
constexpr TimeNs kS = 1'000'000'000;

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Exception& e) {
    return e.what();
  }
  return "";
}

const char* const kAzure =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2023-11-16 18:15:46.6805900,374,44\n"
    "2023-11-16 18:15:50.9951690,396,109\n"
    "2023-11-16 18:16:01.0000000,879,55\n";

TEST(TraceParse, AzureTimesAreNanosecondsAndLengthsPerRow) {
  EXPECT_EQ(detect_trace_format(kAzure, "a.csv"), TraceFormat::Azure);
  const auto rows = parse_trace(kAzure, "a.csv", TraceFormat::Azure);
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_EQ(rows[1].time_ns - rows[0].time_ns, 4'314'579'000);  // 50.9951690 - 46.6805900
  EXPECT_EQ(rows[2].time_ns - rows[0].time_ns, 14'319'410'000);
  EXPECT_EQ(rows[0].input_len, 374);
  EXPECT_EQ(rows[2].output_len, 55);
  EXPECT_EQ(rows[2].line, 4);
  EXPECT_TRUE(rows[0].hash_ids.empty());
}

TEST(TraceParse, AzureAcrossMidnightAndMonthEnd) {
  const auto rows = parse_trace(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-02-28 23:59:59.5,1,1\n2023-03-01 "
      "00:00:00.25,1,1\n",
      "a.csv", TraceFormat::Azure);
  EXPECT_EQ(rows[1].time_ns - rows[0].time_ns, 750 * kMs);
}

TEST(TraceParse, MalformedRowsNameTheFileAndLine) {
  EXPECT_NE(error_of([] {
              parse_trace(
                  "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,374,44\n"
                  "2023-11-16 18:15:47,x,44\n",
                  "conv.csv", TraceFormat::Azure);
            }).find("conv.csv: line 3: ContextTokens must be a positive integer, got \"x\""),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_trace("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15,1,1\n",
                          "conv.csv", TraceFormat::Azure);
            }).find("line 2: TIMESTAMP \"2023-11-16 18:15\""),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_trace("TIMESTAMP,ContextTokens\n2023-11-16 18:15:00,1\n", "c.csv",
                          TraceFormat::Azure);
            }).find("line 1: the header has no \"GeneratedTokens\" column"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_trace(
                  "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:09,1,1\n"
                  "2023-11-16 18:15:08,1,1\n",
                  "c.csv", TraceFormat::Azure);
            }).find("line 3: time goes back from line 2"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_trace(
                  "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 2, "
                  "\"hash_ids\": [0]}\n\n{\"timestamp\": 1, \"input_length\": 5, "
                  "\"output_length\": 2, \"hash_ids\": [\"a\"]}\n",
                  "m.jsonl", TraceFormat::Mooncake);
            }).find("m.jsonl: line 3: \"hash_ids\" must hold integers >= 0"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_trace("{\"timestamp\": 0,\n", "m.jsonl", TraceFormat::Mooncake);
            }).find("m.jsonl: line 1: not valid JSON"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              detect_trace_format("a,b,c\n1,2,3\n", "x.csv");
            }).find("x.csv: cannot tell the trace format from line 1"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              (void)parse_trace_format("splitwise");
            }).find("valid: azure, mooncake, burstgpt"),
            std::string::npos);
}

TEST(TraceParse, MooncakeHashIdsAndMilliseconds) {
  const std::string text =
      "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1]}\n"
      "{\"timestamp\": 3000, \"input_length\": 100, \"output_length\": 7, \"hash_ids\": [0]}\n";
  EXPECT_EQ(detect_trace_format(text, "m"), TraceFormat::Mooncake);
  const auto rows = parse_trace(text, "m", TraceFormat::Mooncake);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[1].time_ns, 3 * kS);
  EXPECT_EQ(rows[0].hash_ids, (std::vector<std::uint64_t>{0, 1}));
  EXPECT_EQ(rows[1].output_len, 7);
}

TEST(TraceParse, BurstGptSkipsFailedRequests) {
  const std::string text =
      "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
      "5,ChatGPT,472,18,490,Conversation log\n"
      "45,ChatGPT,1087,0,1087,Conversation log\n"
      "118.5,GPT-4,417,276,693,API log\n";
  EXPECT_EQ(detect_trace_format(text, "b"), TraceFormat::BurstGpt);
  const auto rows = parse_trace(text, "b", TraceFormat::BurstGpt);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[1].time_ns, 118'500 * kMs);
  EXPECT_EQ(rows[1].input_len, 417);
  EXPECT_EQ(rows[1].output_len, 276);
  EXPECT_EQ(rows[1].line, 4);
}

std::vector<TraceRow> rows_at(const std::vector<TimeNs>& times) {
  std::vector<TraceRow> rows;
  for (std::size_t i = 0; i < times.size(); ++i) {
    TraceRow r;
    r.time_ns = times[i];
    r.input_len = 10;
    r.output_len = 1;
    r.line = static_cast<std::int64_t>(i) + 1;
    rows.push_back(r);
  }
  return rows;
}

TEST(TraceWindow, SpeedupAndWindowRebaseToTheFirstReplayedRow) {
  const auto rows = rows_at({100 * kS, 101 * kS, 105 * kS, 110 * kS, 130 * kS});
  TraceOptions o;
  o.speedup = 10;
  o.start_s = 1;
  o.duration_s = 10;  // trace seconds [1, 11) after the first row: 101, 105, 110
  const auto w = replay_window(rows, o);
  ASSERT_EQ(w.size(), 3U);
  EXPECT_EQ(w[0].time_ns, 0);
  EXPECT_EQ(w[1].time_ns, 400 * kMs);
  EXPECT_EQ(w[2].time_ns, 900 * kMs);
  EXPECT_EQ(w[2].line, 4);
  o.start_s = 50;
  EXPECT_NE(error_of([&] { replay_window(rows, o); }).find("no trace row in [50 s, 60 s)"),
            std::string::npos);
  o.start_s = 0;
  o.speedup = 0;
  EXPECT_NE(error_of([&] { replay_window(rows, o); }).find("--trace-speedup"), std::string::npos);
}

TEST(TraceWindow, SpreadFillsEachTickEvenly) {
  auto rows = rows_at({0, 0, 0, 3 * kS, 6 * kS, 6 * kS});
  EXPECT_EQ(trace_tick_ns(rows), 3 * kS);
  spread_ticks(rows);
  const std::vector<TimeNs> want = {0, 1 * kS, 2 * kS, 3 * kS, 6 * kS, 7'500 * kMs};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].time_ns, want[i]) << i;
  }
}

TEST(TraceSamples, ScheduleAndLengthsWithoutText) {
  testing::TempDir dir;
  const auto path = dir.write("t.csv", kAzure);
  DatasetOptions o;
  o.kind = DatasetKind::Trace;
  o.path = path;
  o.num_prompts = kMaxNumPrompts;
  o.random_text = false;
  o.trace.speedup = 2;
  const auto samples = load_samples(o);
  ASSERT_EQ(samples.size(), 3U);
  EXPECT_EQ(samples[1].arrival_ns, 2'157'289'500);
  EXPECT_EQ(samples[2].prompt_len, 879);
  EXPECT_EQ(samples[2].output_len, 55);
  EXPECT_EQ(samples[2].source_id, "trace:4");
  EXPECT_EQ(dataset_arrivals(samples, 1, 5),
            (std::vector<TimeNs>{0, samples[2].arrival_ns - samples[1].arrival_ns}));
  o.trace.keep_schedule = false;  // --request-rate: lengths only
  EXPECT_EQ(load_samples(o)[1].arrival_ns, -1);
  EXPECT_TRUE(dataset_arrivals(load_samples(o), 0, 3).empty());
  o.num_prompts = 2;
  EXPECT_EQ(load_samples(o).size(), 2U);
  o.path = path + ".zst";
  EXPECT_NE(error_of([&] { load_samples(o); }).find("zstd-compressed"), std::string::npos);
}

class TraceText : public ::testing::Test {
 protected:
  void SetUp() override {
    tok_ = tokenizer::testing::shared_tokenizer("deepseek-v3", "tokenizer.json");
    if (tok_ == nullptr) {
      LLMBENCH_SHARED_DATA_MISSING() << "../shared/data/tokenizers/deepseek-v3 not found";
    }
  }
  DatasetOptions options(const std::string& path) const {
    DatasetOptions o;
    o.kind = DatasetKind::Trace;
    o.path = path;
    o.num_prompts = kMaxNumPrompts;
    o.seed = 3;
    o.tokenizer = tok_;
    o.data_dir = testing::bundled_data_dir();
    return o;
  }
  const tokenizer::Tokenizer* tok_ = nullptr;
};

TEST_F(TraceText, AzurePromptsHaveExactlyTheRowsInputLength) {
  testing::TempDir dir;
  const auto samples = load_samples(options(dir.write("t.csv", kAzure)));
  ASSERT_EQ(samples.size(), 3U);
  for (const auto& s : samples) {
    EXPECT_TRUE(s.prompt_len_exact);
    EXPECT_EQ(static_cast<std::int64_t>(tok_->encode(s.prompt, true)->size()), s.prompt_len);
  }
  EXPECT_EQ(samples[0].prompt_len, 374);
  EXPECT_EQ(samples[2].prompt_len, 879);
}

TEST_F(TraceText, EqualMooncakeHashIdsGiveEqualTokenBlocks) {
  // Rows 1 and 2 share blocks 0 and 1, row 3 shares block 0 only; row 2 ends inside block 2.
  testing::TempDir dir;
  const std::string text =
      "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 5, \"hash_ids\": [7, 8, 9]}\n"
      "{\"timestamp\": 0, \"input_length\": 1300, \"output_length\": 5, \"hash_ids\": [7, 8, 10]}\n"
      "{\"timestamp\": 10, \"input_length\": 1024, \"output_length\": 5, \"hash_ids\": [7, 11]}\n";
  const auto samples = load_samples(options(dir.write("m.jsonl", text)));
  ASSERT_EQ(samples.size(), 3U);
  std::vector<std::vector<tokenizer::TokenId>> ids;
  for (const auto& s : samples) {
    ids.push_back(*tok_->encode(s.prompt, true));
    EXPECT_EQ(static_cast<std::int64_t>(ids.back().size()), s.prompt_len) << s.source_id;
  }
  EXPECT_EQ(samples[1].block_ids, (std::vector<std::uint64_t>{7, 8, 10}));
  // Text tokens (after the BOS) [0, 1024) are blocks 7 and 8 in rows 1 and 2.
  EXPECT_TRUE(std::equal(ids[0].begin(), ids[0].begin() + 1025, ids[1].begin()));
  EXPECT_NE(ids[0][1025], ids[1][1025]);
  EXPECT_TRUE(std::equal(ids[0].begin(), ids[0].begin() + 513, ids[2].begin()));
  EXPECT_NE(ids[0][513], ids[2][513]);
}

}  // namespace
}  // namespace llmbench::workload
