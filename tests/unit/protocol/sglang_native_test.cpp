// The "sglang" dialect: SGLang's native /generate. Request bodies from a GenRequest, and the
// decoding of a stream recorded in SGLang's shape (whole text on every event, meta_info with
// running counts, finish_reason objects, [DONE]), of errors in the stream and of a whole body.

#include "llmbench/protocol/dialect.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llmbench::protocol {
namespace {

using nlohmann::json;

GenRequest full_request() {
  GenRequest g;
  g.model = "org/m";
  g.prompt = "Hi";
  g.max_tokens = 16;
  g.temperature = 0.5;
  g.top_p = 0.9;
  g.top_k = 20;
  g.min_p = 0.05;
  g.presence_penalty = 0.5;
  g.frequency_penalty = 0.25;
  g.repetition_penalty = 1.1;
  g.ignore_eos = true;
  g.min_tokens = 4;
  g.continuous_usage = true;
  return g;
}

TEST(SglangNative, NameEndpointAndDiscovery) {
  EXPECT_EQ(parse_backend("sglang"), Backend::SglangNative);
  const Dialect& d = dialect(Backend::SglangNative);
  EXPECT_EQ(d.name(), "sglang");
  EXPECT_FALSE(d.chat());
  EXPECT_EQ(d.default_endpoint(true), "/generate");
  EXPECT_EQ(d.default_endpoint(false), "/generate");
  EXPECT_EQ(d.models_path(), "/v1/models");
  EXPECT_EQ(d.first_model(R"({"object":"list","data":[{"id":"deepseek-ai/DeepSeek-V3"}]})"),
            "deepseek-ai/DeepSeek-V3");
  EXPECT_EQ(backend_name_note("sglang"), "");
}

TEST(SglangNative, RequestCarriesEverySamplingParameter) {
  const GenRequest g = full_request();
  EXPECT_EQ(
      build_request_body(Backend::SglangNative, g),
      R"({"text":"Hi","sampling_params":{"max_new_tokens":16,"temperature":0.5,"top_p":0.9,"top_k":20,"min_p":0.05,"presence_penalty":0.5,"frequency_penalty":0.25,"repetition_penalty":1.1,"ignore_eos":true,"min_new_tokens":4},"stream":true})");
  EXPECT_TRUE(unhonoured_flags(Backend::SglangNative, g).empty());
}

TEST(SglangNative, TokenIdsNoStreamAndExtraBodyAsMergePatch) {
  GenRequest g;
  g.prompt = "ignored";
  g.prompt_token_ids = {1, 2, 3};
  g.max_tokens = 8;
  g.stream = false;
  g.extra_body_json = R"({"sampling_params":{"stop":["\n"]},"rid":"r1"})";
  EXPECT_EQ(
      build_request_body(Backend::SglangNative, g),
      R"({"input_ids":[1,2,3],"sampling_params":{"max_new_tokens":8,"stop":["\n"]},"stream":false,"rid":"r1"})");
  g.extra_body_json = "[1]";
  EXPECT_THROW((void)build_request_body(Backend::SglangNative, g), Exception);
}

/// Decodes `events` in order with one decoder, as one response.
std::vector<Delta> decode_all(const std::vector<std::string>& events) {
  auto decoder = dialect(Backend::SglangNative).make_decoder();
  std::vector<Delta> out;
  for (const auto& e : events) {
    auto d = decoder->decode_sse("message", e);
    EXPECT_TRUE(d.has_value()) << e << ": " << (d ? "" : d.error().what());
    out.push_back(d ? *d : Delta{});
  }
  return out;
}

std::string event(const std::string& text, int completion, const std::string& finish = "null") {
  return R"({"text":")" + text + R"(","meta_info":{"id":"a1","finish_reason":)" + finish +
         R"(,"prompt_tokens":7,"completion_tokens":)" + std::to_string(completion) +
         R"(,"cached_tokens":3,"e2e_latency":0.01}})";
}

TEST(SglangNative, StreamOfWholeTextsGivesEachEventsNewText) {
  const auto d =
      decode_all({event("The", 1), event("The capital", 2), event("The capital", 3),
                  event("The capital of", 4, R"({"type":"length","length":4})"), "[DONE]"});
  ASSERT_EQ(d.size(), 5U);
  EXPECT_EQ(d[0].answer, "The");
  EXPECT_EQ(d[1].answer, " capital");
  EXPECT_EQ(d[2].answer, "");  // a token that added no text yet (an incomplete UTF-8 sequence)
  EXPECT_TRUE(d[2].has_choice);
  EXPECT_EQ(d[3].answer, " of");
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(d[i].usage.has_value());
    EXPECT_EQ(d[i].usage->completion_tokens, static_cast<std::int64_t>(i) + 1);
    EXPECT_EQ(d[i].usage->prompt_tokens, 7);
    EXPECT_EQ(d[i].usage->cached_tokens, 3);
    EXPECT_FALSE(d[i].is_error);
  }
  EXPECT_EQ(d[0].finish_reason, "");
  EXPECT_EQ(d[3].finish_reason, "length");
  EXPECT_TRUE(d[4].done);
}

TEST(SglangNative, TrimmedStopAndIncrementalServers) {
  // A stop string removed at the end: the last text is shorter and adds nothing.
  auto d = decode_all(
      {event("a b", 2), event("a b\\n", 3), event("a b", 3, R"({"type":"stop","matched":"\n"})")});
  EXPECT_EQ(d[1].answer, "\n");
  EXPECT_EQ(d[2].answer, "");
  EXPECT_EQ(d[2].finish_reason, "stop");
  // --incremental-streaming-output: each text is new; seen once, every later text is new.
  d = decode_all({event("x", 1), event("yz", 2), event("xyzw", 3)});
  EXPECT_EQ(d[0].answer, "x");
  EXPECT_EQ(d[1].answer, "yz");
  EXPECT_EQ(d[2].answer, "xyzw");
}

TEST(SglangNative, ErrorsInTheStream) {
  auto decoder = dialect(Backend::SglangNative).make_decoder();
  auto e = decoder->decode_sse("message", R"({"error":{"message":"CUDA out of memory"}})");
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->is_error);
  EXPECT_EQ(e->error_message, "CUDA out of memory");
  auto abort = decoder->decode_sse("message",
                                   event("x", 1, R"({"type":"abort","message":"input too long"})"));
  ASSERT_TRUE(abort.has_value());
  EXPECT_TRUE(abort->is_error);
  EXPECT_EQ(abort->error_message, "input too long");
  EXPECT_EQ(abort->finish_reason, "abort");
  auto bad =
      decoder->decode_sse("message", R"({"text":"a","meta_info":{"completion_tokens":"2"}})");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(std::string(bad.error().what()).find("'meta_info.completion_tokens' must be a number"),
            std::string::npos)
      << bad.error().what();
  auto broken = decoder->decode_sse("message", R"({"text":"a",)");
  ASSERT_FALSE(broken.has_value());
  EXPECT_EQ(broken.error().offset, 12);
  EXPECT_NE(std::string(broken.error().what()).find("stream event"), std::string::npos);
}

TEST(SglangNative, WholeBody) {
  auto decoder = dialect(Backend::SglangNative).make_decoder();
  auto d = decoder->decode_body(
      R"({"text":" Paris.","meta_info":{"id":"a","finish_reason":{"type":"stop","matched":2},"prompt_tokens":6,"completion_tokens":3,"cached_tokens":0}})");
  ASSERT_TRUE(d.has_value()) << d.error().what();
  EXPECT_EQ(d->answer, " Paris.");
  EXPECT_EQ(d->finish_reason, "stop");
  ASSERT_TRUE(d->usage.has_value());
  EXPECT_EQ(d->usage->prompt_tokens, 6);
  EXPECT_EQ(d->usage->completion_tokens, 3);
  EXPECT_EQ(d->usage->cached_tokens, 0);
}

}  // namespace
}  // namespace llmbench::protocol
