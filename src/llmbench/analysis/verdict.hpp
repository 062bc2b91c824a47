#pragma once
/// @file
/// One verdict per run and per point (docs/sweep.md "Verdict"): `valid` or `invalid` with every
/// reason (validity.hpp), `stable` / `unstable` / `saturated` / `too short` (windows.hpp), and
/// `interrupted`. `judge_point` is the one function that decides; the console table, the results
/// JSON, CSV, Markdown and HTML print its fields and `verdict_label`, so no output can say `ok`
/// of a point another output calls invalid.

#include "llmbench/analysis/validity.hpp"
#include "llmbench/analysis/windows.hpp"

#include <string>
#include <vector>

namespace llmbench::analysis {

/// The verdict of one run or sweep point.
struct PointVerdict {
  bool valid = false;
  std::vector<std::string> invalid_reasons;  ///< one sentence per broken rule; empty when valid
  Steadiness steadiness = Steadiness::TooShort;
  std::string steadiness_reason;
  bool interrupted = false;  ///< ended early by a signal; its finished requests are kept
  /// True only for a valid, stable point that ran to its end: the one that may be shown as "ok".
  [[nodiscard]] bool ok() const noexcept {
    return valid && steadiness == Steadiness::Stable && !interrupted;
  }
};

/// The verdict of a point that measured `facts` under `rule`, whose windows gave `stability`.
PointVerdict judge_point(const PointFacts& facts, const ValidityRule& rule,
                         const Stability& stability, bool interrupted);

/// The short label every table prints: "valid, stable", "invalid, saturated",
/// "invalid, too short, interrupted", ... (validity, steadiness, then "interrupted").
std::string verdict_label(const PointVerdict& verdict);

/// Every reason behind the label, one sentence each: the invalid reasons, then the steadiness
/// reason.
std::vector<std::string> verdict_reasons(const PointVerdict& verdict);

}  // namespace llmbench::analysis
