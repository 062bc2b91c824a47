#include "llmbench/analysis/verdict.hpp"

#include <utility>

namespace llmbench::analysis {

PointVerdict judge_point(const PointFacts& facts, const ValidityRule& rule,
                         const Stability& stability, bool interrupted) {
  const Validity v = validity(facts, rule);
  return PointVerdict{.valid = v.valid,
                      .invalid_reasons = v.reasons,
                      .steadiness = stability.state,
                      .steadiness_reason = stability.reason,
                      .interrupted = interrupted};
}

std::string verdict_label(const PointVerdict& verdict) {
  std::string label = verdict.valid ? "valid" : "invalid";
  label += ", ";
  label += to_string(verdict.steadiness);
  if (verdict.interrupted)
    label += ", interrupted";
  return label;
}

std::vector<std::string> verdict_reasons(const PointVerdict& verdict) {
  std::vector<std::string> out = verdict.invalid_reasons;
  if (!verdict.steadiness_reason.empty())
    out.push_back(std::string(to_string(verdict.steadiness)) + ": " + verdict.steadiness_reason);
  return out;
}

}  // namespace llmbench::analysis
