#include "llmbench/tokenizer/fast_split.hpp"

#include "llmbench/tokenizer/unicode.hpp"

#include <array>
#include <cstdint>
#include <oniguruma.h>

namespace llmbench::tokenizer::detail {
namespace {

// The pattern as it appears in the DeepSeek-V3 tokenizer.json after JSON unescaping (CR and LF
// inside the classes are literal control characters there).
constexpr std::string_view kPattern =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|"
    "[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
    " ?[\\p{P}\\p{S}]+[\r\n]*|"
    "\\s*[\r\n]+|"
    "\\s+(?!\\S)|"
    "\\s+";

// Qwen2/Qwen3 (one digit per match) and Llama-3 (up to three) main regex, as in their
// tokenizer.json (here `\r`, `\n` are regex escapes, not literal characters).
constexpr std::string_view kQwenPattern =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kLlama3Pattern =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

using Flags = std::uint16_t;
enum : Flags {
  kL = 1,
  kM = 2,
  kP = 4,
  kS = 8,
  kSpace = 16,
  kCrLf = 32,
  kAsciiPunct = 64,
  kAsciiAlpha = 128,
  kN = 256
};

struct Ctypes {
  unsigned l, m, p, s, n;
};

const Ctypes& ctypes() {
  static const Ctypes c = [] {
    OnigEncoding encodings[1] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
    auto get = [](char name) {
      UChar n[] = {static_cast<UChar>(name)};
      return static_cast<unsigned>(ONIGENC_PROPERTY_NAME_TO_CTYPE(ONIG_ENCODING_UTF8, n, n + 1));
    };
    return Ctypes{get('L'), get('M'), get('P'), get('S'), get('N')};
  }();
  return c;
}

Flags classify_slow(char32_t cp) {
  const Ctypes& c = ctypes();
  const auto code = static_cast<OnigCodePoint>(cp);
  Flags f = 0;
  auto is = [&](unsigned ctype) { return ONIGENC_IS_CODE_CTYPE(ONIG_ENCODING_UTF8, code, ctype); };
  if (is(c.l)) {
    f |= kL;
  }
  if (is(c.m)) {
    f |= kM;
  }
  if (is(c.p)) {
    f |= kP;
  }
  if (is(c.s)) {
    f |= kS;
  }
  if (is(c.n)) {
    f |= kN;
  }
  if (is(ONIGENC_CTYPE_SPACE)) {
    f |= kSpace;
  }
  if (cp == '\r' || cp == '\n') {
    f |= kCrLf;
  }
  if (cp >= 0x21 && cp <= 0x7E &&
      !((cp >= '0' && cp <= '9') || (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z'))) {
    f |= kAsciiPunct;
  }
  if ((cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z')) {
    f |= kAsciiAlpha;
  }
  return f;
}

Flags classify(char32_t cp) {
  static const std::array<Flags, 128> ascii = [] {
    std::array<Flags, 128> t{};
    for (char32_t c = 0; c < 128; ++c) {
      t[c] = classify_slow(c);
    }
    return t;
  }();
  return cp < 128 ? ascii[cp] : classify_slow(cp);
}

// A cursor over valid UTF-8.
struct Text {
  std::string_view s;
  // Class and byte length of the character at `pos` (pos < size).
  Flags at(std::size_t pos, std::size_t& len) const {
    const auto b = static_cast<unsigned char>(s[pos]);
    if (b < 0x80) {
      len = 1;
      return classify(b);
    }
    return classify(decode_utf8(s, pos, len));
  }
  // End of the maximal run, from `pos`, of characters having any flag of `mask`.
  std::size_t run(std::size_t pos, Flags mask) const {
    std::size_t len = 0;
    while (pos < s.size() && (at(pos, len) & mask) != 0) {
      pos += len;
    }
    return pos;
  }
  // End of the maximal run, from `pos`, of characters having no flag of `mask`.
  std::size_t run_without(std::size_t pos, Flags mask) const {
    std::size_t len = 0;
    while (pos < s.size() && (at(pos, len) & mask) == 0) {
      pos += len;
    }
    return pos;
  }
};

constexpr std::size_t kNoMatch = static_cast<std::size_t>(-1);

// `\s*[\r\n]+|\s+(?!\S)|\s+` at `i` (a whitespace character), shared by both regex families.
std::size_t match_space_tail(const Text& t, std::size_t i) {
  const std::size_t n = t.s.size();
  // Whitespace run [i, j); `last` is the start of its last character, `last_crlf` the end of
  // its last CR/LF.
  std::size_t j = i;
  std::size_t last = i;
  std::size_t last_crlf = kNoMatch;
  std::size_t chars = 0;
  while (j < n) {
    std::size_t len = 0;
    const Flags c = t.at(j, len);
    if ((c & kSpace) == 0) {
      break;
    }
    last = j;
    j += len;
    ++chars;
    if ((c & kCrLf) != 0) {
      last_crlf = j;
    }
  }
  // 4: `\s*[\r\n]+`: \s* backs off to the last CR/LF of the run; [\r\n]+ then ends right after
  // it (the run has no CR/LF beyond it).
  if (last_crlf != kNoMatch) {
    return last_crlf;
  }
  // 5: `\s+(?!\S)`: the whole run at the end of the subject, else the run less its last
  // character (which is followed by whitespace); needs at least one character left.
  if (j == n) {
    return j;
  }
  if (chars >= 2) {
    return last;
  }
  // 6: `\s+`.
  return j;
}

// DeepSeek-V3: end of the match starting exactly at `i`, trying the alternatives in order
// (leftmost-first).
std::size_t match_deepseek(const Text& t, std::size_t i) {
  const std::size_t n = t.s.size();
  std::size_t len0 = 0;
  const Flags c0 = t.at(i, len0);
  const std::size_t i1 = i + len0;
  std::size_t len1 = 0;
  const Flags c1 = i1 < n ? t.at(i1, len1) : 0;
  // 1: ASCII punctuation followed by ASCII letters (greedy, no backtracking needed).
  if ((c0 & kAsciiPunct) != 0 && (c1 & kAsciiAlpha) != 0) {
    return t.run(i1, kAsciiAlpha);
  }
  // 2: optional [^\r\n\p{L}\p{P}\p{S}] then [\p{L}\p{M}]+. With the optional character taken,
  // the run must start right after it; without it (the backtrack), at i itself.
  if ((c0 & (kCrLf | kL | kP | kS)) == 0 && (c1 & (kL | kM)) != 0) {
    return t.run(i1, kL | kM);
  }
  if ((c0 & (kL | kM)) != 0) {
    return t.run(i1, kL | kM);
  }
  // 3: ` ?[\p{P}\p{S}]+[\r\n]*`. A space is not P/S, so dropping it never helps.
  {
    std::size_t j = i;
    Flags cj = c0;
    if (t.s[i] == ' ') {
      j = i1;
      cj = c1;
    }
    if (j < n && (cj & (kP | kS)) != 0) {
      return t.run(t.run(j, kP | kS), kCrLf);
    }
  }
  if ((c0 & kSpace) == 0) {
    return kNoMatch;  // 4-6 all start with \s
  }
  return match_space_tail(t, i);
}

// Qwen/Llama-3: end of the match starting exactly at `i` (kNoMatch when none).
std::size_t match_qwen(const Text& t, std::size_t i, std::size_t max_digits) {
  const std::size_t n = t.s.size();
  std::size_t len0 = 0;
  const Flags c0 = t.at(i, len0);
  const std::size_t i1 = i + len0;
  std::size_t len1 = 0;
  const Flags c1 = i1 < n ? t.at(i1, len1) : 0;
  // 1: (?i:'s|'t|'re|'ve|'m|'ll|'d). Oniguruma's Unicode case folding adds U+017F (long s) to
  // the s alternative; no other character folds to one of these letters.
  if (t.s[i] == '\'' && i1 < n) {
    std::size_t len = 0;
    const char32_t a = decode_utf8(t.s, i1, len);
    const std::size_t i2 = i1 + len;
    const char32_t b = i2 < n ? static_cast<unsigned char>(t.s[i2]) : 0;
    switch (a) {
      case 's':
      case 'S':
      case 0x17F:
      case 't':
      case 'T':
      case 'm':
      case 'M':
      case 'd':
      case 'D':
        return i2;
      case 'r':
      case 'R':
      case 'v':
      case 'V':
        if (b == 'e' || b == 'E') {
          return i2 + 1;
        }
        break;
      case 'l':
      case 'L':
        if (b == 'l' || b == 'L') {
          return i2 + 1;
        }
        break;
      default:
        break;
    }
  }
  // 2: [^\r\n\p{L}\p{N}]?\p{L}+ (the optional character taken, else the backtrack).
  if ((c0 & (kCrLf | kL | kN)) == 0 && (c1 & kL) != 0) {
    return t.run(i1, kL);
  }
  if ((c0 & kL) != 0) {
    return t.run(i1, kL);
  }
  // 3: \p{N} (Qwen) or \p{N}{1,3} (Llama-3), greedy.
  if ((c0 & kN) != 0) {
    std::size_t end = i1;
    for (std::size_t k = 1; k < max_digits && end < n; ++k) {
      std::size_t len = 0;
      if ((t.at(end, len) & kN) == 0) {
        break;
      }
      end += len;
    }
    return end;
  }
  // 4: ` ?[^\s\p{L}\p{N}]+[\r\n]*`; a space is \s, so dropping it never helps.
  {
    std::size_t j = i;
    Flags cj = c0;
    if (t.s[i] == ' ') {
      j = i1;
      cj = c1;
    }
    if (j < n && (cj & (kSpace | kL | kN)) == 0) {
      return t.run(t.run_without(j, kSpace | kL | kN), kCrLf);
    }
  }
  if ((c0 & kSpace) == 0) {
    return kNoMatch;
  }
  return match_space_tail(t, i);
}

template <class Match>
void find_all_native(std::string_view subject, std::vector<Span>& out, Match&& match) {
  const Text t{subject};
  std::size_t pos = 0;
  while (pos < subject.size()) {
    const std::size_t end = match(t, pos);
    if (end != kNoMatch) {
      out.push_back({static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(end)});
      pos = end;
    } else {
      std::size_t len = 0;
      t.at(pos, len);
      pos += len;
    }
  }
}

}  // namespace

std::size_t qwen_family_max_digits(std::string_view pattern) {
  if (pattern == kQwenPattern) {
    return 1;
  }
  if (pattern == kLlama3Pattern) {
    return 3;
  }
  return 0;
}

void find_qwen_main(std::string_view subject, std::size_t max_digits, std::vector<Span>& out) {
  find_all_native(subject, out, [max_digits](const Text& t, std::size_t i) {
    return match_qwen(t, i, max_digits);
  });
}

bool is_deepseek_v3_main_regex(std::string_view pattern) {
  return pattern == kPattern;
}

void find_deepseek_v3_main(std::string_view subject, std::vector<Span>& out) {
  find_all_native(subject, out, match_deepseek);
}

}  // namespace llmbench::tokenizer::detail
