#include "llmbench/workload/dataset.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/workload/detail/loaders.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"
#include <algorithm>
#include <functional>
#include <initializer_list>
#include <set>
#include <string>

namespace llmbench::workload {
namespace {

using testing::bundled_data_dir;
using testing::TempDir;

/// Runs `fn`, expects an `Exception`, and checks its message contains every part.
void expect_error(const std::function<void()>& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "no exception thrown";
  } catch (const Exception& e) {
    const std::string what = e.what();
    for (const auto& part : parts) {
      EXPECT_NE(what.find(part), std::string::npos) << "message: " << what << "\nmissing: " << part;
    }
  }
}

std::set<std::string> ids_of(const std::vector<Sample>& samples) {
  std::set<std::string> ids;
  for (const auto& s : samples) {
    ids.insert(s.source_id);
  }
  return ids;
}

TEST(ParseDatasetKind, KnownNames) {
  EXPECT_EQ(parse_dataset_kind("sharegpt"), DatasetKind::ShareGpt);
  EXPECT_EQ(parse_dataset_kind("mtbench"), DatasetKind::MtBench);
  EXPECT_EQ(parse_dataset_kind("custom"), DatasetKind::Custom);
  EXPECT_EQ(parse_dataset_kind("sonnet"), DatasetKind::Sonnet);
  EXPECT_EQ(parse_dataset_kind("random"), DatasetKind::Random);
  expect_error([] { parse_dataset_kind("ShareGPT"); },
               {"--dataset-name", "\"ShareGPT\"", "sharegpt, mtbench, custom, sonnet, random"});
}

TEST(EstimateTokens, AsciiIsBytesOverFourRoundedUp) {
  EXPECT_EQ(estimate_text_tokens(""), 0);
  EXPECT_EQ(estimate_text_tokens("a"), 1);
  EXPECT_EQ(estimate_text_tokens("abcd"), 1);
  EXPECT_EQ(estimate_text_tokens("abcde"), 2);
  EXPECT_EQ(estimate_text_tokens(std::string(1000, 'x')), 250);
}

TEST(EstimateTokens, NonAsciiIsOnePerCodePoint) {
  EXPECT_EQ(estimate_text_tokens("\xE4\xBD\xA0\xE5\xA5\xBD"), 2);  // 你好: 6 bytes, 2 code points
  EXPECT_EQ(estimate_text_tokens("ab\xE4\xBD\xA0"), 2);            // ceil(2/4) + 1
  // “Hi”: two 3-byte quotes + 2 ASCII bytes = 2 + 1.
  EXPECT_EQ(estimate_text_tokens("\xE2\x80\x9CHi\xE2\x80\x9D"), 3);
  EXPECT_EQ(estimate_text_tokens("\xF0\x9F\x98\x80"), 1);  // one 4-byte emoji
}

// ---- ShareGPT ----

constexpr std::string_view kShareGpt = R"([
  {"id": "a_0", "conversations": [{"from": "human", "value": "Hello there"},
                                  {"from": "gpt", "value": "0123456789012345678901234567890123456789"}]},
  {"id": "b_0", "conversations": [{"from": "gpt", "value": "no human turn here"}]},
  {"id": "c_0", "conversations": [{"from": "system", "value": "be brief"},
                                  {"from": "human", "value": "Second question?"}]}
])";

TEST(ShareGpt, FirstHumanTurnAndReplyLength) {
  TempDir dir;
  const auto path = dir.write("sg.json", kShareGpt);
  const auto all = detail::load_sharegpt(path, -1);
  // b_0 has no human turn; c_0's question has no reply (vLLM drops it too: no output length).
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].source_id, "sharegpt:a_0");
  EXPECT_EQ(all[0].prompt, "Hello there");
  EXPECT_EQ(all[0].prompt_len, 3);   // 11 bytes
  EXPECT_EQ(all[0].output_len, 10);  // the 40-byte reply
  EXPECT_TRUE(all[0].messages.empty());

  // --output-len sets every length but brings no unanswered conversation back (as vLLM).
  const auto fixed = detail::load_sharegpt(path, 50);
  ASSERT_EQ(fixed.size(), 1U);
  EXPECT_EQ(fixed[0].output_len, 50);

  // A prompt-only file (every reply stripped) stays usable, with the output length it is given.
  const auto prompts = dir.write("prompts.json", R"([
    {"id": "p_0", "conversations": [{"from": "human", "value": "one"}]},
    {"id": "p_1", "conversations": [{"from": "human", "value": "two"}]}])");
  const auto only = detail::load_sharegpt(prompts, -1);
  ASSERT_EQ(only.size(), 2U);
  EXPECT_EQ(only[1].prompt, "two");
  EXPECT_EQ(only[1].output_len, 256);
  EXPECT_EQ(detail::load_sharegpt(prompts, 64)[0].output_len, 64);
}

TEST(ShareGpt, LoadSamplesNeedsPathAndNamesBadJson) {
  DatasetOptions options;
  options.kind = DatasetKind::ShareGpt;
  options.data_dir = bundled_data_dir();
  expect_error([&] { load_samples(options); }, {"--dataset-path"});

  TempDir dir;
  options.path = dir.write("bad.json", "[\n  {\"id\": \"x\", \"conversations\": [}\n]");
  expect_error([&] { load_samples(options); }, {options.path, "line 2", "not valid JSON", "byte"});

  options.path = dir.write("obj.json", "{\"id\": 1}");
  expect_error([&] { load_samples(options); }, {options.path, "JSON array"});

  options.path = dir.path() + "/missing.json";
  expect_error([&] { load_samples(options); }, {"missing.json", "cannot open"});
}

// ---- MT-Bench ----

TEST(MtBench, BundledFileHasEightyQuestions) {
  DatasetOptions options;  // MtBench is the default kind
  options.data_dir = bundled_data_dir();
  options.num_prompts = 80;
  const auto samples = load_samples(options);
  ASSERT_EQ(samples.size(), 80U);
  const auto ids = ids_of(samples);
  EXPECT_EQ(ids.size(), 80U);  // every question exactly once
  EXPECT_TRUE(ids.count("mtbench:81"));
  EXPECT_TRUE(ids.count("mtbench:160"));
  const auto q81 = std::find_if(samples.begin(), samples.end(),
                                [](const Sample& s) { return s.source_id == "mtbench:81"; });
  EXPECT_TRUE(
      q81->prompt.starts_with("Compose an engaging travel blog post about a recent trip "
                              "to Hawaii"));
  EXPECT_EQ(q81->prompt_len, estimate_text_tokens(q81->prompt));
  for (const auto& s : samples) {
    EXPECT_EQ(s.output_len, 256);
  }
}

TEST(MtBench, FixtureAndErrors) {
  TempDir dir;
  const auto path = dir.write(
      "q.jsonl",
      "{\"question_id\": 7, \"category\": \"x\", \"turns\": [\"first turn\", \"second\"]}\n");
  const auto all = detail::load_mtbench(path, 12);
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].source_id, "mtbench:7");
  EXPECT_EQ(all[0].prompt, "first turn");
  EXPECT_EQ(all[0].output_len, 12);

  const auto bad = dir.write("bad.jsonl",
                             "{\"question_id\": 1, \"turns\": [\"a\"]}\n"
                             "{\"question_id\": 2, \"turns\": []}\n");
  expect_error([&] { detail::load_mtbench(bad, -1); }, {bad, "line 2", "\"turns\""});
}

// ---- custom JSONL ----

TEST(Custom, PromptMessagesAndOutputLen) {
  TempDir dir;
  const auto path = dir.write("c.jsonl",
                              "{\"prompt\": \"Tell me a story\"}\n"
                              "\n"
                              "  \r\n"
                              "{\"messages\": [{\"role\": \"system\", \"content\": \"Be terse\"}, "
                              "{\"role\": \"user\", \"content\": \"Why is the sky blue?\"}], "
                              "\"output_len\": 64}\r\n"
                              "{\"prompt\": \"Short\", \"output_len\": 5}");
  const auto all = detail::load_custom(path, -1);
  ASSERT_EQ(all.size(), 3U);
  EXPECT_EQ(all[0].prompt, "Tell me a story");
  EXPECT_EQ(all[0].prompt_len, 4);  // 15 bytes
  EXPECT_EQ(all[0].output_len, 256);
  EXPECT_EQ(all[0].source_id, "line 1");
  EXPECT_EQ(all[1].source_id, "line 4");  // blank lines 2 and 3 skipped but counted
  ASSERT_EQ(all[1].messages.size(), 2U);
  EXPECT_EQ(all[1].messages[0].role, "system");
  EXPECT_EQ(all[1].messages[1].content, "Why is the sky blue?");
  EXPECT_EQ(all[1].prompt, "Why is the sky blue?");
  EXPECT_EQ(all[1].prompt_len, 2 + 5);  // "Be terse" 8 bytes + 20 bytes
  EXPECT_EQ(all[1].output_len, 64);
  EXPECT_EQ(all[2].output_len, 5);

  // A fixed output length wins over the lines' own.
  const auto fixed = detail::load_custom(path, 100);
  EXPECT_EQ(fixed[1].output_len, 100);
  EXPECT_EQ(fixed[2].output_len, 100);
}

TEST(Custom, ErrorsNameFileAndLine) {
  TempDir dir;
  const std::string good = "{\"prompt\": \"ok\"}\n";
  struct Case {
    std::string third_line;
    std::string expected;
  };
  const Case cases[] = {
      {"{\"prompt\": \"unterminated}", "not valid JSON"},
      {"[1, 2]", "expected a JSON object"},
      {"{\"text\": \"hi\"}", "missing \"prompt\" or \"messages\""},
      {"{\"prompt\": 42}", "\"prompt\" must be a non-empty string"},
      {"{\"prompt\": \"\"}", "\"prompt\" must be a non-empty string"},
      {"{\"messages\": []}", "\"messages\" must be a non-empty array"},
      {"{\"messages\": [{\"role\": \"user\"}]}", "messages[0]"},
      {"{\"prompt\": \"x\", \"output_len\": 0}",
       "\"output_len\" must be a positive integer, got 0"},
      {"{\"prompt\": \"x\", \"output_len\": -3}", "got -3"},
      {"{\"prompt\": \"x\", \"output_len\": 1.5}", "got 1.5"},
      {"{\"prompt\": \"x\", \"output_len\": \"12\"}", "got \"12\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.third_line);
    const auto path = dir.write("e.jsonl", good + good + c.third_line + "\n" + good);
    expect_error([&] { detail::load_custom(path, -1); }, {path, "line 3", c.expected});
  }
  // The byte offset points into line 3 (lines 1-2 are 34 bytes).
  const auto path = dir.write("off.jsonl", good + good + "{\"prompt\": nope}\n");
  try {
    detail::load_custom(path, -1);
    ADD_FAILURE() << "no exception";
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, path);
    EXPECT_GE(e.error().offset, 34);
    EXPECT_LT(e.error().offset, 34 + 17);
  }
}

TEST(Custom, EmptyFileIsAnError) {
  TempDir dir;
  DatasetOptions options;
  options.kind = DatasetKind::Custom;
  options.path = dir.write("empty.jsonl", "\n\n");
  expect_error([&] { load_samples(options); }, {options.path, "no usable prompts"});
  options.path.clear();
  expect_error([&] { load_samples(options); }, {"--dataset-path"});
}

// ---- sampling ----

TEST(Sampling, DeterministicPerSeedAndDistinctWhenEnough) {
  DatasetOptions options;
  options.data_dir = bundled_data_dir();
  options.num_prompts = 10;
  options.seed = 1;
  const auto a = load_samples(options);
  const auto b = load_samples(options);
  ASSERT_EQ(a.size(), 10U);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].source_id, b[i].source_id);
    EXPECT_EQ(a[i].prompt, b[i].prompt);
  }
  EXPECT_EQ(ids_of(a).size(), 10U);  // no repeats when the dataset is large enough

  options.seed = 2;
  const auto c = load_samples(options);
  bool differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    differs = differs || a[i].source_id != c[i].source_id;
  }
  EXPECT_TRUE(differs);

  // A smaller request is the head of the same shuffle.
  options.seed = 1;
  options.num_prompts = 4;
  const auto head = load_samples(options);
  for (std::size_t i = 0; i < head.size(); ++i) {
    EXPECT_EQ(head[i].source_id, a[i].source_id);
  }
}

TEST(Sampling, CyclesShuffledOrderWhenTooFew) {
  DatasetOptions options;
  options.data_dir = bundled_data_dir();
  options.num_prompts = 200;
  options.seed = 9;
  const auto s = load_samples(options);
  ASSERT_EQ(s.size(), 200U);
  EXPECT_EQ(ids_of({s.begin(), s.begin() + 80}).size(), 80U);  // one full pass first
  for (std::size_t i = 80; i < s.size(); ++i) {
    EXPECT_EQ(s[i].source_id, s[i - 80].source_id);
  }
  options.num_prompts = 0;
  expect_error([&] { load_samples(options); }, {"--num-prompts", "got 0"});
}

TEST(Sampling, NoBundledFolderIsAnError) {
  DatasetOptions options;
  expect_error([&] { load_samples(options); }, {"bundled data folder"});
}

}  // namespace
}  // namespace llmbench::workload
