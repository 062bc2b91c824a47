/// @file
/// tokdiff inputs: added tokens from tokenizer.json, corpus files,
/// dominant Unicode script (tokdiff.hpp).

#include "llmbench/core/file.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/core/utf8.hpp"
#include "llmbench/tokenizer/tokdiff.hpp"
#include "llmbench/tokenizer/unicode.hpp"

#include <fmt/core.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <oniguruma.h>
#include <set>
#include <system_error>

namespace llmbench::tokenizer {
namespace {

namespace fs = std::filesystem;

std::string_view strip_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  return line;
}

}  // namespace

Result<std::vector<AddedToken>> parse_added_tokens(std::string_view tokenizer_json,
                                                   std::string_view source) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const simdjson::padded_string padded(tokenizer_json);
  if (auto err = parser.parse(padded).get(root); err != simdjson::SUCCESS) {
    return Error{fmt::format("invalid JSON: {}", simdjson::error_message(err)), std::string(source),
                 -1};
  }
  std::vector<AddedToken> out;
  simdjson::dom::array list;
  if (root["added_tokens"].get_array().get(list) != simdjson::SUCCESS) {
    return out;
  }
  std::size_t i = 0;
  for (simdjson::dom::element item : list) {
    const std::string field = fmt::format("added_tokens[{}]", i++);
    std::uint64_t id = 0;
    std::string_view content;
    if (item["id"].get_uint64().get(id) != simdjson::SUCCESS || id > 0xFFFFFFFFULL) {
      return Error{field + ".id: missing or not a 32-bit unsigned integer", std::string(source),
                   -1};
    }
    if (item["content"].get_string().get(content) != simdjson::SUCCESS) {
      return Error{field + ".content: missing or not a string", std::string(source), -1};
    }
    bool special = false;
    if (auto s = item["special"]; s.error() == simdjson::SUCCESS) {
      if (s.get_bool().get(special) != simdjson::SUCCESS) {
        return Error{field + ".special: not a boolean", std::string(source), -1};
      }
    }
    out.push_back(AddedToken{static_cast<TokenId>(id), std::string(content), special});
  }
  return out;
}

Result<std::vector<AddedToken>> read_added_tokens(const fs::path& tokenizer_json) {
  auto text = read_file(tokenizer_json);
  if (!text) {
    return text.error();
  }
  return parse_added_tokens(*text, tokenizer_json.string());
}

Result<SplitMode> parse_split_mode(std::string_view name) {
  if (name == "auto") {
    return SplitMode::kAuto;
  }
  if (name == "line") {
    return SplitMode::kLine;
  }
  if (name == "paragraph") {
    return SplitMode::kParagraph;
  }
  if (name == "file") {
    return SplitMode::kFile;
  }
  return Error{fmt::format("'{}' is not one of auto, line, paragraph, file", name), "--split", -1};
}

std::string language_label_from_filename(std::string_view file_name) {
  if (const auto slash = file_name.find_last_of("/\\"); slash != std::string_view::npos) {
    file_name.remove_prefix(slash + 1);
  }
  const std::string_view stem = file_name.substr(0, file_name.find('.'));
  auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
  auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  if (stem.size() != 8 || stem[3] != '_' || !upper(stem[4])) {
    return {};
  }
  for (std::size_t k : {0U, 1U, 2U, 5U, 6U, 7U}) {
    if (!lower(stem[k])) {
      return {};
    }
  }
  return std::string(stem);
}

Result<std::vector<CorpusText>> parse_corpus(std::string_view contents, std::string_view file_name,
                                             const CorpusOptions& options) {
  const std::string base = fs::path(file_name).filename().string();
  const std::string label = language_label_from_filename(base);
  std::vector<CorpusText> out;
  auto full = [&] {
    return options.max_texts_per_file != 0 && out.size() >= options.max_texts_per_file;
  };
  // Line number (1-based) of byte `pos`.
  auto line_of = [&](std::size_t pos) {
    return 1 + static_cast<std::size_t>(
                   std::count(contents.begin(), contents.begin() + static_cast<long>(pos), '\n'));
  };
  if (const std::size_t bad = utf8_first_invalid(contents); bad < contents.size()) {
    return Error{fmt::format("invalid UTF-8 at line {}", line_of(bad)), std::string(file_name),
                 static_cast<std::int64_t>(bad)};
  }
  auto push = [&](std::string name, std::string lab, std::string_view text) {
    if (is_blank(text, " \t\r\f\v")) {
      return;  // a text of line breaks alone is kept: tokenizers differ on them
    }
    const std::size_t n =
        options.max_text_bytes != 0 ? utf8_floor(text, options.max_text_bytes) : text.size();
    out.push_back(CorpusText{std::move(name), std::move(lab), std::string(text.substr(0, n))});
  };

  if (base.ends_with(".jsonl")) {
    std::size_t pos = 0;
    std::size_t line_no = 0;
    while (pos < contents.size() && !full()) {
      const std::size_t nl = std::min(contents.find('\n', pos), contents.size());
      const std::string_view line = contents.substr(pos, nl - pos);
      ++line_no;
      const std::string where = fmt::format("{}:{}", base, line_no);
      if (!is_blank(line)) {
        const auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object()) {
          return Error{fmt::format("line {}: not a JSON object", line_no), std::string(file_name),
                       static_cast<std::int64_t>(pos)};
        }
        const auto text = j.find("text");
        if (text == j.end() || !text->is_string()) {
          return Error{fmt::format("line {}: missing string field \"text\"", line_no),
                       std::string(file_name), static_cast<std::int64_t>(pos)};
        }
        std::string name = where;
        for (const char* key : {"name", "id"}) {
          if (auto f = j.find(key); f != j.end() && f->is_string()) {
            name = where + " " + f->get<std::string>();
            break;
          }
        }
        std::string lab = label;
        for (const char* key : {"lang", "language"}) {
          if (auto f = j.find(key); f != j.end() && f->is_string()) {
            lab = f->get<std::string>();
            break;
          }
        }
        push(std::move(name), std::move(lab), text->get_ref<const std::string&>());
      }
      pos = nl + 1;
    }
    return out;
  }

  SplitMode mode = options.split;
  if (mode == SplitMode::kAuto) {
    mode = !label.empty() || base.ends_with(".devtest") || base.ends_with(".dev")
               ? SplitMode::kLine
               : SplitMode::kParagraph;
  }
  if (mode == SplitMode::kFile) {
    std::string_view all = contents;
    while (!all.empty() && (all.back() == '\n' || all.back() == '\r')) {
      all.remove_suffix(1);
    }
    push(base, label, all);
    return out;
  }
  std::size_t pos = 0;
  std::size_t line_no = 0;
  std::size_t para_start = 0;  // byte offset of the current paragraph's first line
  std::size_t para_line = 0;   // its line number, 0 when no paragraph is open
  std::size_t para_end = 0;    // end of its last non-blank line
  while (pos < contents.size() && !full()) {
    const std::size_t nl = std::min(contents.find('\n', pos), contents.size());
    const std::string_view line = strip_cr(contents.substr(pos, nl - pos));
    ++line_no;
    if (mode == SplitMode::kLine) {
      push(fmt::format("{}:{}", base, line_no), label, line);
    } else if (is_blank(line)) {
      if (para_line != 0) {
        push(fmt::format("{}:{}", base, para_line), label,
             contents.substr(para_start, para_end - para_start));
        para_line = 0;
      }
    } else {
      if (para_line == 0) {
        para_line = line_no;
        para_start = pos;
      }
      para_end = pos + line.size();
    }
    pos = nl + 1;
  }
  if (para_line != 0 && !full()) {
    push(fmt::format("{}:{}", base, para_line), label,
         contents.substr(para_start, para_end - para_start));
  }
  return out;
}

Result<std::vector<CorpusText>> load_corpus(const fs::path& path, const CorpusOptions& options) {
  std::error_code ec;
  fs::path p = path;
  if (!fs::exists(p, ec) && path.is_relative()) {
    for (const char* var : {"LLMBENCH_DATA", "LLMBENCH_DATA_DIR"}) {
      const char* v = std::getenv(var);
      if (v != nullptr && *v != '\0' && fs::exists(fs::path(v) / path, ec)) {
        p = fs::path(v) / path;
        break;
      }
    }
  }
  if (!fs::exists(p, ec)) {
    return Error{"corpus file or folder not found (also looked under $LLMBENCH_DATA)",
                 path.string(), -1};
  }
  std::vector<fs::path> files;
  if (fs::is_directory(p, ec)) {
    for (const auto& entry : fs::directory_iterator(p, ec)) {
      const std::string name = entry.path().filename().string();
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file(ec) || name.starts_with('.') || ext == ".md" || ext == ".zip" ||
          ext == ".zst" || ext == ".gz" || ext == ".gguf") {
        continue;
      }
      files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(p);
  }
  std::vector<CorpusText> all;
  for (const auto& file : files) {
    auto contents = read_file(file);
    if (!contents) {
      return contents.error();
    }
    auto texts = parse_corpus(*contents, file.string(), options);
    if (!texts) {
      return texts.error();
    }
    std::move(texts->begin(), texts->end(), std::back_inserter(all));
  }
  return all;
}

namespace {

// Scripts checked by dominant_script (UAX #24 property value names as Oniguruma knows them).
constexpr std::array<const char*, 31> kScripts = {
    "Latin",      "Cyrillic", "Greek",     "Armenian", "Hebrew",   "Arabic",  "Syriac",   "Thaana",
    "Devanagari", "Bengali",  "Gurmukhi",  "Gujarati", "Oriya",    "Tamil",   "Telugu",   "Kannada",
    "Malayalam",  "Sinhala",  "Thai",      "Lao",      "Tibetan",  "Myanmar", "Georgian", "Hangul",
    "Ethiopic",   "Khmer",    "Mongolian", "Hiragana", "Katakana", "Han",     "Bopomofo"};

struct ScriptTables {
  unsigned letter = 0;
  std::array<unsigned, kScripts.size()> script{};
};

const ScriptTables& script_tables() {
  static const ScriptTables tables = [] {
    OnigEncoding encodings[1] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
    auto ctype = [](std::string_view name) {
      const auto* p = reinterpret_cast<const UChar*>(name.data());
      return static_cast<unsigned>(ONIGENC_PROPERTY_NAME_TO_CTYPE(
          ONIG_ENCODING_UTF8, const_cast<UChar*>(p), const_cast<UChar*>(p + name.size())));
    };
    ScriptTables t;
    t.letter = ctype("L");
    for (std::size_t k = 0; k < kScripts.size(); ++k) {
      t.script[k] = ctype(kScripts[k]);
    }
    return t;
  }();
  return tables;
}

bool has_ctype(char32_t cp, unsigned ctype) {
  return ONIGENC_IS_CODE_CTYPE(ONIG_ENCODING_UTF8, static_cast<OnigCodePoint>(cp), ctype) != 0;
}

}  // namespace

std::string dominant_script(std::string_view text) {
  const ScriptTables& t = script_tables();
  constexpr std::size_t kOther = kScripts.size();
  std::array<std::size_t, kScripts.size() + 1> counts{};
  std::array<std::size_t, kScripts.size() + 1> first_seen{};
  first_seen.fill(SIZE_MAX);
  std::size_t last = 0;  // script of the previous letter: checked first
  std::size_t order = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t len = 1;
    const char32_t cp = detail::decode_utf8(text, pos, len);
    pos += len;
    if (cp < 0x80) {
      if (!((cp | 0x20U) >= 'a' && (cp | 0x20U) <= 'z')) {
        continue;
      }
    } else if (!has_ctype(cp, t.letter)) {
      continue;
    }
    std::size_t found = kOther;
    if (cp < 0x80) {
      found = 0;  // Latin
    } else if (has_ctype(cp, t.script[last])) {
      found = last;
    } else {
      for (std::size_t k = 0; k < kScripts.size(); ++k) {
        if (has_ctype(cp, t.script[k])) {
          found = k;
          break;
        }
      }
    }
    if (found != kOther) {
      last = found;
    }
    ++counts[found];
    if (first_seen[found] == SIZE_MAX) {
      first_seen[found] = order++;
    }
  }
  std::size_t best = SIZE_MAX;
  for (std::size_t k = 0; k <= kScripts.size(); ++k) {
    if (counts[k] == 0) {
      continue;
    }
    if (best == SIZE_MAX || counts[k] > counts[best] ||
        (counts[k] == counts[best] && first_seen[k] < first_seen[best])) {
      best = k;
    }
  }
  if (best == SIZE_MAX) {
    return {};
  }
  return best == kOther ? "Other" : kScripts[best];
}

}  // namespace llmbench::tokenizer
