#pragma once
/// @file
/// The typed result of one `run` or `simulate` point (docs/architecture.md, "The application
/// floor"), in the manner of MLPerf LoadGen's `PerformanceSummary`: the summary, the time
/// windows and verdicts, the typed telemetry, the effective spec, the files written and the exit
/// code. `sweep` and `doctor` read it as it is; its one `to_json` is the results document.

#include "llmbench/analysis/what_if.hpp"
#include "llmbench/app/analyse.hpp"
#include "llmbench/app/plan.hpp"
#include "llmbench/app/telemetry.hpp"
#include "llmbench/dist/spread.hpp"
#include "llmbench/loadgen/loadgen.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/metrics/token_runs.hpp"
#include "llmbench/sim/engine.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench::app {

/// How the load of a `run` point went, beside its records (the console's load-accuracy lines).
struct LoadFacts {
  std::int64_t planned = 0;     ///< requests (or conversation starts) the schedule held
  TimeNs schedule_span_ns = 0;  ///< first to last planned send; 0 = closed loop
  std::uint64_t connections_opened = 0;
  loadgen::ConversationCounts conversations;  ///< all zero unless multi-turn
  std::vector<float> loop_lag_ms;             ///< the workers' event-loop lag samples
  /// Open loop: the schedule's send rate (planned − 1 over its span), req/s; NaN otherwise.
  double planned_rate = std::numeric_limits<double>::quiet_NaN();
  /// The achieved send rate of the first turns over the same span, req/s; NaN when unknown.
  double achieved_rate = std::numeric_limits<double>::quiet_NaN();
};

/// What the simulated engine did, beside its records.
struct SimulationFacts {
  sim::SimStats stats;
  std::vector<sim::TimelineBucket> timeline;  ///< `sim::summarize_timeline` of the steps
  TimeNs timeline_interval_ns = 0;
  double wall_s = 0;             ///< wall time of the simulation
  analysis::EngineFacts engine;  ///< `app::engine_facts`: what limited the engine (what_if.hpp)
};

/// What a simulated cluster did (`simulate --cluster`), beside its summary. A cluster point keeps
/// no records in memory: they are streamed to the records file as `--records` says, and the
/// summary is made while the run goes (`sim::LatencyStats`), so it has no time windows.
struct ClusterFacts {
  sim::ClusterResult result;
  double wall_s = 0;                ///< wall time of the simulation
  std::size_t records_written = 0;  ///< records completely in the records file
};

/// How many GPUs serve a point, and how that is known.
struct GpuCount {
  /// NaN when not known (a server elsewhere, no `--num-gpus`): its "per GPU" figures are then
  /// per server, and say so.
  double count = std::numeric_limits<double>::quiet_NaN();
  /// "--num-gpus", "tp x dp" (a simulated or built-in engine), "NVML devices sampled" (a server
  /// on this host with `--gpu-telemetry`), "" when not known.
  std::string_view source;
};

/// One finished point. Exactly one of `run_plan` and `sim_plan` is set: the plan that ran,
/// shared and immutable.
// clang-tidy's exception-escape finding here is nlohmann::json's noexcept destructor, whose loop
// over nested values grows a std::vector (only bad_alloc, which ends the process anyway).
// NOLINTNEXTLINE(bugprone-exception-escape)
struct RunResult {
  std::shared_ptr<const RunPlan> run_plan;
  std::shared_ptr<const SimPlan> sim_plan;
  /// `run`: the load as sent (the target's URL, the model and endpoint found by discovery);
  /// its tokenizer pointer is null (the session owned the tokenizer for the point only).
  loadgen::LoadOptions load;
  nlohmann::json server_models = nullptr;            ///< the redacted model list (null when none)
  std::size_t samples = 0;                           ///< samples loaded (warm-ups included)
  std::chrono::system_clock::time_point start_time;  ///< wall clock at the start
  std::string stem;                                  ///< file stem of the outputs
  /// Every request (warm-ups included): `run` by `done_ns`; `simulate` by id, with token times
  /// in `tokens` (their chunks are filled when the records are written).
  std::vector<metrics::RequestRecord> records;
  metrics::TokenRuns tokens;
  TimeNs run_start_steady_ns = 0;             ///< absolute steady clock of record time 0 (`run`)
  RunAnalysis analysis;                       ///< summary, windows, verdicts
  std::optional<RunTelemetryData> telemetry;  ///< `run`
  std::optional<LoadFacts> load_facts;        ///< `run`
  std::optional<SimulationFacts> simulation;  ///< `simulate` of one engine
  std::optional<ClusterFacts> cluster;        ///< `simulate --cluster`
  /// `run` spread over the ranks of an MPI job (docs/distributed.md), on rank 0: the per-rank
  /// figures and clock offsets beside the merged ones.
  std::optional<dist::SpreadFacts> spread;
  std::filesystem::path results_path;  ///< "" when not saved
  std::filesystem::path records_path;  ///< "" when not saved
  std::size_t records_lost = 0;        ///< records that could not be written
  std::string records_error;           ///< why (the first failure)
  bool interrupted = false;            ///< ended early by SIGINT / SIGTERM / SIGHUP
  /// 0: every request completed; 1: a request failed, the run was interrupted or records were
  /// lost (docs/architecture.md, conventions: errors).
  int exit_code = 0;

  [[nodiscard]] const metrics::Summary& summary() const noexcept { return analysis.summary; }
  [[nodiscard]] const Verdicts& verdicts() const noexcept { return analysis.verdicts; }
  [[nodiscard]] bool simulated() const noexcept { return sim_plan != nullptr; }
  /// The report choices of the plan that ran.
  [[nodiscard]] const ReportSetup& report() const;
  /// GPUs behind the point: tp × dp of a simulated engine, every replica's GPUs of a simulated
  /// cluster; for a `run` point `--num-gpus`, else the built-in engine's tp × dp, else the NVML
  /// devices sampled when the server is on this host (a loopback URL), else not known.
  [[nodiscard]] GpuCount gpu_count() const;
  /// `gpu_count().count`: NaN when not known.
  [[nodiscard]] double gpus() const { return gpu_count().count; }
  /// The number the results document holds under `key` (a summary number or statistic of the
  /// metric catalog, `metrics::summary_value`, or one of the point's own counts:
  /// prompt_token_mismatches, output_tokens_counted_locally, connections_opened, sim_steps,
  /// sim_preemptions, sim_swap_outs, sim_recompute_fallbacks; for a cluster sim_steps (of its
  /// stepping units) and sim_preemptions): NaN where it writes null,
  /// nullopt for a key that is none of these.
  [[nodiscard]] std::optional<double> metric(std::string_view key) const;

  /// The results document (the `--save-result` file; docs/metrics.md): vLLM's keys
  /// (`report::results_json`), the requested and effective configuration, the windows and
  /// verdicts, telemetry (`run`) or the engine's counters and timeline (`simulate`).
  [[nodiscard]] nlohmann::json to_json() const;
};

/// The console's lines on a `run` point's connections, as (label, value): the local ports its
/// connections held at the peak and its failed connects by cause (the client self-monitor's
/// `connections`), and for a point spread over MPI ranks the same per rank. Empty for a
/// simulated point.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> connection_lines(const RunResult& r);

/// `--save-detailed`'s per-request arrays, one entry per measured (non-warm-up) record in
/// order, named as `vllm bench serve` names them where it has them: `ttfts`, `tpots`, `e2els`
/// (seconds; null where undefined: TPOT for N < 2 or output in one chunk, docs/metrics.md, and
/// every latency of a failed request, which enters no figure), `itls` (per request the
/// per-token ITL samples the summary's ITL is made of, in seconds: `metrics::append_itl_ms`;
/// vLLM lists one gap per chunk; empty for a failed request), `input_lens`, `output_lens`
/// (`metrics::input_token_count`, `output_token_count`) and `errors` ("" when it completed).
nlohmann::json detailed_arrays(const std::vector<metrics::RequestRecord>& records);

}  // namespace llmbench::app
