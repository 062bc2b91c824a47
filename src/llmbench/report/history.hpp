#pragma once
/// @file
/// Run history in SQLite (`--history PATH`, `llmbench history`; docs/compare.md "History"):
/// one row per run with its configuration, summary, tool version, git SHA, host, time and the
/// paths of its results and records, and one row per summary number for trends. Schema:
///
///     runs(id INTEGER PRIMARY KEY, kind TEXT, time_utc TEXT, label TEXT, model TEXT,
///          backend TEXT, host TEXT, tool_version TEXT, git_sha TEXT, results_path TEXT,
///          records_path TEXT, config TEXT, summary TEXT)      -- config, summary: JSON
///     metrics(run_id INTEGER REFERENCES runs(id), name TEXT, value REAL)
///
/// `time_utc` is ISO 8601 ("2026-12-02T04:30:00Z"), so text order is time order.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace llmbench::report {

/// One recorded run.
// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json's destructor (see app/result.hpp)
struct HistoryEntry {
  std::int64_t id = 0;  ///< assigned by `History::add`
  std::string kind = "run";
  std::string time_utc{};
  std::string label{};
  std::string model{};
  std::string backend{};
  std::string host{};
  std::string tool_version{};
  std::string git_sha{};
  std::string results_path{};  ///< "" when the results were not saved
  std::string records_path{};  ///< "" when the records were not saved
  nlohmann::json config = nlohmann::json::object();
  nlohmann::json summary = nlohmann::json::object();  ///< name → number (`summary_numbers`)
};

/// The numbers of a results document kept in the history: every finite number at its top level
/// whose key is a shared metric (`mean_`/`median_`/`p<q>_` … `_ms`, the throughputs, completed,
/// failed, duration) plus `error_rate` = failed / (completed + failed).
nlohmann::json summary_numbers(const nlohmann::json& results);

/// Every summary key of `entries` (their `summary` objects), sorted, each once: the metric names
/// `history trend` accepts.
std::vector<std::string> summary_keys(const std::vector<HistoryEntry>& entries);

/// Which summary numbers the rule of `summary_regressions` reads.
enum class RegressionScope : std::uint8_t {
  Everything,     ///< latencies, error rate, throughput and goodput
  ThroughputOnly  ///< throughput and goodput (the latencies were judged by `compare`)
};

/// Regressions of `run` against `base` read from two `summary_numbers` objects alone, one text
/// each ("mean_ttft_ms +12.3%"), in this order: a mean latency (TTFT, TPOT, ITL, E2EL) more than
/// 2 × `min_change` above the baseline's; an error rate 0.1 percentage points or more higher; the
/// output throughput, request throughput or request goodput more than 2 × `min_change` below the
/// baseline's (one number per run, so no interval backs any of them; docs/compare.md "History").
/// p99 is left out: between identical fixed-timing runs on a loaded host one run's p99 ITL moved
/// by 11-30%. A key missing from either side (goodput without `--goodput`) is skipped.
std::vector<std::string> summary_regressions(const nlohmann::json& base, const nlohmann::json& run,
                                             double min_change, RegressionScope scope);

/// A number of `entry`'s summary (`summary[key]`); NaN when absent or not a number.
double summary_number(const HistoryEntry& entry, const std::string& key);

/// True when `entry` names a records file and it exists.
bool records_reachable(const HistoryEntry& entry);

/// What regressed in one run against the baseline (`run_regressions`).
struct RunRegressions {
  std::vector<std::string> found{};  ///< "tpot +12.3%", ... (empty: no regression)
  bool with_records = false;         ///< judged by `compare`'s statistics over both records
};

/// The regressions of `run` against `base`: where both records files are reachable, the worse
/// metrics of `analysis::compare_runs` whose mean moved by at least `min_change` (the error rate
/// by at least 0.1 point), then throughput and goodput by `summary_regressions`; else every
/// metric by `summary_regressions` (a weaker rule: one number per run). Throws what reading a
/// records file throws.
RunRegressions run_regressions(const HistoryEntry& base, const HistoryEntry& run,
                               double min_change);

/// Which entries `History::list` returns; empty fields do not filter.
struct HistoryFilter {
  std::string label{};
  std::string model{};
  std::string since{};  ///< ISO 8601 prefix or time: entries at or after it
  std::string until{};  ///< entries before it
};

/// An open history database. Not thread-safe. Errors throw `Exception` naming the path and
/// SQLite's message.
class History {
 public:
  /// Opens (creating if needed) the database at `path` and its tables.
  explicit History(const std::string& path);
  ~History();
  History(const History&) = delete;
  History& operator=(const History&) = delete;
  History(History&&) = delete;
  History& operator=(History&&) = delete;

  /// Stores `entry` (its `id` is ignored) with one `metrics` row per summary number; returns the
  /// new id.
  std::int64_t add(const HistoryEntry& entry);
  /// The entries matching `filter`, oldest first (by time, then id).
  std::vector<HistoryEntry> list(const HistoryFilter& filter) const;
  /// The entry with `id`, or none.
  std::optional<HistoryEntry> get(std::int64_t id) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace llmbench::report
