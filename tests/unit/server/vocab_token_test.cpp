// The simulated server's output words against real tokenizers: every word must be exactly one
// token, and N words in a row exactly N tokens, so a client counting output tokens locally
// (`llmbench run --tokenizer ...`) sees the server's usage.completion_tokens. Uses the shared
// tokenizer data ($LLMBENCH_SOURCE_DIR/../shared/data/tokenizers); skipped when it is absent.

#include "llmbench/server/openai_format.hpp"

#include <gtest/gtest.h>

#include "../tokenizer/test_data.hpp"
#include "shared_data.hpp"
#include <string>

namespace llmbench::server {
namespace {

struct TokenizerCase {
  const char* folder;
  const char* file;
};

class VocabTokens : public ::testing::TestWithParam<TokenizerCase> {};

TEST_P(VocabTokens, EachWordIsOneTokenAndRunsAddUp) {
  const tokenizer::Tokenizer* tok =
      tokenizer::testing::shared_tokenizer(GetParam().folder, GetParam().file);
  if (tok == nullptr)
    LLMBENCH_SHARED_DATA_MISSING() << "shared tokenizer data not found: " << GetParam().folder;
  for (std::int64_t i = 0; i < kVocabSize; ++i) {
    const std::string word(token_text(i));
    auto ids = tok->encode(word, false);
    ASSERT_TRUE(ids) << word;
    EXPECT_EQ(ids->size(), 1u) << "word " << i << " '" << word << "'";
  }
  // Runs starting at every position of the cycle, lengths 1..3 cycles: the text a client sees.
  for (std::int64_t first = 0; first < kVocabSize; ++first) {
    for (const std::int64_t n : {std::int64_t{2}, std::int64_t{5}, kVocabSize, 3 * kVocabSize}) {
      std::string text;
      append_tokens(text, first, n);
      auto ids = tok->encode(text, false);
      ASSERT_TRUE(ids);
      EXPECT_EQ(static_cast<std::int64_t>(ids->size()), n)
          << "tokens [" << first << ", " << first + n << "): '" << text << "'";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SharedData, VocabTokens,
                         ::testing::Values(TokenizerCase{"deepseek-v3", "tokenizer.json"},
                                           TokenizerCase{"deepseek-r1", "tokenizer.derived.json"},
                                           TokenizerCase{"qwen3", "tokenizer.json"},
                                           TokenizerCase{"llama3", "tokenizer.json"}),
                         [](const auto& param_info) {
                           std::string name = param_info.param.folder;
                           for (char& c : name)
                             if (c == '-' || c == '.')
                               c = '_';
                           return name;
                         });

}  // namespace
}  // namespace llmbench::server
