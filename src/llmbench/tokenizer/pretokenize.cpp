#include "llmbench/tokenizer/pretokenize.hpp"

#include "llmbench/core/utf8.hpp"
#include "llmbench/tokenizer/fast_split.hpp"
#include "llmbench/tokenizer/unicode.hpp"

#include <algorithm>
#include <mutex>
#include <oniguruma.h>

namespace llmbench::tokenizer::detail {
namespace {

void init_oniguruma() {
  static std::once_flag once;
  std::call_once(once, [] {
    OnigEncoding encodings[1] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
  });
}

const UChar* as_uchar(const char* p) {
  return reinterpret_cast<const UChar*>(p);
}

// Applies a split behaviour to `parts` (consecutive spans covering a piece, `is_match` flags)
// and appends the non-empty results, shifted by `base`, to `out`. Mirrors HF
// `NormalizedString::split`.
void apply_behavior(SplitBehavior behavior, const std::vector<Span>& parts,
                    const std::vector<char>& is_match, std::uint32_t base, std::vector<Span>& out) {
  const std::size_t first = out.size();
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::kIsolated:
      for (const Span& p : parts) {
        out.push_back(p);
      }
      break;
    case SplitBehavior::kRemoved:
      for (std::size_t i = 0; i < parts.size(); ++i) {
        if (is_match[i] == 0) {
          out.push_back(parts[i]);
        }
      }
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (std::size_t i = 0; i < parts.size(); ++i) {
        const bool m = is_match[i] != 0;
        if (m && !previous_match && out.size() > first) {
          out.back().e = parts[i].e;
        } else {
          out.push_back(parts[i]);
        }
        previous_match = m;
      }
      break;
    case SplitBehavior::kContiguous:
      for (std::size_t i = 0; i < parts.size(); ++i) {
        const bool m = is_match[i] != 0;
        if (m == previous_match && out.size() > first) {
          out.back().e = parts[i].e;
        } else {
          out.push_back(parts[i]);
        }
        previous_match = m;
      }
      break;
    case SplitBehavior::kMergedWithNext: {
      // Walk backwards, merging a match into the piece that follows it, then restore order.
      for (std::size_t k = parts.size(); k-- > 0;) {
        const bool m = is_match[k] != 0;
        if (m && !previous_match && out.size() > first) {
          out.back().b = parts[k].b;
        } else {
          out.push_back(parts[k]);
        }
        previous_match = m;
      }
      std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
      break;
    }
  }
  // Drop empty pieces and shift to the subject's position.
  std::size_t w = first;
  for (std::size_t r = first; r < out.size(); ++r) {
    if (out[r].e > out[r].b) {
      out[w++] = Span{out[r].b + base, out[r].e + base};
    }
  }
  out.resize(w);
}

bool in_class(const PreStep& step, char32_t cp) {
  if (step.ctype >= 0) {
    return ONIGENC_IS_CODE_CTYPE(ONIG_ENCODING_UTF8, static_cast<OnigCodePoint>(cp),
                                 static_cast<unsigned>(step.ctype));
  }
  for (const auto& [lo, hi] : step.ranges) {
    if (cp >= lo && cp <= hi) {
      return true;
    }
  }
  return false;
}

// Finds the matches of one step in `subject` (positions relative to it).
void find_matches(const PreStep& step, std::string_view subject, PreScratch& s) {
  s.found.clear();
  switch (step.kind) {
    case PreStep::Kind::kSplitRegex:
      if (s.region == nullptr) {
        s.region = onig_region_new();
      }
      step.regex->find_all(subject, s.region, s.found);
      break;
    case PreStep::Kind::kSplitLiteral: {
      if (step.literal.empty()) {
        break;
      }
      std::size_t pos = 0;
      while ((pos = subject.find(step.literal, pos)) != std::string_view::npos) {
        const auto b = static_cast<std::uint32_t>(pos);
        s.found.push_back({b, static_cast<std::uint32_t>(b + step.literal.size())});
        pos += step.literal.size();
      }
      break;
    }
    case PreStep::Kind::kDeepSeekV3Main:
      find_deepseek_v3_main(subject, s.found);
      break;
    case PreStep::Kind::kQwenMain:
      find_qwen_main(subject, step.max_run, s.found);
      break;
    case PreStep::Kind::kClassRun: {
      std::size_t i = 0;
      while (i < subject.size()) {
        std::size_t len = 0;
        const char32_t cp = decode_utf8(subject, i, len);
        if (!in_class(step, cp)) {
          i += len;
          continue;
        }
        const std::size_t begin = i;
        std::size_t n = 1;
        i += len;
        while (i < subject.size() && (step.max_run == 0 || n < step.max_run)) {
          const char32_t next = decode_utf8(subject, i, len);
          if (!in_class(step, next)) {
            break;
          }
          i += len;
          ++n;
        }
        s.found.push_back({static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(i)});
      }
      break;
    }
    case PreStep::Kind::kWhitespace:
    case PreStep::Kind::kWhitespaceSplit:
    case PreStep::Kind::kPunctuation: {
      // kWhitespace: runs of word characters and runs of other non-space characters (kept via
      // invert); kWhitespaceSplit: runs of white space; kPunctuation: each punctuation char.
      std::size_t i = 0;
      int run = -1;  // class of the open run, -1 none
      std::size_t run_begin = 0;
      auto close = [&](std::size_t at) {
        if (run >= 0) {
          s.found.push_back(
              {static_cast<std::uint32_t>(run_begin), static_cast<std::uint32_t>(at)});
        }
        run = -1;
      };
      while (i < subject.size()) {
        std::size_t len = 0;
        const char32_t cp = decode_utf8(subject, i, len);
        int cls = -1;
        if (step.kind == PreStep::Kind::kWhitespace) {
          cls = is_word_char(cp) ? 0 : is_white_space(cp) ? -1 : 1;
        } else if (step.kind == PreStep::Kind::kWhitespaceSplit) {
          cls = is_white_space(cp) ? 0 : -1;
        } else if (is_punctuation(cp)) {
          close(i);
          s.found.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + len)});
          i += len;
          continue;
        }
        if (cls != run) {
          close(i);
          if (cls >= 0) {
            run = cls;
            run_begin = i;
          }
        }
        i += len;
      }
      close(subject.size());
      break;
    }
    case PreStep::Kind::kMetaspace:
    case PreStep::Kind::kPrefixSpace:
      break;  // rewriting steps: handled in pre_tokenize
    case PreStep::Kind::kDigits: {
      std::size_t i = 0;
      while (i < subject.size()) {
        std::size_t len = 0;
        const char32_t cp = decode_utf8(subject, i, len);
        if (is_numeric(cp)) {
          s.found.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + len)});
        }
        i += len;
      }
      break;
    }
  }
}

}  // namespace

Result<std::unique_ptr<Regex>> Regex::compile(std::string_view pattern, std::string_view source) {
  init_oniguruma();
  regex_t* reg = nullptr;
  OnigErrorInfo info{};
  const int rc = onig_new(&reg, as_uchar(pattern.data()), as_uchar(pattern.data() + pattern.size()),
                          ONIG_OPTION_NONE, ONIG_ENCODING_UTF8, ONIG_SYNTAX_ONIGURUMA, &info);
  if (rc != ONIG_NORMAL) {
    UChar buf[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(buf, rc, &info);
    return Error{"bad regex (" + std::string(reinterpret_cast<const char*>(buf)) +
                     "): " + std::string(pattern),
                 std::string(source), -1};
  }
  return std::unique_ptr<Regex>(new Regex(reg));
}

Regex::~Regex() {
  onig_free(static_cast<regex_t*>(reg_));
}

void Regex::find_all(std::string_view subject, void* region, std::vector<Span>& out) const {
  auto* reg = static_cast<regex_t*>(reg_);
  auto* r = static_cast<OnigRegion*>(region);
  const UChar* str = as_uchar(subject.data());
  const UChar* end = str + subject.size();
  std::size_t last_end = 0;
  bool have_last_match = false;
  std::size_t last_match_end = 0;
  while (last_end <= subject.size()) {
    const int pos = onig_search(reg, str, end, str + last_end, end, r, ONIG_OPTION_NONE);
    if (pos < 0) {
      return;
    }
    const auto b = static_cast<std::size_t>(r->beg[0]);
    const auto e = static_cast<std::size_t>(r->end[0]);
    if (b == e && have_last_match && last_match_end == e) {
      if (last_end >= subject.size()) {
        return;
      }
      std::size_t len = 0;
      decode_utf8(subject, last_end, len);
      last_end += len;
      continue;
    }
    out.push_back({static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(e)});
    last_end = e;
    have_last_match = true;
    last_match_end = e;
  }
}

void use_fast_path(std::string_view pattern, PreStep& step) {
  if (is_deepseek_v3_main_regex(pattern)) {
    step.kind = PreStep::Kind::kDeepSeekV3Main;
    return;
  }
  if (const std::size_t digits = qwen_family_max_digits(pattern); digits > 0) {
    step.kind = PreStep::Kind::kQwenMain;
    step.max_run = digits;
    return;
  }
  if (pattern == R"(\p{N}{1,3})") {
    init_oniguruma();
    UChar name[] = {'N'};
    const int ctype = ONIGENC_PROPERTY_NAME_TO_CTYPE(ONIG_ENCODING_UTF8, name, name + 1);
    if (ctype >= 0) {
      step.kind = PreStep::Kind::kClassRun;
      step.ctype = ctype;
      step.max_run = 3;
    }
    return;
  }
  // `[a-bc-d...]+` with literal, non-ASCII-special members only (no escapes, negation, nesting,
  // POSIX classes or set operations).
  if (pattern.size() < 4 || pattern.front() != '[' || pattern.substr(pattern.size() - 2) != "]+" ||
      !utf8_valid(pattern)) {
    return;
  }
  const std::string_view body = pattern.substr(1, pattern.size() - 3);
  std::vector<std::pair<char32_t, char32_t>> ranges;
  auto special = [](char32_t c) {
    return c == '\\' || c == '[' || c == ']' || c == '^' || c == '-' || c == '&' || c < 0x20;
  };
  std::size_t i = 0;
  while (i < body.size()) {
    std::size_t len = 0;
    const char32_t lo = decode_utf8(body, i, len);
    if (special(lo)) {
      return;
    }
    i += len;
    char32_t hi = lo;
    if (i < body.size() && body[i] == '-') {
      if (i + 1 >= body.size()) {
        return;
      }
      hi = decode_utf8(body, i + 1, len);
      if (special(hi) || hi < lo) {
        return;
      }
      i += 1 + len;
    }
    ranges.emplace_back(lo, hi);
  }
  if (ranges.empty()) {
    return;
  }
  step.kind = PreStep::Kind::kClassRun;
  step.ranges = std::move(ranges);
  step.max_run = 0;
}

PreScratch::~PreScratch() {
  if (region != nullptr) {
    onig_region_free(static_cast<OnigRegion*>(region), 1);
  }
}

namespace {

// Rewrites each piece of `cur` into `out` (Metaspace / ByteLevel prefix space); `pieces` becomes
// the rewritten pieces' spans in `out`.
void rewrite(const PreStep& step, std::string_view cur, bool at_start, std::vector<Span>& pieces,
             std::string& out) {
  out.clear();
  for (Span& piece : pieces) {
    const std::string_view sub = cur.substr(piece.b, piece.e - piece.b);
    const auto begin = static_cast<std::uint32_t>(out.size());
    if (step.kind == PreStep::Kind::kPrefixSpace) {
      if (sub.front() != ' ') {
        out.push_back(' ');
      }
      out.append(sub);
    } else {
      const std::string& rep = step.literal;
      const bool starts = sub.front() == ' ' || sub.substr(0, rep.size()) == rep;
      if (!starts && (step.prepend == PreStep::Prepend::kAlways ||
                      (step.prepend == PreStep::Prepend::kFirst && at_start && piece.b == 0))) {
        out.append(rep);
      }
      for (const char c : sub) {
        if (c == ' ') {
          out.append(rep);
        } else {
          out.push_back(c);
        }
      }
    }
    piece = Span{begin, static_cast<std::uint32_t>(out.size())};
  }
}

}  // namespace

std::string_view pre_tokenize(const std::vector<PreStep>& steps, std::string_view text,
                              bool at_start, PreScratch& s, std::vector<Span>& pieces) {
  pieces.clear();
  if (text.empty()) {
    return text;
  }
  pieces.push_back({0, static_cast<std::uint32_t>(text.size())});
  std::string_view cur = text;
  bool in_a = false;  // whether `cur` is buf_a
  for (const PreStep& step : steps) {
    if (rewrites_text(step.kind)) {
      std::string& out = in_a ? s.buf_b : s.buf_a;
      rewrite(step, cur, at_start, pieces, out);
      cur = out;
      in_a = !in_a;
      continue;
    }
    s.next.clear();
    for (const Span piece : pieces) {
      const std::string_view subject = cur.substr(piece.b, piece.e - piece.b);
      find_matches(step, subject, s);
      // Matches and gaps as consecutive parts (HF `Pattern::find_matches`).
      s.parts.clear();
      s.is_match.clear();
      std::uint32_t prev = 0;
      for (const Span m : s.found) {
        if (m.b != prev) {
          s.parts.push_back({prev, m.b});
          s.is_match.push_back(static_cast<char>(step.invert));
        }
        s.parts.push_back(m);
        s.is_match.push_back(static_cast<char>(!step.invert));
        prev = m.e;
      }
      if (prev != subject.size()) {
        s.parts.push_back({prev, static_cast<std::uint32_t>(subject.size())});
        s.is_match.push_back(static_cast<char>(step.invert));
      }
      apply_behavior(step.behavior, s.parts, s.is_match, piece.b, s.next);
    }
    pieces.swap(s.next);
  }
  return cur;
}

}  // namespace llmbench::tokenizer::detail
