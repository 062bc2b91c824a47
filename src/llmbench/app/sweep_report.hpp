#pragma once
/// @file
/// What `llmbench sweep` writes (docs/sweep.md "Output files"): one row per point, the sweep
/// JSON (`<stem>.sweep.json`) and CSV (`<stem>.sweep.csv`), rewritten after every point so an
/// interrupted sweep keeps each finished point, and the console table (one row per point as it
/// finishes).

#include "llmbench/analysis/validity.hpp"
#include "llmbench/analysis/verdict.hpp"
#include "llmbench/app/result.hpp"
#include "llmbench/app/sweep_axes.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::app {

/// The results-JSON numbers copied into each point's row of the sweep JSON and CSV.
inline constexpr std::array<std::string_view, 16> kPointMetrics{
    "completed",         "failed",
    "duration",          "request_throughput",
    "output_throughput", "total_token_throughput",
    "mean_ttft_ms",      "median_ttft_ms",
    "p99_ttft_ms",       "mean_tpot_ms",
    "p99_tpot_ms",       "mean_itl_ms",
    "p99_itl_ms",        "mean_e2el_ms",
    "p99_e2el_ms",       "max_concurrent_requests"};

/// How a point ended.
enum class PointStatus : std::uint8_t {
  Ok,           ///< ran to its end (its requests may still have failed: see `failed`)
  Failed,       ///< did not run (a bad value, a target that would not start); `error` says why
  Interrupted,  ///< ended early by a signal; its finished requests are kept
};

/// Stable name of a status ("ok", "failed", "interrupted").
std::string_view to_string(PointStatus status) noexcept;

/// One point of a sweep as the sweep's files and console show it.
struct PointRow {
  std::size_t index = 0;
  std::vector<AxisValue> values;  ///< one per axis, in the sweep's axis order
  PointStatus status = PointStatus::Ok;
  std::string error;                                  ///< why a point failed ("" otherwise)
  nlohmann::json metrics = nlohmann::json::object();  ///< `kPointMetrics` of its results
  bool stable = false;
  std::string stability_reason;
  std::string results_file;  ///< file name in the sweep's folder ("" when none)
  std::string records_file;
  std::size_t samples = 0;  ///< completed requests (the sample count of its percentiles)
  std::size_t trials = 1;   ///< measurements made (`--max-trials`); the row is the last one's
  /// Requests (or `--duration`) of the last measurement, times the sweep's (more than 1 when a
  /// trial or an extension to validity, `--min-requests`/`--min-duration`, grew the point).
  std::int64_t scale = 1;
  std::vector<std::string> earlier_results;  ///< results files of the earlier trials
  std::vector<std::string> spikes;           ///< one line per spike of the point
  bool valid = false;                        ///< `analysis::validity` under the sweep's rule
  std::vector<std::string> invalid_reasons;  ///< every rule the point broke
  nlohmann::json p99_ci = nullptr;           ///< the results' `p99_ci`
  bool batching_failed = false;              ///< the batching-failure rule fired
  /// The point's one verdict (`analysis::judge_point`): the table, JSON and CSV print its label.
  analysis::PointVerdict verdict{};
  /// GPUs behind the point (`RunResult::gpu_count`); NaN when not known, and the
  /// sweep's "per GPU" figures are then per server.
  double gpus = 1;
};

/// The row of a point that ran: its metrics, stability, spikes, validity (under the sweep's rule,
/// which its plan carried) and file names, read from its typed result.
PointRow point_row(std::size_t index, const std::vector<AxisValue>& values,
                   const RunResult& result);

/// The `kPredictedMetrics` of a row that ran (`compare_point` reads them; empty for a row that
/// did not run).
std::map<std::string, double> row_metrics(const PointRow& row);

/// The sweep JSON: `mode` ("run" / "simulate"), `axes` [{name, values}], `points` (one object
/// per row: index, axes {name: value}, status, error, the metrics, stable, stability,
/// samples, results_file, records_file), then `extra`'s keys (knee, slo_search, config, ...).
nlohmann::json sweep_json(std::string_view mode, const std::vector<SweepAxis>& axes,
                          const std::vector<PointRow>& rows, const nlohmann::json& extra);

/// The CSV: a header line (index, one column per axis, status, the `kPointMetrics`, stable,
/// samples, results_file, error), then a line per row (RFC 4180 quoting; empty for null).
std::string sweep_csv(const std::vector<SweepAxis>& axes, const std::vector<PointRow>& rows);

/// Writes `<dir>/<stem>.sweep.json` and `.sweep.csv`, each into a temporary file renamed over
/// the old one. Throws `Exception` naming the file when it cannot.
void write_sweep_files(const std::filesystem::path& dir, const std::string& stem,
                       const nlohmann::json& document, const std::string& csv);

/// The knees of a ladder (docs/sweep.md "Knee"): for each combination of the axes other than the
/// first load axis (max-concurrency or request-rate), Kneedle on output_throughput against the
/// load (concave) and on p99_ttft_ms against output_throughput (convex), over the points that
/// ran; with the saturation throughput (the highest output_throughput of the group). A JSON
/// array (null when no axis is a load axis); `lines` gets one console line per group (the fits'
/// parameters and errors in it with `verbose`, `analysis::fits_line`).
nlohmann::json knee_report(const std::vector<SweepAxis>& axes, const std::vector<PointRow>& rows,
                           std::vector<std::string>& lines, bool verbose = false);

/// The Pareto frontier over every point that ran (docs/sweep.md "Pareto frontier"):
/// interactivity = 1000 / mean_tpot_ms (output tokens/s per user) against output_throughput /
/// gpus (tok/s per GPU), both maximized (`analysis::pareto_front`). A JSON object {x, y, points:
/// [{index, axes, interactivity, throughput_per_gpu}]}; `lines` gets one console line.
nlohmann::json pareto_report(const std::vector<SweepAxis>& axes, const std::vector<PointRow>& rows,
                             std::vector<std::string>& lines);

/// The console table's header (the axis names, then req/s, tok/s, TTFT, TPOT, ITL, stable).
std::string table_header(const std::vector<SweepAxis>& axes);
/// One console row.
std::string table_row(const std::vector<SweepAxis>& axes, const PointRow& row);

}  // namespace llmbench::app
