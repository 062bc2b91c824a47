#include "llmbench/core/utf8.hpp"

#include <algorithm>

namespace llmbench {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

unsigned char byte_at(std::string_view s, std::size_t i) noexcept {
  return static_cast<unsigned char>(s[i]);
}

// True when `s[i]` is the k-th byte (k ≥ 1) of a sequence led by `lead`: the second byte in the
// lead's range, later ones in 80..BF.
bool fits(const Utf8Lead& lead, std::size_t k, unsigned char b) noexcept {
  const unsigned char lo = k == 1 ? lead.second_lo : 0x80;
  const unsigned char hi = k == 1 ? lead.second_hi : 0xBF;
  return b >= lo && b <= hi;
}

}  // namespace

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
  const Utf8Lead lead = utf8_lead(byte_at(s, i));
  if (lead.length == 0 || lead.length > s.size() - i) {
    return 0;
  }
  for (std::size_t k = 1; k < lead.length; ++k) {
    if (!fits(lead, k, byte_at(s, i + k))) {
      return 0;
    }
  }
  return lead.length;
}

std::size_t utf8_first_invalid(std::string_view s) noexcept {
  std::size_t i = 0;
  while (i < s.size()) {
    if (byte_at(s, i) < 0x80) {
      ++i;  // ASCII fast path: most text is mostly ASCII
      continue;
    }
    const std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) {
      return i;
    }
    i += len;
  }
  return s.size();
}

std::size_t utf8_maximal_subpart(std::string_view s, std::size_t i) noexcept {
  const Utf8Lead lead = utf8_lead(byte_at(s, i));
  std::size_t k = 1;
  while (k < lead.length && i + k < s.size() && fits(lead, k, byte_at(s, i + k))) {
    ++k;
  }
  return k;
}

std::string utf8_lossy(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t len = utf8_sequence_length(s, i);
    if (len > 0) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out.append(kReplacement);
      i += utf8_maximal_subpart(s, i);
    }
  }
  return out;
}

std::size_t utf8_incomplete_tail(std::string_view s) noexcept {
  const std::size_t n = s.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const unsigned char b = byte_at(s, n - back);
    if (utf8_is_continuation(b)) {
      continue;  // look further back for the lead
    }
    const Utf8Lead lead = utf8_lead(b);
    if (lead.length <= back) {
      return 0;  // ASCII, an invalid lead, or a sequence that is already complete
    }
    for (std::size_t k = 1; k < back; ++k) {
      if (!fits(lead, k, byte_at(s, n - back + k))) {
        return 0;
      }
    }
    return back;
  }
  return 0;
}

std::size_t utf8_floor(std::string_view s, std::size_t pos) noexcept {
  if (pos >= s.size()) {
    return s.size();
  }
  while (pos > 0 && utf8_is_continuation(byte_at(s, pos))) {
    --pos;
  }
  return pos;
}

std::size_t utf8_count_code_points(std::string_view s) noexcept {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return !utf8_is_continuation(static_cast<unsigned char>(c));
  }));
}

}  // namespace llmbench
