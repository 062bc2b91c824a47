#pragma once
/// @file
/// What `llmbench report` reads (docs/report.md "Inputs"): results JSON files of `run` and
/// `simulate` (docs/metrics.md), each with the per-request records its `records_file` names
/// (the `<stem>.records.jsonl` beside it), and sweep JSON files (docs/sweep.md "Output files"),
/// each with the results and records of its points.

#include "llmbench/metrics/record.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace llmbench::report {

/// One run (or one sweep point): its results document and its records.
// clang-tidy's exception-escape finding here is nlohmann::json's noexcept destructor, whose loop
// over nested values grows a std::vector (only bad_alloc, which ends the process anyway).
// NOLINTNEXTLINE(bugprone-exception-escape)
struct RunData {
  std::string name;    ///< name in tables and legends (`run_name`, or the sweep point's)
  std::string source;  ///< the results file as given ("" for a run reported from memory)
  nlohmann::json results = nlohmann::json::object();  ///< the results document
  std::vector<metrics::RequestRecord> records;        ///< every record, warm-ups included
  bool records_loaded = false;  ///< false: no records file (then `records_note` says why)
  std::string records_note;     ///< why there are no records ("" when loaded)
};

/// One sweep: its document and the points whose results file could be read, in point order.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct SweepData {
  std::string name;
  std::string source;
  nlohmann::json sweep = nlohmann::json::object();  ///< the `.sweep.json` document
  std::vector<RunData> points;           ///< `RunData::name` is "p<index> axis=value ..."
  std::vector<std::size_t> point_index;  ///< the sweep's `index` of each of `points`
};

/// Everything one report shows.
struct ReportInputs {
  std::vector<RunData> runs;
  std::vector<SweepData> sweeps;
};

/// True when `document` is a sweep JSON (an object with `axes` and `points` arrays).
bool is_sweep_document(const nlohmann::json& document);

/// The label of a sweep JSON point: "p<index, 2 digits> axis=value ..." ("p03
/// max-concurrency=8"), values as the sweep JSON writes them.
std::string point_name(const nlohmann::json& point);

/// A run's name in tables and legends: the results' `label` (`run --label`) when it is a
/// non-empty string, else `fallback` (the results file's stem). `load_inputs` makes the names of
/// runs that share one distinct (`distinct_names`).
std::string run_name(const nlohmann::json& results, const std::string& fallback);

/// For each of `paths`, the shortest trailing part of it, without the file's extension, that no
/// other path ends with: "a/run" and "b/run" for a/run.json and b/run.json, "run" alone when it
/// is the only run.json. A path given twice gets "#2", "#3" after its later copies.
std::vector<std::string> shortest_distinct_paths(const std::vector<std::string>& paths);

/// Makes the names of `runs` distinct: runs that share a name (a label, or a file stem) are
/// named by their `shortest_distinct_paths` among themselves, after the label in parentheses
/// when the name is a label ("canary (b)", "a/run"); unique names are kept.
void distinct_names(std::vector<RunData*>& runs);

/// Reads `path`: a results JSON into `inputs.runs`, a sweep JSON into `inputs.sweeps` (with its
/// points' results and records, found beside the sweep file). A records file that is missing
/// is noted in `RunData::records_note`, not an error (the report draws what the results hold).
/// Throws `Exception` naming the file when it cannot be read, is not JSON (with the byte
/// offset), is neither kind of document, or its records file does not parse (line and field).
void load_input(const std::string& path, ReportInputs& inputs);

/// `load_input` of every path, in order, then `distinct_names` over the runs and over the sweeps.
/// Throws as `load_input` does, and when `paths` is empty.
ReportInputs load_inputs(const std::vector<std::string>& paths);

}  // namespace llmbench::report
