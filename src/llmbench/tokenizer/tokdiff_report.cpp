/// @file
/// Text report of a tokdiff result (tokdiff.hpp `format_report`).

#include "llmbench/core/utf8.hpp"
#include "llmbench/tokenizer/tokdiff.hpp"
#include "llmbench/tokenizer/unicode.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace llmbench::tokenizer {
namespace {

// Display width of UTF-8 text: code points, East Asian wide ones counted twice (rough: Hangul,
// CJK and full-width forms), enough to keep the tables aligned.
std::size_t display_width(std::string_view s) {
  std::size_t w = 0;
  for (std::size_t pos = 0; pos < s.size();) {
    std::size_t len = 1;
    const char32_t cp = detail::decode_utf8(s, pos, len);
    pos += len;
    const bool wide = (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
                      (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
                      (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0x20000 && cp <= 0x3FFFD);
    w += wide ? 2 : 1;
  }
  return w;
}

// Escapes control characters and cuts to at most `max` code points (with "…").
std::string printable(std::string_view s, std::size_t max) {
  std::string out;
  std::size_t n = 0;
  for (std::size_t pos = 0; pos < s.size();) {
    if (n == max) {
      out += "…";
      break;
    }
    std::size_t len = 1;
    const char32_t cp = detail::decode_utf8(s, pos, len);
    if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || cp == 0x7F) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    } else {
      out.append(s.substr(pos, len));
    }
    pos += len;
    ++n;
  }
  return out;
}

// A table: first `left` columns left-aligned, the rest right-aligned; two spaces between.
class Table {
 public:
  Table(std::vector<std::string> header, std::size_t left, bool last_left = false)
      : rows_{std::move(header)}, left_(left), last_left_(last_left) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void render(std::string& out, std::string_view indent = "  ") const {
    std::vector<std::size_t> width;
    for (const auto& row : rows_) {
      width.resize(std::max(width.size(), row.size()), 0);
      for (std::size_t c = 0; c < row.size(); ++c) {
        width[c] = std::max(width[c], display_width(row[c]));
      }
    }
    for (const auto& row : rows_) {
      std::string line(indent);
      for (std::size_t c = 0; c < row.size(); ++c) {
        const std::string pad(width[c] - display_width(row[c]), ' ');
        if (c > 0) {
          line += "  ";
        }
        const bool left = c < left_ || (last_left_ && c + 1 == row.size());
        line += left ? row[c] + (c + 1 == row.size() ? "" : pad) : pad + row[c];
      }
      out += line;
      out += '\n';
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
  std::size_t left_;
  bool last_left_;
};

std::string ratio(std::uint64_t num, std::uint64_t den) {
  return den == 0 ? "-"
                  : fmt::format("{:.3f}", static_cast<double>(num) / static_cast<double>(den));
}

void group_table(std::string& out, const std::vector<GroupSummary>& groups,
                 std::string_view key_name) {
  Table t({std::string(key_name), "texts", "bytes", "tokens A", "tokens B", "B/A", "chars/tok A",
           "chars/tok B", "boundary Jd", "token Jd", "rt fail A/B"},
          1);
  for (const auto& g : groups) {
    t.add({g.key.empty() ? "all" : g.key, fmt::format("{}", g.texts), fmt::format("{}", g.bytes),
           fmt::format("{}", g.tokens_a), fmt::format("{}", g.tokens_b),
           fmt::format("{:.4f}", g.inflation()), ratio(g.chars, g.tokens_a),
           ratio(g.chars, g.tokens_b), fmt::format("{:.4f}", g.boundaries.distance()),
           fmt::format("{:.4f}", g.token_strings.distance()),
           fmt::format("{}/{}", g.roundtrip_failures_a, g.roundtrip_failures_b)});
  }
  t.render(out);
}

std::string encoding_cell(const std::vector<TokenId>& ids, const std::vector<std::string>& tokens) {
  std::string s = fmt::format("{} tok", ids.size());
  const std::size_t shown = std::min<std::size_t>(ids.size(), 8);
  for (std::size_t k = 0; k < shown; ++k) {
    s += fmt::format(" {}\"{}\"", ids[k], printable(tokens[k], 24));
  }
  if (shown < ids.size()) {
    s += " …";
  }
  return s;
}

std::string change_text(const AddedTokenDiff& d) {
  if (d.change == "only_in_a") {
    return "only in A";
  }
  if (d.change == "only_in_b") {
    return "only in B";
  }
  if (d.change == "id_changed") {
    return "id changed";
  }
  return "special changed";
}

// Content with every run of ASCII digits replaced by '#': numbered families such as
// "<｜place▁holder▁no▁#｜>" share one row in the report.
std::string family_of(std::string_view s) {
  std::string out;
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (s[k] >= '0' && s[k] <= '9') {
      if (out.empty() || out.back() != '#') {
        out.push_back('#');
      }
    } else {
      out.push_back(s[k]);
    }
  }
  return out;
}

std::string id_range(TokenId lo, TokenId hi, bool any) {
  if (!any) {
    return "-";
  }
  return lo == hi ? fmt::format("{}", lo) : fmt::format("{}..{}", lo, hi);
}

std::string size_range(std::size_t lo, std::size_t hi) {
  return lo == hi ? fmt::format("{}", lo) : fmt::format("{}-{}", lo, hi);
}

// One table row per added-token difference, numbered families collapsed; then the encodings of
// up to 12 single rows.
void added_table(std::string& out, const TokdiffResult& r) {
  struct Row {
    std::string key;
    std::vector<const AddedTokenDiff*> members;
  };
  std::vector<Row> rows;
  for (const auto& d : r.added_token_diffs) {
    const std::string key = family_of(d.content) + "\x1f" + d.change + (d.special_a ? "1" : "0") +
                            (d.special_b ? "1" : "0");
    auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& x) { return x.key == key; });
    if (it == rows.end()) {
      rows.push_back(Row{key, {&d}});
    } else {
      it->members.push_back(&d);
    }
  }
  Table t({"content", "change", "id A", "id B", "special A/B", "tok in A", "tok in B", "note"}, 2,
          true);
  std::vector<const AddedTokenDiff*> singles;
  for (const auto& row : rows) {
    const AddedTokenDiff& f = *row.members.front();
    TokenId lo_a = UINT32_MAX, hi_a = 0, lo_b = UINT32_MAX, hi_b = 0;
    std::size_t lo_na = SIZE_MAX, hi_na = 0, lo_nb = SIZE_MAX, hi_nb = 0;
    for (const auto* d : row.members) {
      if (d->id_a) {
        lo_a = std::min(lo_a, *d->id_a);
        hi_a = std::max(hi_a, *d->id_a);
      }
      if (d->id_b) {
        lo_b = std::min(lo_b, *d->id_b);
        hi_b = std::max(hi_b, *d->id_b);
      }
      lo_na = std::min(lo_na, d->ids_in_a.size());
      hi_na = std::max(hi_na, d->ids_in_a.size());
      lo_nb = std::min(lo_nb, d->ids_in_b.size());
      hi_nb = std::max(hi_nb, d->ids_in_b.size());
    }
    auto flag = [](bool present, bool special) { return present ? (special ? "yes" : "no") : "-"; };
    std::string note;
    if (row.members.size() > 1) {
      note = fmt::format("{} tokens", row.members.size());
    } else {
      singles.push_back(&f);
      if (!f.other_at_id.empty()) {
        note = fmt::format("{} has {} at that id", f.change == "only_in_b" ? "A" : "B",
                           printable(f.other_at_id, 32));
      }
    }
    t.add({printable(row.members.size() > 1 ? family_of(f.content) : f.content, 32), change_text(f),
           id_range(lo_a, hi_a, f.id_a.has_value()), id_range(lo_b, hi_b, f.id_b.has_value()),
           fmt::format("{}/{}", flag(f.id_a.has_value(), f.special_a),
                       flag(f.id_b.has_value(), f.special_b)),
           size_range(lo_na, hi_na), size_range(lo_nb, hi_nb), note});
  }
  t.render(out);
  const std::size_t shown = std::min<std::size_t>(singles.size(), 12);
  if (shown > 0) {
    out += "  encodings (id \"token\"):\n";
  }
  for (std::size_t k = 0; k < shown; ++k) {
    const AddedTokenDiff& d = *singles[k];
    out += fmt::format("    {}  A: {}  B: {}\n", printable(d.content, 32),
                       encoding_cell(d.ids_in_a, d.tokens_in_a),
                       encoding_cell(d.ids_in_b, d.tokens_in_b));
  }
  if (shown < singles.size()) {
    out += fmt::format("    ... {} more in the JSON output\n", singles.size() - shown);
  }
}
}  // namespace

std::string format_report(const TokdiffResult& r) {
  std::string out;
  out += fmt::format("A: {}  ({}; vocab {}, {} added tokens)\n", r.name_a,
                     r.path_a.empty() ? "-" : r.path_a, r.vocab_a, r.added_a);
  out += fmt::format("B: {}  ({}; vocab {}, {} added tokens)\n", r.name_b,
                     r.path_b.empty() ? "-" : r.path_b, r.vocab_b, r.added_b);
  out += fmt::format(
      "add_special_tokens: {}; inflation = tokens B / tokens A; Jd = Jaccard "
      "distance (pooled)\n",
      r.options.add_special_tokens ? "true" : "false");

  out += fmt::format("\nAdded/special tokens that differ: {}\n", r.added_token_diffs.size());
  if (!r.added_token_diffs.empty()) {
    added_table(out, r);
  }

  if (r.texts.empty()) {
    out += "\nCorpus: no texts\n";
    return out;
  }
  out += fmt::format("\nOverall ({} texts)\n", r.overall.texts);
  group_table(out, {r.overall}, "group");
  out += fmt::format(
      "  vocabulary used: A {} token strings, B {}, common {}, Jaccard distance {:.4f}\n",
      r.vocab_used_a, r.vocab_used_b, r.vocab_used.intersection, r.vocab_used.distance());
  if (!r.by_label.empty()) {
    out += "\nPer language\n";
    group_table(out, r.by_label, "language");
  }
  out += "\nPer script (majority of letters)\n";
  group_table(out, r.by_script, "script");

  if (!r.top_movers.empty()) {
    out += fmt::format("\nTop {} movers (largest |ln(B/A)|)\n", r.top_movers.size());
    Table t({"text", "tokens A", "tokens B", "B/A", "boundary Jd", "preview"}, 1, true);
    for (std::size_t i : r.top_movers) {
      const auto& x = r.texts[i];
      t.add({printable(x.name, 40), fmt::format("{}", x.tokens_a), fmt::format("{}", x.tokens_b),
             fmt::format("{:.3f}", x.inflation()), fmt::format("{:.3f}", x.boundaries.distance()),
             printable(x.preview, 40)});
    }
    t.render(out);
  }

  std::size_t fail_a = r.overall.roundtrip_failures_a;
  std::size_t fail_b = r.overall.roundtrip_failures_b;
  out +=
      fmt::format("\nRound-trip failures (decode(encode(x)) != x): A {}, B {}\n", fail_a, fail_b);
  for (const auto& f : r.roundtrip_failures) {
    out += fmt::format("  {} [{}] at byte {}: expected \"{}\" got \"{}\"\n",
                       r.texts[f.text_index].name, f.side == 'a' ? "A" : "B", f.offset,
                       printable(utf8_lossy(f.expected), 30), printable(utf8_lossy(f.got), 30));
  }
  if (r.roundtrip_failures.size() < fail_a + fail_b) {
    out += fmt::format("  ... {} more\n", fail_a + fail_b - r.roundtrip_failures.size());
  }
  return out;
}

}  // namespace llmbench::tokenizer
