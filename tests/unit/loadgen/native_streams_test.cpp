// Records made from the native dialects' streams (SGLang /generate, TGI /generate_stream, Triton
// TensorRT-LLM generate_stream): the bytes as each server sends them, through the dialect's
// decoder and the RecordingHandler, into chunk times, per-chunk tokens, server counts, the
// finish reason and, for errors inside a 200 stream, the error kind.

#include "llmbench/loadgen/request_handler.hpp"
#include "llmbench/protocol/dialect.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace llmbench::loadgen {
namespace {

using metrics::ErrorKind;
using metrics::RequestRecord;
using protocol::Backend;

constexpr TimeNs kStart = 1'000'000'000;

/// Drives a RecordingHandler with (time_ms, bytes) pieces through `backend`'s decoder.
struct Driver {
  RequestRecord rec;
  std::unique_ptr<protocol::StreamDecoder> decoder;
  RecordingHandler handler;

  explicit Driver(Backend backend, bool stream = true)
      : decoder(protocol::dialect(backend).make_decoder()),
        handler(rec, *decoder, stream, kStart) {}

  void run(const std::vector<std::pair<double, std::string>>& pieces, int status = 200) {
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
    metrics::assign_chunk_tokens(rec);
  }
};

std::string sglang(const std::string& text, int completion, const std::string& finish = "null") {
  return R"(data: {"text":")" + text + R"(","meta_info":{"id":"a","finish_reason":)" + finish +
         R"(,"prompt_tokens":12,"completion_tokens":)" + std::to_string(completion) +
         R"(,"cached_tokens":8}})" + "\n\n";
}

TEST(NativeStreams, SglangWholeTextsBecomeDeltasWithExactTokens) {
  Driver d(Backend::SglangNative);
  d.rec.max_tokens = 5;
  d.run({{20, sglang("Paris", 1)},
         {30, sglang("Paris is the", 3)},  // two tokens in one event (speculative decoding)
         {40, sglang("Paris is the capital", 4)},
         {50, sglang("Paris is the capital.", 5, R"({"type":"length","length":5})")},
         {51, "data: [DONE]\n\n"}});
  ASSERT_TRUE(d.rec.ok()) << d.rec.error_message;
  ASSERT_EQ(d.rec.chunks.size(), 4U);
  EXPECT_EQ(d.rec.chunks[0].time_ns, 20'000'000);  // TTFT: 20 ms after the send
  const std::vector<int> tokens{1, 2, 1, 1};
  const std::vector<int> bytes{5, 7, 8, 1};  // "Paris", " is the", " capital", "."
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(d.rec.chunks[i].tokens, tokens[i]) << i;
    EXPECT_EQ(d.rec.chunks[i].bytes, bytes[i]) << i;
  }
  EXPECT_EQ(d.rec.output_tokens, 5);
  EXPECT_EQ(d.rec.input_tokens, 12);
  EXPECT_EQ(d.rec.cached_tokens, 8);
  EXPECT_EQ(d.rec.finish_reason, "length");
}

TEST(NativeStreams, SglangErrorsAreStreamErrors) {
  Driver d(Backend::SglangNative);
  d.run({{20, sglang("a", 1)}, {30, "data: {\"error\":{\"message\":\"scheduler died\"}}\n\n"}});
  EXPECT_EQ(d.rec.error_kind, ErrorKind::StreamError);
  EXPECT_EQ(d.rec.error_message, "scheduler died");
  Driver abort(Backend::SglangNative);
  abort.run({{20, sglang("a", 1, R"({"type":"abort","message":"preempted"})")},
             {21, "data: [DONE]\n\n"}});
  EXPECT_EQ(abort.rec.error_kind, ErrorKind::StreamError);
  EXPECT_EQ(abort.rec.error_message, "preempted");
}

TEST(NativeStreams, SglangConcurrentResponsesKeepTheirOwnText) {
  // Two responses interleaved on one worker: each has its own decoder, so neither sees the
  // other's text as already sent.
  Driver a(Backend::SglangNative);
  Driver b(Backend::SglangNative);
  a.handler.on_sent(kStart);
  b.handler.on_sent(kStart);
  a.handler.on_headers(200, kStart);
  b.handler.on_headers(200, kStart);
  a.handler.on_body(sglang("x", 1), kStart + 10'000'000);
  b.handler.on_body(sglang("xy", 1), kStart + 11'000'000);
  a.handler.on_body(sglang("xy", 2), kStart + 12'000'000);
  b.handler.on_body(sglang("xyz", 2), kStart + 13'000'000);
  EXPECT_EQ(a.rec.chunks.size(), 2U);
  ASSERT_EQ(b.rec.chunks.size(), 2U);
  EXPECT_EQ(a.rec.chunks[1].bytes, 1);
  EXPECT_EQ(b.rec.chunks[0].bytes, 2);
  EXPECT_EQ(b.rec.chunks[1].bytes, 1);
}

std::string tgi(int index, const std::string& text, bool special = false,
                const std::string& tail = R"("generated_text":null,"details":null)") {
  return "data:{\"index\":" + std::to_string(index) + R"(,"token":{"id":7,"text":")" + text +
         R"(","logprob":-0.5,"special":)" + (special ? "true" : "false") + "}," + tail + "}\n\n";
}

TEST(NativeStreams, TgiOneTokenPerEventAndTheEosToken) {
  Driver d(Backend::Tgi);
  d.rec.max_tokens = 16;
  d.run(
      {{15, tgi(1, " The")},
       {25, tgi(2, " sky")},
       {35,
        tgi(3, "</s>", true,
            R"("generated_text":" The sky","details":{"finish_reason":"eos_token","generated_tokens":3,"seed":null,"input_length":6})")}});
  ASSERT_TRUE(d.rec.ok()) << d.rec.error_message;  // no [DONE]: the finish reason ends it
  ASSERT_EQ(d.rec.chunks.size(), 3U);
  EXPECT_EQ(d.rec.chunks[0].time_ns, 15'000'000);
  EXPECT_EQ(d.rec.chunks[0].bytes, 4);
  EXPECT_EQ(d.rec.chunks[2].bytes, 0);  // the EOS token: generated, no text
  EXPECT_EQ(d.rec.chunks[2].time_ns, 35'000'000);
  for (const auto& c : d.rec.chunks) EXPECT_EQ(c.tokens, 1);
  EXPECT_EQ(d.rec.output_tokens, 3);
  EXPECT_EQ(d.rec.input_tokens, 6);
  EXPECT_EQ(d.rec.finish_reason, "eos_token");
}

TEST(NativeStreams, TgiErrorEventAndCutStream) {
  Driver d(Backend::Tgi);
  d.run({{15, tgi(1, "a")},
         {20,
          "data:{\"error\":\"Request failed during generation: OOM\",\"error_type\":"
          "\"generation\"}\n\n"}});
  EXPECT_EQ(d.rec.error_kind, ErrorKind::StreamError);
  EXPECT_EQ(d.rec.error_message, "Request failed during generation: OOM (error_type generation)");
  Driver cut(Backend::Tgi);  // no details, no [DONE]: cut short
  cut.run({{15, tgi(1, "a")}, {20, tgi(2, "b")}});
  EXPECT_EQ(cut.rec.error_kind, ErrorKind::StreamError);
}

std::string triton(const std::string& text) {
  return R"(data: {"model_name":"ensemble","model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":")" +
         text + "\"}\n\n";
}

TEST(NativeStreams, TritonStreamCompletesAtTheEndOfItsBody) {
  Driver d(Backend::TrtLlm);
  d.run(
      {{30, triton("")}, {40, triton("Machine")}, {50, triton(" learning")}, {60, triton(" is")}});
  ASSERT_TRUE(d.rec.ok()) << d.rec.error_message;
  ASSERT_EQ(d.rec.chunks.size(), 3U);
  EXPECT_EQ(d.rec.chunks[0].time_ns, 40'000'000);             // the empty first step is no output
  EXPECT_EQ(d.rec.output_tokens, -1);                         // Triton counts nothing
  for (const auto& c : d.rec.chunks) EXPECT_EQ(c.tokens, 1);  // one per step without a tokenizer
  EXPECT_EQ(d.rec.finish_reason, "");
  Driver e(Backend::TrtLlm);
  e.run({{30, triton("a")}, {40, "data: {\"error\":\"Encountered error for requestId 3\"}\n\n"}});
  EXPECT_EQ(e.rec.error_kind, ErrorKind::StreamError);
  EXPECT_EQ(e.rec.error_message, "Encountered error for requestId 3");
}

TEST(NativeStreams, WholeBodies) {
  Driver s(Backend::SglangNative, /*stream=*/false);
  s.run(
      {{80,
        R"({"text":"a b c","meta_info":{"finish_reason":{"type":"length","length":3},"prompt_tokens":4,"completion_tokens":3,"cached_tokens":0}})"}});
  ASSERT_TRUE(s.rec.ok()) << s.rec.error_message;
  ASSERT_EQ(s.rec.chunks.size(), 1U);
  EXPECT_EQ(s.rec.chunks[0].tokens, 3);
  EXPECT_EQ(s.rec.output_tokens, 3);
  Driver t(Backend::Tgi, /*stream=*/false);
  t.run(
      {{80,
        R"({"generated_text":"a b","details":{"finish_reason":"length","generated_tokens":2,"seed":null,"prefill":[],"tokens":[]}})"}});
  ASSERT_TRUE(t.rec.ok()) << t.rec.error_message;
  EXPECT_EQ(t.rec.output_tokens, 2);
  EXPECT_EQ(t.rec.finish_reason, "length");
  Driver r(Backend::TrtLlm, /*stream=*/false);
  r.run({{80, R"({"model_name":"ensemble","model_version":"1","text_output":"a b c d"})"}});
  ASSERT_TRUE(r.rec.ok()) << r.rec.error_message;
  ASSERT_EQ(r.rec.chunks.size(), 1U);
  EXPECT_EQ(r.rec.chunks[0].bytes, 7);
}

}  // namespace
}  // namespace llmbench::loadgen
