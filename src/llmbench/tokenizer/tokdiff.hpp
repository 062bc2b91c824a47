#pragma once
/// @file
/// `tokdiff`: compares two tokenizers (or two versions of one) over a corpus of named texts.
///
/// For every text both tokenizers encode the same UTF-8 bytes; the result holds
/// - token counts and the inflation ratio B/A (tokens of B per token of A) per text, per language
///   label, per Unicode script and overall (pooled: Σ tokens B / Σ tokens A);
/// - token-boundary drift: the boundary set of an encoding is the set of byte offsets where a
///   token ends (`Encoding::offsets`, post-processor tokens left out); drift is the Jaccard
///   distance 1 − |A∩B| / |A∪B| of the two sets (0 when both are empty), per text and pooled
///   overall (Σ|A∩B| / Σ|A∪B| over texts);
/// - the same Jaccard distance over the per-text sets of token strings, each token taken as the
///   raw bytes it stands for (byte-level alphabet mapped back, added tokens verbatim), and over the
///   corpus-wide sets of token strings used;
/// - added/special tokens that differ (present in one only, different id, different `special`
///   flag) with how each tokenizer encodes the token's content;
/// - the texts whose count ratio moves most (largest |ln(B/A)|);
/// - round-trip failures: decode(encode(text)) != text, for either tokenizer.
/// Jaccard index: P. Jaccard, "The distribution of the flora in the alpine zone", New
/// Phytologist 11 (1912); the distance form 1 − J is a metric on finite sets.

#include "llmbench/core/error.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::tokenizer {

// ---------------------------------------------------------------------------------------------
// Inputs: added tokens, corpora (tokdiff_io.cpp)
// ---------------------------------------------------------------------------------------------

// Tokenizer arguments (paths or names) are resolved by resolve.hpp (`resolve_tokenizer`).

/// One entry of tokenizer.json's `added_tokens` array (HF tokenizers `AddedToken` serde form:
/// fields "id", "content", "special").
struct AddedToken {
  TokenId id = 0;        ///< token id
  std::string content;   ///< the literal text of the token, e.g. "<think>"
  bool special = false;  ///< `special`: dropped by decode with skip_special_tokens
};

/// Parses the `added_tokens` array of a tokenizer.json text (missing array: empty list). Errors
/// name `source` and the field, e.g. "added_tokens[3].id".
Result<std::vector<AddedToken>> parse_added_tokens(std::string_view tokenizer_json,
                                                   std::string_view source);

/// Reads the added tokens of a tokenizer JSON file (see `parse_added_tokens`).
Result<std::vector<AddedToken>> read_added_tokens(const std::filesystem::path& tokenizer_json);

/// One named text of a corpus.
struct CorpusText {
  std::string name;   ///< where it came from, "file:line" (line of its first line, 1-based)
  std::string label;  ///< language label (FLORES file stem such as "eng_Latn", or a JSONL
                      ///< "lang"/"language" field); empty when unknown
  std::string text;   ///< the text, valid UTF-8, never empty
};

/// How a plain-text corpus file is cut into texts.
enum class SplitMode {
  kAuto,  ///< kLine for FLORES-style files (stem "xxx_Xxxx", or .dev/.devtest), else kParagraph
  kLine,  ///< every non-blank line is a text
  kParagraph,  ///< texts are separated by blank (whitespace-only) lines; inner newlines kept
  kFile,       ///< the whole file is one text
};

/// Corpus reading options.
struct CorpusOptions {
  SplitMode split = SplitMode::kAuto;  ///< plain-text rule (JSONL is always one object a line)
  /// Texts longer than this many bytes are cut at the last UTF-8 character boundary at or below
  /// it (0: no cap).
  std::size_t max_text_bytes = 65536;
  std::size_t max_texts_per_file = 0;  ///< keep the first N texts of each file (0: all)
};

/// Parses `SplitMode` from "auto", "line", "paragraph" or "file".
Result<SplitMode> parse_split_mode(std::string_view name);

/// The language label a corpus file name carries: the part before the first '.' when it has the
/// FLORES-200 form `xxx_Xxxx` (ISO 639-3 code, '_', ISO 15924 script), e.g. "eng_Latn" for
/// "eng_Latn.devtest"; else empty.
std::string language_label_from_filename(std::string_view file_name);

/// Cuts the contents of one corpus file into texts. `file_name` picks the format (".jsonl": one
/// JSON object per non-blank line with a string field "text" and optional string "name"/"id" and
/// "lang"/"language") and the label; errors give the file, line and byte offset of bad UTF-8 or
/// JSON.
Result<std::vector<CorpusText>> parse_corpus(std::string_view contents, std::string_view file_name,
                                             const CorpusOptions& options);

/// Reads a corpus file, or every regular file of a folder (sorted by name; hidden files and
/// .md/.zip/.zst/.gz/.gguf skipped). A `path` that does not exist is also looked up relative to
/// $LLMBENCH_DATA and $LLMBENCH_DATA_DIR (e.g. "multilingual/flores200_devtest").
Result<std::vector<CorpusText>> load_corpus(const std::filesystem::path& path,
                                            const CorpusOptions& options);

/// The Unicode script (UAX #24 Script property value, e.g. "Latin", "Cyrillic", "Han",
/// "Devanagari") of the majority of the letters (general category L) of `text`; ties go to the
/// script seen first; "Other" when the letters' script is not one of the ~30 common scripts
/// checked; empty when `text` has no letters. Script data: Oniguruma's Unicode tables.
std::string dominant_script(std::string_view text);

// ---------------------------------------------------------------------------------------------
// Comparison (tokdiff.cpp)
// ---------------------------------------------------------------------------------------------

/// One side of the comparison.
struct TokdiffSide {
  std::string name;                      ///< display name, e.g. "deepseek-v3"
  std::string path;                      ///< file it was loaded from (informational; may be empty)
  const Tokenizer* tokenizer = nullptr;  ///< must be non-null
  std::vector<AddedToken> added_tokens;  ///< its `added_tokens` (for the added-token diff)
};

/// Comparison options.
struct TokdiffOptions {
  bool add_special_tokens = false;  ///< count post-processor tokens (BOS) too
  std::size_t top_n = 10;           ///< how many top movers to list
  std::size_t max_failures = 20;    ///< round-trip failures listed in full (all are counted)
};

/// Intersection and union sizes of two finite sets; `distance()` = 1 − |A∩B| / |A∪B| (0 when
/// the union is empty).
struct SetOverlap {
  std::uint64_t intersection = 0;  ///< |A∩B|
  std::uint64_t union_size = 0;    ///< |A∪B|
  /// Jaccard distance.
  [[nodiscard]] double distance() const;
};

/// Per-text result.
struct TextResult {
  std::string name;            ///< `CorpusText::name`
  std::string label;           ///< `CorpusText::label`
  std::string script;          ///< `dominant_script` of the text
  std::string preview;         ///< the text's first ≤ 60 bytes, cut at a character boundary
  std::size_t bytes = 0;       ///< UTF-8 bytes
  std::size_t chars = 0;       ///< Unicode code points
  std::size_t tokens_a = 0;    ///< tokens of A
  std::size_t tokens_b = 0;    ///< tokens of B
  SetOverlap boundaries;       ///< token-end offsets of A vs B
  SetOverlap token_strings;    ///< distinct token strings (bytes) of A vs B
  bool roundtrip_ok_a = true;  ///< decode(encode(text)) == text with A
  bool roundtrip_ok_b = true;  ///< the same with B
  /// Inflation tokens_b / tokens_a (0 when tokens_a is 0).
  [[nodiscard]] double inflation() const;
};

/// Totals over a group of texts (all, one language label, one script).
struct GroupSummary {
  std::string key;             ///< label or script ("" for the overall group)
  std::size_t texts = 0;       ///< texts in the group
  std::uint64_t bytes = 0;     ///< Σ bytes
  std::uint64_t chars = 0;     ///< Σ code points
  std::uint64_t tokens_a = 0;  ///< Σ tokens of A
  std::uint64_t tokens_b = 0;  ///< Σ tokens of B
  SetOverlap boundaries;       ///< pooled: Σ|A∩B| and Σ|A∪B| of the per-text boundary sets
  SetOverlap token_strings;    ///< pooled per-text token-string sets
  std::size_t roundtrip_failures_a = 0;  ///< texts failing the round trip with A
  std::size_t roundtrip_failures_b = 0;  ///< with B
  /// Pooled inflation Σ tokens_b / Σ tokens_a (0 when Σ tokens_a is 0).
  [[nodiscard]] double inflation() const;
};

/// An added token whose presence, id or `special` flag differs between A and B, with how each
/// tokenizer encodes its content (`add_special_tokens` off).
struct AddedTokenDiff {
  std::string content;          ///< the token's text
  std::string change;           ///< "only_in_a", "only_in_b", "id_changed" or "special_changed"
  std::optional<TokenId> id_a;  ///< its id among A's added tokens, if there
  std::optional<TokenId> id_b;  ///< its id among B's added tokens, if there
  bool special_a = false;       ///< `special` in A (false when absent)
  bool special_b = false;       ///< `special` in B
  /// For "only_in_b": the content of A's added token with id `id_b`; for "only_in_a": B's with
  /// id `id_a` (an id re-assigned, e.g. a placeholder replaced by `<think>`); else empty.
  std::string other_at_id;
  std::vector<TokenId> ids_in_a;         ///< A's encoding of `content`
  std::vector<std::string> tokens_in_a;  ///< A's token strings of that encoding
  std::vector<TokenId> ids_in_b;         ///< B's encoding of `content`
  std::vector<std::string> tokens_in_b;  ///< B's token strings
};

/// A text whose decode(encode(text)) differs from the text.
struct RoundTripFailure {
  std::size_t text_index = 0;  ///< index into `TokdiffResult::texts`
  char side = 'a';             ///< 'a' or 'b'
  std::size_t offset = 0;      ///< first differing byte offset
  std::string expected;  ///< up to 40 bytes of the text from `offset` (cut at a char boundary)
  std::string got;       ///< up to 40 bytes of the decoded text from `offset`
};

/// The full comparison.
struct TokdiffResult {
  std::string name_a, name_b;            ///< `TokdiffSide::name`
  std::string path_a, path_b;            ///< `TokdiffSide::path`
  std::size_t vocab_a = 0, vocab_b = 0;  ///< `Tokenizer::vocab_size()`
  std::size_t added_a = 0, added_b = 0;  ///< number of added tokens
  TokdiffOptions options;                ///< options used
  std::vector<TextResult> texts;         ///< per text, corpus order
  GroupSummary overall;                  ///< all texts
  std::vector<GroupSummary> by_label;    ///< per language label (texts with a label), by key
  std::vector<GroupSummary> by_script;   ///< per dominant script, by key
  std::uint64_t vocab_used_a = 0;        ///< distinct token strings A used over the corpus
  std::uint64_t vocab_used_b = 0;        ///< distinct token strings B used over the corpus
  SetOverlap vocab_used;                 ///< corpus-wide token-string sets of A vs B
  std::vector<AddedTokenDiff> added_token_diffs;  ///< by content
  std::vector<std::size_t> top_movers;            ///< indices into `texts`, largest |ln(B/A)| first
  std::vector<RoundTripFailure> roundtrip_failures;  ///< first `max_failures`, corpus order
};

/// Compares `a` and `b` over `corpus`. Fails when a text does not encode or decode (the error's
/// source names the text).
Result<TokdiffResult> tokdiff(const TokdiffSide& a, const TokdiffSide& b,
                              std::span<const CorpusText> corpus, const TokdiffOptions& options);

/// Compares only the added tokens of `a` and `b` (the `added_token_diffs` part of `tokdiff`).
Result<std::vector<AddedTokenDiff>> diff_added_tokens(const TokdiffSide& a, const TokdiffSide& b);

/// The whole result as JSON (keys as the struct fields; ratios as numbers; SetOverlap as
/// {"intersection","union","jaccard_distance"}).
nlohmann::json to_json(const TokdiffResult& result);

/// Human-readable report with aligned tables: header, overall, per language, per script, added
/// tokens that differ, top movers, round-trip failures (tokdiff_report.cpp).
std::string format_report(const TokdiffResult& result);

}  // namespace llmbench::tokenizer
