// Named prompt sets (workload/named_sets.cpp): the real files of ../shared/data, errors naming the
// file and line of a malformed entry, and long documents of exact length.

#include "llmbench/core/error.hpp"
#include "llmbench/workload/dataset.hpp"

#include <gtest/gtest.h>

#include "../tokenizer/test_data.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

namespace llmbench::workload {
namespace {

std::vector<Sample> all_of(DatasetKind kind, const std::string& path, std::int64_t n) {
  DatasetOptions o;
  o.kind = kind;
  o.path = path;
  o.num_prompts = n;
  return load_samples(o);
}

std::string error_of(DatasetKind kind, const std::string& path) {
  try {
    all_of(kind, path, 1);
  } catch (const Exception& e) {
    return e.what();
  }
  return "";
}

class NamedSets : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = testing::shared_data_dir();
    if (data_.empty()) {
      LLMBENCH_SHARED_DATA_MISSING() << "../shared/data not found";
    }
  }
  /// `rel` (compressed with `tool`) unpacked into the scratch folder.
  std::string unpacked(const std::string& rel, const std::string& tool, const std::string& name) {
    const std::string out = (std::filesystem::path(dir_.path()) / name).string();
    const std::string cmd = tool + " -dc '" + (data_ / rel).string() + "' > '" + out + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return out;
  }
  std::filesystem::path data_;
  testing::TempDir dir_;
};

TEST_F(NamedSets, RealFilesLoadEveryEntry) {
  const auto belle =
      all_of(DatasetKind::Belle, (data_ / "prompts_zh/belle_eval/eval_set.json").string(), 1000);
  EXPECT_EQ(belle.size(), 1000U);
  // Distinct entries: the whole set was read (a shuffle of 1,000 of them).
  std::set<std::string> ids;
  for (const auto& s : belle) ids.insert(s.source_id);
  EXPECT_EQ(ids.size(), 1000U);
  const auto seeds = all_of(DatasetKind::Belle,
                            (data_ / "prompts_zh/belle_eval/zh_seed_tasks.json").string(), 175);
  std::set<std::string> seed_ids;
  for (const auto& s : seeds) seed_ids.insert(s.source_id);
  EXPECT_EQ(seed_ids.size(), 175U);
  const auto cmmlu = all_of(DatasetKind::Cmmlu, (data_ / "prompts_zh/cmmlu_test").string(), 1085);
  std::set<std::string> cmmlu_ids;
  for (const auto& s : cmmlu) {
    cmmlu_ids.insert(s.source_id);
    EXPECT_NE(s.prompt.find("\nD. "), std::string::npos);
  }
  EXPECT_EQ(cmmlu_ids.size(), 1085U);  // 6 subjects (DATASETS.md)
  const auto arena = all_of(DatasetKind::ArenaHard,
                            (data_ / "prompts/arena_hard/v0.1/question.jsonl").string(), 500);
  std::set<std::string> arena_ids;
  for (const auto& s : arena) arena_ids.insert(s.source_id);
  EXPECT_EQ(arena_ids.size(), 500U);
  const auto humaneval =
      all_of(DatasetKind::HumanEval,
             unpacked("prompts/humaneval/HumanEval.jsonl.gz", "gzip", "he.jsonl"), 164);
  std::set<std::string> he_ids;
  for (const auto& s : humaneval) he_ids.insert(s.source_id);
  EXPECT_EQ(he_ids.size(), 164U);
  EXPECT_TRUE(he_ids.count("HumanEval/0") == 1);
  const auto alpaca =
      all_of(DatasetKind::AlpacaEval,
             unpacked("prompts/alpaca_eval/model_outputs_Meta-Llama-3.1-8B-Instruct-Turbo.json.zst",
                      "zstd", "alpaca.json"),
             805);
  std::set<std::string> alpaca_ids;
  std::int64_t long_outputs = 0;
  for (const auto& s : alpaca) {
    alpaca_ids.insert(s.source_id);
    long_outputs += s.output_len > 256 ? 1 : 0;  // lengths come from the real outputs
  }
  EXPECT_EQ(alpaca_ids.size(), 805U);
  EXPECT_GT(long_outputs, 300);
}

TEST(NamedSetErrors, MalformedEntriesNameTheFileAndLine) {
  testing::TempDir dir;
  const auto has = [](const std::string& what, const std::string& want) {
    EXPECT_NE(what.find(want), std::string::npos) << what;
  };
  has(error_of(DatasetKind::Belle,
               dir.write("b.json", "{\"question\": \"q\"}\n{\"question\": 3}\n")),
      "b.json: line 2: \"question\" must be a non-empty string");
  has(error_of(DatasetKind::Belle,
               dir.write("s.json", "{\"instruction\": \"i\", \"instances\": 4}\n")),
      "s.json: line 1: \"instances\" must be an array of objects");
  has(error_of(DatasetKind::ArenaHard,
               dir.write("a.jsonl", "{\"uid\": \"x\", \"prompt\": \"p\"}\n\n{\"uid\": \"y\"}\n")),
      "a.jsonl: line 3: \"prompt\" must be a non-empty string");
  has(error_of(DatasetKind::HumanEval,
               dir.write("h.jsonl", "{\"prompt\": \"def f():\"}\n{\"prompt\": \n")),
      "h.jsonl: line 2: not valid JSON");
  has(error_of(DatasetKind::AlpacaEval,
               dir.write("e.json", "[\n  {\"instruction\": \"a\"},\n  {\"output\": \"b\"}\n]\n")),
      "e.json: line 3: \"instruction\" must be a non-empty string");
  has(error_of(
          DatasetKind::AlpacaEval,
          dir.write("f.json", "[\n  {\"instruction\": \"a\"},\n  {\"instruction\" \"b\"}\n]\n")),
      "f.json: line 3: not valid JSON");
  has(error_of(DatasetKind::Cmmlu,
               dir.write("c.csv",
                         ",Question,A,B,C,D,Answer\n0,\"q, with comma\",a,b,c,d,A\n1,q2,a,b,c\n")),
      "c.csv: line 3: 5 fields, the header has 7");
  has(error_of(
          DatasetKind::Cmmlu,
          dir.write("d.csv",
                    ",Question,A,B,C,D,Answer\n0,\"multi\nline\",a,b,c,d,A\n1,\"open,a,b,c,d,A\n")),
      "d.csv: line 4: a quoted field is not closed");
  has(error_of(DatasetKind::HumanEval, "/x/HumanEval.jsonl.gz"), "is compressed: unpack it first");
  const testing::TempDir empty;
  has(error_of(DatasetKind::Cmmlu, empty.path()), "folder has no .csv file");
}

TEST(NamedSetErrors, CmmluQuotedFieldsKeepCommasAndNewlines) {
  testing::TempDir dir;
  const auto s = all_of(
      DatasetKind::Cmmlu,
      dir.write("c.csv", ",Question,A,B,C,D,Answer\n0,\"q, \"\"x\"\"\nmore\",a,b,c,d,A\n"), 1);
  ASSERT_EQ(s.size(), 1U);
  EXPECT_EQ(s[0].prompt, "q, \"x\"\nmore\nA. a\nB. b\nC. c\nD. d\n答案：");
}

TEST(LongDocument, PromptsOfExactly32KAnd128KTokens) {
  const auto* tok = tokenizer::testing::shared_tokenizer("deepseek-v3", "tokenizer.json");
  const auto data = testing::shared_data_dir();
  if (tok == nullptr || data.empty()) {
    LLMBENCH_SHARED_DATA_MISSING() << "../shared/data not found";
  }
  for (const std::int64_t len : {32768, 131072}) {
    DatasetOptions o;
    o.kind = DatasetKind::LongDocument;
    o.path = (data / "long_context/paul_graham_essays").string();
    o.num_prompts = 1;
    o.tokenizer = tok;
    o.long_doc_input_len = len;
    const auto s = load_samples(o);
    ASSERT_EQ(s.size(), 1U);
    EXPECT_EQ(s[0].prompt_len, len);
    EXPECT_EQ(static_cast<std::int64_t>(tok->encode(s[0].prompt, true)->size()), len);
  }
}

}  // namespace
}  // namespace llmbench::workload
