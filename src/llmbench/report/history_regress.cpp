// The regressions of a recorded run against a baseline (report/history.hpp): `compare`'s
// statistics over both records where they are reachable, else the summary rule.

#include "llmbench/analysis/compare.hpp"
#include "llmbench/metrics/record_file.hpp"
#include "llmbench/report/history.hpp"

#include <fmt/core.h>

#include <cmath>
#include <filesystem>

namespace llmbench::report {

namespace {

/// What `compare` says of `run` against `base` (both with records): the worse metrics whose
/// mean moved by at least `min_change`, as "tpot +12.3%".
std::vector<std::string> regressions_with_records(const HistoryEntry& base, const HistoryEntry& run,
                                                  double min_change) {
  const auto samples = [](const HistoryEntry& e) {
    return analysis::run_samples(metrics::read_record_file(e.records_path).records);
  };
  std::vector<std::string> out;
  for (const auto& m : analysis::compare_runs(samples(base), samples(run), {})) {
    const auto& mean = m.statistics.front();
    const bool large = m.metric == analysis::Metric::ErrorRate
                           ? mean.difference >= 0.001
                           : std::abs(mean.relative) >= min_change;
    if (m.verdict == analysis::Verdict::Worse && large)
      out.push_back(fmt::format(
          "{} {:+.1f}%", analysis::to_string(m.metric),
          m.metric == analysis::Metric::ErrorRate ? mean.difference * 100 : mean.relative * 100));
  }
  return out;
}

}  // namespace

double summary_number(const HistoryEntry& entry, const std::string& key) {
  const auto it = entry.summary.find(key);
  return it != entry.summary.end() && it->is_number() ? it->get<double>() : std::nan("");
}

bool records_reachable(const HistoryEntry& entry) {
  return !entry.records_path.empty() && std::filesystem::exists(entry.records_path);
}

RunRegressions run_regressions(const HistoryEntry& base, const HistoryEntry& run,
                               double min_change) {
  RunRegressions r;
  r.with_records = records_reachable(base) && records_reachable(run);
  if (r.with_records)
    r.found = regressions_with_records(base, run, min_change);
  // Throughput and goodput are one number per run: the summary rule judges them either way.
  for (auto& s : summary_regressions(
           base.summary, run.summary, min_change,
           r.with_records ? RegressionScope::ThroughputOnly : RegressionScope::Everything))
    r.found.push_back(std::move(s));
  return r;
}

}  // namespace llmbench::report
