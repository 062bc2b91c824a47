/// @file
/// Loading tokenizer.json (HF tokenizers serialization format, `tokenizers/src/tokenizer/
/// serialization.rs` and each component's serde form) and tokenizer_config.json (transformers).

#include "llmbench/tokenizer/impl.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <simdjson.h>

#include <fstream>
#include <sstream>

namespace llmbench::tokenizer {
namespace {

namespace dom = simdjson::dom;

// GPT-2 split regex used by the ByteLevel pre-tokenizer when `use_regex` is true
// (tokenizers `pre_tokenizers/byte_level.rs`).
constexpr std::string_view kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Collects the state while loading; errors carry the file name and the JSON field path.
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
  Result<void> load_pre_tokenizer(dom::element p, const std::string& path);
  Result<void> load_model(dom::element m);
  Result<void> load_added_tokens(dom::element root);
  Result<void> load_post_processor(dom::element p, const std::string& path);
  Result<void> apply_config(const nlohmann::json& config);
  Result<TokenId> lookup(std::string_view token, const std::string& path) const {
    const auto it = impl_.token_to_id.find(token);
    if (it == impl_.token_to_id.end()) {
      return error(path, fmt::format("token '{}' is not in the vocabulary", token));
    }
    return it->second;
  }

  std::string source_;
  Tokenizer::Impl& impl_;
  bool byte_level_ = false;
};

Result<void> Loader::load_normalizer(dom::element n, const std::string& path) {
  if (n.is_null()) {
    return {};
  }
  auto type = string_field(n, "type", path);
  if (!type) {
    return type.error();
  }
  if (*type == "Sequence") {
    dom::array list;
    if (n["normalizers"].get_array().get(list) != simdjson::SUCCESS) {
      return error(path + ".normalizers", "missing or not an array");
    }
    std::size_t i = 0;
    for (dom::element child : list) {
      auto r = load_normalizer(child, fmt::format("{}.normalizers[{}]", path, i++));
      if (!r) {
        return r;
      }
    }
    return {};
  }
  if (*type == "NFC") {
    impl_.normalizers.push_back(detail::NormForm::kNfc);
  } else if (*type == "NFD") {
    impl_.normalizers.push_back(detail::NormForm::kNfd);
  } else if (*type == "NFKC") {
    impl_.normalizers.push_back(detail::NormForm::kNfkc);
  } else if (*type == "NFKD") {
    impl_.normalizers.push_back(detail::NormForm::kNfkd);
  } else {
    return error(path + ".type", fmt::format("unsupported normalizer '{}'", *type));
  }
  return {};
}

Result<void> Loader::load_pre_tokenizer(dom::element p, const std::string& path) {
  if (p.is_null()) {
    return {};
  }
  auto type = string_field(p, "type", path);
  if (!type) {
    return type.error();
  }
  if (*type == "Sequence") {
    dom::array list;
    if (p["pretokenizers"].get_array().get(list) != simdjson::SUCCESS) {
      return error(path + ".pretokenizers", "missing or not an array");
    }
    std::size_t i = 0;
    for (dom::element child : list) {
      auto r = load_pre_tokenizer(child, fmt::format("{}.pretokenizers[{}]", path, i++));
      if (!r) {
        return r;
      }
    }
    return {};
  }
  detail::PreStep step;
  if (*type == "Split") {
    dom::element pattern;
    if (p["pattern"].get(pattern) != simdjson::SUCCESS || !pattern.is_object()) {
      return error(path + ".pattern", "missing or not an object");
    }
    std::string_view text;
    if (pattern["Regex"].get_string().get(text) == simdjson::SUCCESS) {
      auto re = detail::Regex::compile(text, source_ + ": " + path + ".pattern.Regex");
      if (!re) {
        return re.error();
      }
      step.kind = detail::PreStep::Kind::kSplitRegex;
      step.regex = std::move(*re);
      detail::use_fast_path(text, step);
    } else if (pattern["String"].get_string().get(text) == simdjson::SUCCESS) {
      step.kind = detail::PreStep::Kind::kSplitLiteral;
      step.literal = std::string(text);
    } else {
      return error(path + ".pattern", "expected {\"Regex\": ...} or {\"String\": ...}");
    }
    auto behavior = string_field(p, "behavior", path);
    if (!behavior) {
      return behavior.error();
    }
    if (*behavior == "Isolated") {
      step.behavior = detail::SplitBehavior::kIsolated;
    } else if (*behavior == "Removed") {
      step.behavior = detail::SplitBehavior::kRemoved;
    } else if (*behavior == "MergedWithPrevious") {
      step.behavior = detail::SplitBehavior::kMergedWithPrevious;
    } else if (*behavior == "MergedWithNext") {
      step.behavior = detail::SplitBehavior::kMergedWithNext;
    } else if (*behavior == "Contiguous") {
      step.behavior = detail::SplitBehavior::kContiguous;
    } else {
      return error(path + ".behavior", fmt::format("unknown split behavior '{}'", *behavior));
    }
    step.invert = bool_field(p, "invert", false);
  } else if (*type == "Digits") {
    step.kind = detail::PreStep::Kind::kDigits;
    step.behavior = bool_field(p, "individual_digits", false) ? detail::SplitBehavior::kIsolated
                                                              : detail::SplitBehavior::kContiguous;
  } else if (*type == "ByteLevel") {
    if (bool_field(p, "add_prefix_space", false)) {
      return error(path + ".add_prefix_space", "unsupported: ByteLevel with add_prefix_space");
    }
    byte_level_ = true;
    if (!bool_field(p, "use_regex", true)) {
      return {};
    }
    auto re = detail::Regex::compile(kGpt2Regex, source_ + ": " + path);
    if (!re) {
      return re.error();
    }
    step.kind = detail::PreStep::Kind::kSplitRegex;
    step.regex = std::move(*re);
  } else {
    return error(path + ".type", fmt::format("unsupported pre_tokenizer '{}'", *type));
  }
  impl_.pre_steps.push_back(std::move(step));
  return {};
}

Result<void> Loader::load_model(dom::element m) {
  auto type = string_field(m, "type", "model");
  if (!type) {
    return type.error();
  }
  if (*type != "BPE") {
    return error("model.type", fmt::format("unsupported model type '{}' (only BPE)", *type));
  }
  if (!byte_level_) {
    return error("pre_tokenizer", "unsupported: BPE without a ByteLevel pre-tokenizer");
  }
  double dropout = 0.0;
  if (!is_null_or_absent(m, "dropout") &&
      m["dropout"].get_double().get(dropout) == simdjson::SUCCESS && dropout > 0.0) {
    return error("model.dropout", "unsupported: BPE dropout");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    std::string_view v;
    if (m[key].get_string().get(v) == simdjson::SUCCESS && !v.empty()) {
      return error(std::string("model.") + key, "unsupported: non-empty value");
    }
  }
  impl_.bpe.ignore_merges = bool_field(m, "ignore_merges", false);
  impl_.bpe.fuse_unk = bool_field(m, "fuse_unk", false);
  dom::object vocab;
  if (m["vocab"].get_object().get(vocab) != simdjson::SUCCESS) {
    return error("model.vocab", "missing or not an object");
  }
  impl_.token_to_id.reserve(vocab.size() + 1024);
  std::string bytes;
  for (auto field : vocab) {
    std::uint64_t id = 0;
    if (field.value.get_uint64().get(id) != simdjson::SUCCESS || id > 0xFFFFFFF) {
      return error(fmt::format("model.vocab[\"{}\"]", field.key), "id is not a small integer");
    }
    const auto tid = static_cast<TokenId>(id);
    impl_.token_to_id.emplace(std::string(field.key), tid);
    if (impl_.id_to_token.size() <= tid) {
      impl_.id_to_token.resize(tid + 1);
    }
    impl_.id_to_token[tid] = std::string(field.key);
    if (detail::byte_level_to_bytes(field.key, bytes)) {
      impl_.bpe.bytes_to_id.emplace(bytes, tid);
    }
  }
  for (unsigned b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    const auto it = impl_.bpe.bytes_to_id.find(one);
    impl_.bpe.byte_id[b] = it == impl_.bpe.bytes_to_id.end() ? -1 : it->second;
  }
  std::string_view unk;
  if (m["unk_token"].get_string().get(unk) == simdjson::SUCCESS) {
    auto id = lookup(unk, "model.unk_token");
    if (!id) {
      return id.error();
    }
    impl_.bpe.unk_id = *id;
  }
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
    joined.append(right);
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
      std::string pattern = tok.content;
      for (const auto form : impl_.normalizers) {
        pattern = detail::normalize(pattern, form);
      }
      impl_.norm_matcher.add(pattern, k);
    } else {
      impl_.raw_matcher.add(tok.content, k);
    }
  }
  return {};
}

Result<void> Loader::load_post_processor(dom::element p, const std::string& path) {
  if (p.is_null()) {
    return {};
  }
  auto type = string_field(p, "type", path);
  if (!type) {
    return type.error();
  }
  if (*type == "ByteLevel") {
    return {};
  }
  if (*type == "Sequence") {
    dom::array list;
    if (p["processors"].get_array().get(list) != simdjson::SUCCESS) {
      return error(path + ".processors", "missing or not an array");
    }
    std::size_t i = 0;
    for (dom::element child : list) {
      auto r = load_post_processor(child, fmt::format("{}.processors[{}]", path, i++));
      if (!r) {
        return r;
      }
    }
    return {};
  }
  if (*type == "RobertaProcessing" || *type == "BertProcessing") {
    std::uint64_t cls = 0;
    std::uint64_t sep = 0;
    if (p["cls"].at(1).get_uint64().get(cls) != simdjson::SUCCESS ||
        p["sep"].at(1).get_uint64().get(sep) != simdjson::SUCCESS) {
      return error(path, "expected cls and sep as [token, id]");
    }
    impl_.prefix.push_back(static_cast<TokenId>(cls));
    impl_.suffix.insert(impl_.suffix.begin(), static_cast<TokenId>(sep));
    return {};
  }
  if (*type != "TemplateProcessing") {
    return error(path + ".type", fmt::format("unsupported post_processor '{}'", *type));
  }
  dom::array single;
  if (p["single"].get_array().get(single) != simdjson::SUCCESS) {
    return error(path + ".single", "missing or not an array");
  }
  std::vector<TokenId> before;
  std::vector<TokenId> after;
  bool seen_sequence = false;
  std::size_t i = 0;
  for (dom::element piece : single) {
    const std::string ppath = fmt::format("{}.single[{}]", path, i++);
    dom::element special;
    if (piece["Sequence"].get(special) == simdjson::SUCCESS) {
      seen_sequence = true;
      continue;
    }
    std::string_view name;
    if (piece["SpecialToken"]["id"].get_string().get(name) != simdjson::SUCCESS) {
      return error(ppath, "expected {\"SpecialToken\": {\"id\": ...}} or {\"Sequence\": ...}");
    }
    dom::array ids;
    if (p["special_tokens"][name]["ids"].get_array().get(ids) != simdjson::SUCCESS) {
      return error(path + ".special_tokens",
                   fmt::format("no entry with ids for special token '{}'", name));
    }
    for (dom::element v : ids) {
      std::uint64_t id = 0;
      if (v.get_uint64().get(id) != simdjson::SUCCESS) {
        return error(path + ".special_tokens", fmt::format("bad id for '{}'", name));
      }
      (seen_sequence ? after : before).push_back(static_cast<TokenId>(id));
    }
  }
  impl_.prefix.insert(impl_.prefix.end(), before.begin(), before.end());
  impl_.suffix.insert(impl_.suffix.begin(), after.begin(), after.end());
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
  std::string_view decoder;
  if (root["decoder"]["type"].get_string().get(decoder) != simdjson::SUCCESS ||
      decoder != "ByteLevel") {
    return error("decoder", "unsupported decoder (only ByteLevel)");
  }
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

Result<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{"cannot open file", path.string(), -1};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return Result<std::string>(boost::system::in_place_value, ss.str());
}

}  // namespace

Result<Tokenizer> Tokenizer::from_json(std::string_view tokenizer_json,
                                       std::string_view config_json, std::string_view source) {
  dom::parser parser;
  dom::element root;
  const simdjson::padded_string padded(tokenizer_json);
  if (auto err = parser.parse(padded).get(root); err != simdjson::SUCCESS) {
    return Error{fmt::format("invalid JSON ({}); the text is {} bytes, truncated?",
                             simdjson::error_message(err), tokenizer_json.size()),
                 std::string(source), -1};
  }
  nlohmann::json config;
  const bool have_config = !config_json.empty();
  if (have_config) {
    config = nlohmann::json::parse(config_json, nullptr, false);
    if (config.is_discarded() || !config.is_object()) {
      return Error{"tokenizer_config.json: invalid JSON or not an object", std::string(source), -1};
    }
  }
  auto impl = std::make_shared<Impl>();
  Loader loader(source, *impl);
  if (auto r = loader.load(root, have_config ? &config : nullptr); !r) {
    return r.error();
  }
  return Tokenizer(std::move(impl));
}

Result<Tokenizer> Tokenizer::load(const std::filesystem::path& path) {
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
