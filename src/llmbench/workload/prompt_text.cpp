#include "llmbench/workload/detail/prompt_text.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/workload/detail/loaders.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <utility>

namespace llmbench::workload::detail {

PromptText::PromptText(const DatasetOptions& options, const std::string& corpus_path,
                       std::int64_t longest_tokens)
    : tok_(options.tokenizer), with_specials_(options.count_special_tokens) {
  std::string text = load_text(corpus_path, options.max_file_bytes);
  if (tok_ == nullptr) {
    words_.emplace(std::move(text), corpus_path);
    return;
  }
  if (with_specials_) {
    specials_ =
        static_cast<std::int64_t>(tok_->special_prefix().size() + tok_->special_suffix().size());
  }
  tokens_.emplace(*tok_, text, static_cast<std::size_t>(std::max<std::int64_t>(longest_tokens, 1)),
                  corpus_path, scratch_);
}

std::string PromptText::cut(std::int64_t tokens, Rng& rng, std::string_view what) {
  std::string out;
  if (tokens <= 0) {
    return out;
  }
  if (words_) {
    const auto first = static_cast<std::size_t>(
        rng.uniform_int(0, static_cast<std::int64_t>(words_->word_count()) - 1));
    TextTokenEstimate counter;
    words_->take(first, tokens, counter, out);
    return out;
  }
  if (!exact_text(*tokens_, *tok_, "", {}, tokens, rng, scratch_, -1, out)) {
    throw Exception(
        Error{fmt::format("{}: no cut of the corpus re-encodes to exactly {} tokens", what, tokens),
              "--corpus", -1});
  }
  return out;
}

std::string PromptText::prefix(const std::string& text, std::int64_t tokens,
                               std::string_view what) {
  if (tok_ == nullptr) {
    TextTokenEstimate counter;
    std::size_t end = 0;
    while (end < text.size() && counter.value() < tokens) {
      const std::size_t next = std::min(text.find(' ', end + 1), text.size());
      counter.add(std::string_view(text).substr(end, next - end));
      end = next;
    }
    return text.substr(0, end);
  }
  auto ids = tok_->encode(text, false);
  if (!ids) {
    throw Exception(Error{"cannot encode: " + ids.error().message, std::string(what), -1});
  }
  std::int64_t budget = std::min<std::int64_t>(tokens, static_cast<std::int64_t>(ids->size()));
  for (int step = 0; step < 12 && budget >= 1; ++step) {
    auto cut = tok_->decode(
        std::span<const tokenizer::TokenId>(ids->data(), static_cast<std::size_t>(budget)));
    if (!cut) {
      break;
    }
    auto n = tok_->count(*cut, false, scratch_);
    if (!n) {
      break;
    }
    const auto got = static_cast<std::int64_t>(*n);
    if (got == tokens) {
      return std::move(*cut);
    }
    budget += tokens - got;
    if (budget > static_cast<std::int64_t>(ids->size())) {
      break;
    }
  }
  throw Exception(
      Error{fmt::format("{}: no start of the block re-encodes to exactly {} tokens", what, tokens),
            "--corpus", -1});
}

std::int64_t PromptText::count(std::string_view text) {
  if (tok_ == nullptr) {
    return estimate_text_tokens(text);
  }
  auto n = tok_->count(text, with_specials_, scratch_);
  if (!n) {
    throw Exception(Error{"cannot encode prompt: " + n.error().message, "--corpus", -1});
  }
  return static_cast<std::int64_t>(*n);
}

}  // namespace llmbench::workload::detail
