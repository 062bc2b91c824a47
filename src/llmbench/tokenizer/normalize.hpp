#pragma once
/// @file
/// Normalizers (internal), as the HF tokenizers `normalizers` module: `NFC`/`NFD`/`NFKC`/`NFKD`
/// (utf8proc), `Lowercase` (Rust `char::to_lowercase` per character), `Replace` (every
/// non-overlapping occurrence of a literal string or an Oniguruma regex becomes `content`),
/// `Prepend` (prefix added to a non-empty string) and `Strip` (Unicode White_Space removed on the
/// left and/or right). `Sequence` is flattened at load time.

#include "llmbench/tokenizer/pretokenize.hpp"
#include "llmbench/tokenizer/unicode.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::tokenizer::detail {

/// One normalization step.
struct NormStep {
  enum class Kind { kForm, kLowercase, kReplaceString, kReplaceRegex, kPrepend, kStrip };
  Kind kind = Kind::kForm;
  NormForm form = NormForm::kNfc;  ///< kForm
  std::string pattern;             ///< kReplaceString: the literal
  std::unique_ptr<Regex> regex;    ///< kReplaceRegex
  std::string content;             ///< kReplace*: replacement; kPrepend: the prefix
  bool left = false;               ///< kStrip: strip the left side
  bool right = false;              ///< kStrip: strip the right side
};

/// Applies `steps` in order to valid UTF-8 `text`; the result goes to `out` (may not alias
/// `text`). `scratch` lends the regex match region.
void apply_normalizers(const std::vector<NormStep>& steps, std::string_view text, std::string& out,
                       PreScratch& scratch);

}  // namespace llmbench::tokenizer::detail
