// Exact prompt-token counts of the simulated server with a tokenizer (`serve --tokenizer`, and
// `run --tokenizer` against the built-in server): completions text is counted with the
// tokenizer's special prefix (the BOS of DeepSeek-V3, as vLLM counts usage.prompt_tokens), ids
// one each, chat message contents without special tokens. Uses the shared tokenizer data
// ($LLMBENCH_SOURCE_DIR/../shared/data/tokenizers); skipped when it is absent.

#include "llmbench/core/text.hpp"
#include "llmbench/server/openai_request.hpp"

#include <gtest/gtest.h>

#include "../tokenizer/test_data.hpp"
#include "shared_data.hpp"
#include <string>

namespace llmbench::server {
namespace {

const tokenizer::Tokenizer* deepseek_v3() {
  return tokenizer::testing::shared_tokenizer("deepseek-v3", "tokenizer.json");
}

std::int64_t ids_of(const tokenizer::Tokenizer& tok, const std::string& text, bool special) {
  auto ids = tok.encode(text, special);
  EXPECT_TRUE(ids) << text;
  return ids ? static_cast<std::int64_t>(ids->size()) : -1;
}

TEST(PromptCount, CompletionsTextIsCountedWithTheBos) {
  const auto* tok = deepseek_v3();
  if (tok == nullptr)
    LLMBENCH_SHARED_DATA_MISSING() << "shared tokenizer data not found";
  const std::string text = "The quick brown fox jumps over the lazy dog. 你好，世界！";
  const std::string body = R"({"prompt":")" + text + R"(","max_tokens":4})";
  auto exact = parse_generation_request(body, false, 16, false, tok);
  ASSERT_TRUE(exact) << exact.error().message;
  const std::int64_t plain = ids_of(*tok, text, false);
  EXPECT_EQ(exact->prompt_tokens, plain + 1);  // + <｜begin▁of▁sentence｜>
  EXPECT_EQ(exact->prompt_tokens, ids_of(*tok, text, true));
  // Without a tokenizer: llmbench's text-token estimate (core/text.hpp).
  auto estimate = parse_generation_request(body, false, 16);
  ASSERT_TRUE(estimate);
  EXPECT_EQ(estimate->prompt_tokens, estimate_text_tokens(text));
  // Digits: DeepSeek-V3 splits them in groups of at most three, so 20 digits are 7 tokens + BOS
  // where the byte rule says 5.
  const std::string digits = R"({"prompt":"12345678901234567890"})";
  auto exact_digits = parse_generation_request(digits, false, 16, false, tok);
  ASSERT_TRUE(exact_digits);
  EXPECT_EQ(exact_digits->prompt_tokens, 8);
  EXPECT_EQ(parse_generation_request(digits, false, 16)->prompt_tokens, 5);
}

TEST(PromptCount, TokenIdsCountOneEachWithNothingAdded) {
  const auto* tok = deepseek_v3();
  if (tok == nullptr)
    LLMBENCH_SHARED_DATA_MISSING() << "shared tokenizer data not found";
  auto parsed = parse_generation_request(R"({"prompt":[0,100,2000,30000],"max_tokens":1})", false,
                                         16, false, tok);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->prompt_tokens, 4);
  // Out-of-vocabulary and negative ids are rejected (vLLM answers 400), naming the id's place.
  auto oov = parse_generation_request(R"({"prompt":[1,2,128815]})", false, 16, false, tok);
  ASSERT_FALSE(oov);
  EXPECT_EQ(oov.error().source, "prompt");
  EXPECT_EQ(oov.error().message,
            "'prompt' token id 128815 (#2) is outside the vocabulary (0 to 128814)");
  auto negative = parse_generation_request(R"({"prompt":[[5,-1]]})", false, 16);
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().message, "'prompt' token id -1 (#1) must be >= 0");
  // A list of strings: each counted as its own prompt (each with the BOS).
  parsed = parse_generation_request(R"({"prompt":["Hello there","General Kenobi"]})", false, 16,
                                    false, tok);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->prompt_tokens,
            ids_of(*tok, "Hello there", true) + ids_of(*tok, "General Kenobi", true));
}

TEST(PromptCount, ChatCountsMessageContentsWithoutSpecialTokens) {
  const auto* tok = deepseek_v3();
  if (tok == nullptr)
    LLMBENCH_SHARED_DATA_MISSING() << "shared tokenizer data not found";
  const std::string body =
      R"({"messages":[{"role":"system","content":"You are terse."},)"
      R"({"role":"user","content":[{"type":"text","text":"Count to three."}]}]})";
  auto parsed = parse_generation_request(body, true, 16, false, tok);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->prompt_tokens,
            ids_of(*tok, "You are terse.", false) + ids_of(*tok, "Count to three.", false));
}

TEST(ContextLength, OverMaxModelLenIsRejectedAsVllmWordsIt) {
  auto params =
      parse_generation_request(R"({"prompt":[1,2,3,4,5,6,7,8,9,10],"max_tokens":90})", false, 16);
  ASSERT_TRUE(params);
  EXPECT_FALSE(check_context_length(*params, 100));  // 10 + 90 = 100 fits
  const auto err = check_context_length(*params, 99);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->source, "max_tokens");
  EXPECT_EQ(err->message,
            "This model's maximum context length is 99 tokens. However, you requested 100 tokens "
            "(10 in the prompt, 90 in the completion). Please reduce the length of the prompt or "
            "completion.");
  EXPECT_EQ(check_context_length(*params, 9)->source, "prompt");  // the prompt alone is too long
}

TEST(PromptShape, OneKindPerPromptAndEmptyStringsCountOne) {
  // OpenAI completions `prompt`: a string, or an array of strings / token ids / id arrays.
  const auto parse = [](const char* body) { return parse_generation_request(body, false, 16); };
  for (const char* mixed :
       {R"({"prompt":["hi",5]})", R"({"prompt":[5,[6]]})", R"({"prompt":[["a"]]})"}) {
    const auto r = parse(mixed);
    ASSERT_FALSE(r) << mixed;
    EXPECT_EQ(r.error().source, "prompt") << mixed;
  }
  EXPECT_EQ(parse(R"({"prompt":[]})").error().message, "'prompt' must not be empty");
  EXPECT_EQ(parse(R"({"prompt":[[]]})").error().message,
            "'prompt' token id arrays must not be empty");
  // "" and [""] agree: one token (a server would still add the BOS).
  EXPECT_EQ(parse(R"({"prompt":""})")->prompt_tokens, 1);
  EXPECT_EQ(parse(R"({"prompt":[""]})")->prompt_tokens, 1);
  EXPECT_EQ(parse(R"({"prompt":[[1,2],[3]]})")->prompt_tokens, 3);
}

}  // namespace
}  // namespace llmbench::server
