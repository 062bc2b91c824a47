// Shared-prefix datasets (docs/workloads.md, "Shared-prefix groups"):
//  - `generated-shared-prefix`, after SGLang `bench_serving.py` (flags `--gsp-num-groups`,
//    `--gsp-prompts-per-group`, `--gsp-system-prompt-len`, `--gsp-question-len`,
//    `--gsp-output-len`, `--gsp-range-ratio`): G system prompts, each followed by P questions.
//    Popularity (`--gsp-popularity zipf`, `--gsp-zipf-s`) is llmbench's addition.
//  - `prefix_repetition`, after vLLM `PrefixRepetitionRandomDataset` (`--prefix-repetition-*`).
// Text is cut from the corpus (`PromptText`); under a tokenizer every prompt counts exactly its
// prefix + its own part (+ the special tokens a completions server adds), and prompts of one group
// share exactly the prefix's tokens: the own part starts at a word-initial token, so its encoding
// continues the prefix's, and the whole prompt is verified.

#include "llmbench/workload/prefix_groups.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/workload/detail/loaders.hpp"
#include "llmbench/workload/detail/prompt_text.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace llmbench::workload {

GroupPopularity parse_group_popularity(std::string_view name) {
  if (const auto popularity = kGroupPopularities.find(name))
    return *popularity;
  throw Exception(
      Error{fmt::format("unknown popularity \"{}\"; valid: {}", name, kGroupPopularities.names()),
            "--gsp-popularity", -1});
}

namespace detail {
namespace {

constexpr int kMaxSeamRetries = 8;  // own-part cuts tried before a prompt is given up

void require_positive(std::int64_t v, const char* flag) {
  if (v <= 0) {
    throw Exception(Error{fmt::format("must be a positive integer, got {}", v), flag, -1});
  }
}

/// `prefix` followed by a cut of `own` tokens, counting exactly `specials + prefix_tokens + own`
/// under a tokenizer (the cut is drawn again when the seam merges tokens).
std::string joined(PromptText& text, const std::string& prefix, std::int64_t prefix_tokens,
                   std::int64_t own, Rng& rng, const std::string& what) {
  const std::int64_t want = text.special_tokens() + prefix_tokens + own;
  for (int attempt = 0; attempt < kMaxSeamRetries; ++attempt) {
    std::string prompt = prefix + text.cut(own, rng, what);
    if (!text.exact() || text.count(prompt) == want) {
      return prompt;
    }
  }
  throw Exception(Error{fmt::format("{}: no cut joins the prefix at exactly {} tokens", what, want),
                        "--corpus", -1});
}

/// Length uniform in [floor(len·ratio), len], at least 1 (SGLang's `--*-range-ratio` rule).
std::int64_t ranged(std::int64_t len, double ratio, Rng& rng) {
  const auto lo = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::floor(static_cast<double>(len) * ratio)));
  return ratio >= 1.0 ? len : rng.uniform_int(std::min(lo, len), len);
}

/// Group index 0 … n−1 drawn with weight 1/(k+1)^s (Zipf over ranks), by inversion of the
/// cumulative weights.
class ZipfGroups {
 public:
  ZipfGroups(std::int64_t n, double s) {
    double sum = 0;
    for (std::int64_t k = 1; k <= n; ++k) {
      sum += 1.0 / std::pow(static_cast<double>(k), s);
      cumulative_.push_back(sum);
    }
  }
  std::int64_t draw(Rng& rng) const {
    const double u = rng.uniform01() * cumulative_.back();
    const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
    return std::min<std::int64_t>(it - cumulative_.begin(),
                                  static_cast<std::int64_t>(cumulative_.size()) - 1);
  }

 private:
  std::vector<double> cumulative_;
};

}  // namespace

std::vector<Sample> make_shared_prefix_samples(const DatasetOptions& options,
                                               const std::string& corpus_path) {
  const SharedPrefixOptions& o = options.shared_prefix;
  require_positive(o.num_groups, "--gsp-num-groups");
  require_positive(o.prompts_per_group, "--gsp-prompts-per-group");
  require_positive(o.system_prompt_len, "--gsp-system-prompt-len");
  require_positive(o.question_len, "--gsp-question-len");
  require_positive(o.output_len, "--gsp-output-len");
  if (!(o.range_ratio > 0 && o.range_ratio <= 1)) {
    throw Exception(Error{"must be in (0, 1]", "--gsp-range-ratio", -1});
  }
  if (!(o.zipf_s > 0) || !std::isfinite(o.zipf_s)) {
    throw Exception(Error{"must be a positive number", "--gsp-zipf-s", -1});
  }
  const std::int64_t output_len = options.output_len > 0 ? options.output_len : o.output_len;
  PromptText text(options, corpus_path, std::max(o.system_prompt_len, o.question_len));
  Rng lengths(options.seed, "gsp-lengths");
  Rng cuts(options.seed, "gsp-text");
  // Every group's system prompt and the lengths of its questions.
  std::vector<std::string> system(static_cast<std::size_t>(o.num_groups));
  std::vector<std::int64_t> system_len(system.size());
  for (std::size_t g = 0; g < system.size(); ++g) {
    system_len[g] = ranged(o.system_prompt_len, o.range_ratio, lengths);
    system[g] = text.cut(system_len[g], cuts, fmt::format("system prompt {}", g));
  }
  const auto make = [&](std::int64_t g, std::int64_t q, Rng& rng) {
    const auto gi = static_cast<std::size_t>(g);
    const std::int64_t question = ranged(o.question_len, o.range_ratio, lengths);
    Sample s;
    s.source_id = fmt::format("gsp:{}:{}", g, q);
    s.prompt = joined(text, system[gi], system_len[gi], question, rng, s.source_id);
    s.prompt_len = text.special_tokens() + system_len[gi] + question;
    s.prompt_len_exact = text.exact();
    s.output_len = output_len;
    return s;
  };
  std::vector<Sample> out;
  if (o.popularity == GroupPopularity::Uniform) {
    out.reserve(static_cast<std::size_t>(o.num_groups * o.prompts_per_group));
    for (std::int64_t g = 0; g < o.num_groups; ++g) {
      for (std::int64_t q = 0; q < o.prompts_per_group; ++q) out.push_back(make(g, q, cuts));
    }
    return out;  // the caller shuffles (and cycles to --num-prompts)
  }
  // Zipf: request i asks group k with weight 1/k^s; the same (group, question) pair is the same
  // prompt each time it is drawn.
  const ZipfGroups zipf(o.num_groups, o.zipf_s);
  Rng picks(options.seed, "gsp-popularity");
  std::vector<std::vector<std::int64_t>> made(static_cast<std::size_t>(o.num_groups));
  for (std::int64_t i = 0; i < options.num_prompts; ++i) {
    const std::int64_t g = zipf.draw(picks);
    const std::int64_t q = picks.uniform_int(0, o.prompts_per_group - 1);
    auto& slots = made[static_cast<std::size_t>(g)];
    if (slots.empty()) {
      slots.assign(static_cast<std::size_t>(o.prompts_per_group), -1);
    }
    auto& at = slots[static_cast<std::size_t>(q)];
    if (at < 0) {
      at = static_cast<std::int64_t>(out.size());
      out.push_back(make(g, q, cuts));
    } else {
      out.push_back(out[static_cast<std::size_t>(at)]);
    }
  }
  return out;
}

std::vector<Sample> make_prefix_repetition_samples(const DatasetOptions& options,
                                                   const std::string& corpus_path) {
  const PrefixRepetitionOptions& o = options.prefix_repetition;
  require_positive(o.prefix_len, "--prefix-repetition-prefix-len");
  require_positive(o.suffix_len, "--prefix-repetition-suffix-len");
  require_positive(o.num_prefixes, "--prefix-repetition-num-prefixes");
  require_positive(o.output_len, "--prefix-repetition-output-len");
  const std::int64_t output_len = options.output_len > 0 ? options.output_len : o.output_len;
  PromptText text(options, corpus_path, std::max(o.prefix_len, o.suffix_len));
  Rng cuts(options.seed, "prefix-repetition");
  std::vector<std::string> prefixes;
  for (std::int64_t p = 0; p < o.num_prefixes; ++p) {
    prefixes.push_back(text.cut(o.prefix_len, cuts, fmt::format("prefix {}", p)));
  }
  std::vector<Sample> out;
  out.reserve(static_cast<std::size_t>(options.num_prompts));
  for (std::int64_t i = 0; i < options.num_prompts; ++i) {
    const auto p = static_cast<std::size_t>(i % o.num_prefixes);
    Sample s;
    s.source_id = fmt::format("prefix_repetition:{}:{}", p, i);
    s.prompt = joined(text, prefixes[p], o.prefix_len, o.suffix_len, cuts, s.source_id);
    s.prompt_len = text.special_tokens() + o.prefix_len + o.suffix_len;
    s.prompt_len_exact = text.exact();
    s.output_len = output_len;
    out.push_back(std::move(s));
  }
  return out;  // the caller shuffles
}

}  // namespace detail
}  // namespace llmbench::workload
