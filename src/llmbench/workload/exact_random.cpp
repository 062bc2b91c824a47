// The random dataset with a tokenizer: prompts whose token count under the target tokenizer is
// exactly the sampled length. The corpus is encoded once (ids); each prompt is a run of corpus
// tokens decoded back to text and re-encoded, its token budget adjusted until the re-encoding has
// exactly the wanted count (a decode/re-encode round trip can merge or split tokens at the cut
// edges), then verified. Lengths are sampled as vLLM's RandomDataset does (`sample_lengths`).
//
// Counting convention (docs/metrics.md, "Prompt lengths"): with `count_special_tokens` (the
// completions endpoints) the length includes the tokenizer's post-processor tokens, so it equals
// the `usage.prompt_tokens` a vLLM/SGLang server reports (DeepSeek-V3: BOS + text); for chat it is
// the message content alone (the server's count adds its chat template).

#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/workload/dataset.hpp"
#include "llmbench/workload/detail/loaders.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace llmbench::workload::detail {
namespace {

using tokenizer::TokenId;

constexpr int kMaxStarts = 32;      // corpus positions tried per prompt before giving up
constexpr int kMaxAdjusts = 12;     // budget adjustments per position
constexpr std::size_t kSlack = 64;  // spare corpus tokens after a cut for budget growth

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
    if (ids_.size() < min_tokens + kSlack) {
      const auto sep = tok.encode("\n\n", plain, scratch);
      const std::vector<TokenId> base = ids_;
      while (ids_.size() < min_tokens + kSlack) {
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
  [[nodiscard]] const std::vector<TokenId>& ids() const { return ids_; }

  /// A start for a cut of up to `len` tokens: a word-initial token when there is one in range.
  std::size_t pick_start(Rng& rng, std::size_t len) const {
    const std::size_t last = ids_.size() - std::min(ids_.size(), len + kSlack);
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
    auto decoded = tok_.decode(std::span<const TokenId>(ids_.data() + start, len));
    return decoded ? std::move(*decoded) : std::string();
  }

 private:
  const tokenizer::Tokenizer& tok_;
  std::vector<TokenId> ids_;
  std::vector<std::size_t> word_starts_;
};

std::int64_t count_or_throw(const tokenizer::Tokenizer& tok, std::string_view text,
                            tokenizer::Scratch& scratch, std::int64_t index,
                            bool add_special_tokens = false) {
  auto n = tok.count(text, add_special_tokens, scratch);
  if (!n) {
    throw Exception(
        Error{fmt::format("random prompt {}: cannot encode: {}", index, n.error().message),
              "--dataset-name random", n.error().offset});
  }
  return static_cast<std::int64_t>(*n);
}

/// Text of exactly `target` tokens (no special tokens) made of `head` followed by a corpus cut
/// starting at a random position; the text must also encode to `head_ids` first (a cut that
/// merges with the end of the shared prefix is rejected, so every prompt shares its tokens).
/// Returns false when no position gave the exact count.
bool exact_text(const TokenCorpus& corpus, const tokenizer::Tokenizer& tok, const std::string& head,
                const std::vector<TokenId>& head_ids, std::int64_t target, Rng& rng,
                tokenizer::Scratch& scratch, std::int64_t index, std::string& out) {
  const auto head_tokens = static_cast<std::int64_t>(head_ids.size());
  if (target == head_tokens) {
    out = head;
    return true;
  }
  const tokenizer::EncodeOptions plain;
  for (int attempt = 0; attempt < kMaxStarts; ++attempt) {
    auto budget = target - head_tokens;
    const std::size_t start = corpus.pick_start(rng, static_cast<std::size_t>(budget));
    std::vector<std::int64_t> tried;
    for (int step = 0; step < kMaxAdjusts; ++step) {
      if (budget < 1 || static_cast<std::size_t>(budget) > corpus.size() - start ||
          std::find(tried.begin(), tried.end(), budget) != tried.end()) {
        break;  // out of range, or oscillating between two budgets: try another position
      }
      tried.push_back(budget);
      out = head;
      out += corpus.text(start, static_cast<std::size_t>(budget));
      std::int64_t got = 0;
      if (head_ids.empty()) {
        got = count_or_throw(tok, out, scratch, index);
      } else {
        auto enc = tok.encode(out, plain, scratch);
        if (!enc) {
          throw Exception(
              Error{fmt::format("random prompt {}: cannot encode: {}", index, enc.error().message),
                    "--dataset-name random", enc.error().offset});
        }
        if (enc->ids.size() < head_ids.size() ||
            !std::equal(head_ids.begin(), head_ids.end(), enc->ids.begin())) {
          break;  // the cut merged with the end of the prefix: try another position
        }
        got = static_cast<std::int64_t>(enc->ids.size());
      }
      if (got == target) {
        return true;
      }
      budget += target - got;
    }
  }
  return false;
}

}  // namespace

std::vector<Sample> make_exact_random_samples(const DatasetOptions& options,
                                              const std::string& corpus_path) {
  const tokenizer::Tokenizer& tok = *options.tokenizer;
  const bool ids_kind = options.random_prompt_kind == RandomPromptKind::TokenIds;
  const auto n = options.num_prompts;
  const auto input_lens = sample_lengths(n, options.random_input_len, options.random_range_ratio, 0,
                                         options.seed, "random-input-len");
  const auto output_lens = sample_lengths(n, options.random_output_len, options.random_range_ratio,
                                          1, options.seed, "random-output-len");
  // Special tokens the server adds around a text prompt (counted, and put into id prompts).
  const auto prefix_special = tok.special_prefix();
  const auto suffix_special = tok.special_suffix();
  const auto specials =
      options.count_special_tokens
          ? static_cast<std::int64_t>(prefix_special.size() + suffix_special.size())
          : std::int64_t{0};
  const std::int64_t lead_special =
      options.count_special_tokens ? static_cast<std::int64_t>(prefix_special.size()) : 0;

  tokenizer::Scratch scratch;
  const std::int64_t longest =
      *std::max_element(input_lens.begin(), input_lens.end()) + options.random_prefix_len;
  const TokenCorpus corpus(tok, load_text(corpus_path, options.max_file_bytes),
                           static_cast<std::size_t>(longest) + 1, corpus_path, scratch);

  // The shared prefix: exactly `random_prefix_len` tokens counting the leading special tokens,
  // cut from the corpus start (the same for every prompt, prefix-cache friendly).
  const std::int64_t prefix_text_tokens = std::max<std::int64_t>(
      0, options.random_prefix_len - (options.random_prefix_len > 0 ? lead_special : 0));
  std::string prefix;
  std::vector<TokenId> prefix_ids;
  if (prefix_text_tokens > 0 && !ids_kind) {
    bool done = false;
    for (std::int64_t budget = prefix_text_tokens, step = 0; step < kMaxAdjusts && !done; ++step) {
      prefix = corpus.text(0, static_cast<std::size_t>(budget));
      const auto got = count_or_throw(tok, prefix, scratch, -1);
      done = got == prefix_text_tokens;
      budget += prefix_text_tokens - got;
    }
    if (done) {
      prefix_ids = *tok.encode(prefix, false);
    } else {
      throw Exception(Error{fmt::format("cannot cut a shared prefix of exactly {} tokens from the "
                                        "corpus",
                                        prefix_text_tokens),
                            "--random-prefix-len", -1});
    }
  }

  Rng starts(options.seed, "random-offset");
  std::vector<Sample> samples;
  samples.reserve(static_cast<std::size_t>(n));
  std::int64_t raised = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto idx = static_cast<std::size_t>(i);
    // Total tokens as the server counts them, and the text tokens that gives.
    std::int64_t total = options.random_prefix_len + input_lens[idx];
    std::int64_t text_tokens = total - specials;
    if (text_tokens < std::max<std::int64_t>(1, prefix_text_tokens)) {
      text_tokens = std::max<std::int64_t>(1, prefix_text_tokens);
      total = text_tokens + specials;
      ++raised;
    }
    Sample sample;
    if (ids_kind) {
      const auto cut = static_cast<std::size_t>(text_tokens - prefix_text_tokens);
      const std::size_t start = corpus.pick_start(starts, cut);
      auto& ids = sample.prompt_token_ids;
      ids.reserve(static_cast<std::size_t>(total));
      if (options.count_special_tokens) {
        ids.assign(prefix_special.begin(), prefix_special.end());
      }
      const auto& all = corpus.ids();
      ids.insert(ids.end(), all.begin(), all.begin() + prefix_text_tokens);
      ids.insert(ids.end(), all.begin() + static_cast<std::ptrdiff_t>(start),
                 all.begin() + static_cast<std::ptrdiff_t>(start + cut));
      if (options.count_special_tokens) {
        ids.insert(ids.end(), suffix_special.begin(), suffix_special.end());
      }
      LLMBENCH_ASSERT(static_cast<std::int64_t>(ids.size()) == total, "id prompt length");
    } else {
      if (!exact_text(corpus, tok, prefix, prefix_ids, text_tokens, starts, scratch, i,
                      sample.prompt)) {
        throw Exception(Error{
            fmt::format("random prompt {}: no cut of the corpus re-encodes to exactly {} tokens "
                        "after {} tries",
                        i, text_tokens, kMaxStarts),
            corpus_path, -1});
      }
      // Verification, as the server will count it.
      const auto verified =
          count_or_throw(tok, sample.prompt, scratch, i, options.count_special_tokens);
      if (verified != total) {
        throw Exception(Error{
            fmt::format("random prompt {}: re-encodes to {} tokens, not {}", i, verified, total),
            corpus_path, -1});
      }
    }
    sample.prompt_len = total;
    sample.prompt_len_exact = true;
    sample.output_len = output_lens[idx];
    sample.source_id = fmt::format("random:{}", i);
    samples.push_back(std::move(sample));
  }
  if (raised > 0) {
    log::warn(
        "random: {} prompt(s) sampled shorter than the special tokens plus one text token "
        "were raised to that",
        raised);
  }
  return samples;
}

}  // namespace llmbench::workload::detail
