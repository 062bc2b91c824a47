#pragma once
/// @file
/// The tokenizer.json loader (internal; load.cpp: model, added tokens, tokenizer_config.json and
/// the entry points; load_pipeline.cpp: normalizer, pre-tokenizer, post-processor, decoder).
/// Formats: HF tokenizers serialization (`tokenizers/src/tokenizer/serialization.rs` and each
/// component's serde form) and transformers' tokenizer_config.json.

#include "llmbench/tokenizer/impl.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <simdjson.h>

#include <string>
#include <string_view>

namespace llmbench::tokenizer::detail {

namespace dom = simdjson::dom;

// GPT-2 split regex used by the ByteLevel pre-tokenizer when `use_regex` is true
// (tokenizers `pre_tokenizers/byte_level.rs`).
inline constexpr std::string_view kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

/// Collects a `Tokenizer::Impl` while loading; errors carry the file name and the JSON field path.
class Loader {
 public:
  Loader(std::string_view source, Tokenizer::Impl& impl) : source_(source), impl_(impl) {}

  Error error(const std::string& field, const std::string& message) const {
    return Error{field.empty() ? message : field + ": " + message, source_, -1};
  }

  Result<void> load(dom::element root, const nlohmann::json* config);

 private:
  Result<std::string_view> string_field(dom::element obj, const char* key,
                                        const std::string& path) const {
    std::string_view out;
    if (obj[key].get_string().get(out) != simdjson::SUCCESS) {
      return error(path + "." + key, "missing or not a string");
    }
    return out;
  }
  static bool bool_field(dom::element obj, const char* key, bool fallback) {
    bool out = fallback;
    if (obj[key].get_bool().get(out) != simdjson::SUCCESS) {
      return fallback;
    }
    return out;
  }
  static bool is_null_or_absent(dom::element obj, const char* key) {
    dom::element v;
    return obj[key].get(v) != simdjson::SUCCESS || v.is_null();
  }
  Result<void> load_normalizer(dom::element n, const std::string& path);
  Result<void> load_decoder(dom::element d, const std::string& path);
  Result<SplitBehavior> parse_behavior(std::string_view behavior, const std::string& path) const;
  Result<void> load_pre_tokenizer(dom::element p, const std::string& path);
  /// A `Split` pre-tokenizer at `path` into `step` (a regex or a literal, behavior, invert).
  Result<void> load_split(dom::element p, const std::string& path, PreStep& step);
  /// A `Metaspace` pre-tokenizer at `path`: its step, and the split on its character.
  Result<void> load_metaspace(dom::element p, const std::string& path);
  Result<void> load_model(dom::element m);
  /// `model.vocab`: token ↔ id, the byte-level bytes of every token, the byte and fallback ids,
  /// and `model.unk_token`.
  Result<void> load_vocab(dom::element m);
  /// `model.merges` ("left right" strings or [left, right] pairs), in rank order.
  Result<void> load_merges(dom::element m);
  Result<void> load_added_tokens(dom::element root);
  Result<void> load_post_processor(dom::element p, const std::string& path);
  Result<void> apply_config(const nlohmann::json& config);

 public:
  Result<TokenId> lookup(std::string_view token, const std::string& path) const {
    const auto it = impl_.token_to_id.find(token);
    if (it == impl_.token_to_id.end()) {
      return error(path, fmt::format("token '{}' is not in the vocabulary", token));
    }
    return it->second;
  }

 private:
  std::string source_;
  Tokenizer::Impl& impl_;
  bool byte_level_ = false;
};

}  // namespace llmbench::tokenizer::detail
