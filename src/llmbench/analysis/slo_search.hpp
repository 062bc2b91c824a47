#pragma once
/// @file
/// The SLO search of `llmbench sweep --slo` (docs/sweep.md "SLO search"): the highest load (a
/// request rate or a concurrency) at which every constraint on the results' metrics holds.
/// Bracket with the range's ends, then narrow the bracket with the zero of the constraint margin
/// linearly interpolated between the bracketing points (regula falsi; the failing end's margin
/// floored at −1, each point kept at least 10% of the bracket inside it, and a bisection step
/// whenever one end has moved twice running, the Illinois-style safeguard), until the bracket is
/// narrower than a relative resolution or the point budget is spent. vLLM's `serve_sla`
/// interpolates with PCHIP instead; with two bracketing points both are the line through them.

#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::analysis {

/// The comparison of a constraint.
enum class SloOp : unsigned char { Le, Lt, Ge, Gt };

/// Spelling of each comparison, the two-character ones first (parsing tries them in order).
struct SloOpName {
  SloOp op = SloOp::Le;
  std::string_view text;
};
inline constexpr SloOpName kSloOps[] = {
    {.op = SloOp::Le, .text = "<="},
    {.op = SloOp::Ge, .text = ">="},
    {.op = SloOp::Lt, .text = "<"},
    {.op = SloOp::Gt, .text = ">"},
};

/// One constraint: `metric op bound` ("p99_ttft_ms<=2000").
struct SloConstraint {
  std::string metric;  ///< a number of the results JSON (e.g. p99_ttft_ms, output_throughput)
  SloOp op = SloOp::Le;
  double bound = std::numeric_limits<double>::quiet_NaN();
};

/// Parses "p99_ttft_ms<=2000,p99_tpot_ms<=80" (comma-separated; spaces around items allowed).
/// Throws `Exception` with source "--slo", the text and the byte offset of the bad item: no
/// comparison (valid: <=, >=, <, >), an empty metric name, or a bound that is not a finite number.
std::vector<SloConstraint> parse_slo_constraints(std::string_view text);

/// `text` of a constraint as written ("p99_ttft_ms<=2000").
std::string to_string(const SloConstraint& constraint);

/// The relative margin of `value` against `c`: (bound − value) / |bound| for ≤ and <, (value −
/// bound) / |bound| for ≥ and > (|bound| taken as 1 when the bound is 0); ≥ 0 meets ≤ / ≥, > 0
/// meets < / >. −inf when `value` is NaN (an undefined metric never meets a constraint).
double slo_margin(const SloConstraint& c, double value) noexcept;

/// What one point measured: the metrics the constraints name (NaN = undefined) and its sample
/// count (completed requests). `ran` is false for a point that failed; it meets nothing.
struct SloMeasurement {
  std::map<std::string, double> metrics;
  std::size_t samples = 0;
  bool ran = true;
  /// The load the point actually ran at when it differs from the one asked for (a value
  /// rounded for the command line); NaN = as asked. The search continues from it.
  double load = std::numeric_limits<double>::quiet_NaN();
  /// The point's verdict (`judge_point`, verdict.hpp): an answer that rests on an invalid
  /// point is provisional.
  bool valid = true;
  std::vector<std::string> invalid_reasons{};
};

/// One measured point of the search.
struct SloPoint {
  double load = std::numeric_limits<double>::quiet_NaN();
  SloMeasurement measurement;
  double margin = -std::numeric_limits<double>::infinity();  ///< the smallest constraint margin
  bool meets = false;
};

/// The search's bounds and budget.
struct SloSearchOptions {
  double lo = 1;                ///< lowest load tried (> 0)
  double hi = 2;                ///< highest load tried (> lo)
  double resolution = 0.05;     ///< stop when (bad − good) ≤ resolution × good
  std::size_t max_points = 10;  ///< points measured at most (≥ 2)
  bool integer = false;         ///< loads are whole numbers (concurrency): also stop at width 1
};

/// The answer: the highest load measured that meets every constraint (`best`), the lowest that
/// does not (`first_failing`), every point in measurement order, and how the search ended.
struct SloSearchResult {
  std::vector<SloPoint> points;
  std::optional<double> best;
  std::optional<double> first_failing;
  bool converged = false;                    ///< the bracket reached the resolution
  bool stopped = false;                      ///< `measure` asked to stop (an interrupted sweep)
  std::string reason;                        ///< one sentence on how it ended
  std::optional<std::size_t> answer_point;   ///< index into `points` of `best`
  std::optional<std::size_t> failing_point;  ///< index into `points` of `first_failing`
  /// `best` rounded down to the search's resolution (`round_to_resolution`): the digits the
  /// search can vouch for.
  std::optional<double> answer_rounded;
  /// The constraint that decides the answer: the one the first failing point misses by the
  /// most (else the tightest at the answer); with its value at both points.
  std::string binding;
  /// Points whose verdict contradicts the order of loads (one meets at a load above one that
  /// misses), one sentence each: the answer is then less certain than its bracket says.
  std::vector<std::string> non_monotonic;
  /// True when the answer or the first failing point is invalid (`SloMeasurement::valid`);
  /// `provisional_reasons` says which and why.
  bool provisional = false;
  std::vector<std::string> provisional_reasons;
};

/// Measures one load; `std::nullopt` stops the search.
using SloMeasure = std::function<std::optional<SloMeasurement>(double load)>;

/// Runs the search (see the file comment). Pure apart from `measure`; `options` must satisfy
/// 0 < lo < hi, 0 < resolution, max_points ≥ 2 (else `Exception` naming --slo-resolution,
/// --max-points or --sweep).
SloSearchResult slo_search(const std::vector<SloConstraint>& constraints,
                           const SloSearchOptions& options, const SloMeasure& measure);

/// `value` rounded down to the search's resolution: to a multiple of 10^⌊log10(resolution ×
/// value)⌋ (21.3572 at 5% → 21; 2.13572 → 2.1), a whole number for a whole-number axis. Rounded
/// down, so the stated load is one the search measured to meet (or below it).
double round_to_resolution(double value, double resolution, bool integer);

/// Fills `answer_point`, `failing_point`, `answer_rounded`, `binding`, `non_monotonic` and
/// `provisional` of `result` from its points (`slo_search` calls it before returning).
void explain_slo_answer(SloSearchResult& result, const std::vector<SloConstraint>& constraints,
                        const SloSearchOptions& options);

/// The console lines of an answer: the rounded answer with the measured bracket, the binding
/// constraint, throughput, goodput and the p99s at the answer (those of `output_throughput`,
/// `request_throughput`, `request_goodput`, `p99_ttft_ms`, `p99_tpot_ms`, `p99_itl_ms`,
/// `p99_e2el_ms` its measurement holds), non-monotonic points and the provisional label.
std::vector<std::string> slo_answer_lines(const SloSearchResult& result,
                                          const std::vector<SloConstraint>& constraints,
                                          std::string_view axis);

}  // namespace llmbench::analysis
