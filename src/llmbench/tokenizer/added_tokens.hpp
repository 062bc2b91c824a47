#pragma once
/// @file
/// Added-token extraction (internal), as HF tokenizers `tokenizer/added_vocabulary.rs`
/// `find_matches`: a leftmost-longest scan (the Aho-Corasick `LeftmostLongest` semantics) over
/// the text; `single_word` rejects matches touching a word character; `lstrip`/`rstrip` widen the
/// match over white space; the gaps between matches stay ordinary text.

#include "llmbench/tokenizer/tokenizer.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::tokenizer::detail {

/// One added token as declared in `added_tokens`.
struct AddedToken {
  TokenId id = 0;
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool special = false;
};

/// A piece of text after extraction: an added token (`id >= 0`) or plain text (`id == -1`).
struct Segment {
  std::int64_t id;
  std::uint32_t b;
  std::uint32_t e;
};

/// A byte trie over the patterns of one pass.
class AddedMatcher {
 public:
  /// Adds `pattern` (non-empty bytes) for token `index` into the caller's token table.
  void add(std::string_view pattern, std::uint32_t index);
  /// True when no pattern was added.
  [[nodiscard]] bool empty() const { return nodes_.size() <= 1; }

  /// Splits `text` into segments (appended to `out`, positions relative to `text`).
  void split(std::string_view text, const std::vector<AddedToken>& tokens,
             std::vector<Segment>& out) const;

 private:
  struct Node {
    std::vector<std::pair<unsigned char, std::uint32_t>> next;  // sorted by byte
    std::int64_t token = -1;                                    // index in the token table
  };
  [[nodiscard]] std::int64_t child(std::uint32_t node, unsigned char c) const;
  // Longest pattern starting at `pos`: returns its token index (or -1) and sets `len`.
  std::int64_t longest_at(std::string_view text, std::size_t pos, std::size_t& len) const;

  std::vector<Node> nodes_ = std::vector<Node>(1);
  std::array<bool, 256> first_byte_{};
};

}  // namespace llmbench::tokenizer::detail
