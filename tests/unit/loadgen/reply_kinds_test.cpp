// Server replies seen in the wild that used to be measured wrong: errors that arrive in
// HTTP 200, 2xx answers without output, redirects, and token counts no stream could carry.

#include "llmbench/loadgen/request_handler.hpp"
#include "llmbench/metrics/summary.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace llmbench::loadgen {
namespace {

using metrics::Channel;
using metrics::ErrorKind;
using metrics::RequestRecord;

constexpr TimeNs kStart = 1'000'000'000;

/// Runs one response, given as (time_ms, bytes) pieces, through a RecordingHandler.
RequestRecord run(int status, const std::vector<std::pair<double, std::string>>& pieces,
                  bool stream = true, std::int64_t max_tokens = -1) {
  RequestRecord rec;
  rec.max_tokens = max_tokens;
  protocol::Decoder decoder;
  RecordingHandler handler(rec, decoder, stream, kStart);
  handler.on_sent(kStart);
  handler.on_headers(status, kStart + 1'000'000);
  double last = 1;
  for (const auto& [ms, bytes] : pieces) {
    handler.on_body(bytes, kStart + static_cast<TimeNs>(ms * 1e6));
    last = ms;
  }
  http::Outcome outcome;
  outcome.status = status;
  outcome.body_complete = true;
  handler.finish(outcome, kStart + static_cast<TimeNs>(last * 1e6));
  return rec;
}

std::string text(const std::string& t, const std::string& extra = "") {
  return "data: {\"choices\":[{\"index\":0,\"text\":\"" + t + "\",\"finish_reason\":null}]" +
         extra + "}\n\n";
}

const std::string kDone = "data: [DONE]\n\n";

// ---- errors inside HTTP 200 ----

TEST(ReplyKinds, LlamacppErrorLineThenDoneIsAStreamError) {
  const auto rec = run(200, {{10, text("Hello")},
                             {20,
                              "error: {\"code\":500,\"message\":\"context size exceeded\",\"type\":"
                              "\"server_error\"}\n\n"},
                             {21, kDone}});
  EXPECT_EQ(rec.error_kind, ErrorKind::StreamError);
  EXPECT_EQ(rec.error_message, "context size exceeded");
}

TEST(ReplyKinds, ErrorEventIsAStreamError) {
  const auto rec = run(
      200,
      {{10, text("a")}, {20, "event: error\ndata: {\"message\":\"overloaded\"}\n\n"}, {21, kDone}});
  EXPECT_EQ(rec.error_kind, ErrorKind::StreamError);
  EXPECT_EQ(rec.error_message, "overloaded");
}

// ---- 2xx without output ----

TEST(ReplyKinds, TwoHundredWithoutOutputIsEmptyOutput) {
  const std::string role =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
  const std::string usage =
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}\n\n";
  for (const auto& pieces : std::vector<std::vector<std::pair<double, std::string>>>{
           {{10, kDone}}, {{10, role}, {11, kDone}}, {{10, role}, {11, usage}, {12, kDone}}}) {
    const auto rec = run(200, pieces);
    EXPECT_EQ(rec.error_kind, ErrorKind::EmptyOutput) << pieces.back().second;
    EXPECT_NE(rec.error_message.find("no generated output"), std::string::npos);
  }
  const auto body = run(200, {{10, R"({"object":"text_completion","choices":[]})"}}, false);
  EXPECT_EQ(body.error_kind, ErrorKind::EmptyOutput);
}

// A model that stops at once: vLLM closes the stream normally (finish_reason "stop") with
// usage.completion_tokens 0. That is a successful reply of zero tokens, not a failure; it gives
// no TTFT, TPOT or ITL. One that claims tokens it never streamed, or says neither usage nor
// content, still fails.
TEST(ReplyKinds, ANormallyClosedZeroTokenReplyIsASuccessfulZeroOutputRequest) {
  const std::string role =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
  const std::string stop =
      "data: "
      "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":\"stop\"}]}\n\n";
  const auto usage = [](int n) {
    return "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":" +
           std::to_string(n) + "}}\n\n";
  };
  const auto zero = run(200, {{10, role}, {11, stop}, {12, usage(0)}, {13, kDone}});
  ASSERT_TRUE(zero.ok()) << zero.error_message;
  EXPECT_EQ(zero.output_tokens, 0);
  EXPECT_TRUE(zero.chunks.empty());
  EXPECT_EQ(zero.finish_reason, "stop");
  // Non-streamed, the same answer.
  const auto body = run(200,
                        {{10, R"({"choices":[{"index":0,"text":"","finish_reason":"stop"}],)"
                              R"("usage":{"prompt_tokens":3,"completion_tokens":0}})"}},
                        false);
  ASSERT_TRUE(body.ok()) << body.error_message;
  // It completed, and is in no latency but E2EL.
  RequestRecord ok = run(200, {{10, text("a")}, {20, text("b")}, {30, kDone}});
  RequestRecord z = zero;
  z.id = 1;
  const auto s = metrics::summarize({ok, z}, {});
  EXPECT_EQ(s.completed, 2U);
  EXPECT_EQ(s.failed, 0U);
  EXPECT_EQ(s.zero_output_completions, 1U);
  EXPECT_EQ(s.ttft_ms.count, 1U);
  EXPECT_EQ(s.tpot_ms.count, 1U);
  EXPECT_EQ(s.itl_ms.count, 1U);
  EXPECT_EQ(s.e2el_ms.count, 2U);
  EXPECT_EQ(s.total_output_tokens, 2);

  // Claims 4 tokens, streams none: a failure.
  const auto claims = run(200, {{10, role}, {11, stop}, {12, usage(4)}, {13, kDone}});
  EXPECT_EQ(claims.error_kind, ErrorKind::EmptyOutput);
  EXPECT_NE(claims.error_message.find("claims 4 completion token(s)"), std::string::npos)
      << claims.error_message;
  // Neither usage nor content: a failure.
  const auto neither = run(200, {{10, role}, {11, stop}, {13, kDone}});
  EXPECT_EQ(neither.error_kind, ErrorKind::EmptyOutput);
  EXPECT_NE(neither.error_message.find("and no usage"), std::string::npos) << neither.error_message;
  // Zero tokens but a stream cut short: the stream's failure, not a success.
  http::Outcome cut;
  cut.status = 200;
  cut.body_complete = false;
  RequestRecord rec;
  protocol::Decoder decoder;
  RecordingHandler handler(rec, decoder, true, kStart);
  handler.on_sent(kStart);
  handler.on_headers(200, kStart + 1'000'000);
  handler.on_body(role + usage(0), kStart + 10'000'000);
  handler.finish(cut, kStart + 11'000'000);
  EXPECT_EQ(rec.error_kind, ErrorKind::StreamError);
  // The TTFT basis is stated.
  EXPECT_NE(std::string(metrics::kTtftBasis).find("role-only"), std::string::npos);
}

TEST(ReplyKinds, WrongShapeIsAParseErrorNamingTheField) {
  auto rec = run(200, {{10, "data: {\"choices\":\"x\"}\n\n"}, {11, kDone}});
  EXPECT_EQ(rec.error_kind, ErrorKind::Parse);
  EXPECT_NE(rec.error_message.find("'choices'"), std::string::npos) << rec.error_message;
  rec = run(200, {{10, "data: {\"choices\":[{\"index\":0,\"text\":5}]}\n\n"}, {11, kDone}});
  EXPECT_EQ(rec.error_kind, ErrorKind::Parse);
  EXPECT_NE(rec.error_message.find("'choices[0].text'"), std::string::npos) << rec.error_message;
}

// ---- output without text ----

TEST(ReplyKinds, EmptyTextWithRisingChunkUsageIsOutput) {
  const auto u = [](int n) {
    return ",\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":" + std::to_string(n) + "}";
  };
  const auto rec = run(200, {{10, text("", u(1))},  // a token that decodes to no text
                             {20, text("b", u(2))},
                             {30, text("", u(4))},
                             {31, "data: {\"choices\":[]" + u(4) + "}\n\n"},
                             {32, kDone}});
  ASSERT_TRUE(rec.ok()) << rec.error_message;
  ASSERT_EQ(rec.chunks.size(), 3U);
  EXPECT_EQ(rec.chunks[0].time_ns, 10'000'000);  // TTFT at the first token, not the first text
  EXPECT_EQ(rec.chunks[0].tokens, 1);
  EXPECT_EQ(rec.chunks[0].bytes, 0);
  EXPECT_EQ(rec.chunks[2].tokens, 2);
  EXPECT_EQ(rec.output_tokens, 4);
  EXPECT_EQ(rec.output_tokens_local, 4);
  const auto s = metrics::summarize({rec}, {});
  EXPECT_DOUBLE_EQ(s.ttft_ms.mean, 10.0);
  // Per-token ITL: 10 ms to the 2nd token, then 10 ms / 2 for each of the last two.
  EXPECT_EQ(s.itl_ms.count, 3U);
}

TEST(ReplyKinds, ToolCallsAreAnswerOutputForTtfat) {
  const auto tool = [](const std::string& args) {
    return "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
           "\"function\":{\"arguments\":\"" +
           args + "\"}}]}}]}\n\n";
  };
  const auto rec = run(200, {{10,
                              "data: {\"choices\":[{\"index\":0,\"delta\":{"
                              "\"reasoning_content\":\"think\"}}]}\n\n"},
                             {20, tool("{}")},
                             {30, kDone}});
  ASSERT_TRUE(rec.ok()) << rec.error_message;
  ASSERT_EQ(rec.chunks.size(), 2U);
  EXPECT_EQ(rec.chunks[1].channel, Channel::ToolCall);
  const auto s = metrics::summarize({rec}, {});
  EXPECT_DOUBLE_EQ(s.ttft_ms.mean, 10.0);
  EXPECT_DOUBLE_EQ(s.ttfat_ms.mean, 20.0);  // the tool call is the answer
}

// ---- status classes ----

TEST(ReplyKinds, StatusClassesHaveTheirOwnKinds) {
  EXPECT_EQ(run(302, {{5, "moved"}}).error_kind, ErrorKind::Http3xx);
  EXPECT_EQ(run(307, {}).error_kind, ErrorKind::Http3xx);
  EXPECT_EQ(run(404, {}).error_kind, ErrorKind::Http4xx);
  EXPECT_EQ(run(599, {}).error_kind, ErrorKind::Http5xx);
  EXPECT_EQ(run(600, {}).error_kind, ErrorKind::HttpOther);
  EXPECT_EQ(run(101, {}).error_kind, ErrorKind::HttpOther);
  EXPECT_EQ(metrics::to_string(ErrorKind::Http3xx), "http_3xx");
  EXPECT_EQ(metrics::to_string(ErrorKind::HttpOther), "http_other");
  EXPECT_EQ(metrics::to_string(ErrorKind::EmptyOutput), "empty_output");
  EXPECT_EQ(metrics::error_kind_from_string("empty_output"), ErrorKind::EmptyOutput);
}

// ---- counts no stream could carry ----

TEST(ReplyKinds, HugeFinalUsageIsRejectedAndTheSummarySurvives) {
  for (const std::string n : {"2147483648", "9223372036854775807", "16777217", "-5"}) {
    const auto rec = run(200,
                         {{10, text("Hi")},
                          {20, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":" + n +
                                   ",\"completion_tokens\":" + n + "}}\n\n"},
                          {21, kDone}},
                         true, 16);
    ASSERT_TRUE(rec.ok()) << rec.error_message;
    EXPECT_EQ(rec.output_tokens, -1) << n;
    EXPECT_EQ(rec.input_tokens, -1) << n;
    const auto s = metrics::summarize({rec}, {});
    EXPECT_EQ(s.completed, 1U);
    EXPECT_LE(s.total_output_tokens, 2);
  }
}

TEST(ReplyKinds, OneHugePerChunkJumpDropsChunkUsage) {
  const auto u = [](const std::string& n) {
    return ",\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":" + n + "}";
  };
  const auto rec = run(200,
                       {{10, text("a", u("1"))},
                        {20, text("b", u("2147483650"))},
                        {30, text("c", u("3"))},
                        {31, kDone}},
                       true, 8);
  ASSERT_TRUE(rec.ok()) << rec.error_message;
  ASSERT_EQ(rec.chunks.size(), 3U);
  for (const auto& c : rec.chunks) {
    EXPECT_EQ(c.tokens, -1);  // no chunk keeps a count from a usage stream that lied once
  }
  EXPECT_EQ(rec.output_tokens, -1);
  EXPECT_EQ(rec.output_tokens_local, -1);
  const auto s = metrics::summarize({rec}, {});
  EXPECT_EQ(s.completed, 1U);
}

TEST(ReplyKinds, PlausibilityRule) {
  EXPECT_TRUE(plausible_output_tokens(128, 128, 10));    // within max_tokens
  EXPECT_TRUE(plausible_output_tokens(300, 128, 5000));  // overrun, but carried by the bytes
  EXPECT_FALSE(plausible_output_tokens(300, 128, 200));
  EXPECT_TRUE(plausible_output_tokens(50, -1, 60));
  EXPECT_FALSE(plausible_output_tokens(kMaxTokenCount + 1, -1, INT64_MAX));
  EXPECT_FALSE(plausible_output_tokens(-1, 10, 10));
}

// A count above max_tokens that the bytes could carry stays (DeepSeek's reasoner does this).
TEST(ReplyKinds, CountAboveMaxTokensButCarriedIsKept) {
  const std::string long_text(400, 'x');
  const auto rec =
      run(200,
          {{10, text(long_text)},
           {20,
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":"
            "100}}\n\n"},
           {21, kDone}},
          true, 16);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec.output_tokens, 100);
}

}  // namespace
}  // namespace llmbench::loadgen
