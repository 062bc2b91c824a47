/// @file
/// Loading the pipeline parts of tokenizer.json: normalizer, pre_tokenizer, post_processor and
/// decoder (HF tokenizers serde forms of each component).

#include "llmbench/core/utf8.hpp"
#include "llmbench/tokenizer/loader.hpp"

#include <fmt/core.h>

namespace llmbench::tokenizer::detail {

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
  NormStep step;
  if (*type == "NFC" || *type == "NFD" || *type == "NFKC" || *type == "NFKD") {
    step.form = *type == "NFC"    ? NormForm::kNfc
                : *type == "NFD"  ? NormForm::kNfd
                : *type == "NFKC" ? NormForm::kNfkc
                                  : NormForm::kNfkd;
  } else if (*type == "Lowercase") {
    step.kind = NormStep::Kind::kLowercase;
  } else if (*type == "Prepend") {
    auto prepend = string_field(n, "prepend", path);
    if (!prepend) {
      return prepend.error();
    }
    step.kind = NormStep::Kind::kPrepend;
    step.content = std::string(*prepend);
  } else if (*type == "Strip") {
    step.kind = NormStep::Kind::kStrip;
    step.left = bool_field(n, "strip_left", false);
    step.right = bool_field(n, "strip_right", false);
  } else if (*type == "Replace") {
    auto content = string_field(n, "content", path);
    if (!content) {
      return content.error();
    }
    step.content = std::string(*content);
    std::string_view text;
    if (n["pattern"]["String"].get_string().get(text) == simdjson::SUCCESS) {
      step.kind = NormStep::Kind::kReplaceString;
      step.pattern = std::string(text);
    } else if (n["pattern"]["Regex"].get_string().get(text) == simdjson::SUCCESS) {
      auto re = Regex::compile(text, source_ + ": " + path + ".pattern.Regex");
      if (!re) {
        return re.error();
      }
      step.kind = NormStep::Kind::kReplaceRegex;
      step.regex = std::move(*re);
    } else {
      return error(path + ".pattern", "expected {\"String\": ...} or {\"Regex\": ...}");
    }
  } else {
    return error(path + ".type", fmt::format("unsupported normalizer '{}'", *type));
  }
  impl_.normalizers.push_back(std::move(step));
  return {};
}

Result<void> Loader::load_split(dom::element p, const std::string& path, PreStep& step) {
  dom::element pattern;
  if (p["pattern"].get(pattern) != simdjson::SUCCESS || !pattern.is_object()) {
    return error(path + ".pattern", "missing or not an object");
  }
  std::string_view text;
  if (pattern["Regex"].get_string().get(text) == simdjson::SUCCESS) {
    auto re = Regex::compile(text, source_ + ": " + path + ".pattern.Regex");
    if (!re) {
      return re.error();
    }
    step.kind = PreStep::Kind::kSplitRegex;
    step.regex = std::move(*re);
    use_fast_path(text, step);
  } else if (pattern["String"].get_string().get(text) == simdjson::SUCCESS) {
    step.kind = PreStep::Kind::kSplitLiteral;
    step.literal = std::string(text);
  } else {
    return error(path + ".pattern", "expected {\"Regex\": ...} or {\"String\": ...}");
  }
  auto behavior = string_field(p, "behavior", path);
  if (!behavior) {
    return behavior.error();
  }
  auto parsed = parse_behavior(*behavior, path + ".behavior");
  if (!parsed) {
    return parsed.error();
  }
  step.behavior = *parsed;
  step.invert = bool_field(p, "invert", false);
  return {};
}

Result<void> Loader::load_metaspace(dom::element p, const std::string& path) {
  PreStep step;
  step.kind = PreStep::Kind::kMetaspace;
  std::string_view rep = "\xE2\x96\x81";  // U+2581
  if (!is_null_or_absent(p, "replacement")) {
    auto r = string_field(p, "replacement", path);
    if (!r) {
      return r.error();
    }
    rep = *r;
  }
  std::size_t len = 0;
  if (!rep.empty() && utf8_valid(rep)) {
    decode_utf8(rep, 0, len);
  }
  if (rep.empty() || len != rep.size()) {
    return error(path + ".replacement", "expected one character");
  }
  step.literal = std::string(rep);
  std::string_view scheme;
  if (p["prepend_scheme"].get_string().get(scheme) == simdjson::SUCCESS) {
    if (scheme == "always") {
      step.prepend = PreStep::Prepend::kAlways;
    } else if (scheme == "first") {
      step.prepend = PreStep::Prepend::kFirst;
    } else if (scheme == "never") {
      step.prepend = PreStep::Prepend::kNever;
    } else {
      return error(path + ".prepend_scheme", fmt::format("unknown scheme '{}'", scheme));
    }
  } else {  // older files: add_prefix_space
    step.prepend = bool_field(p, "add_prefix_space", true) ? PreStep::Prepend::kAlways
                                                           : PreStep::Prepend::kNever;
  }
  const bool split = bool_field(p, "split", true);
  impl_.pre_steps.push_back(std::move(step));
  if (split) {
    PreStep cut;
    cut.kind = PreStep::Kind::kSplitLiteral;
    cut.literal = std::string(rep);
    cut.behavior = SplitBehavior::kMergedWithNext;
    impl_.pre_steps.push_back(std::move(cut));
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
  PreStep step;
  if (*type == "Split") {
    if (auto r = load_split(p, path, step); !r) {
      return r;
    }
  } else if (*type == "Digits") {
    step.kind = PreStep::Kind::kDigits;
    step.behavior = bool_field(p, "individual_digits", false) ? SplitBehavior::kIsolated
                                                              : SplitBehavior::kContiguous;
  } else if (*type == "ByteLevel") {
    byte_level_ = true;
    if (bool_field(p, "add_prefix_space", false)) {
      PreStep prefix;
      prefix.kind = PreStep::Kind::kPrefixSpace;
      impl_.pre_steps.push_back(std::move(prefix));
    }
    if (!bool_field(p, "use_regex", true)) {
      return {};
    }
    auto re = Regex::compile(kGpt2Regex, source_ + ": " + path);
    if (!re) {
      return re.error();
    }
    step.kind = PreStep::Kind::kSplitRegex;
    step.regex = std::move(*re);
  } else if (*type == "Whitespace") {
    step.kind = PreStep::Kind::kWhitespace;  // keep `\w+|[^\w\s]+`, drop the rest
    step.behavior = SplitBehavior::kRemoved;
    step.invert = true;
  } else if (*type == "WhitespaceSplit") {
    step.kind = PreStep::Kind::kWhitespaceSplit;
    step.behavior = SplitBehavior::kRemoved;
  } else if (*type == "Punctuation") {
    step.kind = PreStep::Kind::kPunctuation;
    std::string_view behavior = "Isolated";
    if (!is_null_or_absent(p, "behavior")) {
      auto b = string_field(p, "behavior", path);
      if (!b) {
        return b.error();
      }
      behavior = *b;
    }
    auto parsed = parse_behavior(behavior, path + ".behavior");
    if (!parsed) {
      return parsed.error();
    }
    step.behavior = *parsed;
  } else if (*type == "Metaspace") {
    return load_metaspace(p, path);
  } else {
    return error(path + ".type", fmt::format("unsupported pre_tokenizer '{}'", *type));
  }
  impl_.pre_steps.push_back(std::move(step));
  return {};
}

Result<SplitBehavior> Loader::parse_behavior(std::string_view behavior,
                                             const std::string& path) const {
  if (behavior == "Isolated") {
    return SplitBehavior::kIsolated;
  }
  if (behavior == "Removed") {
    return SplitBehavior::kRemoved;
  }
  if (behavior == "MergedWithPrevious") {
    return SplitBehavior::kMergedWithPrevious;
  }
  if (behavior == "MergedWithNext") {
    return SplitBehavior::kMergedWithNext;
  }
  if (behavior == "Contiguous") {
    return SplitBehavior::kContiguous;
  }
  return error(path, fmt::format("unknown split behavior '{}'", behavior));
}

Result<void> Loader::load_decoder(dom::element d, const std::string& path) {
  if (d.is_null()) {
    return {};
  }
  auto type = string_field(d, "type", path);
  if (!type) {
    return type.error();
  }
  if (*type == "Sequence") {
    dom::array list;
    if (d["decoders"].get_array().get(list) != simdjson::SUCCESS) {
      return error(path + ".decoders", "missing or not an array");
    }
    std::size_t i = 0;
    for (dom::element child : list) {
      if (auto r = load_decoder(child, fmt::format("{}.decoders[{}]", path, i++)); !r) {
        return r;
      }
    }
    return {};
  }
  DecodeStep step;
  if (*type == "ByteLevel") {
    step.kind = DecodeStep::Kind::kByteLevel;
  } else if (*type == "ByteFallback") {
    step.kind = DecodeStep::Kind::kByteFallback;
  } else if (*type == "Fuse") {
    step.kind = DecodeStep::Kind::kFuse;
  } else if (*type == "Metaspace") {
    step.kind = DecodeStep::Kind::kMetaspace;
    std::string_view rep = "\xE2\x96\x81";
    if (!is_null_or_absent(d, "replacement")) {
      auto r = string_field(d, "replacement", path);
      if (!r) {
        return r.error();
      }
      rep = *r;
    }
    step.pattern = std::string(rep);
    std::string_view scheme;
    if (d["prepend_scheme"].get_string().get(scheme) == simdjson::SUCCESS) {
      step.strip_first = scheme != "never";
    } else {
      step.strip_first = bool_field(d, "add_prefix_space", true);
    }
  } else if (*type == "Strip") {
    step.kind = DecodeStep::Kind::kStrip;
    auto content = string_field(d, "content", path);
    if (!content) {
      return content.error();
    }
    std::uint64_t start = 0;
    std::uint64_t stop = 0;
    if (d["start"].get_uint64().get(start) != simdjson::SUCCESS ||
        d["stop"].get_uint64().get(stop) != simdjson::SUCCESS) {
      return error(path, "expected non-negative integers start and stop");
    }
    step.pattern = std::string(*content);
    step.start = static_cast<std::size_t>(start);
    step.stop = static_cast<std::size_t>(stop);
  } else if (*type == "Replace") {
    auto content = string_field(d, "content", path);
    if (!content) {
      return content.error();
    }
    step.content = std::string(*content);
    std::string_view text;
    if (d["pattern"]["String"].get_string().get(text) == simdjson::SUCCESS) {
      step.kind = DecodeStep::Kind::kReplace;
      step.pattern = std::string(text);
    } else if (d["pattern"]["Regex"].get_string().get(text) == simdjson::SUCCESS) {
      auto re = Regex::compile(text, source_ + ": " + path + ".pattern.Regex");
      if (!re) {
        return re.error();
      }
      step.kind = DecodeStep::Kind::kReplaceRegex;
      step.regex = std::move(*re);
    } else {
      return error(path + ".pattern", "expected {\"String\": ...} or {\"Regex\": ...}");
    }
  } else {
    return error(path + ".type", fmt::format("unsupported decoder '{}'", *type));
  }
  impl_.decoders.push_back(std::move(step));
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

}  // namespace llmbench::tokenizer::detail
