// Fixture payloads follow the documented stream shapes of each server: OpenAI API reference ("The
// chat completion chunk object"), vLLM's OpenAI-compatible server (protocol.py response models),
// SGLang's OpenAI API adapter, the DeepSeek API docs ("Reasoning Model"), and the llama.cpp
// server README. They were written by hand for these tests.

#include "llmbench/protocol/openai.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench::protocol {
namespace {

Delta decode_ok(Decoder& decoder, std::string_view payload) {
  auto result = decoder.decode_event(payload);
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().what()) << "\n" << payload;
  return result ? std::move(*result) : Delta{};
}

// ---- [DONE] ----------------------------------------------------------------------------------

TEST(DecoderTest, DoneSentinel) {
  Decoder decoder;
  for (std::string_view done : {"[DONE]", " [DONE]", "[DONE]\r\n", "\t [DONE] \n"}) {
    const Delta d = decode_ok(decoder, done);
    EXPECT_TRUE(d.done) << done;
    EXPECT_FALSE(d.has_output());
    EXPECT_FALSE(d.is_error);
  }
  EXPECT_FALSE(decoder.decode_event("[DONE"));
  EXPECT_FALSE(decoder.decode_body("[DONE]"));  // bodies are never the sentinel
}

// ---- vLLM ------------------------------------------------------------------------------------

TEST(DecoderTest, VllmCompletionsStream) {
  const std::vector<std::string_view> stream = {
      R"({"id":"cmpl-8d1e0c4b","object":"text_completion","created":1718000000,"model":"deepseek-ai/DeepSeek-R1-Distill-Qwen-7B","choices":[{"index":0,"text":" Paris","logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null})",
      R"({"id":"cmpl-8d1e0c4b","object":"text_completion","created":1718000000,"model":"deepseek-ai/DeepSeek-R1-Distill-Qwen-7B","choices":[{"index":0,"text":".","logprobs":null,"finish_reason":"length","stop_reason":null}],"usage":null})",
      R"({"id":"cmpl-8d1e0c4b","object":"text_completion","created":1718000000,"model":"deepseek-ai/DeepSeek-R1-Distill-Qwen-7B","choices":[],"usage":{"prompt_tokens":6,"total_tokens":8,"completion_tokens":2,"prompt_tokens_details":null}})",
  };
  Decoder decoder;
  Delta d = decode_ok(decoder, stream[0]);
  EXPECT_TRUE(d.has_choice);
  EXPECT_EQ(d.answer, " Paris");
  EXPECT_TRUE(d.reasoning.empty());
  EXPECT_TRUE(d.finish_reason.empty());
  EXPECT_FALSE(d.usage.has_value());
  EXPECT_FALSE(d.role_only);
  EXPECT_TRUE(d.has_output());

  d = decode_ok(decoder, stream[1]);
  EXPECT_EQ(d.answer, ".");
  EXPECT_EQ(d.finish_reason, "length");

  d = decode_ok(decoder, stream[2]);
  EXPECT_FALSE(d.has_choice);
  EXPECT_FALSE(d.has_output());
  ASSERT_TRUE(d.usage.has_value());
  EXPECT_EQ(d.usage->prompt_tokens, 6);
  EXPECT_EQ(d.usage->completion_tokens, 2);
  EXPECT_EQ(d.usage->reasoning_tokens, -1);
  EXPECT_EQ(d.usage->cached_tokens, -1);
}

TEST(DecoderTest, VllmChatStreamWithContinuousUsage) {
  // stream_options: {include_usage: true, continuous_usage_stats: true}: usage on every chunk.
  const std::vector<std::string_view> stream = {
      R"({"id":"chatcmpl-5b7c","object":"chat.completion.chunk","created":1718000001,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":20,"total_tokens":20,"completion_tokens":0}})",
      R"({"id":"chatcmpl-5b7c","object":"chat.completion.chunk","created":1718000001,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":20,"total_tokens":21,"completion_tokens":1}})",
      R"({"id":"chatcmpl-5b7c","object":"chat.completion.chunk","created":1718000001,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"content":" there!"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":20,"total_tokens":23,"completion_tokens":3}})",
      R"({"id":"chatcmpl-5b7c","object":"chat.completion.chunk","created":1718000001,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}],"usage":{"prompt_tokens":20,"total_tokens":23,"completion_tokens":3}})",
      R"({"id":"chatcmpl-5b7c","object":"chat.completion.chunk","created":1718000001,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[],"usage":{"prompt_tokens":20,"total_tokens":23,"completion_tokens":3}})",
  };
  Decoder decoder;
  Delta d = decode_ok(decoder, stream[0]);
  EXPECT_TRUE(d.role_only);
  EXPECT_FALSE(d.has_output());
  ASSERT_TRUE(d.usage);
  EXPECT_EQ(d.usage->completion_tokens, 0);

  d = decode_ok(decoder, stream[1]);
  EXPECT_FALSE(d.role_only);
  EXPECT_EQ(d.answer, "Hello");
  ASSERT_TRUE(d.usage);
  EXPECT_EQ(d.usage->completion_tokens, 1);
  EXPECT_EQ(d.usage->prompt_tokens, 20);

  d = decode_ok(decoder, stream[2]);
  EXPECT_EQ(d.answer, " there!");
  EXPECT_EQ(d.usage->completion_tokens, 3);  // MTP / speculative: 2 tokens in this chunk

  d = decode_ok(decoder, stream[3]);
  EXPECT_FALSE(d.has_output());
  EXPECT_FALSE(d.role_only);  // no role field
  EXPECT_EQ(d.finish_reason, "stop");

  d = decode_ok(decoder, stream[4]);
  EXPECT_FALSE(d.has_choice);
  EXPECT_EQ(d.usage->completion_tokens, 3);
}

TEST(DecoderTest, VllmReasoningFieldNames) {
  Decoder decoder;
  Delta d = decode_ok(
      decoder,
      R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"deepseek-ai/DeepSeek-R1","choices":[{"index":0,"delta":{"reasoning_content":"Okay, the user"},"logprobs":null,"finish_reason":null}]})");
  EXPECT_EQ(d.reasoning, "Okay, the user");
  EXPECT_TRUE(d.answer.empty());
  EXPECT_TRUE(d.has_output());

  // Newer vLLM: `reasoning`.
  d = decode_ok(
      decoder,
      R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"openai/gpt-oss-20b","choices":[{"index":0,"delta":{"reasoning":" wants"},"logprobs":null,"finish_reason":null}]})");
  EXPECT_EQ(d.reasoning, " wants");

  // Both names carrying the same text during the rename: counted once.
  d = decode_ok(
      decoder,
      R"({"choices":[{"index":0,"delta":{"reasoning_content":"abc","reasoning":"abc"}}]})");
  EXPECT_EQ(d.reasoning, "abc");
  d = decode_ok(decoder,
                R"({"choices":[{"index":0,"delta":{"reasoning":null,"reasoning_content":"x"}}]})");
  EXPECT_EQ(d.reasoning, "x");
}

// ---- SGLang ----------------------------------------------------------------------------------

TEST(DecoderTest, SglangChatWithReasoningContent) {
  // SGLang serializes every delta field, with nulls, and role only on the first chunk.
  const std::vector<std::string_view> stream = {
      R"({"id":"3e5f0c1a9b2d4e6f","object":"chat.completion.chunk","created":1718000002,"model":"deepseek-ai/DeepSeek-R1","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null})",
      R"({"id":"3e5f0c1a9b2d4e6f","object":"chat.completion.chunk","created":1718000002,"model":"deepseek-ai/DeepSeek-R1","choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":"Let me think","tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null})",
      R"({"id":"3e5f0c1a9b2d4e6f","object":"chat.completion.chunk","created":1718000002,"model":"deepseek-ai/DeepSeek-R1","choices":[{"index":0,"delta":{"role":null,"content":"42","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null})",
      R"({"id":"3e5f0c1a9b2d4e6f","object":"chat.completion.chunk","created":1718000002,"model":"deepseek-ai/DeepSeek-R1","choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"stop","matched_stop":1}],"usage":null})",
      R"({"id":"3e5f0c1a9b2d4e6f","object":"chat.completion.chunk","created":1718000002,"model":"deepseek-ai/DeepSeek-R1","choices":[],"usage":{"prompt_tokens":11,"total_tokens":311,"completion_tokens":300,"prompt_tokens_details":{"cached_tokens":8},"reasoning_tokens":0}})",
  };
  Decoder decoder;
  Delta d = decode_ok(decoder, stream[0]);
  EXPECT_TRUE(d.role_only);
  EXPECT_FALSE(d.has_output());

  d = decode_ok(decoder, stream[1]);
  EXPECT_FALSE(d.role_only);  // role: null is not a role
  EXPECT_EQ(d.reasoning, "Let me think");
  EXPECT_TRUE(d.answer.empty());
  EXPECT_FALSE(d.tool_call);

  d = decode_ok(decoder, stream[2]);
  EXPECT_EQ(d.answer, "42");
  EXPECT_TRUE(d.reasoning.empty());

  d = decode_ok(decoder, stream[3]);
  EXPECT_FALSE(d.has_output());
  EXPECT_FALSE(d.role_only);
  EXPECT_EQ(d.finish_reason, "stop");
  EXPECT_FALSE(d.usage);

  d = decode_ok(decoder, stream[4]);
  ASSERT_TRUE(d.usage);
  EXPECT_EQ(d.usage->prompt_tokens, 11);
  EXPECT_EQ(d.usage->completion_tokens, 300);
  EXPECT_EQ(d.usage->cached_tokens, 8);
  EXPECT_EQ(d.usage->reasoning_tokens, -1);  // only completion_tokens_details counts
}

// ---- DeepSeek API ----------------------------------------------------------------------------

TEST(DecoderTest, DeepseekReasonerReasoningThenContent) {
  const std::vector<std::string_view> stream = {
      R"({"id":"0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b","object":"chat.completion.chunk","created":1738000000,"model":"deepseek-reasoner","system_fingerprint":"fp_5417b77867_prod0225","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"logprobs":null,"finish_reason":null}]})",
      R"({"id":"0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b","object":"chat.completion.chunk","created":1738000000,"model":"deepseek-reasoner","system_fingerprint":"fp_5417b77867_prod0225","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"Okay"},"logprobs":null,"finish_reason":null}]})",
      R"({"id":"0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b","object":"chat.completion.chunk","created":1738000000,"model":"deepseek-reasoner","system_fingerprint":"fp_5417b77867_prod0225","choices":[{"index":0,"delta":{"content":"Hello","reasoning_content":null},"logprobs":null,"finish_reason":null}]})",
      R"({"id":"0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b","object":"chat.completion.chunk","created":1738000000,"model":"deepseek-reasoner","system_fingerprint":"fp_5417b77867_prod0225","choices":[{"index":0,"delta":{"content":"","reasoning_content":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":13,"completion_tokens":245,"total_tokens":258,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":210},"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":13}})",
  };
  Decoder decoder;
  Delta d = decode_ok(decoder, stream[0]);
  EXPECT_TRUE(d.role_only);

  d = decode_ok(decoder, stream[1]);
  EXPECT_EQ(d.reasoning, "Okay");
  EXPECT_TRUE(d.answer.empty());

  d = decode_ok(decoder, stream[2]);
  EXPECT_EQ(d.answer, "Hello");
  EXPECT_TRUE(d.reasoning.empty());

  d = decode_ok(decoder, stream[3]);
  EXPECT_FALSE(d.has_output());
  EXPECT_EQ(d.finish_reason, "stop");
  ASSERT_TRUE(d.usage);
  EXPECT_EQ(d.usage->prompt_tokens, 13);
  EXPECT_EQ(d.usage->completion_tokens, 245);
  EXPECT_EQ(d.usage->reasoning_tokens, 210);
  EXPECT_EQ(d.usage->cached_tokens, 0);
}

TEST(DecoderTest, DeepseekCacheHitTokensFallback) {
  Decoder decoder;
  const Delta d = decode_ok(
      decoder,
      R"({"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":5,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36}})");
  ASSERT_TRUE(d.usage);
  EXPECT_EQ(d.usage->cached_tokens, 64);
}

// ---- llama.cpp -------------------------------------------------------------------------------

TEST(DecoderTest, LlamacppCompletionsStreamWithTimings) {
  const std::vector<std::string_view> stream = {
      R"({"choices":[{"text":" Paris","index":0,"logprobs":null,"finish_reason":null}],"created":1740000000,"model":"gpt-3.5-turbo","system_fingerprint":"b4739-0d559580","object":"text_completion","id":"chatcmpl-Qk3bW1lYx"})",
      R"({"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"length"}],"created":1740000000,"model":"gpt-3.5-turbo","system_fingerprint":"b4739-0d559580","object":"text_completion","id":"chatcmpl-Qk3bW1lYx","usage":{"completion_tokens":16,"prompt_tokens":5,"total_tokens":21},"timings":{"prompt_n":5,"prompt_ms":12.5,"prompt_per_token_ms":2.5,"prompt_per_second":400.0,"predicted_n":16,"predicted_ms":200.25,"predicted_per_token_ms":12.515625,"predicted_per_second":79.9}})",
  };
  Decoder decoder;
  Delta d = decode_ok(decoder, stream[0]);
  EXPECT_EQ(d.answer, " Paris");
  EXPECT_EQ(d.timings_prompt_n, -1);
  EXPECT_EQ(d.timings_predicted_ms, -1);

  d = decode_ok(decoder, stream[1]);
  EXPECT_FALSE(d.has_output());
  EXPECT_EQ(d.finish_reason, "length");
  ASSERT_TRUE(d.usage);
  EXPECT_EQ(d.usage->completion_tokens, 16);
  EXPECT_EQ(d.usage->prompt_tokens, 5);
  EXPECT_EQ(d.timings_prompt_n, 5);
  EXPECT_DOUBLE_EQ(d.timings_prompt_ms, 12.5);
  EXPECT_EQ(d.timings_predicted_n, 16);
  EXPECT_DOUBLE_EQ(d.timings_predicted_ms, 200.25);
}

TEST(DecoderTest, LlamacppChatFinalChunkWithEmptyDelta) {
  Decoder decoder;
  const Delta d = decode_ok(
      decoder,
      R"({"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1740000001,"id":"chatcmpl-x","model":"qwen","system_fingerprint":"b4739","object":"chat.completion.chunk","usage":{"completion_tokens":3,"prompt_tokens":9,"total_tokens":12},"timings":{"prompt_n":9,"prompt_ms":4,"predicted_n":3,"predicted_ms":30}})");
  EXPECT_FALSE(d.role_only);
  EXPECT_FALSE(d.has_output());
  EXPECT_EQ(d.finish_reason, "stop");
  EXPECT_DOUBLE_EQ(d.timings_prompt_ms, 4.0);  // integers are accepted as ms
  EXPECT_DOUBLE_EQ(d.timings_predicted_ms, 30.0);
}

// ---- OpenAI ----------------------------------------------------------------------------------

TEST(DecoderTest, OpenAIUsageOnlyFinalChunk) {
  Decoder decoder;
  Delta d = decode_ok(
      decoder,
      R"({"id":"chatcmpl-AbC","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}],"usage":null})");
  EXPECT_EQ(d.answer, " world");
  EXPECT_FALSE(d.usage);

  d = decode_ok(
      decoder,
      R"({"id":"chatcmpl-AbC","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}})");
  EXPECT_FALSE(d.has_choice);
  EXPECT_FALSE(d.has_output());
  ASSERT_TRUE(d.usage);
  EXPECT_EQ(d.usage->prompt_tokens, 9);
  EXPECT_EQ(d.usage->completion_tokens, 12);
  EXPECT_EQ(d.usage->reasoning_tokens, 0);
  EXPECT_EQ(d.usage->cached_tokens, 0);
}

TEST(DecoderTest, UsageDetailsNullOrAbsent) {
  Decoder decoder;
  const Delta d = decode_ok(
      decoder,
      R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"completion_tokens_details":null,"prompt_tokens_details":{"cached_tokens":null}}})");
  ASSERT_TRUE(d.usage);
  EXPECT_EQ(d.usage->reasoning_tokens, -1);
  EXPECT_EQ(d.usage->cached_tokens, -1);
  const Delta e = decode_ok(decoder, R"({"choices":[],"usage":{}})");
  ASSERT_TRUE(e.usage);
  EXPECT_EQ(e.usage->prompt_tokens, -1);
  EXPECT_EQ(e.usage->completion_tokens, -1);
}

TEST(DecoderTest, ContentNullVersusEmpty) {
  Decoder decoder;
  // Role with content null: role-only.
  Delta d = decode_ok(
      decoder,
      R"({"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]})");
  EXPECT_TRUE(d.role_only);
  EXPECT_FALSE(d.has_output());
  // Role-only without a content key.
  d = decode_ok(decoder, R"({"choices":[{"index":0,"delta":{"role":"assistant"}}]})");
  EXPECT_TRUE(d.role_only);
  // Content "" without a role: not role-only, no output.
  d = decode_ok(decoder, R"({"choices":[{"index":0,"delta":{"content":""}}]})");
  EXPECT_FALSE(d.role_only);
  EXPECT_FALSE(d.has_output());
  EXPECT_TRUE(d.has_choice);
  // Content null without a role: same.
  d = decode_ok(decoder, R"({"choices":[{"index":0,"delta":{"content":null}}]})");
  EXPECT_FALSE(d.role_only);
  EXPECT_FALSE(d.has_output());
  // Role together with real content: output, not role-only.
  d = decode_ok(decoder,
                R"({"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]})");
  EXPECT_FALSE(d.role_only);
  EXPECT_EQ(d.answer, "Hi");
}

TEST(DecoderTest, ToolCallDeltas) {
  const std::vector<std::string_view> stream = {
      R"({"id":"chatcmpl-T","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA","type":"function","function":{"name":"get_weather","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}]})",
      R"({"id":"chatcmpl-T","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]},"logprobs":null,"finish_reason":null}]})",
      R"({"id":"chatcmpl-T","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"location"}},{"index":1,"id":"call_2","type":"function","function":{"name":"now","arguments":"{}"}}]},"logprobs":null,"finish_reason":null}]})",
      R"({"id":"chatcmpl-T","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]})",
  };
  Decoder decoder;
  Delta d = decode_ok(decoder, stream[0]);
  EXPECT_TRUE(d.tool_call);
  EXPECT_EQ(d.tool_call_bytes, 11U);  // "get_weather"
  EXPECT_FALSE(d.role_only);
  EXPECT_TRUE(d.has_output());
  EXPECT_TRUE(d.answer.empty());

  d = decode_ok(decoder, stream[1]);
  EXPECT_TRUE(d.tool_call);
  EXPECT_EQ(d.tool_call_bytes, 2U);  // {" after unescaping

  d = decode_ok(decoder, stream[2]);
  EXPECT_EQ(d.tool_call_bytes, 8U + 3U + 2U);  // "location" + "now" + "{}"

  d = decode_ok(decoder, stream[3]);
  EXPECT_FALSE(d.tool_call);
  EXPECT_EQ(d.tool_call_bytes, 0U);
  EXPECT_EQ(d.finish_reason, "tool_calls");

  // SGLang sends `tool_calls: null` and vLLM sometimes `[]`: neither is a tool call.
  d = decode_ok(decoder, R"({"choices":[{"index":0,"delta":{"content":"x","tool_calls":[]}}]})");
  EXPECT_FALSE(d.tool_call);
}

// ---- errors ----------------------------------------------------------------------------------

TEST(DecoderTest, ErrorObjectInsideStream) {
  Decoder decoder;
  Delta d = decode_ok(
      decoder,
      R"({"error":{"object":"error","message":"The decoder prompt (length 9000) is longer than the maximum model length of 8192.","type":"BadRequestError","param":null,"code":400}})");
  EXPECT_TRUE(d.is_error);
  EXPECT_EQ(d.error_message,
            "The decoder prompt (length 9000) is longer than the maximum model length of 8192.");
  EXPECT_FALSE(d.has_output());

  // Older vLLM: the ErrorResponse itself.
  d = decode_ok(
      decoder,
      R"({"object":"error","message":"CUDA out of memory","type":"InternalServerError","param":null,"code":500})");
  EXPECT_TRUE(d.is_error);
  EXPECT_EQ(d.error_message, "CUDA out of memory");

  // Error without a message: the raw payload.
  d = decode_ok(decoder, R"({"error":{"code":500}})");
  EXPECT_TRUE(d.is_error);
  EXPECT_EQ(d.error_message, R"({"error":{"code":500}})");

  d = decode_ok(decoder, R"({"error":"upstream closed"})");
  EXPECT_TRUE(d.is_error);
  EXPECT_EQ(d.error_message, "upstream closed");

  // `error: null` and `object: "chat.completion.chunk"` are not errors.
  d = decode_ok(decoder, R"({"object":"chat.completion.chunk","error":null,"choices":[]})");
  EXPECT_FALSE(d.is_error);
}

TEST(DecoderTest, InvalidJsonReportsError) {
  Decoder decoder;
  for (std::string_view bad :
       {"", "   ", "hello", R"({"choices":[)", R"({"a":1,})",
        R"({"choices":[{"text":"unterminated}]})", R"({"a":1} x)", R"({"a":tru})"}) {
    auto result = decoder.decode_event(bad);
    ASSERT_FALSE(result) << bad;
    EXPECT_EQ(result.error().message, "invalid JSON in stream event") << bad;
    EXPECT_GE(result.error().offset, 0) << bad;
    EXPECT_LE(result.error().offset, static_cast<std::int64_t>(bad.size())) << bad;
  }
  // The decoder stays usable after an error.
  const Delta d = decode_ok(decoder, R"({"choices":[{"index":0,"text":"ok"}]})");
  EXPECT_EQ(d.answer, "ok");
}

TEST(DecoderTest, InvalidJsonOffsetPointsAtTheProblem) {
  struct Case {
    std::string_view payload;
    std::int64_t offset;
  };
  const Case cases[] = {
      {R"({"choices":[{"text":}]})", 20},               // '}' where a value should be
      {R"({"choices":[)", 12},                          // ends inside the array
      {R"({"a":1,})", 7},                               // trailing comma
      {R"({"a":1} x)", 8},                              // trailing content
      {R"({"a":tru})", 5},                              // bad literal
      {R"({"x":{"y":[1,{"z":nul}]}})", 18},             // bad literal, nested
      {R"({"a" 1})", 5},                                // missing colon
      {R"({"choices":[{"text":"unterminated}]})", 20},  // opening quote of the unclosed string
      {R"({"a":"\"","b":"open})", 14},                  // escaped quote is not a close
      {"{\"a\":\"x\ty\"}", 7},                          // raw control character in a string
      {"{\"a\":\"ok\xe4\xbd\"}", 8},                    // truncated UTF-8 sequence
      {"{\"a\":\"\xed\xa0\x80\"}", 6},                  // UTF-8-encoded surrogate
  };
  Decoder decoder;
  for (const auto& c : cases) {
    auto result = decoder.decode_event(c.payload);
    ASSERT_FALSE(result) << c.payload;
    EXPECT_EQ(result.error().offset, c.offset) << c.payload;
    EXPECT_EQ(result.error().source, "stream event");
  }
}

TEST(DecoderTest, NonObjectJsonIsAnError) {
  Decoder decoder;
  for (std::string_view bad : {"[1,2]", "42", R"("text")", "null"}) {
    auto result = decoder.decode_event(bad);
    ASSERT_FALSE(result) << bad;
    EXPECT_EQ(result.error().offset, 0);
  }
}

// ---- unicode ---------------------------------------------------------------------------------

TEST(DecoderTest, UnicodeEscapesDecodeToUtf8) {
  Decoder decoder;
  const Delta d = decode_ok(
      decoder,
      R"({"choices":[{"index":0,"delta":{"content":"\u4f60\u597d \ud83d\ude00 caf\u00e9\n\"q\""}}]})");
  EXPECT_EQ(d.answer, "\xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80 caf\xc3\xa9\n\"q\"");
  EXPECT_EQ(d.answer.size(), 3U + 3U + 1U + 4U + 1U + 5U + 1U + 3U);

  // Raw UTF-8 passes through unchanged.
  const Delta raw = decode_ok(decoder, "{\"choices\":[{\"index\":0,\"text\":\"\xe4\xbd\xa0\"}]}");
  EXPECT_EQ(raw.answer, "\xe4\xbd\xa0");
}

TEST(DecoderTest, InvalidUtf8IsRejected) {
  Decoder decoder;
  EXPECT_FALSE(decoder.decode_event("{\"choices\":[{\"text\":\"\xff\xfe\"}]}"));
}

// ---- multiple choices ------------------------------------------------------------------------

TEST(DecoderTest, OnlyChoiceIndexZeroIsDecoded) {
  Decoder decoder;
  Delta d = decode_ok(decoder, R"({"choices":[{"index":1,"text":"B","finish_reason":null}]})");
  EXPECT_TRUE(d.has_choice);
  EXPECT_FALSE(d.has_output());

  d = decode_ok(
      decoder,
      R"({"choices":[{"index":1,"text":"B"},{"index":0,"text":"A","finish_reason":"stop"}]})");
  EXPECT_EQ(d.answer, "A");
  EXPECT_EQ(d.finish_reason, "stop");

  d = decode_ok(decoder, R"({"choices":[{"text":"no index"}]})");
  EXPECT_EQ(d.answer, "no index");
}

// ---- non-streamed bodies ---------------------------------------------------------------------

TEST(DecoderBodyTest, CompletionBody) {
  Decoder decoder;
  auto result = decoder.decode_body(
      R"({"id":"cmpl-1","object":"text_completion","created":1718000000,"model":"m","choices":[{"index":0,"text":" Paris is the capital.","logprobs":null,"finish_reason":"stop","stop_reason":null,"prompt_logprobs":null}],"usage":{"prompt_tokens":6,"total_tokens":12,"completion_tokens":6,"prompt_tokens_details":null}})");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->answer, " Paris is the capital.");
  EXPECT_EQ(result->finish_reason, "stop");
  EXPECT_FALSE(result->done);
  ASSERT_TRUE(result->usage);
  EXPECT_EQ(result->usage->completion_tokens, 6);
}

TEST(DecoderBodyTest, ChatBodyWithReasoning) {
  Decoder decoder;
  auto result = decoder.decode_body(
      R"({"id":"chatcmpl-1","object":"chat.completion","created":1738000000,"model":"deepseek-reasoner","choices":[{"index":0,"message":{"role":"assistant","content":"9.11 < 9.8","reasoning_content":"Compare decimals."},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":30,"total_tokens":50,"completion_tokens_details":{"reasoning_tokens":22},"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":20}})");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->answer, "9.11 < 9.8");
  EXPECT_EQ(result->reasoning, "Compare decimals.");
  EXPECT_FALSE(result->role_only);
  EXPECT_EQ(result->usage->reasoning_tokens, 22);
  EXPECT_EQ(result->usage->cached_tokens, 0);
}

TEST(DecoderBodyTest, ChatBodyWithToolCallsAndNullContent) {
  Decoder decoder;
  auto result = decoder.decode_body(
      R"({"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"message":{"role":"assistant","content":null,"reasoning":null,"tool_calls":[{"id":"chatcmpl-tool-1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":200,"completion_tokens":21,"total_tokens":221}})");
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->answer.empty());
  EXPECT_TRUE(result->tool_call);
  EXPECT_EQ(result->tool_call_bytes, 11U + 17U);
  EXPECT_FALSE(result->role_only);  // only stream events are role-only
  EXPECT_EQ(result->finish_reason, "tool_calls");
}

TEST(DecoderBodyTest, LlamacppBodyTimingsAndErrors) {
  Decoder decoder;
  auto result = decoder.decode_body(
      R"({"choices":[{"text":"Hi","index":0,"logprobs":null,"finish_reason":"length"}],"created":1,"model":"gpt-3.5-turbo","object":"text_completion","usage":{"completion_tokens":1,"prompt_tokens":2,"total_tokens":3},"id":"x","timings":{"prompt_n":2,"prompt_ms":1.5,"predicted_n":1,"predicted_ms":7.25}})");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->timings_predicted_n, 1);
  EXPECT_DOUBLE_EQ(result->timings_predicted_ms, 7.25);
  EXPECT_EQ(result->timings_prompt_n, 2);

  result = decoder.decode_body(
      R"({"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}})");
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->is_error);
  EXPECT_EQ(result->error_message, "the request exceeds the available context size");

  result = decoder.decode_body("<html>502 Bad Gateway</html>");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "invalid JSON in response body");
  EXPECT_EQ(result.error().source, "response body");
}

TEST(DecoderBodyTest, LargeBodyGrowsBufferAndSmallAfterwards) {
  Decoder decoder;
  std::string big(100000, 'z');
  auto result = decoder.decode_body(R"({"choices":[{"index":0,"text":")" + big + R"("}]})");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->answer.size(), big.size());
  const Delta d = decode_ok(decoder, R"({"choices":[{"index":0,"text":"s"}]})");
  EXPECT_EQ(d.answer, "s");
}

TEST(DecoderTest, MovedDecoderKeepsWorking) {
  Decoder a;
  Decoder b = std::move(a);
  EXPECT_EQ(decode_ok(b, R"({"choices":[{"index":0,"text":"m"}]})").answer, "m");
  Decoder c;
  c = std::move(b);
  EXPECT_EQ(decode_ok(c, R"({"choices":[{"index":0,"text":"n"}]})").answer, "n");
}

}  // namespace
}  // namespace llmbench::protocol
