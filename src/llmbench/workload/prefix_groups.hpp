#pragma once
/// @file
/// Datasets whose prompts share prefixes by design (docs/workloads.md, "Shared-prefix groups"):
/// SGLang `bench_serving`'s `generated-shared-prefix` (G groups of P prompts, each a group
/// system prompt followed by a question of its own) and vLLM `bench serve`'s `prefix_repetition`
/// (a few prefixes, each followed by random suffixes). Lengths are exact under a tokenizer.

#include "llmbench/core/name_table.hpp"

#include <array>
#include <cstdint>
#include <string_view>

namespace llmbench::workload {

/// How often each group is asked (`--gsp-popularity`).
enum class GroupPopularity {
  Uniform,  ///< every prompt of every group once, in a seeded shuffle (SGLang's order)
  Zipf,     ///< each request picks group k (1-based) with weight 1/k^s, a question uniformly
};

/// The one table of popularity names: parsing, the "valid: ..." message and `--help`.
inline constexpr auto kGroupPopularities = make_name_table<GroupPopularity>({
    {GroupPopularity::Uniform, "uniform"},
    {GroupPopularity::Zipf, "zipf"},
});

/// Parses a `--gsp-popularity` name; throws `Exception` naming the flag and the valid names.
GroupPopularity parse_group_popularity(std::string_view name);

/// `--dataset-name generated-shared-prefix` (SGLang flag names and defaults).
struct SharedPrefixOptions {
  std::int64_t num_groups = 64;           ///< `--gsp-num-groups`: G system prompts
  std::int64_t prompts_per_group = 16;    ///< `--gsp-prompts-per-group`: P questions each
  std::int64_t system_prompt_len = 2048;  ///< `--gsp-system-prompt-len`: tokens
  std::int64_t question_len = 128;        ///< `--gsp-question-len`: tokens
  std::int64_t output_len = 256;          ///< `--gsp-output-len`: tokens
  /// `--gsp-range-ratio`: each length uniform in [floor(L·r), L] (SGLang's range rule), 0 < r
  /// ≤ 1; 1 = exact.
  double range_ratio = 1.0;
  GroupPopularity popularity = GroupPopularity::Uniform;  ///< `--gsp-popularity`
  double zipf_s = 1.0;                                    ///< `--gsp-zipf-s`: exponent > 0
  bool operator==(const SharedPrefixOptions&) const = default;
};

/// `--dataset-name prefix_repetition` (vLLM `PrefixRepetitionRandomDataset` flag names and
/// defaults).
struct PrefixRepetitionOptions {
  std::int64_t prefix_len = 256;   ///< `--prefix-repetition-prefix-len`: tokens of each prefix
  std::int64_t suffix_len = 256;   ///< `--prefix-repetition-suffix-len`: tokens after it
  std::int64_t num_prefixes = 10;  ///< `--prefix-repetition-num-prefixes`
  std::int64_t output_len = 128;   ///< `--prefix-repetition-output-len`
  bool operator==(const PrefixRepetitionOptions&) const = default;
};

}  // namespace llmbench::workload
