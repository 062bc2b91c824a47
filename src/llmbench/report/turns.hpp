#pragma once
/// @file
/// The per-turn part of a multi-turn run's reports (docs/workloads.md "Conversations"): the
/// results JSON's `by_turn` list and `turn_finding`, the console's "TTFT by Turn" table, and the
/// one-line prefix-cache finding, said only when turn 2's median TTFT is lower than turn 1's
/// beyond a bootstrap interval.

#include "llmbench/metrics/record.hpp"
#include "llmbench/metrics/turns.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace llmbench::report {

/// Completed requests each of turn 1 and turn 2 needs before the finding is considered.
inline constexpr std::size_t kMinFindingSamples = 10;

/// Whether turn 2 answered faster than turn 1, and by how much (docs/workloads.md defines when
/// it is said).
struct TurnFinding {
  bool evaluated = false;      ///< both turns had at least `kMinFindingSamples` completed TTFTs
  bool said = false;           ///< the 95% interval of median(turn 2) − median(turn 1) is below 0
  double ttft_change_pct = 0;  ///< (median TTFT 2 / median TTFT 1 − 1) · 100
  double input_change_pct = 0;  ///< (mean input tokens 2 / mean input tokens 1 − 1) · 100
  double ci_low_ms = 0;         ///< the interval of the median difference (turn 2 − turn 1)
  double ci_high_ms = 0;
  /// Mean share of turn 2's input tokens the server reported cached, percent; negative when the
  /// server reported none.
  double cached_pct = -1;
  std::string text;  ///< the line: the finding, or why none is said
};

/// The finding over the completed non-warm-up records of turns 1 and 2 and their `by_turn`
/// rows: a percentile bootstrap (2,000 resamples, seed 0, `analysis::bootstrap_difference`) of
/// the difference of median TTFTs. Not evaluated (and `text` says why) with fewer than
/// `kMinFindingSamples` completed requests in either turn.
TurnFinding turn_finding(const std::vector<metrics::RequestRecord>& records,
                         const std::vector<metrics::TurnSummary>& by_turn);

/// The results JSON's `by_turn` list: per turn `turn`, `count`, `failed`, `mean_ttft_ms`,
/// `median_ttft_ms`, `p99_ttft_ms`, `mean_input_tokens`, `mean_cached_tokens` (null when the
/// server reported none) and `cached_reported`. Non-finite numbers are null.
nlohmann::json by_turn_json(const std::vector<metrics::TurnSummary>& by_turn);

/// The results JSON's `turn_finding` object: `evaluated`, `said`, `text`, and when evaluated
/// `ttft_change_pct`, `input_change_pct`, `ci_low_ms`, `ci_high_ms`, `cached_pct` (null when
/// unknown).
nlohmann::json turn_finding_json(const TurnFinding& finding);

/// The console's "TTFT by Turn" section: a 50-wide '-' header and one row per turn (count,
/// mean / median / p99 TTFT in ms, mean input and cached tokens), then the finding's line. ""
/// for a single-turn run.
std::string turns_console_text(const std::vector<metrics::TurnSummary>& by_turn,
                               const TurnFinding& finding);

}  // namespace llmbench::report
