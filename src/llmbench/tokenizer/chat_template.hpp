#pragma once
/// @file
/// Chat templates: `tokenizer_config.json`'s `chat_template` rendered as Hugging Face
/// transformers renders it in `apply_chat_template` (Jinja2 with `trim_blocks=True`,
/// `lstrip_blocks=True`, transformers' `tojson`, `raise_exception` and `strftime_now`;
/// transformers `utils/chat_template_utils.py`). The interpreter is our own
/// (detail/jinja_*.hpp); what it supports and where it knowingly differs from Jinja2 is
/// docs/chat-templates.md. It is checked byte for byte against npm `@huggingface/jinja` on the
/// templates of the shared tokenizers (tests/differential/chat_templates.sh).
///
/// A `ChatTemplate` is immutable after parsing and may be rendered from many threads at once.

#include "llmbench/core/chat.hpp"
#include "llmbench/core/error.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench::tokenizer {

/// Options of one render: the `apply_chat_template` arguments other than the messages.
struct ChatRenderOptions {
  /// `add_generation_prompt`: end with the assistant turn's opening (what a server does for a
  /// chat completion).
  bool add_generation_prompt = true;
  /// `tools`: a JSON array of tool schemas; empty = `tools=None` (still defined, as
  /// transformers passes it).
  std::string tools_json;
  /// Extra template variables as a JSON object, e.g. `{"thinking": true}` (DeepSeek-V3.1/V3.2)
  /// or `{"enable_thinking": false}` (Qwen3); they override the special tokens, as
  /// `apply_chat_template(**kwargs)` does. Empty = none.
  std::string kwargs_json;
};

/// One parsed chat template with the special tokens it is rendered with.
class ChatTemplate {
 public:
  /// Parses template `source`; `name` names it in errors ("NAME:LINE:COLUMN: message").
  /// Errors: a syntax error, with its position.
  static Result<ChatTemplate> parse(std::string_view source, std::string name);

  /// Special tokens passed to the template as variables (transformers passes the tokenizer's
  /// `special_tokens_map`: bos_token, eos_token, unk_token, pad_token where set).
  void set_special_tokens(std::vector<std::pair<std::string, std::string>> tokens);
  /// The special tokens set.
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& special_tokens() const;

  /// Renders `messages` (role and string content each). Errors: a template error at run time
  /// (e.g. `raise_exception`, a type error), with the template's name and position.
  [[nodiscard]] Result<std::string> render(const ChatMessages& messages,
                                           const ChatRenderOptions& options) const;
  /// Renders `messages_json`, a JSON array of OpenAI chat messages as a server receives them
  /// (`tool_calls`, `reasoning_content`, content parts and any other field pass through to the
  /// template). Errors: malformed JSON (source "messages", with the byte offset), kwargs or
  /// tools that are not JSON of the right shape, and the template's own errors.
  [[nodiscard]] Result<std::string> render_json(std::string_view messages_json,
                                                const ChatRenderOptions& options) const;

  /// The name given to `parse` (a file path, or "tokenizer_config.json chat_template").
  [[nodiscard]] const std::string& name() const;

  /// Implementation detail (chat_template.cpp).
  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
  std::vector<std::pair<std::string, std::string>> special_tokens_;
};

/// The chat template that belongs to a tokenizer file: `chat_template.jinja` beside it (where
/// newer transformers saves it; it wins), else `tokenizer_config.json`'s `chat_template` (a
/// string, or a list of `{name, template}` of which "default" is used), with the special tokens
/// of tokenizer_config.json (a string or an `{"content": ...}` object each). nullopt when there
/// is none. Errors: an unreadable or malformed file, a syntax error in the template.
Result<std::optional<ChatTemplate>> load_chat_template(const std::filesystem::path& tokenizer_file);

/// A template from a file given by the user (`--chat-template`): a tokenizer_config.json (its
/// template and special tokens) or a Jinja file (no special tokens).
Result<ChatTemplate> load_chat_template_file(const std::filesystem::path& file);

}  // namespace llmbench::tokenizer
