// The "trt-llm" dialect: Triton's generate extension in front of tensorrtllm_backend's ensemble.
// Names, the model in the path, request bodies (min_length for --min-tokens and --ignore-eos),
// and the decoding of a stream recorded in Triton's shape (delta text per step, no [DONE]).

#include "llmbench/protocol/dialect.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace llmbench::protocol {
namespace {

TEST(TrtLlm, NamesEndpointsAndModel) {
  EXPECT_EQ(parse_backend("trt-llm"), Backend::TrtLlm);
  EXPECT_EQ(parse_backend("tensorrt-llm"), Backend::TrtLlm);
  EXPECT_EQ(parse_backend("triton"), Backend::TrtLlm);
  const Dialect& d = dialect(Backend::TrtLlm);
  EXPECT_EQ(d.default_endpoint(true), "/v2/models/{model}/generate_stream");
  EXPECT_EQ(d.default_endpoint(false), "/v2/models/{model}/generate");
  EXPECT_EQ(expand_endpoint(d.default_endpoint(true), "ensemble"),
            "/v2/models/ensemble/generate_stream");
  EXPECT_EQ(expand_endpoint("/v2/models/{model}/versions/1/{model}", "a b/c"),
            "/v2/models/a%20b%2Fc/versions/1/a%20b%2Fc");
  EXPECT_EQ(expand_endpoint("/v1/completions", "m"), "/v1/completions");
  EXPECT_EQ(d.models_path(), "/v2");
  EXPECT_EQ(d.first_model(R"({"name":"triton","version":"2.48.0","extensions":["generate"]})"),
            "ensemble");
  EXPECT_EQ(d.first_model("<html>"), std::nullopt);
}

GenRequest sampled_request() {
  GenRequest g;
  g.model = "ensemble";
  g.prompt = "Hi there";
  g.max_tokens = 16;
  g.temperature = 0.5;
  g.top_p = 0.9;
  g.top_k = 20;
  g.repetition_penalty = 1.1;
  g.presence_penalty = 0.5;
  g.frequency_penalty = 0.25;
  g.min_tokens = 4;
  return g;
}

TEST(TrtLlm, RequestBody) {
  GenRequest g = sampled_request();
  EXPECT_EQ(
      build_request_body(Backend::TrtLlm, g),
      R"({"text_input":"Hi there","max_tokens":16,"bad_words":"","stop_words":"","stream":true,"exclude_input_in_output":true,"temperature":0.5,"top_p":0.9,"top_k":20,"repetition_penalty":1.1,"presence_penalty":0.5,"frequency_penalty":0.25,"min_length":4})");
  EXPECT_TRUE(unhonoured_flags(Backend::TrtLlm, g).empty());
  // --ignore-eos: the whole output is the minimum length (beats --min-tokens).
  g.ignore_eos = true;
  g.top_k = 0;
  g.min_p = 0.1;
  g.stream = false;
  EXPECT_EQ(
      build_request_body(Backend::TrtLlm, g),
      R"({"text_input":"Hi there","max_tokens":16,"bad_words":"","stop_words":"","stream":false,"exclude_input_in_output":true,"temperature":0.5,"top_p":0.9,"repetition_penalty":1.1,"presence_penalty":0.5,"frequency_penalty":0.25,"min_length":16})");
  EXPECT_EQ(unhonoured_flags(Backend::TrtLlm, g), (std::vector<std::string_view>{"--min-p"}));
}

TEST(TrtLlm, StreamOfStepsEndsWithTheBody) {
  auto decoder = dialect(Backend::TrtLlm).make_decoder();
  EXPECT_TRUE(decoder->complete_at_body_end());
  EXPECT_FALSE(dialect(Backend::Vllm).make_decoder()->complete_at_body_end());
  const std::vector<std::pair<std::string, std::string>> events = {
      {R"({"model_name":"ensemble","model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":"Machine"})",
       "Machine"},
      {R"({"model_name":"ensemble","model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":" learning"})",
       " learning"},
      {R"({"model_name":"ensemble","model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":""})",
       ""},
  };
  for (const auto& [data, text] : events) {
    auto d = decoder->decode_sse("message", data);
    ASSERT_TRUE(d.has_value()) << d.error().what();
    EXPECT_EQ(d->answer, text);
    EXPECT_TRUE(d->has_choice);
    EXPECT_FALSE(d->usage.has_value());  // Triton counts no tokens
    EXPECT_FALSE(d->done);
  }
  auto e = decoder->decode_sse(
      "message", R"({"error":"in ensemble 'ensemble', Encountered error for requestId 1"})");
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->is_error);
  EXPECT_EQ(e->error_message, "in ensemble 'ensemble', Encountered error for requestId 1");
  auto bad = decoder->decode_sse("message", R"({"text_output":["a"]})");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(std::string(bad.error().what()).find("'text_output' must be a string"),
            std::string::npos);
}

TEST(TrtLlm, WholeBody) {
  auto decoder = dialect(Backend::TrtLlm).make_decoder();
  auto d = decoder->decode_body(
      R"({"model_name":"ensemble","model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":" a field of AI"})");
  ASSERT_TRUE(d.has_value()) << d.error().what();
  EXPECT_EQ(d->answer, " a field of AI");
  EXPECT_EQ(d->finish_reason, "");
}

}  // namespace
}  // namespace llmbench::protocol
