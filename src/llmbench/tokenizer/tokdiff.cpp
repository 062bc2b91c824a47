#include "llmbench/tokenizer/tokdiff.hpp"

#include "llmbench/core/utf8.hpp"
#include "llmbench/tokenizer/unicode.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>
#include <utility>

namespace llmbench::tokenizer {
namespace {

// Raw bytes per token id of one tokenizer, filled lazily: added tokens verbatim (HF decodes them
// literally), other token strings mapped back through the byte-level alphabet (verbatim when a
// character is outside it).
class TokenBytes {
 public:
  explicit TokenBytes(const TokdiffSide& side)
      : tok_(*side.tokenizer), cache_(side.tokenizer->vocab_size()) {
    for (const auto& t : side.added_tokens) {
      if (t.id >= cache_.size()) {
        cache_.resize(t.id + 1);
      }
      cache_[t.id] = t.content;
    }
  }

  const std::string& operator()(TokenId id) {
    if (id >= cache_.size()) {
      cache_.resize(id + 1);
    }
    auto& slot = cache_[id];
    if (!slot.has_value()) {
      const std::string_view s = tok_.id_to_token(id);
      std::string bytes;
      if (!detail::byte_level_to_bytes(s, bytes)) {
        bytes.assign(s);
      }
      slot = std::move(bytes);
    }
    return *slot;
  }

 private:
  const Tokenizer& tok_;
  std::vector<std::optional<std::string>> cache_;
};

// |A∩B| and |A∪B| of two sorted, duplicate-free ranges.
template <class T>
SetOverlap overlap(const std::vector<T>& a, const std::vector<T>& b) {
  std::size_t i = 0;
  std::size_t j = 0;
  std::uint64_t common = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++common;
      ++i;
      ++j;
    }
  }
  return SetOverlap{common, a.size() + b.size() - common};
}

template <class T>
void sort_unique(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

std::size_t count_chars(std::string_view s) {
  return utf8_count_code_points(s);
}

void add_to(GroupSummary& g, const TextResult& t) {
  ++g.texts;
  g.bytes += t.bytes;
  g.chars += t.chars;
  g.tokens_a += t.tokens_a;
  g.tokens_b += t.tokens_b;
  g.boundaries.intersection += t.boundaries.intersection;
  g.boundaries.union_size += t.boundaries.union_size;
  g.token_strings.intersection += t.token_strings.intersection;
  g.token_strings.union_size += t.token_strings.union_size;
  g.roundtrip_failures_a += t.roundtrip_ok_a ? 0 : 1;
  g.roundtrip_failures_b += t.roundtrip_ok_b ? 0 : 1;
}

Result<std::vector<TokenId>> encode_ids(const Tokenizer& tok, std::string_view text) {
  return tok.encode(text, false);
}

// Encoding of one text by one tokenizer, as tokdiff needs it.
struct SideEncoding {
  std::size_t count = 0;
  std::vector<std::uint32_t> ends;   // sorted token-end offsets
  std::vector<std::string> strings;  // sorted distinct token strings (bytes)
  std::vector<TokenId> text_ids;     // ids without the post-processor's prefix/suffix
};

Result<SideEncoding> encode_side(const Tokenizer& tok, const CorpusText& text,
                                 const TokdiffOptions& options, Scratch& scratch,
                                 TokenBytes& bytes) {
  EncodeOptions eo;
  eo.add_special_tokens = options.add_special_tokens;
  eo.want_offsets = true;
  auto enc = tok.encode(text.text, eo, scratch);
  if (!enc) {
    Error e = enc.error();
    e.source = text.name + (e.source.empty() ? "" : " " + e.source);
    return e;
  }
  SideEncoding out;
  out.count = enc->ids.size();
  std::size_t first = 0;
  std::size_t last = enc->ids.size();
  if (options.add_special_tokens) {
    first = std::min(tok.special_prefix().size(), last);
    last -= std::min(tok.special_suffix().size(), last - first);
  }
  out.text_ids.assign(enc->ids.begin() + static_cast<long>(first),
                      enc->ids.begin() + static_cast<long>(last));
  for (std::size_t k = 0; k < enc->ids.size(); ++k) {
    const auto [begin, end] = enc->offsets[k];
    if (end > begin) {
      out.ends.push_back(end);
    }
  }
  sort_unique(out.ends);
  std::vector<TokenId> ids = out.text_ids;
  sort_unique(ids);
  out.strings.reserve(ids.size());
  for (TokenId id : ids) {
    out.strings.push_back(bytes(id));
  }
  sort_unique(out.strings);
  return out;
}

// First differing byte of `a` and `b` (min size when one is a prefix of the other).
std::size_t first_difference(std::string_view a, std::string_view b) {
  const auto n = std::min(a.size(), b.size());
  std::size_t k = 0;
  while (k < n && a[k] == b[k]) {
    ++k;
  }
  return k;
}

nlohmann::json overlap_json(const SetOverlap& s) {
  return {{"intersection", s.intersection},
          {"union", s.union_size},
          {"jaccard_distance", s.distance()}};
}

nlohmann::json group_json(const GroupSummary& g) {
  auto per_token = [](std::uint64_t num, std::uint64_t tokens) {
    return tokens == 0 ? 0.0 : static_cast<double>(num) / static_cast<double>(tokens);
  };
  return {{"key", g.key},
          {"texts", g.texts},
          {"bytes", g.bytes},
          {"chars", g.chars},
          {"tokens_a", g.tokens_a},
          {"tokens_b", g.tokens_b},
          {"inflation", g.inflation()},
          {"chars_per_token_a", per_token(g.chars, g.tokens_a)},
          {"chars_per_token_b", per_token(g.chars, g.tokens_b)},
          {"bytes_per_token_a", per_token(g.bytes, g.tokens_a)},
          {"bytes_per_token_b", per_token(g.bytes, g.tokens_b)},
          {"boundaries", overlap_json(g.boundaries)},
          {"token_strings", overlap_json(g.token_strings)},
          {"roundtrip_failures_a", g.roundtrip_failures_a},
          {"roundtrip_failures_b", g.roundtrip_failures_b}};
}

// Up to 40 bytes of `s` from `at`, ending at a UTF-8 character boundary.
std::string snippet(std::string_view s, std::size_t at) {
  at = std::min(at, s.size());
  const std::size_t end = std::max(at, utf8_floor(s, at + 40));
  return std::string(s.substr(at, end - at));
}

// Content of `side`'s added token with id `id`, or empty.
std::string added_at(const TokdiffSide& side, TokenId id) {
  for (const auto& t : side.added_tokens) {
    if (t.id == id) {
      return t.content;
    }
  }
  return {};
}

}  // namespace

double SetOverlap::distance() const {
  return union_size == 0
             ? 0.0
             : 1.0 - static_cast<double>(intersection) / static_cast<double>(union_size);
}

double TextResult::inflation() const {
  return tokens_a == 0 ? 0.0 : static_cast<double>(tokens_b) / static_cast<double>(tokens_a);
}

double GroupSummary::inflation() const {
  return tokens_a == 0 ? 0.0 : static_cast<double>(tokens_b) / static_cast<double>(tokens_a);
}

Result<std::vector<AddedTokenDiff>> diff_added_tokens(const TokdiffSide& a, const TokdiffSide& b) {
  std::map<std::string, std::pair<const AddedToken*, const AddedToken*>> by_content;
  for (const auto& t : a.added_tokens) {
    by_content[t.content].first = &t;
  }
  for (const auto& t : b.added_tokens) {
    by_content[t.content].second = &t;
  }
  std::vector<AddedTokenDiff> out;
  for (const auto& [content, pair] : by_content) {
    const auto [ta, tb] = pair;
    AddedTokenDiff d;
    d.content = content;
    if (ta == nullptr) {
      d.change = "only_in_b";
    } else if (tb == nullptr) {
      d.change = "only_in_a";
    } else if (ta->id != tb->id) {
      d.change = "id_changed";
    } else if (ta->special != tb->special) {
      d.change = "special_changed";
    } else {
      continue;
    }
    if (ta != nullptr) {
      d.id_a = ta->id;
      d.special_a = ta->special;
    }
    if (tb != nullptr) {
      d.id_b = tb->id;
      d.special_b = tb->special;
    }
    if (d.change == "only_in_b") {
      d.other_at_id = added_at(a, *d.id_b);
    } else if (d.change == "only_in_a") {
      d.other_at_id = added_at(b, *d.id_a);
    }
    for (int side = 0; side < 2; ++side) {
      const Tokenizer& tok = *(side == 0 ? a : b).tokenizer;
      auto ids = encode_ids(tok, content);
      if (!ids) {
        Error e = ids.error();
        e.source = fmt::format("added token \"{}\" in {}", content, (side == 0 ? a : b).name);
        return e;
      }
      std::vector<std::string> tokens;
      for (TokenId id : *ids) {
        tokens.emplace_back(tok.id_to_token(id));
      }
      (side == 0 ? d.ids_in_a : d.ids_in_b) = std::move(*ids);
      (side == 0 ? d.tokens_in_a : d.tokens_in_b) = std::move(tokens);
    }
    out.push_back(std::move(d));
  }
  return out;
}

Result<TokdiffResult> tokdiff(const TokdiffSide& a, const TokdiffSide& b,
                              std::span<const CorpusText> corpus, const TokdiffOptions& options) {
  LLMBENCH_ASSERT(a.tokenizer != nullptr && b.tokenizer != nullptr, "tokdiff needs tokenizers");
  TokdiffResult r;
  r.name_a = a.name;
  r.name_b = b.name;
  r.path_a = a.path;
  r.path_b = b.path;
  r.vocab_a = a.tokenizer->vocab_size();
  r.vocab_b = b.tokenizer->vocab_size();
  r.added_a = a.added_tokens.size();
  r.added_b = b.added_tokens.size();
  r.options = options;

  auto diffs = diff_added_tokens(a, b);
  if (!diffs) {
    return diffs.error();
  }
  r.added_token_diffs = std::move(*diffs);

  Scratch scratch_a;
  Scratch scratch_b;
  TokenBytes bytes_a(a);
  TokenBytes bytes_b(b);
  std::unordered_set<std::string> used_a;
  std::unordered_set<std::string> used_b;
  std::size_t failures = 0;
  r.texts.reserve(corpus.size());
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    const CorpusText& text = corpus[i];
    auto ea = encode_side(*a.tokenizer, text, options, scratch_a, bytes_a);
    if (!ea) {
      return ea.error();
    }
    auto eb = encode_side(*b.tokenizer, text, options, scratch_b, bytes_b);
    if (!eb) {
      return eb.error();
    }
    TextResult t;
    t.name = text.name;
    t.label = text.label;
    t.script = dominant_script(text.text);
    const std::size_t cut = utf8_floor(text.text, 60);
    t.preview = text.text.substr(0, cut);
    t.bytes = text.text.size();
    t.chars = count_chars(text.text);
    t.tokens_a = ea->count;
    t.tokens_b = eb->count;
    t.boundaries = overlap(ea->ends, eb->ends);
    t.token_strings = overlap(ea->strings, eb->strings);
    used_a.insert(ea->strings.begin(), ea->strings.end());
    used_b.insert(eb->strings.begin(), eb->strings.end());
    for (int side = 0; side < 2; ++side) {
      const Tokenizer& tok = *(side == 0 ? a : b).tokenizer;
      auto decoded = tok.decode((side == 0 ? *ea : *eb).text_ids);
      if (!decoded) {
        Error e = decoded.error();
        e.source = text.name + " decode with " + (side == 0 ? a : b).name;
        return e;
      }
      if (*decoded == text.text) {
        continue;
      }
      (side == 0 ? t.roundtrip_ok_a : t.roundtrip_ok_b) = false;
      if (failures++ < options.max_failures) {
        const std::size_t at = first_difference(text.text, *decoded);
        r.roundtrip_failures.push_back(RoundTripFailure{
            i, side == 0 ? 'a' : 'b', at, snippet(text.text, at), snippet(*decoded, at)});
      }
    }
    r.texts.push_back(std::move(t));
  }

  std::map<std::string, GroupSummary> labels;
  std::map<std::string, GroupSummary> scripts;
  for (const auto& t : r.texts) {
    add_to(r.overall, t);
    if (!t.label.empty()) {
      add_to(labels[t.label], t);
    }
    add_to(scripts[t.script.empty() ? "(none)" : t.script], t);
  }
  for (auto& [key, g] : labels) {
    g.key = key;
    r.by_label.push_back(g);
  }
  for (auto& [key, g] : scripts) {
    g.key = key;
    r.by_script.push_back(g);
  }

  r.vocab_used_a = used_a.size();
  r.vocab_used_b = used_b.size();
  std::uint64_t common = 0;
  for (const auto& s : used_a) {
    common += used_b.count(s);
  }
  r.vocab_used = SetOverlap{common, used_a.size() + used_b.size() - common};

  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < r.texts.size(); ++i) {
    if (r.texts[i].tokens_a > 0 && r.texts[i].tokens_b > 0) {
      order.push_back(i);
    }
  }
  auto score = [&](std::size_t i) { return std::fabs(std::log(r.texts[i].inflation())); };
  auto diff = [&](std::size_t i) {
    const auto& t = r.texts[i];
    return t.tokens_a > t.tokens_b ? t.tokens_a - t.tokens_b : t.tokens_b - t.tokens_a;
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const double sx = score(x);
    const double sy = score(y);
    return sx != sy ? sx > sy : diff(x) > diff(y);
  });
  order.resize(std::min(order.size(), options.top_n));
  r.top_movers = std::move(order);
  return r;
}

nlohmann::json to_json(const TokdiffResult& r) {
  nlohmann::json j;
  j["a"] = {{"name", r.name_a},
            {"path", r.path_a},
            {"vocab_size", r.vocab_a},
            {"added_tokens", r.added_a},
            {"vocab_used", r.vocab_used_a}};
  j["b"] = {{"name", r.name_b},
            {"path", r.path_b},
            {"vocab_size", r.vocab_b},
            {"added_tokens", r.added_b},
            {"vocab_used", r.vocab_used_b}};
  j["options"] = {{"add_special_tokens", r.options.add_special_tokens},
                  {"top_n", r.options.top_n},
                  {"max_failures", r.options.max_failures}};
  j["overall"] = group_json(r.overall);
  j["overall"]["vocab_used"] = overlap_json(r.vocab_used);
  j["by_label"] = nlohmann::json::array();
  for (const auto& g : r.by_label) {
    j["by_label"].push_back(group_json(g));
  }
  j["by_script"] = nlohmann::json::array();
  for (const auto& g : r.by_script) {
    j["by_script"].push_back(group_json(g));
  }
  j["added_token_diffs"] = nlohmann::json::array();
  for (const auto& d : r.added_token_diffs) {
    nlohmann::json e = {{"content", d.content},
                        {"change", d.change},
                        {"id_a", d.id_a ? nlohmann::json(*d.id_a) : nlohmann::json()},
                        {"id_b", d.id_b ? nlohmann::json(*d.id_b) : nlohmann::json()},
                        {"special_a", d.special_a},
                        {"special_b", d.special_b},
                        {"other_at_id", d.other_at_id},
                        {"ids_in_a", d.ids_in_a},
                        {"tokens_in_a", d.tokens_in_a},
                        {"ids_in_b", d.ids_in_b},
                        {"tokens_in_b", d.tokens_in_b}};
    j["added_token_diffs"].push_back(std::move(e));
  }
  j["top_movers"] = r.top_movers;
  j["roundtrip_failures"] = nlohmann::json::array();
  for (const auto& f : r.roundtrip_failures) {
    j["roundtrip_failures"].push_back({{"text_index", f.text_index},
                                       {"name", r.texts[f.text_index].name},
                                       {"side", std::string(1, f.side)},
                                       {"offset", f.offset},
                                       {"expected", utf8_lossy(f.expected)},
                                       {"got", utf8_lossy(f.got)}});
  }
  j["texts"] = nlohmann::json::array();
  for (const auto& t : r.texts) {
    j["texts"].push_back({{"name", t.name},
                          {"label", t.label},
                          {"script", t.script},
                          {"preview", t.preview},
                          {"bytes", t.bytes},
                          {"chars", t.chars},
                          {"tokens_a", t.tokens_a},
                          {"tokens_b", t.tokens_b},
                          {"inflation", t.inflation()},
                          {"boundary_jaccard_distance", t.boundaries.distance()},
                          {"token_jaccard_distance", t.token_strings.distance()},
                          {"roundtrip_ok_a", t.roundtrip_ok_a},
                          {"roundtrip_ok_b", t.roundtrip_ok_b}});
  }
  return j;
}

}  // namespace llmbench::tokenizer
