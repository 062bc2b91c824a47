#pragma once
/// @file
/// The time windows and stability verdict of one `run` or `simulate` (issue 15 item 4;
/// docs/sweep.md "Time windows", "Stability"): the `--window-s` flag, the windows computed from
/// the records (`analysis::time_windows`), their JSON for the results file, and what one point
/// reports to its caller (`PointReport`, read by `llmbench sweep`).

#include "llmbench/analysis/windows.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/metrics/token_runs.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <vector>

namespace llmbench::cli {

/// The default `--window-s` (seconds per window).
inline constexpr double kDefaultWindowS = 1.0;

/// Registers `--window-s` (seconds per window of the results' `windows`) bound to `window_s`.
void add_window_flag(CLI::App& app, double& window_s);

/// The windows of one run and the stability verdict over them (`analysis::StabilityRule`'s
/// defaults: the last 3 full windows within 10% on output tok/s and p99 ITL).
struct SteadyState {
  double window_s = kDefaultWindowS;
  std::vector<analysis::Window> windows;
  analysis::Stability stability;
};

/// Windows of `window_s` seconds over `records` (chunks as recorded) with TTFT / ITL at
/// `percentiles` (99 added when missing: the stability rule reads it). Throws `Exception` naming
/// `--window-s` unless 0.001 ≤ window_s ≤ 1e6.
SteadyState steady_state(const std::vector<metrics::RequestRecord>& records, double window_s,
                         std::vector<double> percentiles);
/// As above for the simulator's records and token runs (`analysis::time_windows` with runs).
SteadyState steady_state(const std::vector<metrics::RequestRecord>& records,
                         const metrics::TokenRuns& tokens, double window_s,
                         std::vector<double> percentiles);

/// The results-file keys of `s`: `window_s`, `windows` (one object per window: start_s, end_s,
/// full, sending, completed, failed, output_tokens, output_throughput, request_throughput,
/// mean_in_flight, max_in_flight, ttft_count, itl_count, mean_/p<q>_ttft_ms and _itl_ms; NaN as
/// null), `stable` and `stability` ({reason, throughput_spread, latency_spread, rule}).
nlohmann::json steady_state_json(const SteadyState& s);

/// The console line of the verdict: label and value ("yes" / "no: <reason>").
std::pair<std::string, std::string> stability_line(const SteadyState& s);

/// What one `run` or `simulate` point hands back to `llmbench sweep`.
// clang-tidy's exception-escape finding here is nlohmann::json's noexcept destructor, whose loop
// over nested values grows a std::vector (only bad_alloc, which ends the process anyway).
// NOLINTNEXTLINE(bugprone-exception-escape)
struct PointReport {
  metrics::Summary summary;
  SteadyState steady;
  nlohmann::json results;              ///< the results document (as written, when saved)
  std::filesystem::path results_path;  ///< "" when not saved
  int exit_code = 0;                   ///< the command's exit code for this point
  bool interrupted = false;            ///< ended early by SIGINT / SIGTERM / SIGHUP
};

}  // namespace llmbench::cli
