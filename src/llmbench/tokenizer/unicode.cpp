#include "llmbench/tokenizer/unicode.hpp"

#include "llmbench/core/utf8.hpp"

#include <cstdlib>
#include <utf8proc.h>
#include <utility>

namespace llmbench::tokenizer::detail {
namespace {

std::array<char32_t, 256> make_byte_to_char() {
  std::array<char32_t, 256> table{};
  char32_t next = 0x100;
  for (unsigned b = 0; b < 256; ++b) {
    const bool self = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    table[b] = self ? static_cast<char32_t>(b) : next++;
  }
  return table;
}

utf8proc_category_t category(char32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

}  // namespace

char32_t decode_utf8(std::string_view text, std::size_t pos, std::size_t& len) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data()) + pos;
  const unsigned c = p[0];
  if (c < 0x80) {
    len = 1;
    return c;
  }
  if (c < 0xE0) {
    len = 2;
    return static_cast<char32_t>(((c & 0x1Fu) << 6) | (p[1] & 0x3Fu));
  }
  if (c < 0xF0) {
    len = 3;
    return static_cast<char32_t>(((c & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu));
  }
  len = 4;
  return static_cast<char32_t>(((c & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) |
                               ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu));
}

void append_utf8(std::string& out, char32_t cp) {
  auto put = [&](unsigned v) { out.push_back(static_cast<char>(v)); };
  const auto c = static_cast<unsigned>(cp);
  if (c < 0x80) {
    put(c);
  } else if (c < 0x800) {
    put(0xC0 | (c >> 6));
    put(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    put(0xE0 | (c >> 12));
    put(0x80 | ((c >> 6) & 0x3F));
    put(0x80 | (c & 0x3F));
  } else {
    put(0xF0 | (c >> 18));
    put(0x80 | ((c >> 12) & 0x3F));
    put(0x80 | ((c >> 6) & 0x3F));
    put(0x80 | (c & 0x3F));
  }
}

const std::array<char32_t, 256>& byte_to_char() {
  static const std::array<char32_t, 256> table = make_byte_to_char();
  return table;
}

bool byte_level_to_bytes(std::string_view token, std::string& out) {
  static const std::array<int, 512> reverse = [] {
    std::array<int, 512> r{};
    r.fill(-1);
    const auto& fwd = byte_to_char();
    for (unsigned b = 0; b < 256; ++b) {
      r[fwd[b]] = static_cast<int>(b);
    }
    return r;
  }();
  out.clear();
  if (!utf8_valid(token)) {
    return false;
  }
  std::size_t i = 0;
  while (i < token.size()) {
    std::size_t len = 0;
    const char32_t cp = decode_utf8(token, i, len);
    if (cp >= reverse.size() || reverse[cp] < 0) {
      return false;
    }
    out.push_back(static_cast<char>(reverse[cp]));
    i += len;
  }
  return true;
}

std::string bytes_to_byte_level(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  const auto& fwd = byte_to_char();
  for (const char c : bytes) {
    append_utf8(out, fwd[static_cast<unsigned char>(c)]);
  }
  return out;
}

bool is_white_space(char32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool is_word_char(char32_t cp) {
  if (cp < 0x80) {
    return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
           cp == '_';
  }
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
    case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

bool is_numeric(char32_t cp) {
  if (cp < 0x80) {
    return cp >= '0' && cp <= '9';
  }
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}

bool is_punctuation(char32_t cp) {
  if (cp < 0x80) {
    return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
           (cp >= 0x7B && cp <= 0x7E);
  }
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return true;
    default:
      return false;
  }
}

void append_lowercase(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
    return;
  }
  if (cp == 0x130) {
    out.append("i\xCC\x87");
    return;
  }
  append_utf8(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
}

namespace {

/// Code points that HF tokenizers 0.23's normalizers (crate `unicode-normalization-alignments`
/// 0.1.12, whose tables predate Unicode 10) treat as unassigned: canonical combining class 0, no
/// decomposition, no composition. utf8proc 2.8 (Unicode 15) gives the marks a non-zero class and
/// composes U+11935 U+11930 into U+11938. Found by tests/differential (see its README), one
/// fixture per code point in tests/differential/nfc_hf_fixture.jsonl. Sorted [first, last].
constexpr std::pair<char32_t, char32_t> kHfLegacyStarters[] = {
    {0x07FD, 0x07FD},   {0x0898, 0x089F},   {0x08CA, 0x08D3},   {0x09FE, 0x09FE},
    {0x0C3C, 0x0C3C},   {0x0D3B, 0x0D3C},   {0x0EBA, 0x0EBA},   {0x1715, 0x1715},
    {0x1ABF, 0x1ACE},   {0x1DF6, 0x1DFA},   {0xA82C, 0xA82C},   {0x10D24, 0x10D27},
    {0x10EAB, 0x10EAC}, {0x10EFD, 0x10EFF}, {0x10F46, 0x10F50}, {0x10F82, 0x10F85},
    {0x11070, 0x11070}, {0x1133B, 0x1133B}, {0x1145E, 0x1145E}, {0x11839, 0x1183A},
    {0x11930, 0x11930}, {0x11938, 0x11938}, {0x1193D, 0x1193E}, {0x11943, 0x11943},
    {0x119E0, 0x119E0}, {0x11A34, 0x11A34}, {0x11A47, 0x11A47}, {0x11A99, 0x11A99},
    {0x11D42, 0x11D42}, {0x11D44, 0x11D45}, {0x11D97, 0x11D97}, {0x11F41, 0x11F42},
    {0x16FF0, 0x16FF1}, {0x1E08F, 0x1E08F}, {0x1E130, 0x1E136}, {0x1E2AE, 0x1E2AE},
    {0x1E2EC, 0x1E2EF}, {0x1E4EC, 0x1E4EF},
};

bool is_hf_legacy_starter(char32_t cp) {
  if (cp < 0x07FD) {
    return false;
  }
  for (const auto& [first, last] : kHfLegacyStarters) {
    if (cp < first) {
      return false;
    }
    if (cp <= last) {
      return true;
    }
  }
  return false;
}

std::string normalize_utf8proc(std::string_view text, NormForm form);

}  // namespace

std::string normalize(std::string_view text, NormForm form) {
  // A code point HF treats as unassigned is a starter that neither composes nor reorders, so it
  // splits the text into independently normalized runs and is copied through unchanged.
  std::string out;
  std::size_t run = 0;
  bool split = false;
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0xC0) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    const char32_t cp = decode_utf8(text, i, len);
    if (is_hf_legacy_starter(cp)) {
      split = true;
      out += normalize_utf8proc(text.substr(run, i - run), form);
      out.append(text.substr(i, len));
      run = i + len;
    }
    i += len;
  }
  if (!split) {
    return normalize_utf8proc(text, form);
  }
  out += normalize_utf8proc(text.substr(run), form);
  return out;
}

namespace {

std::string normalize_utf8proc(std::string_view text, NormForm form) {
  if (text.empty()) {
    return {};
  }
  bool ascii = true;
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) {
    return std::string(text);
  }
  int options = UTF8PROC_STABLE;
  switch (form) {
    case NormForm::kNfc:
      options |= UTF8PROC_COMPOSE;
      break;
    case NormForm::kNfd:
      options |= UTF8PROC_DECOMPOSE;
      break;
    case NormForm::kNfkc:
      options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
      break;
    case NormForm::kNfkd:
      options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
      break;
  }
  utf8proc_uint8_t* dst = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                          static_cast<utf8proc_ssize_t>(text.size()), &dst,
                                          static_cast<utf8proc_option_t>(options));
  if (n < 0) {
    return std::string(text);  // only on invalid input, which callers have rejected
  }
  std::string out(reinterpret_cast<const char*>(dst), static_cast<std::size_t>(n));
  std::free(dst);
  return out;
}

}  // namespace

}  // namespace llmbench::tokenizer::detail
