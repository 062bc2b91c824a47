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

// ---- length sampling (vLLM RandomDataset bounds) ----

struct MinMax {
  std::int64_t min;
  std::int64_t max;
};

MinMax min_max(const std::vector<std::int64_t>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {*lo, *hi};
}

TEST(SampleLengths, CoversBothEndsOfTheRange) {
  // L = 100, r = 0.25: [floor(75), ceil(125)] = [75, 125].
  const auto v = detail::sample_lengths(20000, 100, 0.25, 0, 3, "random-input-len");
  const auto mm = min_max(v);
  EXPECT_EQ(mm.min, 75);
  EXPECT_EQ(mm.max, 125);
}

TEST(SampleLengths, UsesVllmFloatingPointRounding) {
  // In IEEE doubles 100 * (1 + 0.1) = 110.00000000000001, so ceil gives 111 (as numpy/vLLM);
  // 100 * (1 - 0.1) = 90 exactly.
  const auto v = detail::sample_lengths(20000, 100, 0.1, 0, 5, "random-input-len");
  const auto mm = min_max(v);
  EXPECT_EQ(mm.min, 90);
  EXPECT_EQ(mm.max, 111);
}

TEST(SampleLengths, ZeroRatioIsExact) {
  for (const auto x : detail::sample_lengths(1000, 321, 0.0, 0, 1, "p")) {
    ASSERT_EQ(x, 321);
  }
}

TEST(SampleLengths, LowerBoundRaisedToMinimum) {
  // L = 1, r = 0.5: [floor(0.5), ceil(1.5)] = [0, 2], raised to [1, 2] as vLLM does for output.
  const auto mm = min_max(detail::sample_lengths(2000, 1, 0.5, 1, 1, "random-output-len"));
  EXPECT_EQ(mm.min, 1);
  EXPECT_EQ(mm.max, 2);
}

// ---- random dataset ----

/// "w0 w1 w2 ... w{n-1}" with a line break every 10 words.
std::string numbered_words(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    text += "w" + std::to_string(i);
    text += (i % 10 == 9) ? "\n" : " ";
  }
  return text;
}

DatasetOptions random_options(const std::string& corpus) {
  DatasetOptions o;
  o.kind = DatasetKind::Random;
  o.path = corpus;
  o.num_prompts = 300;
  o.seed = 11;
  o.random_input_len = 40;
  o.random_output_len = 20;
  o.random_range_ratio = 0.5;
  return o;
}

TEST(RandomDataset, WithoutTextKeepsLengthsAndGivesOffsets) {
  // `random_text = false` (simulate): the same lengths as with text, no prompt, and a content
  // key per sample that is a corpus word index (equal keys ⇔ equal prompt starts).
  TempDir dir;
  auto options = random_options(dir.write("corpus.txt", numbered_words(2000)));
  options.random_prefix_len = 5;
  const auto with_text = load_samples(options);
  options.random_text = false;
  const auto lengths = load_samples(options);
  ASSERT_EQ(lengths.size(), with_text.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    EXPECT_EQ(lengths[i].prompt_len, with_text[i].prompt_len);
    EXPECT_EQ(lengths[i].output_len, with_text[i].output_len);
    EXPECT_EQ(lengths[i].source_id, with_text[i].source_id);
    EXPECT_TRUE(lengths[i].prompt.empty());
    EXPECT_EQ(with_text[i].content_key, -1);
    ASSERT_GE(lengths[i].content_key, 0);
    ASSERT_LT(lengths[i].content_key, 2000);
    // The text version's own part starts at that word ("w<key>") after the shared prefix.
    const std::string own = "w" + std::to_string(lengths[i].content_key);
    const auto at = with_text[i].prompt.find("\n\n");
    ASSERT_NE(at, std::string::npos);
    EXPECT_EQ(with_text[i].prompt.compare(at + 2, own.size(), own), 0) << with_text[i].prompt;
  }
}

TEST(RandomDataset, LengthsInBoundsAndTextReachesTarget) {
  TempDir dir;
  const auto options = random_options(dir.write("corpus.txt", numbered_words(2000)));
  const auto samples = load_samples(options);
  ASSERT_EQ(samples.size(), 300U);
  std::int64_t in_min = 1000, in_max = 0, out_min = 1000, out_max = 0;
  for (const auto& s : samples) {
    // input in [20, 60], output in [10, 30]
    ASSERT_GE(s.prompt_len, 20);
    ASSERT_LE(s.prompt_len, 60);
    ASSERT_GE(s.output_len, 10);
    ASSERT_LE(s.output_len, 30);
    in_min = std::min(in_min, s.prompt_len);
    in_max = std::max(in_max, s.prompt_len);
    out_min = std::min(out_min, s.output_len);
    out_max = std::max(out_max, s.output_len);
    // Words are taken until the estimate reaches the target; one more word (<= 6 bytes with
    // its separator) can overshoot by at most 2.
    const auto est = estimate_text_tokens(s.prompt);
    EXPECT_GE(est, s.prompt_len);
    EXPECT_LE(est, s.prompt_len + 2);
    // Starts at a word boundary.
    ASSERT_FALSE(s.prompt.empty());
    EXPECT_EQ(s.prompt[0], 'w') << s.prompt;
    EXPECT_TRUE(s.messages.empty());
  }
  EXPECT_EQ(in_min, 20);
  EXPECT_EQ(in_max, 60);
  EXPECT_EQ(out_min, 10);
  EXPECT_EQ(out_max, 30);
  EXPECT_EQ(samples[0].source_id, "random:0");
}

TEST(RandomDataset, ZeroRatioGivesExactLengths) {
  TempDir dir;
  auto options = random_options(dir.write("corpus.txt", numbered_words(500)));
  options.random_range_ratio = 0.0;
  for (const auto& s : load_samples(options)) {
    ASSERT_EQ(s.prompt_len, 40);
    ASSERT_EQ(s.output_len, 20);
  }
}

TEST(RandomDataset, SharedPrefixFromCorpusStart) {
  TempDir dir;
  auto options = random_options(dir.write("corpus.txt", numbered_words(500)));
  options.random_prefix_len = 4;
  options.random_range_ratio = 0.0;
  // "w0 w1 w2 w3" is 11 bytes (3 tokens); adding " w4" makes 14 bytes = 4 tokens.
  const std::string prefix = "w0 w1 w2 w3 w4\n\n";
  for (const auto& s : load_samples(options)) {
    ASSERT_TRUE(s.prompt.starts_with(prefix)) << s.prompt;
    EXPECT_EQ(s.prompt_len, 44);
    EXPECT_GE(estimate_text_tokens(s.prompt), 44);
  }
}

TEST(RandomDataset, WrapsAroundShortCorpus) {
  TempDir dir;
  auto options = random_options(dir.write("corpus.txt", "alpha beta gamma\n"));
  options.random_input_len = 100;
  options.random_range_ratio = 0.0;
  options.num_prompts = 5;
  for (const auto& s : load_samples(options)) {
    EXPECT_GE(estimate_text_tokens(s.prompt), 100);
    EXPECT_NE(s.prompt.find("gamma\n\nalpha"), std::string::npos);
  }
}

TEST(RandomDataset, DeterministicPerSeed) {
  TempDir dir;
  auto options = random_options(dir.write("corpus.txt", numbered_words(2000)));
  const auto a = load_samples(options);
  const auto b = load_samples(options);
  options.seed = 12;
  const auto c = load_samples(options);
  int same_as_other_seed = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].prompt, b[i].prompt);
    ASSERT_EQ(a[i].prompt_len, b[i].prompt_len);
    ASSERT_EQ(a[i].output_len, b[i].output_len);
    same_as_other_seed += a[i].prompt == c[i].prompt ? 1 : 0;
  }
  EXPECT_LT(same_as_other_seed, 5);
}

TEST(RandomDataset, FolderCorpusAndBundledDefault) {
  TempDir dir;
  dir.write("books/b.txt", "bravo ");
  dir.write("books/a.txt", "alpha ");
  dir.write("books/skip.md", "zulu ");
  auto options = random_options(dir.path() + "/books");
  options.random_input_len = 8;
  options.random_range_ratio = 0.0;
  for (const auto& s : load_samples(options)) {
    EXPECT_EQ(s.prompt.find("zulu"), std::string::npos);
    EXPECT_TRUE(s.prompt.starts_with("alpha") || s.prompt.starts_with("bravo")) << s.prompt;
  }
  options.path.clear();
  options.data_dir = bundled_data_dir();
  const auto samples = load_samples(options);
  ASSERT_EQ(samples.size(), 300U);
  EXPECT_GE(estimate_text_tokens(samples[0].prompt), 8);
}

TEST(RandomDataset, RejectsBadSettings) {
  TempDir dir;
  const auto base = random_options(dir.write("corpus.txt", numbered_words(50)));
  auto o = base;
  o.random_range_ratio = 1.0;
  EXPECT_THROW(load_samples(o), Exception);
  o.random_range_ratio = -0.1;
  EXPECT_THROW(load_samples(o), Exception);
  o = base;
  o.random_input_len = 0;
  EXPECT_THROW(load_samples(o), Exception);
  o = base;
  o.random_output_len = -1;
  EXPECT_THROW(load_samples(o), Exception);
  o = base;
  o.random_input_len = 1;  // floor(1 * 0.5) = 0 with no prefix: an empty prompt is possible
  try {
    load_samples(o);
    ADD_FAILURE() << "no exception";
  } catch (const Exception& e) {
    EXPECT_NE(std::string(e.what()).find("empty prompt"), std::string::npos) << e.what();
  }
  o.random_prefix_len = 1;  // now fine
  EXPECT_NO_THROW(load_samples(o));
  o = base;
  o.path = dir.write("blank.txt", " \n\t\n");
  EXPECT_THROW(load_samples(o), Exception);
}

// ---- sonnet dataset ----

/// 20 distinct 16-byte lines "line-NN-abcdefg\n".
std::string poem() {
  std::string text;
  for (int i = 0; i < 20; ++i) {
    text += "line-" + std::string(i < 10 ? "0" : "") + std::to_string(i) + "-abcdefg\n";
  }
  return text;
}

TEST(SonnetDataset, PrefixAndRandomLinesByEstimate) {
  TempDir dir;
  DatasetOptions o;
  o.kind = DatasetKind::Sonnet;
  o.path = dir.write("poem.txt", "\n" + poem() + "\n\n");
  o.num_prompts = 50;
  // Instruction 53 bytes. Prefix 30 tokens = 120 bytes: 53 + 16 m <= 120 -> 4 lines.
  // Input 60 tokens = 240 bytes: 53 + 16 m <= 240 -> 11 lines, so 7 random ones.
  o.sonnet_prefix_len = 30;
  o.sonnet_input_len = 60;
  o.sonnet_output_len = 33;
  const std::string prefix =
      "Pick as many lines as you can from these poem lines:\n"
      "line-00-abcdefg\nline-01-abcdefg\nline-02-abcdefg\nline-03-abcdefg\n";
  const auto samples = load_samples(o);
  ASSERT_EQ(samples.size(), 50U);
  bool all_same = true;
  for (const auto& s : samples) {
    ASSERT_TRUE(s.prompt.starts_with(prefix)) << s.prompt;
    EXPECT_EQ(std::count(s.prompt.begin(), s.prompt.end(), '\n'), 1 + 11);
    EXPECT_EQ(s.prompt.size(), 53U + 11U * 16U);
    EXPECT_EQ(s.prompt_len, 58);  // ceil(229 / 4)
    EXPECT_EQ(s.output_len, 33);
    all_same = all_same && s.prompt == samples[0].prompt;
  }
  EXPECT_FALSE(all_same);
  // Deterministic per seed.
  const auto again = load_samples(o);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    ASSERT_EQ(samples[i].prompt, again[i].prompt);
  }
}

TEST(SonnetDataset, BundledDefaultAndValidation) {
  DatasetOptions o;
  o.kind = DatasetKind::Sonnet;
  o.data_dir = bundled_data_dir();
  o.num_prompts = 5;
  const auto samples = load_samples(o);  // vLLM defaults 550 / 200 / 150
  ASSERT_EQ(samples.size(), 5U);
  for (const auto& s : samples) {
    EXPECT_TRUE(
        s.prompt.starts_with("Pick as many lines as you can from these poem lines:\n"
                             "Shall I compare thee to a summer's day?\n"));
    EXPECT_LE(s.prompt_len, 550);
    EXPECT_GT(s.prompt_len, 500);  // the longest line is well under 50 tokens
    EXPECT_EQ(s.output_len, 150);
  }
  o.sonnet_input_len = 200;  // not above the prefix length
  EXPECT_THROW(load_samples(o), Exception);
  o.sonnet_input_len = 10;
  o.sonnet_prefix_len = 0;  // below the instruction's 14 tokens
  EXPECT_THROW(load_samples(o), Exception);
}

}  // namespace
}  // namespace llmbench::workload
