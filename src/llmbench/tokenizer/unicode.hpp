#pragma once
/// @file
/// Unicode helpers for the tokenizer (internal): decoding, the GPT-2 byte-level alphabet and
/// character classes. Validation and lossy decoding are the shared ones in core/utf8.hpp.

#include "llmbench/core/utf8.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace llmbench::tokenizer::detail {

/// Decodes the code point at `text[pos]` of valid UTF-8; stores its byte length in `len`.
char32_t decode_utf8(std::string_view text, std::size_t pos, std::size_t& len);

/// Appends the UTF-8 encoding of `cp`.
void append_utf8(std::string& out, char32_t cp);

/// GPT-2 byte-level alphabet (HF `bytes_char`): bytes 0x21-0x7E, 0xA1-0xAC, 0xAE-0xFF map to the
/// same code point, the other 68 bytes to U+0100.. in increasing byte order.
const std::array<char32_t, 256>& byte_to_char();

/// Converts a byte-level token string back to raw bytes; false when a character is outside the
/// alphabet (then `out` is unspecified).
bool byte_level_to_bytes(std::string_view token, std::string& out);

/// Converts raw bytes to their byte-level string.
std::string bytes_to_byte_level(std::string_view bytes);

/// Rust `char::is_whitespace` (Unicode White_Space property).
bool is_white_space(char32_t cp);

/// Word character as Rust `regex` \w (alphabetic, numeric, mark, connector punctuation).
bool is_word_char(char32_t cp);

/// Rust `char::is_numeric` (general category Nd, Nl or No).
bool is_numeric(char32_t cp);

/// HF `is_punc`: ASCII punctuation or a Unicode punctuation character (categories Pc Pd Ps Pe
/// Pi Pf Po).
bool is_punctuation(char32_t cp);

/// Appends Rust `char::to_lowercase(cp)` (utf8proc's simple lowercase mapping, plus the one
/// unconditional multi-character mapping of SpecialCasing.txt: U+0130 -> "i" U+0307).
void append_lowercase(std::string& out, char32_t cp);

/// Unicode normalization forms supported by the `normalizer` section.
enum class NormForm { kNfc, kNfd, kNfkc, kNfkd };

/// Normalizes valid UTF-8 `text` with utf8proc; pure-ASCII input is returned unchanged.
std::string normalize(std::string_view text, NormForm form);

}  // namespace llmbench::tokenizer::detail
