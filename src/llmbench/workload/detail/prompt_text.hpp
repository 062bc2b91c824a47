#pragma once
/// @file
/// Prompt text of a given token count cut from a long-document corpus: exact under a tokenizer
/// (`TokenCorpus` and `exact_text`, the random dataset's method), estimated without one
/// (`Corpus` and `estimate_text_tokens`). Used by trace replay and the prefix-group datasets.

#include "llmbench/core/rng.hpp"
#include "llmbench/workload/dataset.hpp"
#include "llmbench/workload/detail/corpus.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace llmbench::workload::detail {

/// A corpus to cut prompts from. Not thread-safe (one scratch).
class PromptText {
 public:
  /// Loads `corpus_path` (a file or folder of .txt, `load_text`) and, with `options.tokenizer`,
  /// encodes it once, repeated until it holds `longest_tokens` + slack. Throws `Exception`
  /// naming the corpus when it cannot be read or encoded.
  PromptText(const DatasetOptions& options, const std::string& corpus_path,
             std::int64_t longest_tokens);

  /// True with a tokenizer: `cut` and `count` are then exact.
  [[nodiscard]] bool exact() const { return tok_ != nullptr; }
  /// Special tokens a completions server adds around a text prompt (DeepSeek-V3: the BOS), when
  /// `options.count_special_tokens` and a tokenizer are set; else 0.
  [[nodiscard]] std::int64_t special_tokens() const { return specials_; }
  /// Text of `tokens` ≥ 1 tokens without special tokens (exact with a tokenizer, else about that
  /// many by `estimate_text_tokens`), starting at a corpus position drawn from `rng`. Throws
  /// `Exception` naming `what` (e.g. "trace line 12") when no exact cut is found.
  std::string cut(std::int64_t tokens, Rng& rng, std::string_view what);
  /// The start of `text` with `tokens` ≥ 1 tokens (exact with a tokenizer: its first ids decoded,
  /// re-cut until the count is exact; else by the estimate, at a word end). Throws `Exception`
  /// naming `what` when no exact cut is found.
  std::string prefix(const std::string& text, std::int64_t tokens, std::string_view what);
  /// Tokens of `text` as the server counts the prompt (special tokens included when
  /// `special_tokens()` counts them); the estimate without a tokenizer.
  std::int64_t count(std::string_view text);

 private:
  const tokenizer::Tokenizer* tok_ = nullptr;
  bool with_specials_ = false;
  std::int64_t specials_ = 0;
  std::optional<TokenCorpus> tokens_;
  std::optional<Corpus> words_;
  tokenizer::Scratch scratch_;
};

}  // namespace llmbench::workload::detail
