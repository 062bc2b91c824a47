#pragma once
/// @file
/// Per-turn figures of a multi-turn run (`--multi-turn`, docs/metrics.md "By turn"): the records
/// grouped by `RequestRecord::turn`, so the effect of a server's prefix cache on later turns, whose
/// prompts repeat the earlier turns and answers, shows in TTFT by turn.

#include "llmbench/metrics/record.hpp"
#include "llmbench/metrics/statistics.hpp"

#include <cstdint>
#include <vector>

namespace llmbench::metrics {

/// The measured requests of one turn number.
struct TurnSummary {
  std::int64_t turn = 0;                  ///< 1-based
  std::size_t count = 0;                  ///< completed requests of this turn
  std::size_t failed = 0;                 ///< failed requests of this turn
  Stats ttft_ms;                          ///< TTFT of the completed requests, percentiles 50 and 99
  double p99_ttft_ms = kUndefined;        ///< `ttft_ms` at q = 99 (numpy's linear rule)
  double mean_input_tokens = kUndefined;  ///< mean `input_token_count` of the completed
  /// Mean server `cached_tokens` over the completed requests that report it (undefined when none
  /// does); `cached_reported` of them reported it.
  double mean_cached_tokens = kUndefined;
  std::size_t cached_reported = 0;
  /// Field-by-field equality (`Stats` as its `operator==` says, NaN equal to NaN).
  friend bool operator==(const TurnSummary& a, const TurnSummary& b) noexcept;
};

/// One `TurnSummary` per turn number present among the non-warm-up records with `turn` >= 1, in
/// turn order; empty for a single-turn run. Means are summed in numpy's order (`describe`).
std::vector<TurnSummary> summarize_turns(const std::vector<RequestRecord>& records);

}  // namespace llmbench::metrics
