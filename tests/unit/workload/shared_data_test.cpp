// Every dataset kind loaded from the real files in ../shared/data (see its SOURCES.md). Skipped
// when that folder is absent.

#include "shared_data.hpp"

#include "llmbench/core/text.hpp"
#include "llmbench/workload/dataset.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

namespace llmbench::workload {
namespace {

class SharedData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::shared_data_dir();
    if (dir_.empty()) {
      LLMBENCH_SHARED_DATA_MISSING() << "../shared/data not found";
    }
  }
  [[nodiscard]] std::string file(const std::string& relative) const {
    return (dir_ / relative).string();
  }

  std::filesystem::path dir_;
};

std::set<std::string> ids_of(const std::vector<Sample>& samples) {
  std::set<std::string> ids;
  for (const auto& s : samples) {
    ids.insert(s.source_id);
  }
  return ids;
}

TEST_F(SharedData, ShareGpt500And1000) {
  DatasetOptions o;
  o.kind = DatasetKind::ShareGpt;
  o.path = file("prompts/sharegpt/ShareGPT_V3_filtered_500.json");
  o.num_prompts = 500;
  const auto s500 = load_samples(o);
  ASSERT_EQ(s500.size(), 500U);
  EXPECT_EQ(ids_of(s500).size(), 500U);  // every conversation has a human turn
  const auto first = std::find_if(s500.begin(), s500.end(), [](const Sample& s) {
    return s.source_id == "sharegpt:fzcoUcK_0";
  });
  ASSERT_NE(first, s500.end());
  EXPECT_EQ(first->prompt,
            "How to stop automatic updates from the WSUS Server to a target machine");
  EXPECT_EQ(first->prompt_len, 18);   // 70 bytes
  EXPECT_EQ(first->output_len, 256);  // no replies in the filtered file

  o.path = file("prompts/sharegpt/ShareGPT_V3_filtered_1000.json");
  o.num_prompts = 1000;
  o.output_len = 128;
  const auto s1000 = load_samples(o);
  EXPECT_EQ(ids_of(s1000).size(), 1000U);
  EXPECT_TRUE(ids_of(s1000).count("sharegpt:wc1OQ5t_9"));
  for (const auto& s : s1000) {
    ASSERT_EQ(s.output_len, 128);
    ASSERT_FALSE(s.prompt.empty());
  }
}

TEST_F(SharedData, MtBench) {
  DatasetOptions o;
  o.kind = DatasetKind::MtBench;
  o.path = file("prompts/mt_bench/question.jsonl");
  o.num_prompts = 80;
  const auto s = load_samples(o);
  EXPECT_EQ(ids_of(s).size(), 80U);
  const auto q82 =
      std::find_if(s.begin(), s.end(), [](const Sample& x) { return x.source_id == "mtbench:82"; });
  ASSERT_NE(q82, s.end());
  EXPECT_TRUE(q82->prompt.starts_with("Draft a professional email seeking your supervisor's"));
}

TEST_F(SharedData, CustomJsonlFromArenaHard) {
  // Arena-Hard's question.jsonl has a "prompt" field on every line: a valid custom dataset.
  DatasetOptions o;
  o.kind = DatasetKind::Custom;
  o.path = file("prompts/arena_hard/v0.1/question.jsonl");
  o.num_prompts = 500;
  const auto s = load_samples(o);
  EXPECT_EQ(ids_of(s).size(), 500U);
  EXPECT_TRUE(ids_of(s).count("line 500"));
  const auto l1 =
      std::find_if(s.begin(), s.end(), [](const Sample& x) { return x.source_id == "line 1"; });
  ASSERT_NE(l1, s.end());
  EXPECT_EQ(l1->prompt, "Use ABC notation to write a melody in the style of a folk tune.");
  EXPECT_EQ(l1->output_len, 256);
}

TEST_F(SharedData, SonnetFromLlmperfPoem) {
  DatasetOptions o;
  o.kind = DatasetKind::Sonnet;
  o.path = file("prompts/sonnet/llmperf_sonnet.txt");
  o.num_prompts = 20;
  for (const auto& s : load_samples(o)) {
    EXPECT_TRUE(
        s.prompt.starts_with("Pick as many lines as you can from these poem lines:\n"
                             "Shall I compare thee to a summer's day?\n"
                             "Thou art more lovely and more temperate:\n"));
    EXPECT_LE(s.prompt_len, 550);
    EXPECT_EQ(s.prompt_len, estimate_text_tokens(s.prompt));
  }
}

TEST_F(SharedData, RandomFromGutenbergAndEssayFolder) {
  DatasetOptions o;
  o.kind = DatasetKind::Random;
  o.path = file("long_context/gutenberg/01_frankenstein.txt");
  o.num_prompts = 50;
  o.random_input_len = 2000;
  o.random_output_len = 100;
  o.random_range_ratio = 0.2;
  o.random_prefix_len = 100;
  const auto s = load_samples(o);
  ASSERT_EQ(s.size(), 50U);
  const std::string prefix = s[0].prompt.substr(0, s[0].prompt.find("\n\n", 350));
  for (const auto& x : s) {
    EXPECT_GE(x.prompt_len, 100 + 1600);
    EXPECT_LE(x.prompt_len, 100 + 2400);
    EXPECT_GE(estimate_text_tokens(x.prompt), x.prompt_len);
    EXPECT_LE(estimate_text_tokens(x.prompt), x.prompt_len + 10);
    EXPECT_TRUE(x.prompt.starts_with(prefix));
  }
  o.path = file("long_context/paul_graham_essays");
  o.random_prefix_len = 0;
  for (const auto& x : load_samples(o)) {
    EXPECT_GE(estimate_text_tokens(x.prompt), x.prompt_len);
  }
}

}  // namespace
}  // namespace llmbench::workload
