#include "llmbench/protocol/redact.hpp"

#include "llmbench/core/utf8.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

namespace llmbench::protocol {
namespace {

constexpr std::size_t kShortSecretBytes = 4;

std::uint64_t window(const char* p) noexcept {
  std::uint64_t w = 0;
  std::memcpy(&w, p, sizeof w);
  return w;
}

/// `text` (already redacted) cut to `max_bytes`, never inside a mark.
std::string cut_keeping_marks(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes || max_bytes == 0) {
    return cut_utf8(text, max_bytes);
  }
  const std::string_view mark = Redactor::kMark;
  const std::size_t start = text.rfind(mark, max_bytes - 1);
  if (start == std::string_view::npos || start + mark.size() <= max_bytes) {
    return cut_utf8(text, max_bytes);
  }
  if (max_bytes < mark.size()) {
    return cut_utf8(text.substr(0, start), max_bytes);
  }
  return cut_utf8(text.substr(0, start), max_bytes - mark.size()) + std::string(mark);
}

/// Redacts every string of `value`, member names included, in place.
void redact_strings(nlohmann::json& value, const Redactor& redactor) {
  if (value.is_string()) {
    value = redactor.redact(value.get_ref<const std::string&>());
  } else if (value.is_array()) {
    for (auto& element : value) {
      redact_strings(element, redactor);
    }
  } else if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto& [name, member] : value.items()) {
      redact_strings(member, redactor);
      out[redactor.redact(name)] = std::move(member);
    }
    value = std::move(out);
  }
}

}  // namespace

Redactor::Redactor(const std::vector<std::string>& secrets) {
  static_assert(kFragmentBytes == sizeof(std::uint64_t), "a fragment is one 64-bit window");
  for (const auto& secret : secrets) {
    // A header value "Bearer KEY" is its scheme and its credential (RFC 9110 §11.4): only the
    // credential is secret, so fragments are taken per space-separated word and a short word
    // (the scheme) is not removed by itself.
    const std::string_view value = secret;
    const bool one_word = value.find(' ') == std::string_view::npos;
    if (one_word && value.size() >= kShortSecretBytes && value.size() < kFragmentBytes) {
      short_.push_back(secret);
      continue;
    }
    std::size_t begin = 0;
    while (begin < value.size()) {
      std::size_t end = value.find(' ', begin);
      end = end == std::string_view::npos ? value.size() : end;
      for (std::size_t i = begin; i + kFragmentBytes <= end; ++i) {
        fragments_.push_back(window(value.data() + i));
      }
      begin = end + 1;
    }
  }
  std::sort(fragments_.begin(), fragments_.end());
  fragments_.erase(std::unique(fragments_.begin(), fragments_.end()), fragments_.end());
}

std::vector<bool> Redactor::covered(std::string_view text) const {
  std::vector<bool> cover(text.size(), false);
  if (!fragments_.empty() && text.size() >= kFragmentBytes) {
    for (std::size_t i = 0; i + kFragmentBytes <= text.size(); ++i) {
      if (std::binary_search(fragments_.begin(), fragments_.end(), window(text.data() + i))) {
        std::fill_n(cover.begin() + static_cast<std::ptrdiff_t>(i), kFragmentBytes, true);
      }
    }
  }
  for (const auto& secret : short_) {
    for (std::size_t at = text.find(secret); at != std::string_view::npos;
         at = text.find(secret, at + 1)) {
      std::fill_n(cover.begin() + static_cast<std::ptrdiff_t>(at), secret.size(), true);
    }
  }
  return cover;
}

bool Redactor::contains_secret(std::string_view text) const {
  if (empty()) {
    return false;
  }
  const auto cover = covered(text);
  return std::find(cover.begin(), cover.end(), true) != cover.end();
}

std::string Redactor::redact(std::string_view text) const {
  if (empty()) {
    return std::string(text);
  }
  const auto cover = covered(text);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (!cover[i]) {
      out.push_back(text[i++]);
      continue;
    }
    out.append(kMark);
    while (i < text.size() && cover[i]) {
      ++i;
    }
  }
  return out;
}

std::string cut_utf8(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) {
    return std::string(text);
  }
  // Back over continuation bytes (core/utf8.hpp), so the cut lands on a lead byte.
  return std::string(text.substr(0, utf8_floor(text, max_bytes)));
}

std::string server_text(std::string_view text, const Redactor& redactor, std::size_t max_bytes) {
  if (redactor.empty()) {
    return cut_keeping_marks(text, max_bytes);
  }
  // Bounded work for a huge string: only the head can be kept. A fragment of 8 or more bytes is
  // found wherever it lies, so this first cut can leave at most 7 bytes of a secret at its end,
  // and those are then beyond the final cut (the head is 64 KiB longer than what is kept, while
  // redaction shortens it by at most that much only if it was all secret).
  constexpr std::size_t kWorkBytes = std::size_t{1} << 16;
  const std::string_view head = text.substr(0, std::min(text.size(), max_bytes + kWorkBytes));
  return cut_keeping_marks(redactor.redact(head), max_bytes);
}

std::string redact_json_text(std::string_view body, const Redactor& redactor) {
  if (redactor.empty()) {
    return std::string(body);
  }
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return redactor.redact(body);
  }
  redact_strings(parsed, redactor);
  return parsed.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace llmbench::protocol
