// Decoder inputs of the wrong shape and SSE-level errors: servers seen in the wild send
// fields of the wrong JSON type, counts that are no counts, `event: error` and llama.cpp's
// `error:` field line.

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

// ---- wrong shapes -----------------------------------------------------------------

// A known field of the wrong JSON type is an error naming the field; it used to decode as an
// empty chunk, which counted as a success without output.
TEST(DecoderTest, WrongShapeIsAnErrorNamingTheField) {
  Decoder decoder;
  const std::vector<std::pair<std::string_view, std::string_view>> cases = {
      {R"({"choices":"x"})", "'choices' must be an array or null, got a string"},
      {R"({"choices":[{"index":0,"text":5}]})",
       "'choices[0].text' must be a string or null, got a number"},
      {R"({"choices":[7]})", "'choices[0]' must be an object or null, got a number"},
      {R"({"choices":[{"index":1,"text":"b"},{"index":0,"delta":[]}]})",
       "'choices[1].delta' must be an object or null, got an array"},
      {R"({"choices":[{"index":0,"delta":{"content":{"a":1}}}]})",
       "'choices[0].delta.content' must be a string or null, got an object"},
      {R"({"choices":[{"index":0,"delta":{"reasoning_content":true}}]})",
       "'choices[0].delta.reasoning_content' must be a string or null, got a boolean"},
      {R"({"choices":[{"index":0,"delta":{"tool_calls":"call"}}]
})",
       "'choices[0].delta.tool_calls' must be an array or null, got a string"},
      {R"({"choices":[{"index":0,"text":"a","finish_reason":1}]})",
       "'choices[0].finish_reason' must be a string or null, got a number"},
      {R"({"choices":[],"usage":"none"})", "'usage' must be an object or null, got a string"},
      {R"({"choices":[],"usage":{"completion_tokens":"5"}})",
       "'usage.completion_tokens' must be a number or null, got a string"},
  };
  for (const auto& [payload, message] : cases) {
    auto result = decoder.decode_event(payload);
    ASSERT_FALSE(result.has_value()) << payload;
    EXPECT_EQ(result.error().message, message) << payload;
    EXPECT_EQ(result.error().source, "stream event");
    auto body = decoder.decode_body(payload);
    ASSERT_FALSE(body.has_value()) << payload;
    EXPECT_EQ(body.error().source, "response body");
  }
  // null is absent, never a shape error.
  Delta d = decode_ok(decoder, R"({"choices":null,"usage":null})");
  EXPECT_FALSE(d.has_choice);
  d = decode_ok(decoder, R"({"choices":[{"index":0,"text":null,"finish_reason":null}]})");
  EXPECT_TRUE(d.has_choice);
  EXPECT_FALSE(d.has_output());
}

TEST(DecoderTest, NumbersThatAreNoCountReadAsInvalid) {
  Decoder decoder;
  for (std::string_view n : {"-3", "2.5", "1e30", "18446744073709551615"}) {
    const std::string payload =
        std::string(R"({"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":)") +
        std::string(n) + "}}";
    const Delta d = decode_ok(decoder, payload);
    ASSERT_TRUE(d.usage.has_value());
    EXPECT_EQ(d.usage->completion_tokens, kInvalidCount) << n;
    EXPECT_EQ(d.usage->prompt_tokens, 1);
  }
  // Counts near 2^31 and 2^63 are passed on as sent; the client bounds them.
  const Delta d = decode_ok(
      decoder,
      R"({"choices":[],"usage":{"prompt_tokens":2147483648,"completion_tokens":9223372036854775807}})");
  EXPECT_EQ(d.usage->prompt_tokens, 2147483648LL);
  EXPECT_EQ(d.usage->completion_tokens, 9223372036854775807LL);
}

TEST(DecoderTest, TimingsOutOfRangeAreAbsent) {
  Decoder decoder;
  const Delta d =
      decode_ok(decoder, R"({"choices":[],"timings":{"prompt_ms":-1.5,"predicted_ms":1e300}})");
  EXPECT_EQ(d.timings_prompt_ms, -1);
  EXPECT_EQ(d.timings_predicted_ms, -1);
}

// ---- SSE-level errors --------------------------------------------------------------

TEST(DecoderTest, ErrorEventTypeIsAnError) {
  Decoder decoder;
  auto d = decoder.decode_sse("error", R"({"error":{"message":"engine died","code":500}})");
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->is_error);
  EXPECT_EQ(d->error_message, "engine died");
  d = decoder.decode_sse("error", "plain text reason");
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->is_error);
  EXPECT_EQ(d->error_message, "plain text reason");
  // Any other type decodes the data as usual.
  d = decoder.decode_sse("message", R"({"choices":[{"index":0,"text":"a"}]})");
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->is_error);
  EXPECT_EQ(d->answer, "a");
}

TEST(DecoderTest, LlamacppErrorFieldLineIsAnError) {
  Decoder decoder;
  const auto d = decoder.decode_field(
      "error",
      R"({"code":500,"message":"the request exceeds the available context size","type":"exceed_context_size_error"})");
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->is_error);
  EXPECT_EQ(d->error_message, "the request exceeds the available context size");
  EXPECT_FALSE(decoder.decode_field("x-trace", "abc").has_value());
}

// A server can nest arrays without end. The error locator used to recurse once per level and
// overflowed the stack on about 12 KB of '[' under ASan (found by the protocol_decoder fuzz target,
// docs/reliability.md); now it stops at a fixed depth and the event is an ordinary parse error.
TEST(DecoderTest, DeeplyNestedInvalidJsonIsAParseErrorNotACrash) {
  Decoder decoder;
  for (const std::size_t depth : {600U, 20000U, 1000000U}) {
    const std::string payload = std::string(depth, '[') + "1,]";
    auto result = decoder.decode_event(payload);
    ASSERT_FALSE(result.has_value()) << depth;
    EXPECT_EQ(result.error().message, "invalid JSON in stream event") << depth;
    EXPECT_GE(result.error().offset, 0) << depth;
    EXPECT_LE(result.error().offset, static_cast<std::int64_t>(payload.size())) << depth;
  }
}

}  // namespace
}  // namespace llmbench::protocol
