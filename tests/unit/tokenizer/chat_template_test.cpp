// ChatTemplate: the variables transformers passes (messages, tools, add_generation_prompt,
// special tokens, kwargs), loading from tokenizer_config.json / chat_template.jinja, and the
// templates of the shared tokenizers on conversations whose rendering is worked out by hand
// from the template text (the differential test compares thousands more against
// @huggingface/jinja; these cover what it leaves out).
#include "llmbench/tokenizer/chat_template.hpp"

#include <gtest/gtest.h>

#include "shared_data.hpp"
#include "test_data.hpp"
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace llmbench::tokenizer {
namespace {

namespace fs = std::filesystem;

constexpr const char* kChatMl =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

TEST(ChatTemplate, RendersMessagesWithTheGenerationPrompt) {
  auto t = ChatTemplate::parse(kChatMl, "chatml");
  ASSERT_TRUE(t) << t.error().what();
  const ChatMessages messages = {{.role = "system", .content = "Be brief."},
                                 {.role = "user", .content = "Hi"}};
  ChatRenderOptions options;
  auto with = t->render(messages, options);
  ASSERT_TRUE(with) << with.error().what();
  EXPECT_EQ(*with,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n");
  options.add_generation_prompt = false;
  auto without = t->render(messages, options);
  ASSERT_TRUE(without);
  EXPECT_EQ(*without, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
}

TEST(ChatTemplate, VariablesAsTransformersPassesThem) {
  auto t = ChatTemplate::parse(
      "{{ tools is none }}{{ documents is none }}{{ bos_token }}{{ eos_token is defined }}"
      "{{ thinking }}{{ messages[0].tool_calls[0].function.arguments.city }}",
      "vars");
  ASSERT_TRUE(t);
  t->set_special_tokens({{"bos_token", "<s>"}});
  ChatRenderOptions options;
  options.kwargs_json = R"({"thinking": true})";
  auto out = t->render_json(
      R"([{"role": "assistant", "content": null, "tool_calls": [{"type": "function",
          "function": {"name": "f", "arguments": {"city": "Paris"}}}]}])",
      options);
  ASSERT_TRUE(out) << out.error().what();
  EXPECT_EQ(*out, "TrueTrue<s>FalseTrueParis");
  options.kwargs_json = R"({"bos_token": "[BOS]"})";  // kwargs override the special tokens
  options.tools_json = R"([{"type": "function"}])";
  auto tools = ChatTemplate::parse("{{ bos_token }}{{ tools | length }}", "t");
  ASSERT_TRUE(tools);
  tools->set_special_tokens({{"bos_token", "<s>"}});
  EXPECT_EQ(tools->render_json("[]", options).value(), "[BOS]1");
}

TEST(ChatTemplate, BadInputsAreErrorsNamingTheInput) {
  auto t = ChatTemplate::parse(kChatMl, "chatml");
  ASSERT_TRUE(t);
  ChatRenderOptions options;
  auto bad = t->render_json("[{\"role\": ", options);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().source, "messages");
  auto not_array = t->render_json("{}", options);
  ASSERT_FALSE(not_array);
  EXPECT_EQ(not_array.error().what(), "messages: must be a JSON array");
  options.kwargs_json = "[1]";
  auto kwargs = t->render_json("[]", options);
  ASSERT_FALSE(kwargs);
  EXPECT_EQ(kwargs.error().what(), "chat template kwargs: must be a JSON object");
}

/// A fresh temporary folder for one test.
fs::path temp_folder(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("llmbench_chat_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(ChatTemplate, LoadsTheTemplateAndSpecialTokensOfATokenizerFolder) {
  const fs::path dir = temp_folder("config");
  write(dir / "tokenizer_config.json",
        R"({"bos_token": {"__type": "AddedToken", "content": "<B>"}, "eos_token": "</E>",
            "chat_template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}{{ eos_token }}"})");
  auto loaded = load_chat_template(dir / "tokenizer.json");
  ASSERT_TRUE(loaded) << loaded.error().what();
  ASSERT_TRUE(loaded->has_value());
  EXPECT_EQ((*loaded)->render({{.role = "user", .content = "x"}}, {}).value(), "<B>x</E>");

  write(dir / "chat_template.jinja", "jinja file wins: {{ messages | length }}");
  auto jinja = load_chat_template(dir / "tokenizer.json");
  ASSERT_TRUE(jinja && jinja->has_value());
  EXPECT_EQ((*jinja)->render({{.role = "user", .content = "x"}}, {}).value(), "jinja file wins: 1");

  const fs::path named = temp_folder("named");
  write(
      named / "tokenizer_config.json",
      R"({"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]})");
  auto list = load_chat_template(named / "tokenizer.json");
  ASSERT_TRUE(list && list->has_value());
  EXPECT_EQ((*list)->render({}, {}).value(), "D");

  const fs::path none = temp_folder("none");
  write(none / "tokenizer_config.json", R"({"bos_token": "<s>"})");
  auto absent = load_chat_template(none / "tokenizer.json");
  ASSERT_TRUE(absent);
  EXPECT_FALSE(absent->has_value());

  const fs::path broken = temp_folder("broken");
  write(broken / "tokenizer_config.json", R"({"chat_template": "{% for m in messages %}"})");
  auto syntax = load_chat_template(broken / "tokenizer.json");
  ASSERT_FALSE(syntax);
  EXPECT_NE(syntax.error().what().find("tokenizer_config.json chat_template:1:"), std::string::npos)
      << syntax.error().what();
}

/// A shared-data template, loaded as load_chat_template_file reads it.
ChatTemplate shared_template(const std::string& rel) {
  const fs::path file = testing::data_file(rel);
  if (file.empty())
    return ChatTemplate::parse("", "missing").value();
  return load_chat_template_file(file).value();
}

TEST(SharedChatTemplates, DeepSeekR1StripsThinkingFromHistoryAndOpensThinking) {
  if (testing::data_file("deepseek-r1/tokenizer_config.json").empty()) {
    LLMBENCH_SHARED_DATA_MISSING() << "tokenizers/deepseek-r1 not found";
  }
  const ChatTemplate t = shared_template("deepseek-r1/tokenizer_config.json");
  const ChatMessages messages = {{.role = "system", .content = "S"},
                                 {.role = "user", .content = "Hi"},
                                 {.role = "assistant", .content = "<think>t</think>Yo"},
                                 {.role = "user", .content = "Q"}};
  EXPECT_EQ(t.render(messages, {}).value(),
            "<｜begin▁of▁sentence｜>S<｜User｜>Hi<｜Assistant｜>Yo<｜end▁of▁sentence｜>"
            "<｜User｜>Q<｜Assistant｜><think>\n");
}

TEST(SharedChatTemplates, DeepSeekV31ThinkingSwitches) {
  if (testing::data_file("deepseek-v3.1/chat_template.llamacpp.jinja").empty()) {
    LLMBENCH_SHARED_DATA_MISSING() << "tokenizers/deepseek-v3.1 not found";
  }
  const ChatTemplate t = shared_template("deepseek-v3.1/chat_template.llamacpp.jinja");
  const ChatMessages messages = {{.role = "user", .content = "Hi"}};
  ChatRenderOptions options;
  EXPECT_EQ(t.render(messages, options).value(), "<｜User｜>Hi<｜Assistant｜><think></think>");
  options.kwargs_json = R"({"thinking": true})";
  EXPECT_EQ(t.render(messages, options).value(), "<｜User｜>Hi<｜Assistant｜><think>");
  options.kwargs_json = R"({"enable_thinking": true})";  // the template maps it to thinking
  EXPECT_EQ(t.render(messages, options).value(), "<｜User｜>Hi<｜Assistant｜><think>");
}

TEST(SharedChatTemplates, Llama31BuiltinToolsCallSyntax) {
  // The builtin_tools path (reject, items) is not in the differential test: @huggingface/jinja
  // 0.5.11 has no `reject` filter.
  if (testing::data_file("llama3/chat_template.llama-3.1.llamacpp.jinja").empty()) {
    LLMBENCH_SHARED_DATA_MISSING() << "tokenizers/llama3 not found";
  }
  const ChatTemplate t = shared_template("llama3/chat_template.llama-3.1.llamacpp.jinja");
  ChatRenderOptions options;
  options.add_generation_prompt = false;
  options.kwargs_json =
      R"({"builtin_tools": ["brave_search", "code_interpreter"], "date_string": "1 Jan 2025"})";
  auto out = t.render_json(
      R"([{"role": "user", "content": "Weather?"},
          {"role": "assistant", "tool_calls": [{"type": "function",
           "function": {"name": "brave_search", "arguments": {"query": "x"}}}]}])",
      options);
  ASSERT_TRUE(out) << out.error().what();
  EXPECT_EQ(*out,
            "<|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\n"
            "Tools: brave_search\n\nCutting Knowledge Date: December 2023\n"
            "Today Date: 1 Jan 2025\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
            "Weather?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
            "<|python_tag|>brave_search.call(query=\"x\")<|eom_id|>");
  // Two tool calls in one message: the template's own raise_exception, with its position.
  auto two = t.render_json(
      R"([{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [
          {"function": {"name": "a", "arguments": {}}}, {"function": {"name": "b", "arguments": {}}}]}])",
      {});
  ASSERT_FALSE(two);
  EXPECT_NE(two.error().what().find(
                "chat_template.llama-3.1.llamacpp.jinja:71:32: This model only supports single "
                "tool-calls at once!"),
            std::string::npos)
      << two.error().what();
}

}  // namespace
}  // namespace llmbench::tokenizer
