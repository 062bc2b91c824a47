#pragma once
/// @file
/// Private text sources of the workload module: `Corpus` (a long text as words, cut by the
/// estimated token count) and `TokenCorpus` (the same text encoded once with a tokenizer, cut by
/// tokens). Shared by the synthetic datasets (random, sonnet), trace replay and the prefix-group
/// datasets; not part of the public API.

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench::workload::detail {

inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/// Words (maximal runs of non-whitespace) in `text`: the `Corpus` word count without storing
/// the words. A word starts at each non-space byte that follows a space byte or the start; the
/// comparisons of neighbouring bytes are independent, so the loop vectorizes.
inline std::size_t count_words(std::string_view text) {
  if (text.empty())
    return 0;
  std::size_t words = is_space(text[0]) ? 0 : 1;
  for (std::size_t i = 1; i < text.size(); ++i)
    words += static_cast<std::size_t>(is_space(text[i - 1])) &
             static_cast<std::size_t>(!is_space(text[i]));
  return words;
}

/// Throws the error for a corpus of `words` = 0 words; `path` names it.
inline void require_words(std::size_t words, const std::string& path) {
  if (words == 0)
    throw Exception(Error{"corpus has no words", path, -1});
}

/// A long text split into words (maximal runs of non-whitespace), keeping the original spacing
/// between them so cut-outs read like the source.
class Corpus {
 public:
  Corpus(std::string text, const std::string& path) : text_(std::move(text)) {
    std::size_t i = 0;
    while (i < text_.size()) {
      while (i < text_.size() && is_space(text_[i])) {
        ++i;
      }
      const std::size_t start = i;
      while (i < text_.size() && !is_space(text_[i])) {
        ++i;
      }
      if (i > start) {
        words_.push_back({start, i});
      }
    }
    require_words(words_.size(), path);
  }

  [[nodiscard]] std::size_t word_count() const { return words_.size(); }

  /// Appends words to `out` starting at word `first` (wrapping to the corpus start, after a blank
  /// line, at the end) until `counter` reaches `target` estimated tokens. `counter` must already
  /// hold the estimate of `out`.
  void take(std::size_t first, std::int64_t target, TextTokenEstimate& counter,
            std::string& out) const {
    std::size_t w = first;
    bool start = true;
    while (counter.value() < target) {
      std::string_view sep;
      if (!start) {
        sep = w == 0 ? std::string_view("\n\n")
                     : std::string_view(text_).substr(words_[w - 1].end,
                                                      words_[w].begin - words_[w - 1].end);
      }
      const std::string_view word =
          std::string_view(text_).substr(words_[w].begin, words_[w].end - words_[w].begin);
      counter.add(sep);
      counter.add(word);
      out += sep;
      out += word;
      start = false;
      w = (w + 1) % words_.size();
    }
  }

 private:
  struct Span {
    std::size_t begin;
    std::size_t end;
  };
  std::string text_;
  std::vector<Span> words_;
};

constexpr std::size_t kCorpusSlack = 64;  ///< spare corpus tokens after a cut for budget growth

/// A corpus encoded once, long enough for the longest prompt (repeated when it is not).
class TokenCorpus {
 public:
  TokenCorpus(const tokenizer::Tokenizer& tok, const std::string& text, std::size_t min_tokens,
              const std::string& path, tokenizer::Scratch& scratch)
      : tok_(tok) {
    tokenizer::EncodeOptions plain;
    auto one = tok.encode(text, plain, scratch);
    if (!one) {
      throw Exception(
          Error{"cannot encode the corpus: " + one.error().message, path, one.error().offset});
    }
    if (one->ids.empty()) {
      throw Exception(Error{"corpus has no tokens", path, -1});
    }
    ids_ = std::move(one->ids);
    // Repeat the corpus (blank line between copies) until it holds the longest cut.
    if (ids_.size() < min_tokens + kCorpusSlack) {
      const auto sep = tok.encode("\n\n", plain, scratch);
      const std::vector<tokenizer::TokenId> base = ids_;
      while (ids_.size() < min_tokens + kCorpusSlack) {
        if (sep) {
          ids_.insert(ids_.end(), sep->ids.begin(), sep->ids.end());
        }
        ids_.insert(ids_.end(), base.begin(), base.end());
      }
    }
    // Word-initial tokens (byte-level "Ġ" = space or "Ċ" = newline first): cuts start there so
    // the cut's first token is not glued to whatever precedes it (a shared prefix).
    for (std::size_t i = 0; i < ids_.size(); ++i) {
      const std::string_view t = tok.id_to_token(ids_[i]);
      if (t.starts_with("\xC4\xA0") || t.starts_with("\xC4\x8A")) {
        word_starts_.push_back(i);
      }
    }
  }

  [[nodiscard]] std::size_t size() const { return ids_.size(); }
  [[nodiscard]] const std::vector<tokenizer::TokenId>& ids() const { return ids_; }

  /// A start for a cut of up to `len` tokens: a word-initial token when there is one in range.
  std::size_t pick_start(Rng& rng, std::size_t len) const {
    const std::size_t last = ids_.size() - std::min(ids_.size(), len + kCorpusSlack);
    const auto at = static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(last)));
    const auto it = std::lower_bound(word_starts_.begin(), word_starts_.end(), at);
    if (it != word_starts_.end() && *it <= last) {
      return *it;
    }
    return at;
  }

  /// Text of tokens [start, start + len) (lossy UTF-8 at a split character).
  std::string text(std::size_t start, std::size_t len) const {
    len = std::min(len, ids_.size() - start);
    auto decoded = tok_.decode(std::span<const tokenizer::TokenId>(ids_.data() + start, len));
    return decoded ? std::move(*decoded) : std::string();
  }

 private:
  const tokenizer::Tokenizer& tok_;
  std::vector<tokenizer::TokenId> ids_;
  std::vector<std::size_t> word_starts_;
};

/// Text of exactly `target` tokens (no special tokens) made of `head` followed by a corpus cut
/// starting at a random position drawn from `rng`; the text must also encode to `head_ids` first
/// (a cut that merges with the end of the shared prefix is rejected). Returns false when no
/// position gave the exact count after a few tries; throws `Exception` naming prompt `index` when
/// the text cannot be encoded.
bool exact_text(const TokenCorpus& corpus, const tokenizer::Tokenizer& tok, const std::string& head,
                const std::vector<tokenizer::TokenId>& head_ids, std::int64_t target, Rng& rng,
                tokenizer::Scratch& scratch, std::int64_t index, std::string& out);

}  // namespace llmbench::workload::detail
