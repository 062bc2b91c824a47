#pragma once
/// @file
/// Pre-tokenizers (internal): HF `Split` (regex via Oniguruma, or a literal string), `Digits`,
/// `Whitespace` (`\w+|[^\w\s]+` kept, the rest removed), `WhitespaceSplit` (split on White_Space,
/// removed), `Punctuation` (each punctuation character is a match, with a split behaviour),
/// `Metaspace` (spaces become the replacement character, which is prepended per the
/// `prepend_scheme`; `split` then splits before each replacement) and `ByteLevel` (optional
/// prefix space, optional GPT-2 regex split), applied in sequence. Every step sees each current
/// piece as its own subject string (HF `PreTokenizedString::split`).

#include "llmbench/core/error.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench::tokenizer::detail {

/// A [b, e) byte range.
struct Span {
  std::uint32_t b;
  std::uint32_t e;
};

/// HF `SplitDelimiterBehavior`.
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

/// A compiled Oniguruma regex (UTF-8, ONIG_SYNTAX_ONIGURUMA, as the `onig` crate used by HF).
class Regex {
 public:
  /// Compiles `pattern`; the error names `source` and quotes Oniguruma's message.
  static Result<std::unique_ptr<Regex>> compile(std::string_view pattern, std::string_view source);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  /// Appends every match in `subject` (onig crate `find_iter` semantics: left to right,
  /// non-overlapping; an empty match right after the previous match is skipped).
  /// `region` is an `OnigRegion*` owned by the caller's scratch.
  void find_all(std::string_view subject, void* region, std::vector<Span>& out) const;

 private:
  explicit Regex(void* reg) : reg_(reg) {}
  void* reg_;
};

/// One pre-tokenization step.
struct PreStep {
  /// kClassRun: a regex of the form `[literal ranges]+` or `\p{N}{1,3}`, matched natively
  /// (maximal runs of class members, at most `max_run` characters; same matches as Oniguruma,
  /// whose own Unicode tables decide `\p{N}`).
  /// kWhitespace / kWhitespaceSplit / kPunctuation: native matchers of those HF pre-tokenizers.
  /// kMetaspace and kPrefixSpace (ByteLevel `add_prefix_space`) rewrite each piece's text.
  enum class Kind {
    kSplitRegex,
    kSplitLiteral,
    kDigits,
    kClassRun,
    kDeepSeekV3Main,
    kQwenMain,
    kWhitespace,
    kWhitespaceSplit,
    kPunctuation,
    kMetaspace,
    kPrefixSpace
  };
  /// Metaspace `prepend_scheme`.
  enum class Prepend { kAlways, kFirst, kNever };
  Kind kind = Kind::kSplitRegex;
  std::unique_ptr<Regex> regex;  ///< kSplitRegex (also kept, unused, for kClassRun)
  std::vector<std::pair<char32_t, char32_t>> ranges;  ///< kClassRun: inclusive ranges
  int ctype = -1;                                     ///< kClassRun: Oniguruma ctype, or -1
  std::size_t max_run = 0;                            ///< kClassRun: 0 = unbounded
  std::string literal;  ///< kSplitLiteral; kMetaspace: the replacement character (UTF-8)
  Prepend prepend = Prepend::kAlways;  ///< kMetaspace
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
};

/// Turns `step` (a compiled kSplitRegex of `pattern`) into a kClassRun when the pattern is one
/// of the simple forms it covers; otherwise leaves it unchanged.
void use_fast_path(std::string_view pattern, PreStep& step);

/// Buffers reused across calls.
struct PreScratch {
  void* region = nullptr;  ///< OnigRegion*, created lazily, freed by the owner
  std::vector<Span> next;
  std::vector<Span> found;
  std::vector<Span> parts;
  std::vector<char> is_match;
  std::string buf_a;  ///< rewritten text (transforming steps), alternating with buf_b
  std::string buf_b;
  PreScratch() = default;
  PreScratch(const PreScratch&) = delete;
  PreScratch& operator=(const PreScratch&) = delete;
  ~PreScratch();
};

/// True for steps that rewrite the text (Metaspace, ByteLevel's prefix space).
inline bool rewrites_text(PreStep::Kind kind) {
  return kind == PreStep::Kind::kMetaspace || kind == PreStep::Kind::kPrefixSpace;
}

/// Splits `text` into pieces by applying `steps` in order; empty pieces are dropped. `pieces` is
/// overwritten and indexes the returned text: `text` itself, or a rewritten copy in `scratch`
/// when a step rewrites text. `at_start`: `text` begins the input (Metaspace "first").
std::string_view pre_tokenize(const std::vector<PreStep>& steps, std::string_view text,
                              bool at_start, PreScratch& scratch, std::vector<Span>& pieces);

}  // namespace llmbench::tokenizer::detail
