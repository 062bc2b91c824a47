// The "tgi" dialect: Hugging Face TGI's /generate_stream and /generate. Request bodies (and the
// values TGI would reject sent as their meaning), the flags it cannot honour, and the decoding of
// a stream recorded in TGI's shape (one token per event with `index`, the last with
// generated_text and details), of its error events and of a whole body.

#include "llmbench/protocol/dialect.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llmbench::protocol {
namespace {

TEST(Tgi, NameEndpointsAndDiscovery) {
  EXPECT_EQ(parse_backend("tgi"), Backend::Tgi);
  const Dialect& d = dialect(Backend::Tgi);
  EXPECT_EQ(d.name(), "tgi");
  EXPECT_EQ(d.default_endpoint(true), "/generate_stream");
  EXPECT_EQ(d.default_endpoint(false), "/generate");
  EXPECT_EQ(default_endpoint(Backend::Tgi, false), "/generate");
  EXPECT_EQ(d.models_path(), "/info");
  EXPECT_EQ(d.first_model(R"({"model_id":"bigscience/bloom-560m","max_input_tokens":1024})"),
            "bigscience/bloom-560m");
  EXPECT_EQ(d.first_model(R"({"model_id":5})"), std::nullopt);
  EXPECT_EQ(d.first_model("nope"), std::nullopt);
}

TEST(Tgi, RequestParametersAndUnhonouredFlags) {
  GenRequest g;
  g.model = "m";
  g.prompt = "Hi";
  g.max_tokens = 16;
  g.temperature = 0.7;
  g.top_p = 0.9;
  g.top_k = 20;
  g.repetition_penalty = 1.1;
  g.frequency_penalty = 0.25;
  g.presence_penalty = 0.5;
  g.min_p = 0.05;
  g.ignore_eos = true;
  g.min_tokens = 2;
  g.continuous_usage = true;
  EXPECT_EQ(
      build_request_body(Backend::Tgi, g),
      R"({"inputs":"Hi","parameters":{"max_new_tokens":16,"temperature":0.7,"top_p":0.9,"top_k":20,"repetition_penalty":1.1,"frequency_penalty":0.25,"details":true,"decoder_input_details":false},"stream":true})");
  EXPECT_EQ(unhonoured_flags(Backend::Tgi, g),
            (std::vector<std::string_view>{"--ignore-eos", "--min-tokens", "--min-p",
                                           "--presence-penalty"}));
}

TEST(Tgi, ValuesTgiRejectsAreSentAsTheirMeaning) {
  GenRequest g;
  g.prompt = "Hi";
  g.max_tokens = 4;
  g.temperature = 0.0;
  g.top_p = 1.0;
  g.top_k = -1;
  g.stream = false;
  g.extra_body_json = R"({"parameters":{"seed":7}})";
  EXPECT_EQ(
      build_request_body(Backend::Tgi, g),
      R"({"inputs":"Hi","parameters":{"max_new_tokens":4,"do_sample":false,"details":true,"decoder_input_details":false,"seed":7},"stream":false})");
  g.prompt.clear();
  g.prompt_token_ids = {1, 2};
  try {
    (void)build_request_body(Backend::Tgi, g);
    FAIL() << "expected an exception";
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, "--backend");
    EXPECT_NE(std::string(e.what()).find("text prompts only"), std::string::npos) << e.what();
  }
}

TEST(Tgi, StreamOfTokens) {
  auto decoder = dialect(Backend::Tgi).make_decoder();
  const std::vector<std::string> events = {
      R"({"index":1,"token":{"id":415,"text":" The","logprob":-0.4,"special":false},"generated_text":null,"details":null})",
      R"({"index":2,"token":{"id":5565,"text":" sky","logprob":-1.2,"special":false},"generated_text":null,"details":null})",
      R"({"index":3,"token":{"id":2,"text":"</s>","logprob":-0.1,"special":true},"generated_text":" The sky","details":{"finish_reason":"eos_token","generated_tokens":3,"seed":null,"input_length":9}})",
  };
  std::vector<Delta> d;
  for (const auto& e : events) {
    auto r = decoder->decode_sse("message", e);
    ASSERT_TRUE(r.has_value()) << r.error().what();
    d.push_back(*r);
  }
  EXPECT_EQ(d[0].answer, " The");
  EXPECT_EQ(d[1].answer, " sky");
  EXPECT_EQ(d[2].answer, "");  // the EOS token is a token, not text
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(d[i].has_choice);
    ASSERT_TRUE(d[i].usage.has_value());
    EXPECT_EQ(d[i].usage->completion_tokens, static_cast<std::int64_t>(i) + 1);
  }
  EXPECT_EQ(d[0].usage->prompt_tokens, -1);
  EXPECT_EQ(d[2].usage->prompt_tokens, 9);
  EXPECT_EQ(d[0].finish_reason, "");
  EXPECT_EQ(d[2].finish_reason, "eos_token");
}

TEST(Tgi, ErrorEventsAndShapeErrors) {
  auto decoder = dialect(Backend::Tgi).make_decoder();
  auto e = decoder->decode_sse(
      "message",
      R"({"error":"Request failed during generation: Server error: CUDA OOM","error_type":"generation"})");
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->is_error);
  EXPECT_EQ(e->error_message,
            "Request failed during generation: Server error: CUDA OOM (error_type generation)");
  auto bad = decoder->decode_sse("message", R"({"index":1,"token":{"text":3}})");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(std::string(bad.error().what()).find("'token.text' must be a string"),
            std::string::npos)
      << bad.error().what();
  auto broken = decoder->decode_sse("message", "{\"index\":1,");
  ASSERT_FALSE(broken.has_value());
  EXPECT_EQ(broken.error().source, "stream event");
}

TEST(Tgi, WholeBody) {
  auto decoder = dialect(Backend::Tgi).make_decoder();
  auto d = decoder->decode_body(
      R"({"generated_text":" blue because of Rayleigh scattering","details":{"finish_reason":"length","generated_tokens":8,"seed":null,"prefill":[{"id":1,"text":"<s>"},{"id":2,"text":"Why"}],"tokens":[]}})");
  ASSERT_TRUE(d.has_value()) << d.error().what();
  EXPECT_EQ(d->answer, " blue because of Rayleigh scattering");
  EXPECT_EQ(d->finish_reason, "length");
  ASSERT_TRUE(d->usage.has_value());
  EXPECT_EQ(d->usage->completion_tokens, 8);
  EXPECT_EQ(d->usage->prompt_tokens, 2);  // the prefill listing, when the server sends one
}

}  // namespace
}  // namespace llmbench::protocol
