#include "llmbench/loadgen/request_handler.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace llmbench::loadgen {
namespace {

using metrics::Channel;
using metrics::ErrorKind;
using metrics::RequestRecord;

constexpr TimeNs kStart = 1'000'000'000;  // absolute steady time of the run start

/// Drives a RecordingHandler with (time_ms, bytes) pieces as the HTTP client would.
struct Driver {
  RequestRecord rec;
  protocol::Decoder decoder;
  RecordingHandler handler;

  explicit Driver(bool stream = true) : handler(rec, decoder, stream, kStart) {}

  void run(int status, const std::vector<std::pair<double, std::string>>& pieces,
           http::Outcome outcome = {}, double end_ms = -1) {
    handler.on_sent(kStart);
    handler.on_headers(status, kStart + 1'000'000);
    double last = 1;
    for (const auto& [ms, bytes] : pieces) {
      handler.on_body(bytes, kStart + static_cast<TimeNs>(ms * 1e6));
      last = ms;
    }
    outcome.status = status;
    if (outcome.failure == http::Failure::None) {
      outcome.body_complete = true;
    }
    handler.finish(outcome, kStart + static_cast<TimeNs>((end_ms < 0 ? last : end_ms) * 1e6));
  }
};

std::string chat(const std::string& delta, const std::string& extra = "") {
  return "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":" +
         delta + ",\"finish_reason\":null}]" + extra + "}\n\n";
}

TEST(RecordingHandler, RoleOnlyAndEmptyChunksAreNotOutput) {
  Driver d;
  d.run(200, {{10, chat(R"({"role":"assistant","content":""})")},
              {20, chat(R"({"content":""})")},
              {30, chat(R"({"content":"Hello"})")},
              {40, chat(R"({"content":" world"})")},
              {41,
               "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}"
               "\n\ndata: [DONE]\n\n"}});
  ASSERT_TRUE(d.rec.ok()) << d.rec.error_message;
  ASSERT_EQ(d.rec.chunks.size(), 2U);
  EXPECT_EQ(d.rec.chunks[0].time_ns, 30'000'000);  // TTFT at the first content, not the role
  EXPECT_EQ(d.rec.chunks[0].bytes, 5);
  EXPECT_EQ(d.rec.chunks[0].tokens, -1);  // no per-chunk usage: unknown
  EXPECT_EQ(d.rec.output_tokens, 2);
  EXPECT_EQ(d.rec.input_tokens, 5);
  EXPECT_EQ(d.rec.output_tokens_local, -1);
  EXPECT_EQ(d.rec.sent_ns, 0);
  EXPECT_EQ(d.rec.headers_ns, 1'000'000);
  EXPECT_EQ(d.rec.done_ns, 41'000'000);
}

TEST(RecordingHandler, ContinuousUsageGivesExactChunkTokens) {
  Driver d;
  const auto u = [](int n) {
    return ",\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":" + std::to_string(n) + "}";
  };
  d.run(200, {{5, chat(R"({"role":"assistant","content":""})", u(0))},
              {10, chat(R"({"content":"a b"})", u(2))},
              {14, chat(R"({"content":" c d e"})", u(5))},
              {15, "data: [DONE]\n\n"}});
  ASSERT_TRUE(d.rec.ok());
  ASSERT_EQ(d.rec.chunks.size(), 2U);
  EXPECT_EQ(d.rec.chunks[0].tokens, 2);
  EXPECT_EQ(d.rec.chunks[1].tokens, 3);
  EXPECT_EQ(d.rec.output_tokens, 5);
  EXPECT_EQ(d.rec.output_tokens_local, 5);
}

TEST(RecordingHandler, UsageOnlyOnLastContentChunkIsNotThatChunksCount) {
  Driver d;
  d.run(200, {{10, chat(R"({"content":"a"})")},
              {20, chat(R"({"content":"b"})", ",\"usage\":{\"completion_tokens\":7}")},
              {21, "data: [DONE]\n\n"}});
  ASSERT_EQ(d.rec.chunks.size(), 2U);
  EXPECT_EQ(d.rec.chunks[1].tokens, -1);
  EXPECT_EQ(d.rec.output_tokens, 7);
}

TEST(RecordingHandler, ReasoningThenAnswerChannels) {
  Driver d;
  d.run(200, {{10, chat(R"({"reasoning_content":"think"})")},
              {20, chat(R"({"reasoning":"more"})")},
              {30, chat(R"({"content":"answer"})")},
              {31, "data: [DONE]\n\n"}});
  ASSERT_EQ(d.rec.chunks.size(), 3U);
  EXPECT_EQ(d.rec.chunks[0].channel, Channel::Reasoning);
  EXPECT_EQ(d.rec.chunks[1].channel, Channel::Reasoning);
  EXPECT_EQ(d.rec.chunks[2].channel, Channel::Answer);
}

TEST(RecordingHandler, EventSplitAcrossReadsIsTimedAtItsLastByte) {
  Driver d;
  const std::string ev = chat(R"({"content":"xyz"})");
  d.run(200, {{10, ev.substr(0, 17)}, {25, ev.substr(17)}, {26, "data: [DONE]\n\n"}});
  ASSERT_EQ(d.rec.chunks.size(), 1U);
  EXPECT_EQ(d.rec.chunks[0].time_ns, 25'000'000);
}

TEST(RecordingHandler, ErrorObjectInside200Stream) {
  Driver d;
  d.run(200, {{10, chat(R"({"content":"a"})")},
              {20, "data: {\"error\":{\"message\":\"KV cache full\",\"code\":500}}\n\n"}});
  EXPECT_EQ(d.rec.error_kind, ErrorKind::StreamError);
  EXPECT_NE(d.rec.error_message.find("KV cache full"), std::string::npos);
  EXPECT_TRUE(d.handler.want_stop());
}

TEST(RecordingHandler, InvalidJsonIsAParseError) {
  Driver d;
  d.run(200, {{10, "data: {\"choices\": [\n\n"}});
  EXPECT_EQ(d.rec.error_kind, ErrorKind::Parse);
}

TEST(RecordingHandler, StreamWithoutDoneOrFinishReasonIsAnError) {
  Driver d;
  d.run(200, {{10, chat(R"({"content":"a"})")}});
  EXPECT_EQ(d.rec.error_kind, ErrorKind::StreamError);
}

TEST(RecordingHandler, StreamWithFinishReasonButNoDoneIsAccepted) {
  Driver d;
  d.run(200, {{10,
               "data: {\"choices\":[{\"index\":0,\"text\":\"a\",\"finish_reason\":\"length\"}]}"
               "\n\n"}});
  EXPECT_TRUE(d.rec.ok()) << d.rec.error_message;
  EXPECT_EQ(d.rec.finish_reason, "length");
}

TEST(RecordingHandler, HttpErrorsByClass) {
  Driver d4;
  d4.run(429, {{5, "rate limited, slow down"}});
  EXPECT_EQ(d4.rec.error_kind, ErrorKind::Http4xx);
  EXPECT_NE(d4.rec.error_message.find("429"), std::string::npos);
  EXPECT_NE(d4.rec.error_message.find("rate limited"), std::string::npos);
  Driver d5;
  d5.run(503, {{5, R"({"error":{"message":"overloaded","type":"server_error"}})"}});
  EXPECT_EQ(d5.rec.error_kind, ErrorKind::Http5xx);
  EXPECT_NE(d5.rec.error_message.find("overloaded"), std::string::npos);
}

TEST(RecordingHandler, ConnectionClosedMidStream) {
  Driver d;
  http::Outcome out;
  out.failure = http::Failure::Closed;
  out.message = "reading body: end of stream";
  d.run(200, {{10, chat(R"({"content":"a"})")}}, out);
  EXPECT_EQ(d.rec.error_kind, ErrorKind::StreamError);
  ASSERT_EQ(d.rec.chunks.size(), 1U);  // what arrived is kept
}

TEST(RecordingHandler, TransportFailuresMapToKinds) {
  EXPECT_EQ(error_kind_for(http::Failure::Connect, false), ErrorKind::Connect);
  EXPECT_EQ(error_kind_for(http::Failure::Timeout, true), ErrorKind::Timeout);
  EXPECT_EQ(error_kind_for(http::Failure::Closed, false), ErrorKind::Connect);
  EXPECT_EQ(error_kind_for(http::Failure::Closed, true), ErrorKind::StreamError);
  EXPECT_EQ(error_kind_for(http::Failure::Cancelled, true), ErrorKind::Cancelled);
}

TEST(RecordingHandler, NonStreamingBodyIsOneChunkAtTheEnd) {
  Driver d(false);
  d.run(200,
        {{50, R"({"object":"text_completion","choices":[{"index":0,"text":"hello there",)"
              R"("finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":3}})"}},
        {}, 60);
  ASSERT_TRUE(d.rec.ok()) << d.rec.error_message;
  ASSERT_EQ(d.rec.chunks.size(), 1U);
  EXPECT_EQ(d.rec.chunks[0].time_ns, 60'000'000);
  EXPECT_EQ(d.rec.chunks[0].tokens, 3);
  EXPECT_EQ(d.rec.output_tokens, 3);
}

TEST(RecordingHandler, LlamaCppTimingsAreKept) {
  Driver d;
  d.run(200, {{10, "data: {\"choices\":[{\"index\":0,\"text\":\"x\",\"finish_reason\":null}]}\n\n"},
              {20,
               "data: {\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"length\"}],"
               "\"usage\":{\"completion_tokens\":1,\"prompt_tokens\":5},\"timings\":{"
               "\"prompt_n\":5,\"prompt_ms\":2.5,\"predicted_n\":1,\"predicted_ms\":3.25}}\n\n"
               "data: [DONE]\n\n"}});
  ASSERT_TRUE(d.rec.ok());
  EXPECT_DOUBLE_EQ(d.rec.server_prompt_ms, 2.5);
  EXPECT_DOUBLE_EQ(d.rec.server_predicted_ms, 3.25);
  EXPECT_EQ(d.rec.chunks.size(), 1U);
}

}  // namespace
}  // namespace llmbench::loadgen

namespace llmbench::loadgen {
namespace {

// Multi-turn runs keep the answer text for the next turn's history (reasoning stays out); a
// single-turn handler keeps none.
TEST(RecordingHandler, KeepsTheAnswerTextOnlyWhenAsked) {
  const std::vector<std::pair<double, std::string>> pieces = {
      {5, chat(R"({"role":"assistant","content":""})")},
      {6, chat(R"({"reasoning_content":"think first"})")},
      {10, chat(R"({"content":"Hello"})")},
      {12, chat(R"({"content":", wor"})")},
      {14, chat(R"({"content":"ld \u00e9"})")},
      {15, "data: [DONE]\n\n"}};
  Driver kept;
  kept.handler.keep_answer();
  kept.run(200, pieces);
  ASSERT_TRUE(kept.rec.ok()) << kept.rec.error_message;
  EXPECT_EQ(kept.handler.take_answer(), "Hello, world \xC3\xA9");
  Driver plain;
  plain.run(200, pieces);
  ASSERT_TRUE(plain.rec.ok());
  EXPECT_EQ(plain.handler.take_answer(), "");

  // A non-streamed body: the message content.
  Driver body(false);
  body.handler.keep_answer();
  body.run(200, {{9, R"({"choices":[{"index":0,"message":{"role":"assistant","content":"All )"
                     R"(at once"},"finish_reason":"stop"}]})"}});
  ASSERT_TRUE(body.rec.ok()) << body.rec.error_message;
  EXPECT_EQ(body.handler.take_answer(), "All at once");
}

// llama.cpp reports its prompt-cache reuse as timings.cache_n; usage's cached_tokens wins.
TEST(RecordingHandler, CachedTokensFromLlamaCppTimings) {
  Driver d;
  d.run(200, {{10, chat(R"({"content":"a"})")},
              {11, R"(data: {"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":1},)"
                   R"("timings":{"cache_n":32,"prompt_n":8,"prompt_ms":1.5}})"
                   "\n\ndata: [DONE]\n\n"}});
  ASSERT_TRUE(d.rec.ok()) << d.rec.error_message;
  EXPECT_EQ(d.rec.cached_tokens, 32);
  EXPECT_DOUBLE_EQ(d.rec.server_prompt_ms, 1.5);
  Driver both;
  both.run(200, {{10, chat(R"({"content":"a"})")},
                 {11, R"(data: {"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":1,)"
                      R"("prompt_tokens_details":{"cached_tokens":16}},"timings":{"cache_n":32}})"
                      "\n\ndata: [DONE]\n\n"}});
  EXPECT_EQ(both.rec.cached_tokens, 16);
}

// llama.cpp builds without timings.cache_n (b4748) say how many prompt tokens they evaluated:
// the rest of the prompt came from the slot's cache.
TEST(RecordingHandler, CachedTokensFromLlamaCppPromptN) {
  Driver d;
  d.run(200, {{10, chat(R"({"content":"a"})")},
              {11, R"(data: {"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":1},)"
                   R"("timings":{"prompt_n":8,"prompt_ms":1.5,"predicted_n":1}})"
                   "\n\ndata: [DONE]\n\n"}});
  ASSERT_TRUE(d.rec.ok()) << d.rec.error_message;
  EXPECT_EQ(d.rec.cached_tokens, 32);
  // A whole prompt evaluated: nothing cached (0, not unknown).
  Driver cold;
  cold.run(200, {{10, chat(R"({"content":"a"})")},
                 {11, R"(data: {"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":1},)"
                      R"("timings":{"prompt_n":40}})"
                      "\n\ndata: [DONE]\n\n"}});
  EXPECT_EQ(cold.rec.cached_tokens, 0);
  // Without the prompt's size nothing can be said.
  Driver unknown;
  unknown.run(200, {{10, chat(R"({"content":"a"})")},
                    {11, R"(data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],)"
                         R"("timings":{"prompt_n":8}})"
                         "\n\ndata: [DONE]\n\n"}});
  EXPECT_EQ(unknown.rec.cached_tokens, -1);
}

}  // namespace
}  // namespace llmbench::loadgen
