#pragma once
/// @file
/// The plans of the application floor: what one `run` or `simulate` point was asked (a snapshot
/// of the requested configuration, taken when the flags were resolved) and the settings it runs
/// with, in the manner of MLPerf LoadGen's `TestSettingsInternal`, which keeps `const
/// TestSettings requested` beside the effective values (docs/architecture.md, "The application
/// floor"). `cli` fills them (`resolve_run`, `resolve_simulate`); `app::Session` runs them.
///
/// Ownership: a plan owns every value it names. The tokenizer and chat template are named by
/// value (`WorkloadNames::tokenizer`, the text the user gave); the session that loads them owns
/// them and points a copy of the options at them for the length of one point, so a plan never
/// holds a pointer into a value it does not own (`loadgen::LoadOptions::tokenizer` and
/// `workload::DatasetOptions::tokenizer` / `chat_template` stay null in a plan).

#include "llmbench/analysis/validity.hpp"
#include "llmbench/loadgen/loadgen.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/server/options.hpp"
#include "llmbench/sim/cluster.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/sim/engine_spec.hpp"
#include "llmbench/workload/dataset.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llmbench::app {

/// The default width of a time window, seconds (`--window-s`).
inline constexpr double kDefaultWindowS = 1.0;

/// The load shape and reporting choices of a run, parsed and checked.
struct ReportSetup {
  double rate = 0;                              ///< requests per second; +inf = all at once
  double burstiness = 1;                        ///< gamma shape of the gaps; +inf = even
  std::vector<double> percentiles;              ///< from `--metric-percentiles`, each in [0, 100]
  std::vector<std::string> percentile_metrics;  ///< from `--percentile-metrics`
  metrics::SummaryOptions summary;              ///< `percentiles` and the `--goodput` SLO
};

/// The workload's names as the user spelled them, written where the results show what was
/// asked (the dataset section of `config_effective`, `tokenizer_id`).
struct WorkloadNames {
  std::string tokenizer;                  ///< `--tokenizer` as given ("" = none)
  std::string dataset_name;               ///< `--dataset-name`
  std::string random_prompt_kind;         ///< `--random-prompt-kind`
  std::string gsp_popularity;             ///< `--gsp-popularity`
  double think_time_ms = 0;               ///< `--think-time-ms`
  std::string think_time_dist = "fixed";  ///< `--think-time-dist`
};

/// The built-in server a `run` starts when it is given no target.
struct BuiltinServerPlan {
  /// As `serve` would use them; the session sets the tokenizer and chat template when it
  /// starts the server. With `Timing::Engine`, `options.engine` holds the resolved engine.
  server::ServerOptions options;
  /// The engine as typed (unset = default), for the names `config_effective` writes.
  sim::EngineOverrides engine_requested;
};

/// Where the outputs of one point go and what they are called.
struct OutputPlan {
  bool save_result = false;    ///< write <stem>.json (`--save-result`)
  bool save_detailed = false;  ///< per-request arrays in it (`--save-detailed`)
  bool save_records = false;   ///< write <stem>.records.jsonl (`--save-result` or `--result-dir`)
  std::filesystem::path dir = ".";
  /// `--result-filename` without its extension; "" = the default stem once the model is known.
  std::string stem;
  /// `--append-result`: add the results as one JSON line at the end of <stem>.json (vLLM's
  /// habit for collecting runs in one file); implies `save_result`.
  bool append = false;
  /// `--metadata KEY=VALUE`, in the order given (later keys replace earlier ones).
  std::vector<std::pair<std::string, std::string>> metadata{};
  std::string label;                 ///< `--label`: results label and file-name prefix ("" = none)
  std::string history;               ///< `--history PATH`: the SQLite run history ("" = none)
  std::string history_kind = "run";  ///< the history entry's kind ("run", "sweep-point")
  std::string report_path;           ///< `--report PATH`: the HTML report at the end ("" = none)
};

/// The samplers of a run (docs/telemetry.md), as resolved from `--gpu-telemetry`,
/// `--gpu-devices`, `--nvml-library`, `--scrape-metrics` and `--scrape-interval-ms`.
struct TelemetryPlan {
  std::optional<int> gpu_interval_ms;     ///< NVML sampling period; nullopt = off
  std::vector<unsigned int> gpu_devices;  ///< empty = every GPU
  std::string nvml_library = "libnvidia-ml.so.1";
  /// The `/metrics` URL to scrape: "" = the target's base URL + /metrics; nullopt = off.
  std::optional<std::string> scrape_url;
  int scrape_interval_ms = 500;
};

/// One `run` point, resolved and checked.
struct RunPlan {
  /// The requested configuration as typed (`config_requested` of the results), serialized when
  /// the flags were resolved.
  nlohmann::json requested = nlohmann::json::object();
  std::string backend_name = "openai";  ///< `--backend` as typed (results `backend`, file stem)
  std::int64_t num_prompts = 0;         ///< `--num-prompts` as typed
  std::int64_t max_concurrency = -1;    ///< `--max-concurrency` as typed (-1 = no cap)
  WorkloadNames names;
  /// The load: `url` is set when a target URL was given (empty for the built-in server until it
  /// listens), `request.model` is "" when it is to be read from /v1/models, `tokenizer` is null
  /// (see the file comment). `max_concurrency` is already capped below the open-file limit.
  loadgen::LoadOptions load;
  std::optional<BuiltinServerPlan> builtin;  ///< set when the built-in server is to be started
  workload::DatasetOptions dataset;          ///< `num_prompts` = samples to load (warm-ups too)
  /// The samples to send when given instead of drawn from `dataset` (the one request of
  /// `doctor`'s probe); null = `workload::load_samples(dataset)`. Shared, immutable.
  std::shared_ptr<const std::vector<workload::Sample>> samples;
  ReportSetup report;
  OutputPlan output;
  TelemetryPlan telemetry;
  double window_s = kDefaultWindowS;  ///< seconds per time window
  int num_gpus = 0;  ///< `--num-gpus`: GPUs behind the target, for per-GPU figures (0 = not given)
  /// Wait this long for the server's model list (`--ready-check-timeout-sec`; 0 = once).
  double ready_check_timeout_s = 0;
  bool progress = true;               ///< live progress line (off with `--quiet`)
  analysis::ValidityRule validity;    ///< the rule `RunResult::verdicts.validity` applies
  std::vector<std::string> warnings;  ///< printed before the run (a flag not honoured, ...)
  /// The in-flight cap set below the open-file limit where it may bind but need not (an open
  /// loop at a finite rate): warned about after the run only if the load reached it. 0 = none.
  std::int64_t open_file_cap = 0;
  std::int64_t open_file_limit = 0;  ///< the descriptor limit behind `open_file_cap`
};

/// Where a simulation's files go.
struct SimOutputPlan {
  bool save = false;  ///< write <stem>.json and <stem>.records.jsonl
  std::filesystem::path dir = ".";
  std::string stem;        ///< "" = "simulate-<model>-<gpu>-tp<N>-<date>"
  std::string trace_path;  ///< `--trace`: Chrome trace of the engine steps ("" = none)
  /// `--label`: the results' `label` and the default file name's prefix instead of "simulate"
  std::string label;
};

/// A cluster of engines in place of one (`simulate --cluster FILE`, docs/simulator.md
/// "Cluster"): the spec as parsed and its groups resolved against the profiles.
struct ClusterPlan {
  std::string path;  ///< `--cluster` as given
  sim::ClusterSpec spec;
  std::vector<sim::ResolvedGroup> groups;  ///< `sim::resolve_cluster(spec, data_dir)`
  /// The per-request records written when the point is saved (`--records`): none, one in 100,
  /// or all; the summary covers every request either way (it is made while the run goes).
  sim::RecordsMode records = sim::RecordsMode::Sample;
  /// `--trace-tile-s`: the trace of `SimPlan::dataset` tiled over this many seconds into
  /// `SimPlan::num_prompts` requests (`sim::TiledTraceSource`); 0 = the samples as they are.
  double trace_tile_s = 0;
};

/// One `simulate` point, resolved and checked.
struct SimPlan {
  nlohmann::json requested = nlohmann::json::object();  ///< as `RunPlan::requested`
  std::int64_t num_prompts = 0;                         ///< `--num-prompts` as typed
  std::int64_t max_concurrency = -1;                    ///< `--max-concurrency` as typed
  bool ignore_eos = false;                              ///< `--ignore-eos` (accepted, no effect)
  WorkloadNames names;
  sim::EngineSpec engine;                 ///< the engine that runs
  sim::EngineOverrides engine_requested;  ///< as typed, for the names `config_effective` writes
  /// The simulation's options. `closed_loop` is decided by the session from the samples
  /// (`workload::is_open_loop`: a trace brings its own schedule).
  sim::SimOptions options;
  workload::DatasetOptions dataset;  ///< `tokenizer` null (see the file comment)
  ReportSetup report;
  double timeline_interval_s = 0;  ///< seconds per timeline window; 0 = a tenth of the run
  double window_s = kDefaultWindowS;
  SimOutputPlan output;
  analysis::ValidityRule validity;  ///< the rule `RunResult::verdicts.validity` applies
  /// Set: the cluster runs instead of `engine` (which then stays unresolved), over the same
  /// workload; `options` lends it only `max_concurrency`.
  std::optional<ClusterPlan> cluster;
};

/// "<backend>-<rate>qps[-concurrency<N>]-<model>-<YYYYmmdd-HHMMSS>" (vLLM's file name), with
/// `label` in place of the backend when given, the request `rate` (req/s, inf), `max_concurrency`
/// as typed (≤ 0: no part) and `model` with '/' and ' ' replaced by '_'; `unix_time` is the
/// start time (seconds, shown in local time).
std::string default_result_stem(const std::string& label, const std::string& backend, double rate,
                                std::int64_t max_concurrency, const std::string& model,
                                std::int64_t unix_time);

}  // namespace llmbench::app
