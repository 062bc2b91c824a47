#pragma once
/// @file
/// UTF-8 byte-sequence rules, in one place for every module: the well-formed sequences of The
/// Unicode Standard, Table 3-7 "Well-Formed UTF-8 Byte Sequences" (the same set as RFC 3629 §4:
/// no overlong forms, no surrogates, nothing above U+10FFFF), and the "maximal subpart" rule of
/// Unicode §3.9 (U+FFFD substitution) that Rust's `String::from_utf8_lossy` follows. All functions
/// are pure, never throw and never read outside the given view.

#include <cstddef>
#include <string>
#include <string_view>

namespace llmbench {

/// What a first byte says about its sequence (Table 3-7): the sequence `length` (1 for ASCII,
/// 0 for a byte that cannot start a sequence: a continuation byte, C0, C1, F5-FF) and the allowed
/// range of the second byte (narrower than 80..BF after E0, ED, F0 and F4).
struct Utf8Lead {
  std::size_t length = 0;
  unsigned char second_lo = 0x80;
  unsigned char second_hi = 0xBF;
};

/// The Table 3-7 row of lead byte `b`.
constexpr Utf8Lead utf8_lead(unsigned char b) noexcept {
  if (b < 0x80) {
    return {.length = 1};
  }
  if (b >= 0xC2 && b <= 0xDF) {
    return {.length = 2};
  }
  if (b >= 0xE0 && b <= 0xEF) {
    return {.length = 3,
            .second_lo = static_cast<unsigned char>(b == 0xE0 ? 0xA0 : 0x80),   // no overlongs
            .second_hi = static_cast<unsigned char>(b == 0xED ? 0x9F : 0xBF)};  // no surrogates
  }
  if (b >= 0xF0 && b <= 0xF4) {
    return {.length = 4,
            .second_lo = static_cast<unsigned char>(b == 0xF0 ? 0x90 : 0x80),   // no overlongs
            .second_hi = static_cast<unsigned char>(b == 0xF4 ? 0x8F : 0xBF)};  // <= U+10FFFF
  }
  return {};
}

/// True for a continuation byte (10xxxxxx), which never starts a code point.
constexpr bool utf8_is_continuation(unsigned char b) noexcept {
  return (b & 0xC0U) == 0x80U;
}

/// Length (1-4) of the well-formed sequence starting at `s[i]`, or 0 when the bytes there are
/// not one (including a sequence cut by the end of `s`). Requires i < s.size().
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept;

/// Offset of the first byte that does not start a well-formed sequence; `s.size()` when all of
/// `s` is valid UTF-8.
std::size_t utf8_first_invalid(std::string_view s) noexcept;

/// True when all of `s` is well-formed UTF-8.
inline bool utf8_valid(std::string_view s) noexcept {
  return utf8_first_invalid(s) == s.size();
}

/// Length (≥ 1) of the maximal subpart of an ill-formed sequence at `s[i]` (Unicode §3.9,
/// "U+FFFD Substitution of Maximal Subparts"): the bytes that one U+FFFD replaces. Requires
/// i < s.size() and `utf8_sequence_length(s, i) == 0`.
std::size_t utf8_maximal_subpart(std::string_view s, std::size_t i) noexcept;

/// `s` with each maximal ill-formed subpart replaced by U+FFFD (Rust `String::from_utf8_lossy`).
std::string utf8_lossy(std::string_view s);

/// Number of trailing bytes of `s` that are a well-formed but incomplete sequence (a lead byte and
/// fewer continuation bytes than it needs, each in its allowed range), to be kept until more
/// bytes arrive; 0 when `s` ends on a sequence boundary or with ill-formed bytes.
std::size_t utf8_incomplete_tail(std::string_view s) noexcept;

/// The largest position ≤ `pos` that is not a continuation byte of `s` (so a cut there does not
/// split a code point of valid text); `s.size()` when pos ≥ s.size(), 0 at the latest.
std::size_t utf8_floor(std::string_view s, std::size_t pos) noexcept;

/// Code points of valid UTF-8 `s` (its bytes that are not continuation bytes).
std::size_t utf8_count_code_points(std::string_view s) noexcept;

}  // namespace llmbench
