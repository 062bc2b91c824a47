#pragma once
/// @file
/// The tokenizer and chat template of a point, loaded once by the session that owns them
/// (`app::Session`), shared read-only with every point that names the same `--tokenizer`.

#include "llmbench/tokenizer/chat_template.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace llmbench::app {

/// Loads the tokenizer `given` names (`resolve_tokenizer_alias`, then
/// `tokenizer::load_tokenizer`: a path, else a name under `$LLMBENCH_DATA/tokenizers/`, else
/// under the bundled data folder) and logs what it resolved to and the special tokens it adds.
/// Null when `given` is empty. Throws `Exception` naming `--tokenizer`.
std::shared_ptr<const tokenizer::Tokenizer> load_tokenizer(const std::string& given);

/// The chat template beside the tokenizer `given` names (chat_template.jinja or
/// tokenizer_config.json: `tokenizer::load_chat_template`), logged when found; null without a
/// tokenizer or a template. Throws `Exception` naming `--tokenizer` for an unreadable or
/// malformed template.
std::shared_ptr<const tokenizer::ChatTemplate> load_chat_template(const std::string& given);

/// The results' `tokenizer` object: `given` as typed, the file it resolved to and that file's
/// SHA-256 (FIPS 180-4, 64 lowercase hex digits; "" when unreadable), so two results that name
/// the same tokenizer can be told apart by content; null when `given` is empty.
nlohmann::json tokenizer_json(const std::string& given);

}  // namespace llmbench::app
