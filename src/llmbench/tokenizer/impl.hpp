#pragma once
/// @file
/// The loaded tokenizer's state (internal; shared by load.cpp and tokenizer.cpp).

#include "llmbench/tokenizer/added_tokens.hpp"
#include "llmbench/tokenizer/bpe.hpp"
#include "llmbench/tokenizer/decoder.hpp"
#include "llmbench/tokenizer/normalize.hpp"
#include "llmbench/tokenizer/pretokenize.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"
#include "llmbench/tokenizer/unicode.hpp"

#include <string>
#include <unordered_map>
#include <vector>

namespace llmbench::tokenizer {

namespace detail {
/// How far past the number of entries a token id may lie (ids may leave gaps: added tokens
/// often continue after the vocabulary). Tables are sized by the largest id, so without a bound
/// one id near 2^28 in a small file would allocate gigabytes.
inline constexpr std::size_t kMaxTokenIdGap = std::size_t{1} << 20;
}  // namespace detail

/// Everything `Tokenizer` needs, immutable after `from_json`.
struct Tokenizer::Impl {
  std::vector<detail::NormStep> normalizers;  ///< applied in order
  std::vector<detail::PreStep> pre_steps;
  detail::Bpe bpe;
  std::vector<detail::AddedToken> added;     ///< as declared
  detail::AddedMatcher raw_matcher;          ///< added tokens with normalized:false
  detail::AddedMatcher norm_matcher;         ///< added tokens with normalized:true
  std::vector<std::string> id_to_token;      ///< token string per id (empty when unused)
  std::vector<std::string> id_to_bytes;      ///< ByteLevel-decoded bytes per id
  std::vector<char> is_special;              ///< per id: an added token with special:true
  detail::BytesMap token_to_id;              ///< token string -> id (vocab and added tokens)
  std::vector<TokenId> prefix;               ///< post-processor ids before the text
  std::vector<TokenId> suffix;               ///< post-processor ids after the text
  std::vector<detail::DecodeStep> decoders;  ///< decoder chain (flattened Sequence)
  /// The decoder is exactly ByteLevel (or the tokenizer is a tiktoken file): decode joins
  /// `id_to_bytes` and runs a lossy UTF-8 decode.
  bool bytes_decoder = false;
};

/// Per-call working memory.
struct Scratch::State {
  const void* owner = nullptr;  ///< tokenizer the cache belongs to
  detail::PreScratch pre;
  detail::BpeScratch bpe;
  std::vector<detail::Segment> raw_segments;
  std::vector<detail::Segment> norm_segments;
  std::vector<detail::Span> pieces;
  std::vector<std::uint32_t> lens;
  std::vector<TokenId> piece_ids;
  std::string normalized;
  detail::WordCache cache;  ///< piece bytes -> ids
};

}  // namespace llmbench::tokenizer
