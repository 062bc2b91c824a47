#include "llmbench/tokenizer/added_tokens.hpp"

#include "llmbench/core/utf8.hpp"
#include "llmbench/tokenizer/unicode.hpp"

#include <algorithm>

namespace llmbench::tokenizer::detail {
namespace {

// Last code point of valid UTF-8 `text` (non-empty).
char32_t last_char(std::string_view text) {
  const std::size_t i = utf8_floor(text, text.size() - 1);
  std::size_t len = 0;
  return decode_utf8(text, i, len);
}

}  // namespace

void AddedMatcher::add(std::string_view pattern, std::uint32_t index) {
  std::uint32_t node = 0;
  for (const char ch : pattern) {
    const auto c = static_cast<unsigned char>(ch);
    const std::int64_t found = child(node, c);
    if (found >= 0) {
      node = static_cast<std::uint32_t>(found);
      continue;
    }
    const auto fresh = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
    auto& next = nodes_[node].next;
    next.insert(std::lower_bound(next.begin(), next.end(), std::make_pair(c, std::uint32_t{0})),
                std::make_pair(c, fresh));
    node = fresh;
  }
  // The first declaration of a pattern wins (HF keeps the first id for duplicate contents).
  if (nodes_[node].token < 0) {
    nodes_[node].token = index;
  }
  first_byte_[static_cast<unsigned char>(pattern.front())] = true;
}

std::int64_t AddedMatcher::child(std::uint32_t node, unsigned char c) const {
  const auto& next = nodes_[node].next;
  const auto it = std::lower_bound(next.begin(), next.end(), std::make_pair(c, std::uint32_t{0}));
  if (it != next.end() && it->first == c) {
    return it->second;
  }
  return -1;
}

std::int64_t AddedMatcher::longest_at(std::string_view text, std::size_t pos,
                                      std::size_t& len) const {
  std::int64_t best = -1;
  std::uint32_t node = 0;
  for (std::size_t i = pos; i < text.size(); ++i) {
    const std::int64_t next = child(node, static_cast<unsigned char>(text[i]));
    if (next < 0) {
      break;
    }
    node = static_cast<std::uint32_t>(next);
    if (nodes_[node].token >= 0) {
      best = nodes_[node].token;
      len = i + 1 - pos;
    }
  }
  return best;
}

void AddedMatcher::split(std::string_view text, const std::vector<AddedToken>& tokens,
                         std::vector<Segment>& out) const {
  std::size_t start_offset = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (!first_byte_[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    std::size_t len = 0;
    const std::int64_t index = longest_at(text, pos, len);
    if (index < 0) {
      ++pos;
      continue;
    }
    const AddedToken& tok = tokens[static_cast<std::size_t>(index)];
    std::size_t start = pos;
    std::size_t stop = pos + len;
    pos = stop;  // the scan continues after the raw match, whatever happens to it
    if (start < start_offset) {
      continue;  // swallowed by the previous token's rstrip
    }
    if (tok.single_word) {
      const bool start_ok = start == 0 || !is_word_char(last_char(text.substr(0, start)));
      std::size_t clen = 0;
      const bool stop_ok = stop == text.size() || !is_word_char(decode_utf8(text, stop, clen));
      if (!start_ok || !stop_ok) {
        continue;
      }
    }
    if (tok.lstrip) {
      std::size_t s = start;
      while (s > start_offset) {
        const std::size_t b = utf8_floor(text, s - 1);
        std::size_t clen = 0;
        if (!is_white_space(decode_utf8(text, b, clen))) {
          break;
        }
        s = b;
      }
      start = std::max(s, start_offset);
    }
    if (tok.rstrip) {
      while (stop < text.size()) {
        std::size_t clen = 0;
        if (!is_white_space(decode_utf8(text, stop, clen))) {
          break;
        }
        stop += clen;
      }
    }
    if (start > start_offset) {
      out.push_back(
          {-1, static_cast<std::uint32_t>(start_offset), static_cast<std::uint32_t>(start)});
    }
    out.push_back({static_cast<std::int64_t>(tok.id), static_cast<std::uint32_t>(start),
                   static_cast<std::uint32_t>(stop)});
    start_offset = stop;
  }
  if (start_offset < text.size()) {
    out.push_back(
        {-1, static_cast<std::uint32_t>(start_offset), static_cast<std::uint32_t>(text.size())});
  }
}

}  // namespace llmbench::tokenizer::detail
