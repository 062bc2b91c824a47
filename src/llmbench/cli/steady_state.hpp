#pragma once
/// @file
/// The time windows and stability verdict of one `run` or `simulate` (issue 15 item 4;
/// docs/sweep.md "Time windows", "Stability"): the `--window-s` flag, the windows computed from
/// the records (`analysis::time_windows`), their JSON for the results file, and what one point
/// reports to its caller (`PointReport`, read by `llmbench sweep`).

#include "llmbench/analysis/batching.hpp"
#include "llmbench/analysis/spikes.hpp"
#include "llmbench/analysis/windows.hpp"
#include "llmbench/cli/tail_ci.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/metrics/token_runs.hpp"
#include "llmbench/sim/engine.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <vector>

namespace llmbench::cli {

/// The default `--window-s` (seconds per window).
inline constexpr double kDefaultWindowS = 1.0;

/// Registers `--window-s` (seconds per window of the results' `windows`) bound to `window_s`.
void add_window_flag(CLI::App& app, double& window_s);

/// The windows of one run, the stability verdict and the P99 spikes over them
/// (`analysis::StabilityRule`'s defaults: the last 3 full windows within 10% on output tok/s and
/// p99 ITL).
struct SteadyState {
  double window_s = kDefaultWindowS;
  std::vector<analysis::Window> windows;
  analysis::Stability stability;
  analysis::SpikeReport spikes;  ///< `analysis::find_spikes` with `SpikeRule`'s defaults
  /// `analysis::batching_failure` with `BatchingRule`'s defaults (not evaluated until a caller
  /// adds the engine's queue: `add_batching`).
  analysis::BatchingVerdict batching;
  std::string batching_source;  ///< "engine timeline", "/metrics scrapes" or ""
  /// The p99 confidence intervals (`tail_cis`; empty until a caller adds them), written as
  /// `p99_ci`.
  std::vector<TailCi> tails;
};

/// The simulator's steps as queue samples (RUNNING and WAITING after scheduling, weighted by
/// the step's duration, at the step's start).
std::vector<analysis::EngineSample> step_samples(const std::vector<sim::StepTrace>& steps);

/// The `/metrics` scrapes of a run's results (`telemetry.server_metrics`: `t_ms` and the
/// `series` `running` and `waiting`) as queue samples; none when either series is missing.
std::vector<analysis::EngineSample> scrape_samples(const nlohmann::json& server_metrics);

/// Applies the batching-failure rule to `samples` over `s.windows` (`capacity`: the engine's
/// batch cap, NaN when unknown) and records `source`.
void add_batching(SteadyState& s, const std::vector<analysis::EngineSample>& samples,
                  double capacity, std::string source);

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
/// null), `stable`, `stability` ({reason, throughput_spread, latency_spread, rule}) and `spikes`
/// ({rule, itl_baseline_ms, ttft_baseline_ms, list: one object per spike}) and `batching`
/// ({rule, source, evaluated, fired, capacity, longest_failed_run, reason, windows}) and
/// `p99_ci` (`tail_cis_json`).
nlohmann::json steady_state_json(const SteadyState& s);

/// The console line of the verdict: label and value ("yes" / "no: <reason>").
std::pair<std::string, std::string> stability_line(const SteadyState& s);
/// The console line of the spikes: label and value ("none" or the count and each window).
std::pair<std::string, std::string> spike_line(const SteadyState& s);
/// The console line of the batching verdict ("no: ..." / "FAILED: ..."); label "" when it was
/// not evaluated.
std::pair<std::string, std::string> batching_line(const SteadyState& s);

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
