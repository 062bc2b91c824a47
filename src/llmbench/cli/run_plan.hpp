#pragma once
/// @file
/// The typed plan of `llmbench run` (issue 13 item 1): `resolve_run` turns the parsed flags into
/// the load options, the built-in server's options (if any), the dataset options and the output
/// paths, checking every flag, with no network, no server started and nothing written. `run` is
/// then resolve → start target → run → report (run_command.cpp).

#include "llmbench/cli/run_flags.hpp"
#include "llmbench/cli/server_flags.hpp"
#include "llmbench/cli/workload_flags.hpp"
#include "llmbench/loadgen/loadgen.hpp"
#include "llmbench/server/options.hpp"
#include "llmbench/workload/dataset.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::cli {

/// What `resolve_run` reads from the process's surroundings, passed in so that it stays pure.
struct ResolveEnv {
  std::string api_key;                ///< $OPENAI_API_KEY ("" when unset)
  int hardware_threads = 1;           ///< cores (the default `--client-threads`)
  std::int64_t open_file_limit = -1;  ///< RLIMIT_NOFILE after raising it; ≤ 0 = unknown
  std::int64_t memory_bytes = 0;      ///< physical memory; ≤ 0 = unknown (no size check)
  std::string data_dir;               ///< bundled data (`data_dir()`): profiles, datasets

  /// The environment of this process: reads $OPENAI_API_KEY and raises the open-file limit
  /// (`server::raise_open_file_limit`, the one side effect).
  static ResolveEnv current();
};

/// The built-in server `run` starts when no `--base-url` or `--host` is given.
struct BuiltinServerPlan {
  /// As `serve` would use them (the tokenizer is set at start); with `Timing::Engine`,
  /// `options.engine` holds the resolved engine (`sim::EngineSpec`) and its admission window.
  server::ServerOptions options;
};

/// Where the outputs go.
struct OutputPlan {
  bool save_result = false;    ///< write <stem>.json (`--save-result`)
  bool save_detailed = false;  ///< per-request arrays in it (`--save-detailed`)
  bool save_records = false;   ///< write <stem>.records.jsonl (`--save-result` or `--result-dir`)
  std::filesystem::path dir = ".";
  /// `--result-filename` without its extension; "" = `default_result_stem` once the model is
  /// known.
  std::string stem;
  /// `--append-result`: add the results as one JSON line at the end of <stem>.json (vLLM's
  /// habit for collecting runs in one file); implies `save_result`.
  bool append = false;
  /// `--metadata KEY=VALUE`, in the order given (later keys replace earlier ones).
  std::vector<std::pair<std::string, std::string>> metadata{};
};

/// Everything a run needs, resolved and checked.
struct RunPlan {
  /// The load: `url` is set when a target URL was given (empty for the built-in server until it
  /// listens), `model` is "" when it is to be read from /v1/models, `tokenizer` is set once the
  /// tokenizer is loaded. `max_concurrency` is already capped below the open-file limit.
  loadgen::LoadOptions load;
  std::optional<BuiltinServerPlan> builtin;  ///< set when the built-in server is to be started
  workload::DatasetOptions dataset;          ///< `num_prompts` = samples to load (warm-ups too)
  std::string tokenizer;                     ///< `--tokenizer` as given ("" = none)
  ReportSetup report;                        ///< rate, burstiness, percentiles, SLO
  OutputPlan output;
  bool progress = true;               ///< live progress line (off with `--quiet`)
  std::vector<std::string> warnings;  ///< to print before the run (a flag not honoured, ...)
};

/// Resolves `flags` into a plan. Pure: reads only `flags`, `env` and the profile files under
/// `env.data_dir` (for the built-in engine). Throws `Exception` naming the flag on a bad value or
/// a conflict: `--host`/`--port` with `--base-url`, `--port` without `--host`, `--server-*` flags
/// with a target given, a dataset's flags with another dataset, a URL with a query
/// (`http::parse_url`). The API key is `--api-key`, else `env.api_key`; it is not sent when
/// `--header` sets Authorization (a warning says so).
RunPlan resolve_run(const RunFlags& flags, const ResolveEnv& env);

/// "<backend>-<rate>qps[-concurrency<N>]-<model>-<YYYYmmdd-HHMMSS>" (vLLM's file name) from
/// `--backend` and `--max-concurrency` as typed, the request `rate` (req/s, inf) and `model`
/// with '/' and ' ' replaced by '_'; `unix_time` is the start time (seconds, shown in local time).
std::string default_result_stem(const RunFlags& flags, double rate, const std::string& model,
                                std::int64_t unix_time);

}  // namespace llmbench::cli
