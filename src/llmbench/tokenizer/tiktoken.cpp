/// @file
/// Loading tiktoken rank files (`*.tiktoken`, as read by tiktoken's `load_tiktoken_bpe`): one
/// "<base64 of the token bytes> <rank>" per line, the rank being the token id.

#include "llmbench/tokenizer/impl.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <fmt/core.h>

#include <charconv>

namespace llmbench::tokenizer {
namespace {

// GPT-4's cl100k_base split pattern, written in the equivalent form used by Llama-3's
// tokenizer.json (same matches: the possessive quantifiers of the tiktoken original cannot change
// a match for these classes, `\s*[\r\n]` and `\s*[\r\n]+` end at the same last newline, and the
// contraction alternatives are the same set with no common prefix), so the native matcher of
// fast_split.hpp runs it.
constexpr std::string_view kCl100k =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// GPT-4o's o200k_base split pattern (tiktoken `o200k_base`), run on Oniguruma.
constexpr std::string_view kO200k =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// RFC 4648 base64 (standard alphabet, '=' padding optional); false on any other character.
bool base64_decode(std::string_view in, std::string& out) {
  out.clear();
  std::uint32_t acc = 0;
  int bits = 0;
  for (const char c : in) {
    int v = -1;
    if (c >= 'A' && c <= 'Z') {
      v = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      v = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      v = c - '0' + 52;
    } else if (c == '+') {
      v = 62;
    } else if (c == '/') {
      v = 63;
    } else if (c == '=') {
      break;
    } else {
      return false;
    }
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFFu));
    }
  }
  return true;
}

}  // namespace

Result<Tokenizer> Tokenizer::from_tiktoken(std::string_view text, std::string_view pattern,
                                           std::string_view source) {
  auto impl = std::make_shared<Impl>();
  const std::string src(source);
  std::string_view regex = pattern;
  if (pattern.empty() || pattern == "cl100k") {
    regex = kCl100k;
  } else if (pattern == "o200k") {
    regex = kO200k;
  }
  detail::PreStep step;
  auto re = detail::Regex::compile(regex, src + ": tiktoken pattern");
  if (!re) {
    return re.error();
  }
  step.kind = detail::PreStep::Kind::kSplitRegex;
  step.regex = std::move(*re);
  detail::use_fast_path(regex, step);
  impl->pre_steps.push_back(std::move(step));

  detail::Bpe& bpe = impl->bpe;
  bpe.ignore_merges = true;  // a piece that is a token is emitted whole (tiktoken)
  std::string bytes;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    std::string_view line = text.substr(pos, end - pos);
    const std::size_t line_start = pos;
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (line.empty()) {
      continue;
    }
    const std::size_t space = line.find(' ');
    std::uint64_t rank = 0;
    const std::string_view num = space == std::string_view::npos ? "" : line.substr(space + 1);
    const auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), rank);
    if (space == std::string_view::npos || ec != std::errc() || ptr != num.data() + num.size() ||
        rank > 0xFFFFFFF || !base64_decode(line.substr(0, space), bytes) || bytes.empty()) {
      return Error{fmt::format("line {}: expected \"<base64 token> <rank>\"", line_no), src,
                   static_cast<std::int64_t>(line_start)};
    }
    const auto at = static_cast<std::int64_t>(line_start);
    if (rank >= line_no + detail::kMaxTokenIdGap) {
      return Error{fmt::format("line {}: rank {} is far past the number of lines", line_no, rank),
                   src, at};
    }
    const auto id = static_cast<TokenId>(rank);
    if (!bpe.bytes_to_id.emplace(bytes, id).second) {
      return Error{fmt::format("line {}: duplicate token", line_no), src, at};
    }
    if (impl->id_to_bytes.size() <= id) {
      impl->id_to_bytes.resize(id + 1);
      impl->id_to_token.resize(id + 1);
    }
    if (!impl->id_to_bytes[id].empty()) {
      return Error{
          fmt::format("line {}: rank {} is also the rank of an earlier token", line_no, rank), src,
          at};
    }
    impl->id_to_bytes[id] = bytes;
    impl->id_to_token[id] = detail::bytes_to_byte_level(bytes);
    impl->token_to_id.emplace(impl->id_to_token[id], id);
  }
  if (bpe.bytes_to_id.empty()) {
    return Error{"no tokens (empty tiktoken file?)", src, -1};
  }
  for (unsigned b = 0; b < 256; ++b) {
    const auto it = bpe.bytes_to_id.find(std::string(1, static_cast<char>(b)));
    bpe.byte_id[b] = it == bpe.bytes_to_id.end() ? std::int64_t{-1} : std::int64_t{it->second};
    bpe.fallback_id[b] = -1;
  }
  // Every split of a token into two tokens is a merge whose rank is the token's rank.
  bpe.merges.reserve(bpe.bytes_to_id.size() * 4);
  for (const auto& [tok, id] : bpe.bytes_to_id) {
    const std::string_view t = tok;
    for (std::size_t k = 1; k < t.size(); ++k) {
      const auto l = bpe.bytes_to_id.find(t.substr(0, k));
      if (l == bpe.bytes_to_id.end()) {
        continue;
      }
      const auto r = bpe.bytes_to_id.find(t.substr(k));
      if (r != bpe.bytes_to_id.end()) {
        bpe.merges.insert(l->second, r->second, id, id);
      }
    }
  }
  impl->is_special.assign(impl->id_to_token.size(), 0);
  impl->bytes_decoder = true;
  return Tokenizer(std::move(impl));
}

}  // namespace llmbench::tokenizer
