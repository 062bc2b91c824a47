#include "llmbench/protocol/openai.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace llmbench::protocol {
namespace {

using nlohmann::json;

GenRequest completion_request() {
  GenRequest request;
  request.model = "deepseek-ai/DeepSeek-R1";
  request.prompt = "The capital of France is";
  request.max_tokens = 128;
  return request;
}

TEST(BackendTest, ParsesEveryName) {
  EXPECT_EQ(parse_backend("openai"), Backend::OpenAI);
  EXPECT_EQ(parse_backend("openai-chat"), Backend::OpenAIChat);
  EXPECT_EQ(parse_backend("vllm"), Backend::Vllm);
  EXPECT_EQ(parse_backend("sglang"), Backend::SglangNative);
  EXPECT_EQ(parse_backend("sglang-oai"), Backend::Sglang);
  EXPECT_EQ(parse_backend("llamacpp"), Backend::Llamacpp);
  EXPECT_EQ(parse_backend("llama.cpp"), Backend::Llamacpp);
  EXPECT_EQ(parse_backend("deepseek"), Backend::Deepseek);
  EXPECT_EQ(parse_backend("tgi"), Backend::Tgi);
  EXPECT_EQ(parse_backend("trt-llm"), Backend::TrtLlm);
  EXPECT_EQ(parse_backend("tensorrt-llm"), Backend::TrtLlm);
  EXPECT_EQ(parse_backend("triton"), Backend::TrtLlm);
}

TEST(BackendTest, UnknownNameNamesFlagAndChoices) {
  try {
    parse_backend("lmdeploy");
    FAIL() << "expected an exception";
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, "--backend");
    const std::string what = e.what();
    EXPECT_NE(what.find("'lmdeploy'"), std::string::npos) << what;
    EXPECT_NE(what.find("openai-chat"), std::string::npos) << what;
    EXPECT_NE(what.find("llama.cpp"), std::string::npos) << what;
  }
  EXPECT_THROW(parse_backend("VLLM"), Exception);  // names are case-sensitive
  EXPECT_THROW(parse_backend(""), Exception);
}

TEST(BackendTest, CanonicalNamesRoundTrip) {
  for (const Backend b :
       {Backend::OpenAI, Backend::OpenAIChat, Backend::Vllm, Backend::Sglang, Backend::Llamacpp,
        Backend::Deepseek, Backend::SglangNative, Backend::Tgi, Backend::TrtLlm}) {
    EXPECT_EQ(parse_backend(to_string(b)), b);
  }
  EXPECT_EQ(to_string(Backend::Llamacpp), "llamacpp");
  EXPECT_EQ(to_string(Backend::OpenAIChat), "openai-chat");
}

TEST(BackendTest, ChatBackendsAndEndpoints) {
  EXPECT_TRUE(is_chat_backend(Backend::OpenAIChat));
  EXPECT_TRUE(is_chat_backend(Backend::Deepseek));
  EXPECT_FALSE(is_chat_backend(Backend::OpenAI));
  EXPECT_FALSE(is_chat_backend(Backend::Vllm));
  EXPECT_FALSE(is_chat_backend(Backend::Sglang));
  EXPECT_FALSE(is_chat_backend(Backend::Llamacpp));
  EXPECT_EQ(default_endpoint(Backend::Deepseek), "/v1/chat/completions");
  EXPECT_EQ(default_endpoint(Backend::Vllm), "/v1/completions");
}

TEST(RequestBodyTest, OpenAICompletionHasStandardFieldsAndIgnoreEos) {
  GenRequest request = completion_request();
  request.ignore_eos = true;        // sent, as vLLM's own client does for --backend openai
  request.min_tokens = 16;          // not sent
  request.continuous_usage = true;  // vLLM only
  const std::string text = build_request_body(Backend::OpenAI, request);
  EXPECT_EQ(text.find('\n'), std::string::npos);  // compact
  EXPECT_EQ(text.find(": "), std::string::npos);
  const json body = json::parse(text);
  const json expected = json::parse(R"({
    "model": "deepseek-ai/DeepSeek-R1", "prompt": "The capital of France is",
    "max_tokens": 128, "stream": true, "stream_options": {"include_usage": true},
    "ignore_eos": true})");
  EXPECT_EQ(body, expected) << text;
  EXPECT_EQ(text.rfind(R"({"model":)", 0), 0U) << "model comes first: " << text;
}

TEST(RequestBodyTest, VllmCompletionExtras) {
  GenRequest request = completion_request();
  request.ignore_eos = true;
  request.min_tokens = 128;
  request.continuous_usage = true;
  request.temperature = 0.0;
  request.top_p = 0.95;
  const json body = json::parse(build_request_body(Backend::Vllm, request));
  EXPECT_EQ(body["ignore_eos"], true);
  EXPECT_EQ(body["min_tokens"], 128);
  EXPECT_EQ(body["max_tokens"], 128);
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
  EXPECT_EQ(body["stream_options"]["continuous_usage_stats"], true);
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(body["top_p"].get<double>(), 0.95);
  EXPECT_FALSE(body.contains("n_predict"));
  EXPECT_FALSE(body.contains("messages"));
}

TEST(RequestBodyTest, SglangSendsIgnoreEosAndMinTokensButNotContinuousUsage) {
  GenRequest request = completion_request();
  request.ignore_eos = true;
  request.min_tokens = 7;
  request.continuous_usage = true;
  const json body = json::parse(build_request_body(Backend::Sglang, request));
  EXPECT_EQ(body["ignore_eos"], true);
  EXPECT_EQ(body["min_tokens"], 7);
  EXPECT_EQ(body["stream_options"], json::parse(R"({"include_usage": true})"));
}

TEST(RequestBodyTest, LlamacppSendsNPredictAndIgnoreEosNotMinTokens) {
  GenRequest request = completion_request();
  request.max_tokens = 256;
  request.ignore_eos = true;
  request.min_tokens = 10;
  const json body = json::parse(build_request_body(Backend::Llamacpp, request));
  EXPECT_EQ(body["n_predict"], 256);
  EXPECT_EQ(body["max_tokens"], 256);
  EXPECT_EQ(body["ignore_eos"], true);
  EXPECT_FALSE(body.contains("min_tokens"));
}

TEST(RequestBodyTest, IgnoreEosFalseIsNotSent) {
  const json body = json::parse(build_request_body(Backend::Vllm, completion_request()));
  EXPECT_FALSE(body.contains("ignore_eos"));
  EXPECT_FALSE(body.contains("min_tokens"));
  EXPECT_FALSE(body.contains("temperature"));
  EXPECT_FALSE(body.contains("top_p"));
}

TEST(RequestBodyTest, NegativeMaxTokensLeavesLengthToServer) {
  GenRequest request = completion_request();
  request.max_tokens = -1;
  const json body = json::parse(build_request_body(Backend::Llamacpp, request));
  EXPECT_FALSE(body.contains("max_tokens"));
  EXPECT_FALSE(body.contains("n_predict"));
  request.max_tokens = 0;
  EXPECT_EQ(json::parse(build_request_body(Backend::OpenAI, request))["max_tokens"], 0);
}

TEST(RequestBodyTest, NonStreamingHasNoStreamOptions) {
  GenRequest request = completion_request();
  request.stream = false;
  request.continuous_usage = true;
  const json body = json::parse(build_request_body(Backend::Vllm, request));
  EXPECT_EQ(body["stream"], false);
  EXPECT_FALSE(body.contains("stream_options"));
}

TEST(RequestBodyTest, IncludeUsageOffOmitsStreamOptions) {
  GenRequest request = completion_request();
  request.include_usage = false;
  const json body = json::parse(build_request_body(Backend::OpenAI, request));
  EXPECT_EQ(body["stream"], true);
  EXPECT_FALSE(body.contains("stream_options"));
}

TEST(RequestBodyTest, ChatFromPromptIsOneUserMessage) {
  GenRequest request = completion_request();
  request.chat = true;
  request.prompt = "Say \"hi\" in 中文";
  const json body = json::parse(build_request_body(Backend::Deepseek, request));
  ASSERT_TRUE(body.contains("messages"));
  EXPECT_FALSE(body.contains("prompt"));
  EXPECT_EQ(body["messages"],
            json::parse(R"([{"role": "user", "content": "Say \"hi\" in 中文"}])"));
  EXPECT_EQ(body["max_tokens"], 128);
  EXPECT_FALSE(body.contains("ignore_eos"));
}

// --ignore-eos used to be silently dropped for openai and openai-chat.
TEST(RequestBodyTest, IgnoreEosIsSentOnBothOpenAIPaths) {
  GenRequest request = completion_request();
  request.ignore_eos = true;
  EXPECT_EQ(json::parse(build_request_body(Backend::OpenAI, request))["ignore_eos"], true);
  request.chat = true;
  EXPECT_EQ(json::parse(build_request_body(Backend::OpenAIChat, request))["ignore_eos"], true);
  EXPECT_FALSE(json::parse(build_request_body(Backend::Deepseek, request)).contains("ignore_eos"));
}

TEST(RequestBodyTest, UnhonouredFlagsNameWhatIsDropped) {
  GenRequest request = completion_request();
  EXPECT_TRUE(unhonoured_flags(Backend::OpenAI, request).empty());
  request.ignore_eos = true;
  request.min_tokens = 4;
  request.continuous_usage = true;
  using Flags = std::vector<std::string_view>;
  EXPECT_EQ(unhonoured_flags(Backend::Vllm, request), Flags{});
  EXPECT_EQ(unhonoured_flags(Backend::Sglang, request), Flags{"--continuous-usage"});
  EXPECT_EQ(unhonoured_flags(Backend::OpenAI, request),
            (Flags{"--min-tokens", "--continuous-usage"}));
  EXPECT_EQ(unhonoured_flags(Backend::Deepseek, request),
            (Flags{"--ignore-eos", "--min-tokens", "--continuous-usage"}));
  request.stream = false;  // continuous usage is a streaming option: nothing to honour
  EXPECT_EQ(unhonoured_flags(Backend::Llamacpp, request), Flags{"--min-tokens"});
  // Each flag listed is indeed absent from the body, each unlisted one present.
  const json body = json::parse(build_request_body(Backend::Llamacpp, request));
  EXPECT_TRUE(body.contains("ignore_eos"));
  EXPECT_FALSE(body.contains("min_tokens"));
}

TEST(RequestBodyTest, ChatHistoryKeepsOrder) {
  GenRequest request;
  request.model = "m";
  request.chat = true;
  request.prompt = "ignored when messages are given";
  request.messages = {
      {"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello!"}, {"user", "2+2?"}};
  request.ignore_eos = true;
  const json body = json::parse(build_request_body(Backend::Vllm, request));
  ASSERT_EQ(body["messages"].size(), 4U);
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_EQ(body["messages"][2]["content"], "Hello!");
  EXPECT_EQ(body["messages"][3]["content"], "2+2?");
  EXPECT_EQ(body["ignore_eos"], true);  // vLLM chat accepts it too
  EXPECT_FALSE(body.contains("max_tokens"));
}

TEST(RequestBodyTest, ExtraBodyMergesLastAndOverrides) {
  GenRequest request = completion_request();
  request.temperature = 0.7;
  request.extra_body_json =
      R"({"temperature": 0, "max_tokens": 64, "chat_template_kwargs": {"enable_thinking": false}})";
  const json body = json::parse(build_request_body(Backend::Sglang, request));
  EXPECT_EQ(body["temperature"], 0);
  EXPECT_EQ(body["max_tokens"], 64);
  EXPECT_EQ(body["chat_template_kwargs"]["enable_thinking"], false);
  EXPECT_EQ(body["prompt"], "The capital of France is");
}

TEST(RequestBodyTest, ExtraBodySyntaxErrorNamesFlagAndOffset) {
  GenRequest request = completion_request();
  request.extra_body_json = R"({"top_k": })";  // '}' at byte 10
  try {
    build_request_body(Backend::Vllm, request);
    FAIL() << "expected an exception";
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, "--extra-body");
    EXPECT_EQ(e.error().offset, 10);
    EXPECT_NE(std::string(e.what()).find("--extra-body"), std::string::npos);
  }
}

TEST(RequestBodyTest, ExtraBodyMustBeAnObject) {
  GenRequest request = completion_request();
  request.extra_body_json = "[1, 2]";
  try {
    build_request_body(Backend::Vllm, request);
    FAIL() << "expected an exception";
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, "--extra-body");
    EXPECT_EQ(e.error().offset, 0);
    EXPECT_NE(std::string(e.what()).find("object"), std::string::npos) << e.what();
  }
}

TEST(ErrorMessageTest, OpenAIErrorObject) {
  EXPECT_EQ(error_message_from_body(
                R"({"error": {"message": "This model's maximum context length is 4096 tokens.",
                    "type": "invalid_request_error", "param": "messages", "code": null}})"),
            "This model's maximum context length is 4096 tokens.");
}

TEST(ErrorMessageTest, OldVllmAndFastApiShapes) {
  EXPECT_EQ(
      error_message_from_body(R"({"object":"error","message":"The model `x` does not exist.",)"
                              R"("type":"NotFoundError","param":null,"code":404})"),
      "The model `x` does not exist.");
  EXPECT_EQ(error_message_from_body(R"({"detail":"Not Found"})"), "Not Found");
  EXPECT_EQ(error_message_from_body(
                R"({"detail":[{"loc":["body","model"],"msg":"field required","type":"missing"},)"
                R"({"loc":["body","n"],"msg":"must be >= 1","type":"value_error"}]})"),
            "field required; must be >= 1");
  EXPECT_EQ(error_message_from_body(R"({"error":"rate limited"})"), "rate limited");
}

TEST(ErrorMessageTest, PlainTextIsTrimmedAndCut) {
  EXPECT_EQ(error_message_from_body("  Bad Gateway\r\n"), "Bad Gateway");
  EXPECT_EQ(error_message_from_body(std::string(2000, 'x')), std::string(512, 'x'));
  // 511 ASCII bytes then a 3-byte character straddling the cut: the character is dropped whole.
  const std::string body = std::string(511, 'a') + "\xe4\xbd\xa0" + "tail";
  EXPECT_EQ(error_message_from_body(body), std::string(511, 'a'));
  // JSON without a known message field falls back to the body itself.
  EXPECT_EQ(error_message_from_body(R"({"status": 503})"), R"({"status": 503})");
}

}  // namespace
}  // namespace llmbench::protocol
