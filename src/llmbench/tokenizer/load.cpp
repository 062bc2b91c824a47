/// @file
/// Loading tokenizer.json (HF tokenizers serialization format, `tokenizers/src/tokenizer/
/// serialization.rs` and each component's serde form) and tokenizer_config.json (transformers).

#include "llmbench/core/file.hpp"
#include "llmbench/tokenizer/loader.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <simdjson.h>

namespace llmbench::tokenizer {
namespace detail {

Result<void> Loader::load_model(dom::element m) {
  auto type = string_field(m, "type", "model");
  if (!type) {
    return type.error();
  }
  if (*type != "BPE") {
    return error(
        "model.type",
        fmt::format("unsupported model type '{}' (supported: BPE, and tiktoken rank files)",
                    *type));
  }
  // Without a ByteLevel pre-tokenizer the vocabulary is plain text (SentencePiece-style BPE).
  impl_.bpe.byte_level = byte_level_;
  double dropout = 0.0;
  if (!is_null_or_absent(m, "dropout") &&
      m["dropout"].get_double().get(dropout) == simdjson::SUCCESS && dropout > 0.0) {
    return error("model.dropout", "unsupported: BPE dropout");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    std::string_view v;
    if (m[key].get_string().get(v) == simdjson::SUCCESS && !v.empty()) {
      if (byte_level_) {
        return error(std::string("model.") + key,
                     "unsupported: non-empty value with a ByteLevel pre-tokenizer");
      }
      (key[0] == 'c' ? impl_.bpe.prefix : impl_.bpe.suffix) = std::string(v);
    }
  }
  impl_.bpe.ignore_merges = bool_field(m, "ignore_merges", false);
  impl_.bpe.fuse_unk = bool_field(m, "fuse_unk", false);
  impl_.bpe.byte_fallback = bool_field(m, "byte_fallback", false);
  if (auto vocab = load_vocab(m); !vocab) {
    return vocab.error();
  }
  return load_merges(m);
}

Result<void> Loader::load_vocab(dom::element m) {
  dom::object vocab;
  if (m["vocab"].get_object().get(vocab) != simdjson::SUCCESS) {
    return error("model.vocab", "missing or not an object");
  }
  impl_.token_to_id.reserve(vocab.size() + 1024);
  std::string bytes;
  std::vector<bool> taken;  // ids already given to a token
  for (auto field : vocab) {
    const std::string where = fmt::format("model.vocab[\"{}\"]", field.key);
    std::uint64_t id = 0;
    if (field.value.get_uint64().get(id) != simdjson::SUCCESS || id > 0xFFFFFFF) {
      return error(where, "id is not a small integer");
    }
    if (id >= vocab.size() + detail::kMaxTokenIdGap) {
      return error(where, fmt::format("id {} is far past the {} entries of the vocabulary", id,
                                      vocab.size()));
    }
    const auto tid = static_cast<TokenId>(id);
    if (!impl_.token_to_id.emplace(std::string(field.key), tid).second) {
      return error(where, "the token appears twice in the vocabulary");
    }
    if (impl_.id_to_token.size() <= tid) {
      impl_.id_to_token.resize(tid + 1);
      taken.resize(tid + 1);
    }
    if (taken[tid]) {
      return error(where,
                   fmt::format("id {} is also the id of \"{}\"", id, impl_.id_to_token[tid]));
    }
    taken[tid] = true;
    impl_.id_to_token[tid] = std::string(field.key);
    if (!byte_level_) {
      impl_.bpe.bytes_to_id.emplace(std::string(field.key), tid);
    } else if (detail::byte_level_to_bytes(field.key, bytes)) {
      impl_.bpe.bytes_to_id.emplace(bytes, tid);
    }
  }
  for (unsigned b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    const auto it = impl_.bpe.bytes_to_id.find(one);
    impl_.bpe.byte_id[b] = it == impl_.bpe.bytes_to_id.end() || !byte_level_
                               ? std::int64_t{-1}
                               : std::int64_t{it->second};
    const auto fb = impl_.token_to_id.find(fmt::format("<0x{:02X}>", b));
    impl_.bpe.fallback_id[b] =
        fb == impl_.token_to_id.end() ? std::int64_t{-1} : std::int64_t{fb->second};
  }
  std::string_view unk;
  if (m["unk_token"].get_string().get(unk) == simdjson::SUCCESS) {
    auto id = lookup(unk, "model.unk_token");
    if (!id) {
      return id.error();
    }
    impl_.bpe.unk_id = *id;
  }
  return {};
}

Result<void> Loader::load_merges(dom::element m) {
  dom::array merges;
  if (m["merges"].get_array().get(merges) != simdjson::SUCCESS) {
    return error("model.merges", "missing or not an array");
  }
  impl_.bpe.merges.reserve(merges.size());
  std::uint32_t rank = 0;
  std::string joined;
  for (dom::element item : merges) {
    const std::string path = fmt::format("model.merges[{}]", rank);
    std::string_view left;
    std::string_view right;
    std::string_view line;
    dom::array pair;
    if (item.get_string().get(line) == simdjson::SUCCESS) {
      const auto space = line.find(' ');
      if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos) {
        return error(path, fmt::format("expected \"left right\", got \"{}\"", line));
      }
      left = line.substr(0, space);
      right = line.substr(space + 1);
    } else if (item.get_array().get(pair) == simdjson::SUCCESS && pair.size() == 2 &&
               pair.at(0).get_string().get(left) == simdjson::SUCCESS &&
               pair.at(1).get_string().get(right) == simdjson::SUCCESS) {
    } else {
      return error(path, "expected a \"left right\" string or a [left, right] pair");
    }
    auto l = lookup(left, path);
    if (!l) {
      return l.error();
    }
    auto r = lookup(right, path);
    if (!r) {
      return r.error();
    }
    joined.assign(left);
    const std::string& prefix = impl_.bpe.prefix;
    joined.append(!prefix.empty() && right.substr(0, prefix.size()) == prefix
                      ? right.substr(prefix.size())
                      : right);
    auto merged = lookup(joined, path);
    if (!merged) {
      return merged.error();
    }
    impl_.bpe.merges.insert(*l, *r, rank, *merged);
    ++rank;
  }
  return {};
}

Result<void> Loader::load_added_tokens(dom::element root) {
  dom::array list;
  if (root["added_tokens"].get_array().get(list) != simdjson::SUCCESS) {
    return {};
  }
  std::size_t i = 0;
  for (dom::element item : list) {
    const std::string path = fmt::format("added_tokens[{}]", i++);
    detail::AddedToken tok;
    std::uint64_t id = 0;
    if (item["id"].get_uint64().get(id) != simdjson::SUCCESS || id > 0xFFFFFFF) {
      return error(path + ".id", "missing or not a small integer");
    }
    if (id >= impl_.id_to_token.size() + list.size() + detail::kMaxTokenIdGap) {
      return error(path + ".id", fmt::format("id {} is far past the {} ids of the vocabulary", id,
                                             impl_.id_to_token.size()));
    }
    auto content = string_field(item, "content", path);
    if (!content) {
      return content.error();
    }
    if (content->empty()) {
      return error(path + ".content", "empty");
    }
    tok.id = static_cast<TokenId>(id);
    tok.content = std::string(*content);
    tok.single_word = bool_field(item, "single_word", false);
    tok.lstrip = bool_field(item, "lstrip", false);
    tok.rstrip = bool_field(item, "rstrip", false);
    tok.normalized = bool_field(item, "normalized", true);
    tok.special = bool_field(item, "special", false);
    impl_.added.push_back(tok);
  }
  for (std::uint32_t k = 0; k < impl_.added.size(); ++k) {
    const auto& tok = impl_.added[k];
    if (impl_.id_to_token.size() <= tok.id) {
      impl_.id_to_token.resize(tok.id + 1);
    }
    impl_.id_to_token[tok.id] = tok.content;
    impl_.token_to_id.emplace(tok.content, tok.id);
    if (tok.normalized) {
      // HF runs the whole normalizer over the content (so a `Prepend` applies to it too).
      detail::PreScratch scratch;
      std::string pattern;
      detail::apply_normalizers(impl_.normalizers, tok.content, pattern, scratch);
      if (!pattern.empty()) {
        impl_.norm_matcher.add(pattern, k);
      }
    } else {
      impl_.raw_matcher.add(tok.content, k);
    }
  }
  return {};
}

// transformers `LlamaTokenizerFast.update_post_processor`: the template becomes
// "[bos:0] $A:0 [eos:0]" by `add_bos_token` (default true) and `add_eos_token` (default false).
// tokenizer_config.json is read with nlohmann (it may hold integers beyond 64 bits, e.g.
// Llama-3's `model_max_length`, which simdjson rejects).
Result<void> Loader::apply_config(const nlohmann::json& config) {
  const auto cls_it = config.find("tokenizer_class");
  if (cls_it == config.end() || !cls_it->is_string()) {
    return {};
  }
  const std::string cls = cls_it->get<std::string>();
  if (cls != "LlamaTokenizerFast" && cls != "LlamaTokenizer" && cls != "CodeLlamaTokenizerFast" &&
      cls != "CodeLlamaTokenizer") {
    return {};
  }
  auto flag = [&](const char* key, bool fallback) {
    const auto it = config.find(key);
    if (it == config.end()) {
      return fallback;
    }
    return it->is_boolean() && it->get<bool>();  // null counts as false (Python None)
  };
  auto token = [&](const char* key, std::vector<TokenId>& out) -> Result<void> {
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) {
      return {};
    }
    std::string text;
    if (it->is_string()) {
      text = it->get<std::string>();
    } else if (it->is_object() && it->contains("content") && it->at("content").is_string()) {
      text = it->at("content").get<std::string>();
    } else {
      return error(std::string("tokenizer_config.json ") + key,
                   "expected a string or an object with \"content\"");
    }
    auto id = lookup(text, std::string("tokenizer_config.json ") + key);
    if (!id) {
      return id.error();
    }
    out.push_back(*id);
    return {};
  };
  impl_.prefix.clear();
  impl_.suffix.clear();
  if (flag("add_bos_token", true)) {
    auto r = token("bos_token", impl_.prefix);
    if (!r) {
      return r;
    }
  }
  if (flag("add_eos_token", false)) {
    auto r = token("eos_token", impl_.suffix);
    if (!r) {
      return r;
    }
  }
  return {};
}

Result<void> Loader::load(dom::element root, const nlohmann::json* config) {
  if (!root.is_object()) {
    return error("", "top level is not a JSON object");
  }
  dom::element part;
  if (root["normalizer"].get(part) == simdjson::SUCCESS) {
    if (auto r = load_normalizer(part, "normalizer"); !r) {
      return r;
    }
  }
  if (root["pre_tokenizer"].get(part) == simdjson::SUCCESS) {
    if (auto r = load_pre_tokenizer(part, "pre_tokenizer"); !r) {
      return r;
    }
  }
  if (root["model"].get(part) != simdjson::SUCCESS || !part.is_object()) {
    return error("model", "missing or not an object");
  }
  if (auto r = load_model(part); !r) {
    return r;
  }
  if (auto r = load_added_tokens(root); !r) {
    return r;
  }
  if (root["decoder"].get(part) == simdjson::SUCCESS) {
    if (auto r = load_decoder(part, "decoder"); !r) {
      return r;
    }
  }
  impl_.bytes_decoder =
      impl_.decoders.size() == 1 && impl_.decoders[0].kind == detail::DecodeStep::Kind::kByteLevel;
  if (root["post_processor"].get(part) == simdjson::SUCCESS) {
    if (auto r = load_post_processor(part, "post_processor"); !r) {
      return r;
    }
  }
  if (config != nullptr) {
    if (auto r = apply_config(*config); !r) {
      return r;
    }
  }
  const std::size_t n = impl_.id_to_token.size();
  impl_.id_to_bytes.resize(n);
  impl_.is_special.assign(n, 0);
  for (std::size_t id = 0; id < n; ++id) {
    if (!detail::byte_level_to_bytes(impl_.id_to_token[id], impl_.id_to_bytes[id])) {
      impl_.id_to_bytes[id] = impl_.id_to_token[id];
    }
  }
  for (const auto& tok : impl_.added) {
    impl_.is_special[tok.id] = tok.special ? 1 : 0;
  }
  return {};
}

// Error for JSON `text` that failed to parse: nlohmann's parser (slower than simdjson, used only
// here) gives the byte where it stopped, reported with its line and column.
Error json_error(std::string_view text, std::string_view what, std::string_view source) {
  try {
    [[maybe_unused]] const auto parsed = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const std::size_t at = e.byte > 0 ? std::min<std::size_t>(e.byte - 1, text.size()) : 0;
    std::size_t line = 1;
    std::size_t line_start = 0;
    for (std::size_t k = 0; k < at; ++k) {
      if (text[k] == '\n') {
        ++line;
        line_start = k + 1;
      }
    }
    const bool at_end = at >= text.size() || e.byte > text.size();
    return Error{
        fmt::format(
            "{}invalid JSON at line {}, column {}{}: {}", what, line, at - line_start + 1,
            at_end ? fmt::format(" (end of the {}-byte text: truncated?)", text.size()) : "",
            e.what()),
        std::string(source), static_cast<std::int64_t>(at)};
  } catch (const nlohmann::json::exception&) {
    // Valid syntax nlohmann cannot hold (a number beyond double's range): no position to give.
  }
  return Error{fmt::format("{}invalid JSON ({} bytes)", what, text.size()), std::string(source),
               -1};
}

}  // namespace detail

Result<Tokenizer> Tokenizer::from_json(std::string_view tokenizer_json,
                                       std::string_view config_json, std::string_view source) {
  detail::dom::parser parser;
  detail::dom::element root;
  const simdjson::padded_string padded(tokenizer_json);
  if (auto err = parser.parse(padded).get(root); err != simdjson::SUCCESS) {
    return detail::json_error(tokenizer_json, "", source);
  }
  nlohmann::json config;
  const bool have_config = !config_json.empty();
  if (have_config) {
    config = nlohmann::json::parse(config_json, nullptr, false);
    if (config.is_discarded()) {
      return detail::json_error(config_json, "tokenizer_config.json: ", source);
    }
    if (!config.is_object()) {
      return Error{"tokenizer_config.json: not a JSON object", std::string(source), -1};
    }
  }
  auto impl = std::make_shared<Impl>();
  detail::Loader loader(source, *impl);
  if (auto r = loader.load(root, have_config ? &config : nullptr); !r) {
    return r.error();
  }
  return Tokenizer(std::move(impl));
}

Result<Tokenizer> Tokenizer::load(const std::filesystem::path& path, const LoadOptions& options) {
  std::error_code ec;
  std::filesystem::path file = path;
  if (std::filesystem::is_directory(path, ec)) {
    file = path / "tokenizer.json";
    if (!std::filesystem::exists(file, ec)) {
      return Error{"folder has no tokenizer.json", path.string(), -1};
    }
  }
  auto text = read_file(file);
  if (!text) {
    return text.error();
  }
  const std::size_t first = text->find_first_not_of(" \t\r\n");
  if (file.extension() == ".tiktoken" || (first != std::string::npos && (*text)[first] != '{')) {
    std::string pattern = options.tiktoken_pattern;
    if (pattern.empty()) {
      pattern = file.filename().string().find("o200k") != std::string::npos ? "o200k" : "cl100k";
    }
    return from_tiktoken(*text, pattern, file.string());
  }
  std::string config;
  const auto config_path = file.parent_path() / "tokenizer_config.json";
  if (file.filename() != "tokenizer_config.json" && std::filesystem::exists(config_path, ec)) {
    auto c = read_file(config_path);
    if (!c) {
      return c.error();
    }
    config = std::move(*c);
  }
  return from_json(*text, config, file.string());
}

}  // namespace llmbench::tokenizer
