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
#include "llmbench/workload/detail/corpus.hpp"
#include "llmbench/workload/detail/loaders.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace llmbench::workload::detail {
namespace {

using tokenizer::TokenId;

constexpr int kMaxStarts = 32;   // corpus positions tried per prompt before giving up
constexpr int kMaxAdjusts = 12;  // budget adjustments per position

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

}  // namespace

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
