#pragma once
/// @file
/// Decoders (internal), as the HF tokenizers `decoders` module: each step maps the list of token
/// strings to a new list (`decode_chain`), and the final list is concatenated.
/// - `ByteLevel`: every token's characters mapped back through the GPT-2 byte alphabet (a token
///   with a character outside it keeps its UTF-8 bytes), all bytes joined, lossy UTF-8 decode;
/// - `ByteFallback`: each maximal run of `<0xNN>` tokens becomes the UTF-8 text of its bytes, or
///   one U+FFFD per byte when those bytes are not valid UTF-8;
/// - `Metaspace`: the replacement character becomes a space, except that the first token loses
///   a leading replacement unless `prepend_scheme` is "never";
/// - `Fuse`: all tokens joined into one; `Strip`: up to `start` leading and `stop` trailing
///   `content` characters removed from each token; `Replace`: a literal or regex replaced in each
///   token. `Sequence` is flattened at load time.

#include "llmbench/tokenizer/pretokenize.hpp"

#include <memory>
#include <string>
#include <vector>

namespace llmbench::tokenizer::detail {

/// One decoding step.
struct DecodeStep {
  enum class Kind { kByteLevel, kByteFallback, kMetaspace, kFuse, kStrip, kReplace, kReplaceRegex };
  Kind kind = Kind::kByteLevel;
  std::string pattern;  ///< kMetaspace: replacement; kStrip: content char; kReplace: the literal
  std::string content;  ///< kReplace*: replacement text
  std::unique_ptr<Regex> regex;  ///< kReplaceRegex
  bool strip_first = true;       ///< kMetaspace: prepend_scheme is not "never"
  std::size_t start = 0;         ///< kStrip
  std::size_t stop = 0;          ///< kStrip
};

/// Runs `steps` over `tokens` (modified in place) and returns the concatenation. With no steps
/// the tokens are joined with single spaces (HF's behaviour without a decoder).
std::string decode_chain(const std::vector<DecodeStep>& steps, std::vector<std::string>& tokens,
                         PreScratch& scratch);

}  // namespace llmbench::tokenizer::detail
