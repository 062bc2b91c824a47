// Random prompts of exact token length under a real tokenizer (DeepSeek-V3 from ../shared/data).
// `--tokenizer` name resolution is tested with the tokenizer module (resolve_test.cpp).

#include "llmbench/core/error.hpp"
#include "llmbench/workload/dataset.hpp"
#include "llmbench/workload/detail/loaders.hpp"

#include <gtest/gtest.h>

#include "../tokenizer/test_data.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <string>

namespace llmbench::workload {
namespace {

using tokenizer::Tokenizer;

class ExactRandom : public ::testing::Test {
 protected:
  void SetUp() override {
    tok_ = tokenizer::testing::shared_tokenizer("deepseek-v3", "tokenizer.json");
    if (tok_ == nullptr) {
      LLMBENCH_SHARED_DATA_MISSING() << "../shared/data/tokenizers/deepseek-v3 not found";
    }
  }

  DatasetOptions options(std::int64_t n, std::int64_t prefix = 0) const {
    DatasetOptions o;
    o.kind = DatasetKind::Random;
    o.num_prompts = n;
    o.seed = 7;
    o.random_input_len = 512;
    o.random_output_len = 64;
    o.random_range_ratio = 0.9;
    o.random_prefix_len = prefix;
    o.data_dir = testing::bundled_data_dir();
    o.tokenizer = tok_;
    return o;
  }

  std::int64_t count(const std::string& text, bool special) const {
    tokenizer::Scratch scratch;
    return static_cast<std::int64_t>(*tok_->count(text, special, scratch));
  }

  const Tokenizer* tok_ = nullptr;
};

TEST_F(ExactRandom, ThousandPromptsReencodeToExactlyTheirSampledLength) {
  const auto o = options(1000);
  const auto t0 = std::chrono::steady_clock::now();
  const auto samples = load_samples(o);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ figures  ] 1000 exact random prompts (mean 512, range 0.9): %.3f s\n", s);
  ASSERT_EQ(samples.size(), 1000U);
  // The lengths are vLLM's: uniform in [floor(512 * 0.1), ceil(512 * 1.9)] = [51, 973]; with
  // count_special_tokens the BOS is one of them (DeepSeek-V3's special prefix is {0}).
  const auto lens = detail::sample_lengths(1000, 512, 0.9, 0, 7, "random-input-len");
  ASSERT_EQ(tok_->special_prefix().size(), 1U);
  tokenizer::Scratch scratch;
  std::int64_t min_len = 1 << 30;
  std::int64_t max_len = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto& sample = samples[i];
    ASSERT_EQ(sample.prompt_len, lens[i]) << "prompt " << i;
    ASSERT_TRUE(sample.prompt_len_exact);
    ASSERT_TRUE(sample.prompt_token_ids.empty());
    // Re-encoded as the server does (BOS added): exactly the sampled length.
    const auto with_bos = tok_->encode(sample.prompt, true);
    ASSERT_TRUE(with_bos);
    ASSERT_EQ(static_cast<std::int64_t>(with_bos->size()), sample.prompt_len) << "prompt " << i;
    ASSERT_EQ(with_bos->front(), 0U);  // <｜begin▁of▁sentence｜>
    ASSERT_EQ(count(sample.prompt, false), sample.prompt_len - 1);
    min_len = std::min(min_len, sample.prompt_len);
    max_len = std::max(max_len, sample.prompt_len);
  }
  EXPECT_GE(min_len, 51);
  EXPECT_LE(max_len, 973);
  EXPECT_LT(min_len, 100);  // the range is really used
  EXPECT_GT(max_len, 900);
  // Deterministic for a seed.
  const auto again = load_samples(o);
  EXPECT_EQ(again[123].prompt, samples[123].prompt);
}

TEST_F(ExactRandom, SharedPrefixKeepsTotalsExactAndPrefixTokensIdentical) {
  const auto samples = load_samples(options(300, 200));
  const auto lens = detail::sample_lengths(300, 512, 0.9, 0, 7, "random-input-len");
  std::vector<tokenizer::TokenId> first_prefix;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto ids = tok_->encode(samples[i].prompt, true);
    ASSERT_TRUE(ids);
    ASSERT_EQ(samples[i].prompt_len, 200 + lens[i]);
    ASSERT_EQ(static_cast<std::int64_t>(ids->size()), samples[i].prompt_len) << "prompt " << i;
    // The first 200 tokens (BOS + 199 text tokens) are the same in every prompt.
    const std::vector<tokenizer::TokenId> prefix(ids->begin(), ids->begin() + 200);
    if (i == 0) {
      first_prefix = prefix;
    } else {
      ASSERT_EQ(prefix, first_prefix) << "prompt " << i;
    }
  }
}

TEST_F(ExactRandom, ChatLengthsCountTheContentWithoutSpecialTokens) {
  auto o = options(200);
  o.count_special_tokens = false;
  const auto samples = load_samples(o);
  const auto lens = detail::sample_lengths(200, 512, 0.9, 0, 7, "random-input-len");
  for (std::size_t i = 0; i < samples.size(); ++i) {
    ASSERT_EQ(samples[i].prompt_len, lens[i]);
    ASSERT_EQ(count(samples[i].prompt, false), lens[i]) << "prompt " << i;
  }
}

TEST_F(ExactRandom, TokenIdPromptsHoldBosPrefixAndExactLength) {
  auto o = options(200, 50);
  o.random_prompt_kind = RandomPromptKind::TokenIds;
  const auto samples = load_samples(o);
  const auto lens = detail::sample_lengths(200, 512, 0.9, 0, 7, "random-input-len");
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto& ids = samples[i].prompt_token_ids;
    ASSERT_TRUE(samples[i].prompt.empty());
    ASSERT_EQ(static_cast<std::int64_t>(ids.size()), 50 + lens[i]);
    ASSERT_EQ(samples[i].prompt_len, 50 + lens[i]);
    ASSERT_EQ(ids[0], 0U);
    ASSERT_TRUE(std::equal(ids.begin(), ids.begin() + 50, samples[0].prompt_token_ids.begin()));
  }
}

TEST_F(ExactRandom, TooShortLengthsAreRaisedToOneTextToken) {
  auto o = options(50);
  o.random_input_len = 2;  // [floor(1.0), ceil(3.0)] = [1, 3]: 1 leaves no room after the BOS
  o.random_range_ratio = 0.5;
  const auto samples = load_samples(o);
  const auto lens = detail::sample_lengths(50, 2, 0.5, 0, 7, "random-input-len");
  ASSERT_NE(std::find(lens.begin(), lens.end(), 1), lens.end());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    ASSERT_EQ(samples[i].prompt_len, std::max<std::int64_t>(2, lens[i]));
    ASSERT_EQ(count(samples[i].prompt, true), samples[i].prompt_len);
  }
}

TEST_F(ExactRandom, OtherDatasetsGetExactPromptCounts) {
  DatasetOptions o;
  o.kind = DatasetKind::MtBench;
  o.num_prompts = 20;
  o.data_dir = testing::bundled_data_dir();
  o.tokenizer = tok_;
  for (const auto& s : load_samples(o)) {
    ASSERT_TRUE(s.prompt_len_exact);
    ASSERT_EQ(s.prompt_len, count(s.prompt, true));
  }
}

TEST(RandomPromptKind, TokenIdsNeedATokenizerAndParsesNames) {
  EXPECT_EQ(parse_random_prompt_kind("text"), RandomPromptKind::Text);
  EXPECT_EQ(parse_random_prompt_kind("token-ids"), RandomPromptKind::TokenIds);
  EXPECT_THROW(parse_random_prompt_kind("ids"), Exception);
  DatasetOptions o;
  o.kind = DatasetKind::Random;
  o.num_prompts = 3;
  o.data_dir = testing::bundled_data_dir();
  o.random_prompt_kind = RandomPromptKind::TokenIds;
  try {
    (void)load_samples(o);
    FAIL() << "expected an error";
  } catch (const Exception& e) {
    EXPECT_NE(std::string(e.what()).find("--random-prompt-kind"), std::string::npos);
  }
}

}  // namespace
}  // namespace llmbench::workload
