#pragma once
/// @file
/// Small text rules shared by every module: ASCII whitespace trimming and blank-line tests, and
/// the one token estimate llmbench uses wherever no tokenizer is given (datasets, `simulate`, the
/// built-in server), so that every path reports the same `prompt_tokens` for the same text.

#include <cstdint>
#include <string_view>

namespace llmbench {

/// The ASCII whitespace bytes (C `isspace` in the "C" locale): space, \t, \n, \v, \f, \r.
inline constexpr std::string_view kAsciiSpace = " \t\n\v\f\r";

/// `text` without leading and trailing bytes from `chars` (default: ASCII whitespace). A view
/// into `text`; empty when `text` has only such bytes.
constexpr std::string_view trim(std::string_view text,
                                std::string_view chars = kAsciiSpace) noexcept {
  const std::size_t begin = text.find_first_not_of(chars);
  if (begin == std::string_view::npos) {
    return {};
  }
  return text.substr(begin, text.find_last_not_of(chars) - begin + 1);
}

/// True when `text` is empty or has only bytes from `chars` (default: ASCII whitespace).
constexpr bool is_blank(std::string_view text, std::string_view chars = kAsciiSpace) noexcept {
  return text.find_first_not_of(chars) == std::string_view::npos;
}

/// The text-token estimate, additive so that the estimate of a concatenation can be built piece
/// by piece: ASCII bytes and non-ASCII code points are counted apart, and `value()` is
/// ceil(ascii_bytes / 4) + non_ascii_code_points. The rule of thumb: English under byte-level BPE
/// vocabularies averages about 4 characters per token (OpenAI's tokenizer guide, "one token
/// generally corresponds to ~4 characters of text for common English text"), while CJK and other
/// non-ASCII scripts come closer to one token per character.
struct TextTokenEstimate {
  std::int64_t ascii_bytes = 0;
  std::int64_t non_ascii_code_points = 0;

  /// Adds the bytes of `text` (UTF-8; a non-ASCII code point is counted at its lead byte, so a
  /// stray continuation byte adds nothing).
  constexpr void add(std::string_view text) noexcept {
    for (const char ch : text) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < 0x80U) {
        ++ascii_bytes;
      } else if ((c & 0xC0U) != 0x80U) {
        ++non_ascii_code_points;
      }
    }
  }
  /// ceil(ascii_bytes / 4) + non_ascii_code_points; 0 for no text.
  [[nodiscard]] constexpr std::int64_t value() const noexcept {
    return (ascii_bytes + 3) / 4 + non_ascii_code_points;
  }
};

/// `TextTokenEstimate` of `text` alone; 0 for empty text (callers that need at least one token,
/// such as a prompt, take max(1, ·)).
constexpr std::int64_t estimate_text_tokens(std::string_view text) noexcept {
  TextTokenEstimate estimate;
  estimate.add(text);
  return estimate.value();
}

}  // namespace llmbench
