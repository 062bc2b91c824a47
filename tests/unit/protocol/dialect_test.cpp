// The dialect registry and the dialect files: names, endpoints, model discovery, and request
// bodies byte-identical to those of the code before dialects (captured from it), apart from
// `ignore_eos`, now sent for openai and openai-chat too.

#include "llmbench/protocol/dialect.hpp"

#include "llmbench/protocol/openai.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace llmbench::protocol {
namespace {

// The OpenAI-compatible dialects, and all of them.
constexpr Backend kOpenAI[] = {Backend::OpenAI,   Backend::OpenAIChat, Backend::Vllm,
                               Backend::Sglang,   Backend::Llamacpp,   Backend::Deepseek,
                               Backend::VllmChat, Backend::SglangChat};
constexpr Backend kAll[] = {Backend::OpenAI,   Backend::OpenAIChat, Backend::Vllm,
                            Backend::Sglang,   Backend::Llamacpp,   Backend::Deepseek,
                            Backend::VllmChat, Backend::SglangChat, Backend::SglangNative,
                            Backend::Tgi,      Backend::TrtLlm};

struct Golden {
  int variant;
  std::string_view backend;
  std::string_view body;
};

// variant 0: prompt, ignore_eos off; 1: messages + --extra-body, ignore_eos on; 2: token ids, no
// stream, ignore_eos on. Every request sets every optional field.
GenRequest request_for(int variant, Backend backend) {
  GenRequest g;
  g.model = "org/m";
  g.chat = is_chat_backend(backend);
  g.prompt = "Hi \"there\"";
  if (variant == 1) {
    g.messages = {{"system", "s"}, {"user", "u"}};
    g.chat = true;
  }
  if (variant == 2) {
    g.prompt_token_ids = {1, 2, 3};
    g.chat = false;
    g.stream = false;
  }
  g.max_tokens = 16;
  g.continuous_usage = true;
  g.min_tokens = 4;
  g.temperature = 0.5;
  g.top_p = 0.9;
  g.ignore_eos = variant != 0;
  g.extra_body_json = variant == 1 ? R"({"seed":7})" : "";
  return g;
}

TEST(DialectTest, BodiesMatchThePreDialectCode) {
  const std::
      vector<Golden>
          golden =
              {
                  {0, "openai",
                   R"({"model":"org/m","prompt":"Hi \"there\"","max_tokens":16,"stream":true,"stream_options":{"include_usage":true},"temperature":0.5,"top_p":0.9})"},
                  {0, "openai-chat",
                   R"({"model":"org/m","messages":[{"role":"user","content":"Hi \"there\""}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true},"temperature":0.5,"top_p":0.9})"},
                  {0, "vllm",
                   R"({"model":"org/m","prompt":"Hi \"there\"","max_tokens":16,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true},"temperature":0.5,"top_p":0.9,"min_tokens":4})"},
                  {0, "sglang-oai",
                   R"({"model":"org/m","prompt":"Hi \"there\"","max_tokens":16,"stream":true,"stream_options":{"include_usage":true},"temperature":0.5,"top_p":0.9,"min_tokens":4})"},
                  {0, "llamacpp",
                   R"({"model":"org/m","prompt":"Hi \"there\"","max_tokens":16,"n_predict":16,"stream":true,"stream_options":{"include_usage":true},"temperature":0.5,"top_p":0.9})"},
                  {0, "deepseek",
                   R"({"model":"org/m","messages":[{"role":"user","content":"Hi \"there\""}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true},"temperature":0.5,"top_p":0.9})"},
                  {1, "openai",
                   R"({"model":"org/m","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true},"temperature":0.5,"top_p":0.9,"ignore_eos":true,"seed":7})"},
                  {1, "openai-chat",
                   R"({"model":"org/m","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true},"temperature":0.5,"top_p":0.9,"ignore_eos":true,"seed":7})"},
                  {1, "vllm",
                   R"({"model":"org/m","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true},"temperature":0.5,"top_p":0.9,"ignore_eos":true,"min_tokens":4,"seed":7})"},
                  {1, "sglang-oai",
                   R"({"model":"org/m","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true},"temperature":0.5,"top_p":0.9,"ignore_eos":true,"min_tokens":4,"seed":7})"},
                  {1, "llamacpp",
                   R"({"model":"org/m","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"max_tokens":16,"n_predict":16,"stream":true,"stream_options":{"include_usage":true},"temperature":0.5,"top_p":0.9,"ignore_eos":true,"seed":7})"},
                  {1, "deepseek",
                   R"({"model":"org/m","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true},"temperature":0.5,"top_p":0.9,"seed":7})"},
                  {2, "openai",
                   R"({"model":"org/m","prompt":[1,2,3],"max_tokens":16,"stream":false,"temperature":0.5,"top_p":0.9,"ignore_eos":true})"},
                  {2, "openai-chat",
                   R"({"model":"org/m","prompt":[1,2,3],"max_tokens":16,"stream":false,"temperature":0.5,"top_p":0.9,"ignore_eos":true})"},
                  {2, "vllm",
                   R"({"model":"org/m","prompt":[1,2,3],"max_tokens":16,"stream":false,"temperature":0.5,"top_p":0.9,"ignore_eos":true,"min_tokens":4})"},
                  {2, "sglang-oai",
                   R"({"model":"org/m","prompt":[1,2,3],"max_tokens":16,"stream":false,"temperature":0.5,"top_p":0.9,"ignore_eos":true,"min_tokens":4})"},
                  {2, "llamacpp",
                   R"({"model":"org/m","prompt":[1,2,3],"max_tokens":16,"n_predict":16,"stream":false,"temperature":0.5,"top_p":0.9,"ignore_eos":true})"},
                  {2, "deepseek",
                   R"({"model":"org/m","prompt":[1,2,3],"max_tokens":16,"stream":false,"temperature":0.5,"top_p":0.9})"},
              };
  for (const auto& g : golden) {
    const Backend b = parse_backend(g.backend);
    EXPECT_EQ(build_request_body(b, request_for(g.variant, b)), g.body)
        << g.backend << " variant " << g.variant;
  }
}

TEST(DialectTest, RegistryDrivesNamesMessageAndHelp) {
  EXPECT_EQ(backend_names(),
            "openai, openai-chat, vllm, vllm-chat, sglang, sglang-oai, sglang-oai-chat, "
            "llamacpp (or llama.cpp), deepseek, tgi, trt-llm (or tensorrt-llm, triton)");
  // "sglang" is SGLang's native /generate, as in SGLang's bench_serving: nothing to warn about.
  EXPECT_EQ(backend_name_note("sglang"), "");
  EXPECT_EQ(backend_name_note("sglang-oai"), "");
  const std::string help = backend_help();
  for (const Backend b : kAll) {
    const Dialect& d = dialect(b);
    EXPECT_EQ(d.name(), to_string(b));
    EXPECT_EQ(parse_backend(d.name()), b);
    EXPECT_NE(help.find(std::string(d.name()) + ": " + std::string(d.summary())), std::string::npos)
        << help;
  }
  try {
    (void)parse_backend("lmdeploy");
    FAIL() << "expected an exception";
  } catch (const Exception& e) {
    EXPECT_NE(std::string(e.what()).find(backend_names()), std::string::npos) << e.what();
  }
}

TEST(DialectTest, SamplingKnobsByDialect) {
  GenRequest g;
  g.model = "m";
  g.prompt = "p";
  g.top_k = 20;
  g.min_p = 0.05;
  g.presence_penalty = 0.5;
  g.frequency_penalty = 0.25;
  g.repetition_penalty = 1.1;
  g.include_usage = false;
  EXPECT_EQ(
      build_request_body(Backend::Vllm, g),
      R"({"model":"m","prompt":"p","stream":true,"presence_penalty":0.5,"frequency_penalty":0.25,"top_k":20,"min_p":0.05,"repetition_penalty":1.1})");
  EXPECT_EQ(
      build_request_body(Backend::Llamacpp, g),
      R"({"model":"m","prompt":"p","stream":true,"presence_penalty":0.5,"frequency_penalty":0.25,"top_k":20,"min_p":0.05,"repeat_penalty":1.1})");
  g.chat = true;
  EXPECT_EQ(
      build_request_body(Backend::Deepseek, g),
      R"({"model":"m","messages":[{"role":"user","content":"p"}],"stream":true,"presence_penalty":0.5,"frequency_penalty":0.25})");
  EXPECT_EQ(unhonoured_flags(Backend::Deepseek, g),
            (std::vector<std::string_view>{"--top-k", "--min-p", "--repetition-penalty"}));
  EXPECT_TRUE(unhonoured_flags(Backend::SglangChat, g).empty());
  EXPECT_EQ(dialect(Backend::VllmChat).default_endpoint(true), "/v1/chat/completions");
  EXPECT_EQ(dialect(Backend::SglangChat).default_endpoint(true), "/v1/chat/completions");
  EXPECT_EQ(parse_backend("sglang"), Backend::SglangNative);
  EXPECT_EQ(parse_backend("sglang-oai"), Backend::Sglang);
}

TEST(DialectTest, EndpointsAndModelDiscovery) {
  EXPECT_EQ(dialect(Backend::OpenAIChat).default_endpoint(true), "/v1/chat/completions");
  EXPECT_EQ(dialect(Backend::Sglang).default_endpoint(true), "/v1/completions");
  for (const Backend b : kOpenAI) {
    const Dialect& d = dialect(b);
    EXPECT_EQ(d.models_path(), "/v1/models");
    EXPECT_EQ(
        d.first_model(R"({"object":"list","data":[{"id":"a/b","object":"model"},{"id":"c"}]})"),
        "a/b");
    EXPECT_EQ(d.first_model(R"({"data":[]})"), std::nullopt);
    EXPECT_EQ(d.first_model(R"({"data":[{"id":5}]})"), std::nullopt);
    EXPECT_EQ(d.first_model("not json"), std::nullopt);
    EXPECT_EQ(d.first_model("[1]"), std::nullopt);
  }
}

TEST(DialectTest, EachDialectMakesItsDecoder) {
  for (const Backend b : kOpenAI) {
    auto decoder = dialect(b).make_decoder();
    ASSERT_NE(decoder, nullptr);
    auto d = decoder->decode_sse("message", R"({"choices":[{"index":0,"text":"x"}]})");
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->answer, "x");
    auto body = decoder->decode_body(R"({"choices":[{"index":0,"text":"y"}]})");
    ASSERT_TRUE(body.has_value());
    EXPECT_EQ(body->answer, "y");
    EXPECT_TRUE(decoder->decode_field("error", R"({"message":"m"})").has_value());
  }
}

}  // namespace
}  // namespace llmbench::protocol
