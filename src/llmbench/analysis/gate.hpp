#pragma once
/// @file
/// Release gates over a comparison (`llmbench compare --gate`, docs/compare.md "Gates"): limits
/// on how far a metric of B may move against A, or on B's own value, evaluated on the point
/// estimates of `compare_runs`, with exit-code semantics for CI.
///
/// Grammar (whitespace around items is ignored):
///
///     spec   := item ( ',' item )*
///     item   := 'canary' | key ':' bound
///     key    := stat '_' latency '_ms' | 'error_rate' | 'output_throughput' | 'request_throughput'
///     stat   := 'mean' | 'median' | 'p50' | 'p90' | 'p99'        (median is p50, as vLLM names it)
///     latency:= 'ttft' | 'tpot' | 'itl' | 'e2el'
///     bound  := change | limit
///     change := ( '+' | '-' | '±' | '+-' ) number [ unit ]    B − A at most +x / A − B at most x /
///                                                             |B − A| at most x
///     limit  := ( '<' | '<=' | '>' | '>=' ) number [ unit ]   B's own value
///     unit   := 'ms' | '%'                                    % of A's value for a change; for
///                                                             error_rate a percentage of requests
///
/// `canary` stands for the default canary gate (docs/compare.md "Gates"): one-sided, so only a
/// regression fails (a canary that got faster passes), and relative, so one rule fits a 50 ms and
/// a 5 s latency: the error rate below 0.1% (the DeepSeek testing notes' canary rule), mean TTFT
/// and E2EL at most 10% above A's, p99 TTFT and E2EL at most 20% above A's (a tail moves more
/// from run to run), and output throughput at most 10% below A's (`kCanaryGate`).

#include "llmbench/analysis/bootstrap.hpp"
#include "llmbench/analysis/compare.hpp"
#include "llmbench/core/error.hpp"

#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::analysis {

/// How a gate bounds its metric.
enum class GateBound : std::uint8_t {
  RiseAtMost,  ///< '+': B − A ≤ limit
  FallAtMost,  ///< '-': A − B ≤ limit
  MoveAtMost,  ///< '±': |B − A| ≤ limit
  Below,       ///< '<': B < limit
  AtMost,      ///< '<=': B ≤ limit
  Above,       ///< '>': B > limit
  AtLeast,     ///< '>=': B ≥ limit
};

/// One parsed gate.
struct Gate {
  std::string text{};  ///< the item as written (canary items: as the expansion spells them)
  Metric metric = Metric::Ttft;
  Statistic statistic = Statistic::Mean;
  GateBound bound = GateBound::RiseAtMost;
  double value = 0;      ///< the number as written
  bool percent = false;  ///< written with '%': of A's value (change) or of requests (error_rate)
};

/// The canary gate's spec (see the file comment): what `--gate canary` and a bare `--gate` mean.
inline constexpr std::string_view kCanaryGate =
    "error_rate:<0.1%,mean_ttft_ms:+10%,p99_ttft_ms:+20%,mean_e2el_ms:+10%,p99_e2el_ms:+20%,"
    "output_throughput:-10%";

/// Parses `spec` by the grammar above. Errors name `--gate`, what was expected and the 0-based
/// byte offset in `spec` where it was not found (`Error::offset`: "--gate: unknown unit 'x'
/// (valid: ms, %) (at byte 14)").
Result<std::vector<Gate>> parse_gates(std::string_view spec);

/// A gate checked against one comparison.
struct GateResult {
  Gate gate{};
  double measured = std::numeric_limits<double>::quiet_NaN();  ///< B − A, or B (a limit)
  double limit = std::numeric_limits<double>::quiet_NaN();     ///< in the metric's unit
  bool passed = false;    ///< false as well when the value is undefined (no samples)
  std::string message{};  ///< "p99_ttft_ms: B − A = +7.30 ms (40.10 → 47.40), limit +2.00 ms
                          ///< (+5%): fail"
};

/// Every gate of `gates` checked on the point estimates of `metrics` (from `compare_runs`). An
/// undefined value (a metric without samples) fails its gate, saying so.
std::vector<GateResult> evaluate_gates(const std::vector<Gate>& gates,
                                       const std::vector<MetricComparison>& metrics);

}  // namespace llmbench::analysis
