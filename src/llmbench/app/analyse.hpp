#pragma once
/// @file
/// The one analysis of a finished run or simulation (docs/sweep.md "Time windows",
/// "Stability", "Spikes", "Dynamic batching", "Validity"): its summary, its time windows and the
/// verdicts over them, computed in `analyse_run` for `run`, `simulate` and every sweep point
/// alike. Each verdict's rule lives in `analysis`; this is where they are applied, once.

#include "llmbench/analysis/batching.hpp"
#include "llmbench/analysis/spikes.hpp"
#include "llmbench/analysis/validity.hpp"
#include "llmbench/analysis/verdict.hpp"
#include "llmbench/analysis/windows.hpp"
#include "llmbench/app/plan.hpp"
#include "llmbench/app/tail_ci.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/metrics/token_runs.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/telemetry/server_metrics.hpp"

#include <nlohmann/json.hpp>

#include <limits>
#include <string>
#include <vector>

namespace llmbench::app {

/// The verdicts on one run, each from its rule's defaults (`analysis::StabilityRule`,
/// `SpikeRule`, `BatchingRule`) except validity, whose rule the plan carries.
struct Verdicts {
  /// Stable / unstable / saturated / too short over the steady windows (the engine's queue
  /// joins the judgement when it was observed).
  analysis::Stability stability;
  analysis::SpikeReport spikes;  ///< `analysis::find_spikes`
  /// `analysis::batching_failure` over the engine's queue (not evaluated without one).
  analysis::BatchingVerdict batching;
  std::string batching_source;  ///< "engine timeline", "/metrics scrapes" or ""
  /// The p99 confidence intervals (`tail_cis`), written as `p99_ci`.
  std::vector<TailCi> tails;
  /// `analysis::validity` under the plan's rule (the p99 of each interval must be supported).
  analysis::Validity validity;
  /// The one verdict of the run (`analysis::judge_point` of validity, stability and the
  /// interruption): every output prints its label, none says `ok` of an invalid point.
  analysis::PointVerdict verdict;
};

/// A finished run analysed: the summary, its time windows and the verdicts over them.
struct RunAnalysis {
  metrics::Summary summary;
  double window_s = kDefaultWindowS;  ///< seconds per window
  std::vector<analysis::Window> windows;
  Verdicts verdicts;
};

/// The engine's queue over a run, for the batching rule: samples of RUNNING and WAITING, the
/// batch cap (NaN when unknown) and where they came from.
struct EngineQueue {
  std::vector<analysis::EngineSample> samples;
  double capacity = std::numeric_limits<double>::quiet_NaN();
  std::string source;
};

/// What `analyse_run` reads. `tokens` (may be null) holds the simulator's token runs, whose
/// records carry no chunks.
struct AnalysisInputs {
  const std::vector<metrics::RequestRecord>& records;
  const metrics::TokenRuns* tokens = nullptr;
  const ReportSetup& report;
  double window_s = kDefaultWindowS;
  const EngineQueue& queue;
  const analysis::ValidityRule& validity;
  bool interrupted = false;  ///< the run ended early by a signal
};

/// Summarizes the records (`metrics::summarize` with the report's options), cuts windows of
/// `window_s` seconds (TTFT / ITL at the report's percentiles, 99 added: the stability rule
/// reads it) and applies every verdict: batching over `queue`, stability (with the queue when
/// the batching rule could read it), spikes, the p99 intervals, validity and the one verdict.
/// Throws `Exception` naming `--window-s` unless 0.001 ≤ window_s ≤ 1e6.
RunAnalysis analyse_run(const AnalysisInputs& inputs);

/// The simulator's steps as queue samples (RUNNING and WAITING after scheduling, weighted by the
/// step's duration, at the step's start).
std::vector<analysis::EngineSample> step_samples(const std::vector<sim::StepTrace>& steps);

/// The `/metrics` scrapes of a run as queue samples (the concepts `running` and `waiting`, one
/// sample per scrape where both are numbers, at its time relative to `run_start_ns`, marked
/// `late` when the scrape answered late); none when either concept was not scraped.
std::vector<analysis::EngineSample> scrape_samples(const telemetry::ServerMetricsSeries& series,
                                                   TimeNs run_start_ns);

/// The results-file keys of `a`: `window_s`, `windows` (one object per window: start_s, end_s,
/// full, sending, completed, failed, output_tokens, output_throughput, request_throughput,
/// mean_in_flight, max_in_flight, mean_queued, ttft_count, itl_count, mean_/p<q>_ttft_ms and
/// _itl_ms; NaN as null), `stable`, `stability` ({state, reason, spreads, ttft_change,
/// queue_growth, judged_windows, warmup_windows, steady_start_s, rule}), `spikes` ({rule,
/// summary, count, baselines, prefill_interference, list}), `batching` ({rule, source,
/// evaluated, fired, capacity, longest_failed_run, warmup_windows, late_samples, reason,
/// windows}), `p99_ci` (`tail_cis_json`) and `verdict` ({label, valid, invalid_reasons,
/// steadiness, interrupted, ok}).
nlohmann::json analysis_json(const RunAnalysis& a);

/// The results' `verdict` object of `v`: `label` (`analysis::verdict_label`), `valid`,
/// `invalid_reasons`, `steadiness`, `interrupted` and `ok`.
nlohmann::json verdict_json(const analysis::PointVerdict& v);

}  // namespace llmbench::app
