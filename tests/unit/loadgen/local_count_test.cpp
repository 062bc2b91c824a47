// Local output-token counting with a real tokenizer (DeepSeek-V3 from ../shared/data), and the
// id-array prompt of the completions request body.

#include "llmbench/loadgen/request_handler.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/protocol/openai.hpp"

#include <gtest/gtest.h>

#include "../tokenizer/test_data.hpp"
#include "shared_data.hpp"
#include <string>
#include <vector>

namespace llmbench::loadgen {
namespace {

using metrics::LocalCount;

constexpr TimeNs kStart = 1'000'000'000;

std::string chat(const std::string& delta) {
  return "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":" +
         delta + ",\"finish_reason\":null}]}\n\n";
}

class LocalCount_ : public ::testing::Test {
 protected:
  void SetUp() override {
    tok_ = tokenizer::testing::shared_tokenizer("deepseek-v3", "tokenizer.json");
    if (tok_ == nullptr) {
      LLMBENCH_SHARED_DATA_MISSING() << "../shared/data/tokenizers/deepseek-v3 not found";
    }
  }

  /// Runs one streamed response through a handler that counts with the tokenizer.
  metrics::RequestRecord run(const std::vector<std::string>& events) {
    metrics::RequestRecord rec;
    protocol::Decoder decoder;
    tokenizer::Scratch scratch;
    RecordingHandler handler(rec, decoder, true, kStart);
    handler.count_output_with(*tok_, scratch);
    handler.on_sent(kStart);
    handler.on_headers(200, kStart + 1'000'000);
    TimeNs t = kStart + 2'000'000;
    for (const auto& e : events) {
      handler.on_body(e, t);
      t += 1'000'000;
    }
    http::Outcome outcome;
    outcome.status = 200;
    outcome.body_complete = true;
    handler.finish(outcome, t);
    return rec;
  }

  const tokenizer::Tokenizer* tok_ = nullptr;
};

TEST_F(LocalCount_, CountsReceivedTextWhenTheServerSendsNoUsage) {
  const auto rec =
      run({chat(R"({"content":"Hello"})"), chat(R"({"content":" world"})"), "data: [DONE]\n\n"});
  ASSERT_TRUE(rec.ok()) << rec.error_message;
  EXPECT_EQ(rec.output_tokens, -1);
  // DeepSeek-V3: "Hello" + " world" are two tokens.
  EXPECT_EQ(rec.output_tokens_local, 2);
  EXPECT_EQ(rec.output_tokens_local_source, LocalCount::Tokenizer);
  EXPECT_EQ(metrics::output_token_count(rec), 2);
  const auto s = metrics::summarize({rec}, {});
  EXPECT_EQ(s.usage_missing, 1u);
  EXPECT_EQ(s.output_tokens_counted_locally, 1u);
  EXPECT_EQ(s.total_output_tokens, 2);
}

TEST_F(LocalCount_, ReasoningAndAnswerAreCountedSeparately) {
  const std::string reasoning = "Let me think about it.";
  const std::string answer = "Yes.";
  const auto rec = run({chat(R"({"reasoning_content":"Let me think"})"),
                        chat(R"({"reasoning_content":" about it."})"),
                        chat(R"({"content":"Yes."})"), "data: [DONE]\n\n"});
  ASSERT_TRUE(rec.ok()) << rec.error_message;
  const auto r = tok_->encode(reasoning, false);
  const auto a = tok_->encode(answer, false);
  ASSERT_TRUE(r && a);
  EXPECT_EQ(rec.output_tokens_local, static_cast<std::int64_t>(r->size() + a->size()));
  EXPECT_EQ(r->size() + a->size(), 8U);  // "Let| me| think| about| it|." + "Yes|."
}

// Re-encoding the joined text once gave one token for fifteen one-space events (DeepSeek-V3
// has a token for a run of spaces); each event the server sent apart is at least one token.
TEST_F(LocalCount_, TokensStreamedApartAreNotMerged) {
  std::vector<std::string> events(15, chat(R"({"content":" "})"));
  events.push_back("data: [DONE]\n\n");
  const auto rec = run(events);
  ASSERT_TRUE(rec.ok()) << rec.error_message;
  const auto joined = tok_->encode(std::string(15, ' '), false);
  ASSERT_TRUE(joined);
  EXPECT_LT(joined->size(), 15U);  // the collapse the rule guards against
  EXPECT_EQ(rec.output_tokens_local, 15);
  // An event that carries several tokens still counts them all.
  const auto multi = run({chat(R"({"content":"Let me think"})"), chat(R"({"content":" "})"),
                          chat(R"({"content":" "})"), "data: [DONE]\n\n"});
  EXPECT_EQ(multi.output_tokens_local, 5);  // "Let| me| think" + 1 + 1
}

TEST_F(LocalCount_, ServerUsageWinsAndAMismatchIsCounted) {
  const auto rec =
      run({chat(R"({"content":"Hello"})"), chat(R"({"content":" world"})"),
           "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3}}\n\n",
           "data: [DONE]\n\n"});
  ASSERT_TRUE(rec.ok()) << rec.error_message;
  EXPECT_EQ(rec.output_tokens, 3);
  EXPECT_EQ(rec.output_tokens_local, 2);
  EXPECT_EQ(metrics::output_token_count(rec), 3);
  auto with_prompt = rec;
  with_prompt.input_tokens_local = 8;
  const auto s = metrics::summarize({with_prompt}, {});
  EXPECT_EQ(s.token_count_mismatches, 1u);
  EXPECT_EQ(s.prompt_token_mismatches, 1u);  // 9 from the server, 8 counted here
  EXPECT_EQ(s.usage_missing, 0u);
}

TEST(RequestBody, TokenIdPromptIsAnIntegerArray) {
  protocol::GenRequest g;
  g.model = "m";
  g.prompt = "ignored";
  g.prompt_token_ids = {0, 19923, 2058};
  g.stream = false;
  const std::string body = protocol::build_request_body(protocol::Backend::Vllm, g);
  EXPECT_NE(body.find(R"("prompt":[0,19923,2058])"), std::string::npos) << body;
  g.chat = true;  // chat sends messages, never ids
  const std::string chat_body = protocol::build_request_body(protocol::Backend::OpenAIChat, g);
  EXPECT_NE(chat_body.find(R"("content":"ignored")"), std::string::npos) << chat_body;
}

}  // namespace
}  // namespace llmbench::loadgen
