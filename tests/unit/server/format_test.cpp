#include "llmbench/server/openai_format.hpp"
#include "llmbench/server/openai_request.hpp"
#include "llmbench/server/options.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace llmbench::server {
namespace {

using nlohmann::json;

TEST(Vocabulary, Cycles) {
  EXPECT_EQ(token_text(0), " the");
  EXPECT_EQ(token_text(1), " model");
  EXPECT_EQ(token_text(kVocabSize), " the");
  EXPECT_EQ(token_text(10), " data");
  EXPECT_EQ(token_text(kVocabSize - 1), ".");
  std::string text;
  append_tokens(text, 0, 3);
  EXPECT_EQ(text, " the model serves");
}

TEST(JsonString, EscapesSpecialCharacters) {
  std::string out;
  append_json_string(out, "a\"b\\c\nd\x01 数");
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\nd\\u0001 数\"");
  EXPECT_EQ(json::parse(out).get<std::string>(), "a\"b\\c\nd\x01 数");
}

TEST(StreamEvents, CompletionChunkIsExactVllmShape) {
  const StreamContext ctx = make_stream_context(false, "cmpl-3", 1700000000, "m", 5, false);
  std::string out;
  append_content_event(out, ctx, " the", false, 1);
  EXPECT_EQ(out,
            "data: {\"id\":\"cmpl-3\",\"object\":\"text_completion\",\"created\":1700000000,"
            "\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\" the\",\"logprobs\":null,"
            "\"finish_reason\":null,\"stop_reason\":null}],\"usage\":null}\n\n");
}

TEST(StreamEvents, ChatChunksWithContinuousUsage) {
  const StreamContext ctx = make_stream_context(true, "chatcmpl-1", 7, "sim", 4, true);
  std::string role;
  append_role_event(role, ctx);
  ASSERT_EQ(role.rfind("data: ", 0), 0u);
  json r = json::parse(role.substr(6));
  EXPECT_EQ(r["object"], "chat.completion.chunk");
  EXPECT_EQ(r["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(r["choices"][0]["delta"]["content"], "");
  EXPECT_EQ(r["usage"]["completion_tokens"], 0);

  std::string content;
  append_content_event(content, ctx, " the model", true, 2);
  json c = json::parse(content.substr(6));
  EXPECT_EQ(c["choices"][0]["delta"]["content"], " the model");
  EXPECT_EQ(c["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(c["usage"]["prompt_tokens"], 4);
  EXPECT_EQ(c["usage"]["completion_tokens"], 2);
  EXPECT_EQ(c["usage"]["total_tokens"], 6);

  std::string usage;
  append_usage_event(usage, ctx, 9);
  json u = json::parse(usage.substr(6));
  EXPECT_TRUE(u["choices"].empty());
  EXPECT_EQ(u["usage"]["total_tokens"], 13);
  std::string done;
  append_done_event(done);
  EXPECT_EQ(done, "data: [DONE]\n\n");
}

TEST(FullResponse, ChatAndCompletion) {
  json chat = json::parse(format_full_response(true, "chatcmpl-2", 1, "sim", " a\"b", 3, 2));
  EXPECT_EQ(chat["object"], "chat.completion");
  EXPECT_EQ(chat["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(chat["choices"][0]["message"]["content"], " a\"b");
  EXPECT_EQ(chat["usage"]["completion_tokens"], 2);
  json text = json::parse(format_full_response(false, "cmpl-2", 1, "sim", "", 3, 0));
  EXPECT_EQ(text["object"], "text_completion");
  EXPECT_EQ(text["choices"][0]["text"], "");
  EXPECT_EQ(text["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(text["usage"]["total_tokens"], 3);
}

TEST(ErrorBody, OpenAiShape) {
  json e = json::parse(format_error("bad \"x\"", "invalid_request_error", "", 400));
  EXPECT_EQ(e["error"]["message"], "bad \"x\"");
  EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  EXPECT_TRUE(e["error"]["param"].is_null());
  EXPECT_EQ(e["error"]["code"], 400);
  json p = json::parse(format_error("m", "invalid_request_error", "prompt", 400));
  EXPECT_EQ(p["error"]["param"], "prompt");
}

TEST(PromptEstimate, TextTokenEstimateOfThePromptAtLeastOne) {
  // Without a tokenizer: ceil(ASCII bytes / 4) + one per non-ASCII code point (core/text.hpp),
  // over the text items (completions) or message contents (chat) together.
  const auto completions = [](const std::string& body) {
    return parse_generation_request(body, false, 16)->prompt_tokens;
  };
  EXPECT_EQ(completions(R"({"prompt":""})"), 1);
  EXPECT_EQ(completions(R"({"prompt":"abcde"})"), 2);
  // 你好 is 6 bytes (ceil(6/4) = 2 by bytes alone) but 2 code points; with "ab": ceil(2/4) + 2.
  EXPECT_EQ(completions(R"({"prompt":"ab\u4f60\u597d"})"), 3);
  EXPECT_EQ(completions("{\"prompt\":[\"ab\",\"\xE4\xBD\xA0\xE5\xA5\xBD\xE5\x90\x97\"]}"),
            1 + 3);  // ["ab", "你好吗"]: the items together, not ceil(11 bytes / 4)
  const auto chat =
      parse_generation_request(
          "{\"messages\":[{\"role\":\"user\",\"content\":\"\xE6\x95\xB0\xE6\x8D\xAE ab\"}]}", true,
          16)
          ->prompt_tokens;
  EXPECT_EQ(chat, 2 + 1);  // 数据 + " ab": 2 code points + ceil(3/4)
}

TEST(ParseRequest, CompletionPromptShapesAndLengths) {
  auto p = parse_generation_request(
      R"({"model":"x","prompt":"hello world!!","max_tokens":7,"stream":true,
          "stream_options":{"include_usage":true,"continuous_usage_stats":true}})",
      false, 128);
  ASSERT_TRUE(p) << p.error().what();
  EXPECT_TRUE(p->stream);
  EXPECT_TRUE(p->include_usage);
  EXPECT_TRUE(p->continuous_usage);
  EXPECT_EQ(p->output_tokens, 7);
  EXPECT_EQ(p->prompt_tokens, 4);  // 13 bytes → ceil(13/4)

  auto ids = parse_generation_request(R"({"prompt":[1,2,3,4,5],"max_tokens":2.0})", false, 128);
  ASSERT_TRUE(ids);
  EXPECT_EQ(ids->prompt_tokens, 5);
  EXPECT_EQ(ids->output_tokens, 2);
  EXPECT_FALSE(ids->stream);

  auto nested = parse_generation_request(R"({"prompt":[[1,2],[3]],"n_predict":9})", false, 128);
  ASSERT_TRUE(nested);
  EXPECT_EQ(nested->prompt_tokens, 3);
  EXPECT_EQ(nested->output_tokens, 9);

  auto dflt = parse_generation_request(R"({"prompt":["abcd","efgh"],"n_predict":-1})", false, 64);
  ASSERT_TRUE(dflt);
  EXPECT_EQ(dflt->prompt_tokens, 2);
  EXPECT_EQ(dflt->output_tokens, 64);

  auto zero = parse_generation_request(R"({"prompt":"x","max_tokens":0,"n_predict":5})", false, 64);
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->output_tokens, 0);  // max_tokens wins over n_predict
}

TEST(ParseRequest, ChatMessagesAndMaxCompletionTokens) {
  auto p = parse_generation_request(
      R"({"messages":[{"role":"system","content":"abcdefgh"},
                      {"role":"user","content":[{"type":"text","text":"ijkl"}]},
                      {"role":"assistant","content":null}],
          "max_completion_tokens":3})",
      true, 128);
  ASSERT_TRUE(p) << p.error().what();
  EXPECT_TRUE(p->chat);
  EXPECT_EQ(p->prompt_tokens, 3);  // 12 bytes
  EXPECT_EQ(p->output_tokens, 3);
  // max_completion_tokens is a chat field only.
  auto c = parse_generation_request(R"({"prompt":"x","max_completion_tokens":3})", false, 11);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->output_tokens, 11);
}

TEST(ParseRequest, ErrorsNameTheParameter) {
  auto bad_json = parse_generation_request("{\"prompt\": ", false, 1);
  ASSERT_FALSE(bad_json);
  EXPECT_NE(bad_json.error().message.find("not valid JSON"), std::string::npos);

  auto not_object = parse_generation_request("[1,2]", false, 1);
  ASSERT_FALSE(not_object);
  EXPECT_NE(not_object.error().message.find("JSON object"), std::string::npos);

  auto missing = parse_generation_request(R"({"max_tokens":3})", false, 1);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().source, "prompt");

  auto no_messages = parse_generation_request(R"({"prompt":"x"})", true, 1);
  ASSERT_FALSE(no_messages);
  EXPECT_EQ(no_messages.error().source, "messages");

  auto negative = parse_generation_request(R"({"prompt":"x","max_tokens":-2})", false, 1);
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().source, "max_tokens");

  auto fraction = parse_generation_request(R"({"prompt":"x","max_tokens":2.5})", false, 1);
  ASSERT_FALSE(fraction);
  EXPECT_EQ(fraction.error().source, "max_tokens");

  auto stream = parse_generation_request(R"({"prompt":"x","stream":"yes"})", false, 1);
  ASSERT_FALSE(stream);
  EXPECT_EQ(stream.error().source, "stream");

  auto message = parse_generation_request(R"({"messages":[{"role":"user","content":5}]})", true, 1);
  ASSERT_FALSE(message);
  EXPECT_EQ(message.error().source, "messages[0].content");
}

TEST(Options, ValidateNamesTheField) {
  ServerOptions ok;
  EXPECT_NO_THROW(validate(ok));
  ServerOptions bad = ok;
  bad.tokens_per_chunk = 0;
  try {
    validate(bad);
    FAIL() << "expected an exception";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("--tokens-per-chunk"), std::string::npos) << e.what();
  }
  bad = ok;
  bad.itl_ms = -1;
  EXPECT_ANY_THROW(validate(bad));
  bad = ok;
  bad.max_num_seqs = 0;
  EXPECT_ANY_THROW(validate(bad));
}

}  // namespace
}  // namespace llmbench::server
