#include "llmbench/tokenizer/chat_template.hpp"

#include "llmbench/core/file.hpp"
#include "llmbench/tokenizer/detail/jinja_eval.hpp"
#include "llmbench/tokenizer/detail/jinja_lexer.hpp"
#include "llmbench/tokenizer/detail/jinja_parser.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace llmbench::tokenizer {

namespace jinja = detail::jinja;
using OrderedJson = nlohmann::ordered_json;

struct ChatTemplate::Impl {
  std::string name;
  jinja::Program program;
};

namespace {

Error positioned(const std::string& name, const jinja::JinjaError& e) {
  return Error{.message = e.what(),
               .source = fmt::format("{}:{}:{}", name, e.pos().line, e.pos().column),
               .offset = -1};
}

/// Parses JSON text of one render input; `what` names it in errors.
Result<OrderedJson> parse_json(std::string_view text, const char* what) {
  try {
    return Result<OrderedJson>(boost::system::in_place_value, OrderedJson::parse(text));
  } catch (const nlohmann::json::parse_error& e) {
    return Error{.message = std::string("malformed JSON: ") + e.what(),
                 .source = what,
                 .offset = static_cast<std::int64_t>(e.byte) - 1};
  }
}

/// The string of a special-token entry: "text" or {"content": "text", ...} (AddedToken).
std::optional<std::string> token_text(const OrderedJson& v) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  return std::nullopt;
}

}  // namespace

Result<ChatTemplate> ChatTemplate::parse(std::string_view source, std::string name) {
  try {
    auto impl = std::make_shared<Impl>();
    impl->program = jinja::parse_program(jinja::lex_template(source));
    impl->name = std::move(name);
    ChatTemplate t;
    t.impl_ = std::move(impl);
    return t;
  } catch (const jinja::JinjaError& e) {
    return positioned(name, e);
  }
}

void ChatTemplate::set_special_tokens(std::vector<std::pair<std::string, std::string>> tokens) {
  special_tokens_ = std::move(tokens);
}

const std::vector<std::pair<std::string, std::string>>& ChatTemplate::special_tokens() const {
  return special_tokens_;
}

const std::string& ChatTemplate::name() const {
  return impl_->name;
}

Result<std::string> ChatTemplate::render(const ChatMessages& messages,
                                         const ChatRenderOptions& options) const {
  OrderedJson list = OrderedJson::array();
  for (const auto& m : messages)
    list.push_back(OrderedJson{{"role", m.role}, {"content", m.content}});
  return render_json(list.dump(), options);
}

Result<std::string> ChatTemplate::render_json(std::string_view messages_json,
                                              const ChatRenderOptions& options) const {
  auto messages = parse_json(messages_json, "messages");
  if (!messages)
    return messages.error();
  if (!messages->is_array())
    return Error{.message = "must be a JSON array", .source = "messages", .offset = -1};
  // The variables in transformers' order: render(messages=..., tools=..., documents=...,
  // add_generation_prompt=..., **special_tokens_map, **kwargs).
  jinja::Dict context;
  context.set("messages", jinja::from_json(*messages));
  context.set("tools", jinja::Value(jinja::None{}));
  if (!options.tools_json.empty()) {
    auto tools = parse_json(options.tools_json, "tools");
    if (!tools)
      return tools.error();
    if (!tools->is_array() && !tools->is_null())
      return Error{.message = "must be a JSON array", .source = "tools", .offset = -1};
    context.set("tools", jinja::from_json(*tools));
  }
  context.set("documents", jinja::Value(jinja::None{}));
  context.set("add_generation_prompt", jinja::Value(options.add_generation_prompt));
  for (const auto& [k, v] : special_tokens_) context.set(k, jinja::Value(v));
  if (!options.kwargs_json.empty()) {
    auto kwargs = parse_json(options.kwargs_json, "chat template kwargs");
    if (!kwargs)
      return kwargs.error();
    if (!kwargs->is_object())
      return Error{
          .message = "must be a JSON object", .source = "chat template kwargs", .offset = -1};
    for (const auto& [k, v] : kwargs->items()) context.set(k, jinja::from_json(v));
  }
  try {
    return Result<std::string>(boost::system::in_place_value,
                               jinja::render_program(impl_->program, context));
  } catch (const jinja::JinjaError& e) {
    return positioned(impl_->name, e);
  }
}

namespace {

Result<OrderedJson> read_config(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text)
    return text.error();
  auto j = parse_json(*text, "tokenizer_config.json");
  if (!j)
    return Error{.message = j.error().message, .source = path.string(), .offset = j.error().offset};
  if (!j->is_object())
    return Error{.message = "not a JSON object", .source = path.string(), .offset = -1};
  return j;
}

/// The config's template source: a string, or the "default" entry of a list of named ones.
std::optional<std::string> config_template(const OrderedJson& config) {
  const auto it = config.find("chat_template");
  if (it == config.end())
    return std::nullopt;
  if (it->is_string())
    return it->get<std::string>();
  if (it->is_array()) {
    for (const auto& entry : *it) {
      if (entry.is_object() && entry.value("name", "") == "default" && entry.contains("template") &&
          entry["template"].is_string())
        return entry["template"].get<std::string>();
    }
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> config_special_tokens(const OrderedJson& config) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    const auto it = config.find(key);
    if (it == config.end())
      continue;
    if (auto text = token_text(*it))
      out.emplace_back(key, std::move(*text));
  }
  return out;
}

}  // namespace

Result<std::optional<ChatTemplate>> load_chat_template(
    const std::filesystem::path& tokenizer_file) {
  const std::filesystem::path folder = tokenizer_file.parent_path();
  std::error_code ec;
  const auto config_path = folder / "tokenizer_config.json";
  OrderedJson config = OrderedJson::object();
  if (std::filesystem::exists(config_path, ec)) {
    auto c = read_config(config_path);
    if (!c)
      return c.error();
    config = std::move(*c);
  }
  std::optional<std::string> source;
  std::string name;
  const auto jinja_path = folder / "chat_template.jinja";
  if (std::filesystem::exists(jinja_path, ec)) {
    auto text = read_file(jinja_path);
    if (!text)
      return text.error();
    source = std::move(*text);
    name = jinja_path.string();
  } else {
    source = config_template(config);
    name = config_path.string() + " chat_template";
  }
  if (!source)
    return std::optional<ChatTemplate>();
  auto parsed = ChatTemplate::parse(*source, name);
  if (!parsed)
    return parsed.error();
  parsed->set_special_tokens(config_special_tokens(config));
  return std::optional<ChatTemplate>(std::move(*parsed));
}

Result<ChatTemplate> load_chat_template_file(const std::filesystem::path& file) {
  auto text = read_file(file);
  if (!text)
    return text.error();
  if (file.extension() == ".json") {
    auto config = read_config(file);
    if (!config)
      return config.error();
    auto source = config_template(*config);
    if (!source)
      return Error{.message = "has no chat_template", .source = file.string(), .offset = -1};
    auto parsed = ChatTemplate::parse(*source, file.string() + " chat_template");
    if (parsed)
      parsed->set_special_tokens(config_special_tokens(*config));
    return parsed;
  }
  return ChatTemplate::parse(*text, file.string());
}

}  // namespace llmbench::tokenizer
