#pragma once
/// @file
/// `llmbench run`'s flags as typed (the "requested" configuration, LoadGen's requested/effective
/// settings; docs/architecture.md): the workload and load shape of `WorkloadFlags`, the target and
/// request shape, outputs, and the built-in server's `--server-*` flags. `resolve_run`
/// (run_plan.hpp) turns them into a plan.

#include "llmbench/app/plan.hpp"
#include "llmbench/cli/server_flags.hpp"
#include "llmbench/cli/telemetry_flags.hpp"
#include "llmbench/cli/workload_flags.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::cli {

/// Everything `llmbench run` accepts, as typed. Names follow `vllm bench serve`.
struct RunFlags : WorkloadFlags {
  std::string base_url;  ///< `--base-url`; "" with no `--host` = start the built-in server
  std::string host;      ///< `--host`, used with `--port` when no `--base-url` is given
  int port = 0;          ///< `--port`; 0 = 8000 with `--host`
  std::string endpoint;  ///< "" = the backend's default endpoint
  std::string backend = "openai";
  std::string endpoint_type;      ///< vLLM's older `--endpoint-type`: read as `--backend`
  std::string model;              ///< "" = the first model of the server's /v1/models
  std::string served_model_name;  ///< vLLM's `--served-model-name`: the name sent, if given
  double duration_s = 0;          ///< > 0: send for this many seconds instead of a count
  std::int64_t num_warmups = 0;
  bool ignore_eos = false;
  std::optional<std::int64_t> min_tokens;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<std::int64_t> top_k;         ///< `--top-k` (vLLM, SGLang, llama.cpp)
  std::optional<double> min_p;               ///< `--min-p`
  std::optional<double> presence_penalty;    ///< `--presence-penalty` (OpenAI)
  std::optional<double> frequency_penalty;   ///< `--frequency-penalty` (OpenAI)
  std::optional<double> repetition_penalty;  ///< `--repetition-penalty` (vLLM, SGLang)
  std::string label;                         ///< `--label`: results label and file-name prefix
  std::vector<std::string> metadata;         ///< `--metadata KEY=VALUE ...` into the results
  bool append_result = false;  ///< `--append-result`: append one JSON line to the results file
  /// `--ready-check-timeout-sec`: wait this long for the server's model list to answer before
  /// giving up (0 = fail at once)
  double ready_check_timeout_s = 0;
  bool disable_stream = false;
  std::string ramp_up_strategy;             ///< `--ramp-up-strategy linear|exponential`; "" = none
  std::optional<double> ramp_up_start_rps;  ///< `--ramp-up-start-rps`
  std::optional<double> ramp_up_end_rps;    ///< `--ramp-up-end-rps`  ///< SGLang's
                                            ///< `--disable-stream`, the same as `--no-stream`
  std::string extra_body;                   ///< JSON object merged into every request body
  bool save_result = false;
  bool save_detailed = false;
  std::string result_dir;
  std::string result_filename;
  std::vector<std::string> headers;  ///< "Name: value"; values may be secrets
  std::string api_key;               ///< `--api-key`; "" = $OPENAI_API_KEY; never logged
  bool insecure = false;
  std::string ca_cert;     ///< `--ca-cert`: PEM file of the certificates to trust ("" = system's)
  int client_threads = 0;  ///< 0 = one per core
  std::vector<std::string> source_addresses;  ///< `--source-address`: local IPs to connect from
  double connect_timeout_s = 10;
  double first_byte_timeout_s = 600;
  double idle_timeout_s = 300;
  double timeout_s = 3600;
  bool no_stream = false;
  bool continuous_usage = false;
  bool no_prewarm = false;
  bool quiet = false;
  ServeFlags server;  ///< the built-in server (no --base-url): the `--server-*` flags
  /// `--gpu-telemetry`, `--scrape-metrics` (docs/telemetry.md)
  TelemetryFlags telemetry;
  double window_s = app::kDefaultWindowS;  ///< `--window-s`: seconds per window
  int num_gpus = 0;  ///< `--num-gpus`: GPUs behind the server, for per-GPU figures (0 = not given)
  std::string report_path;  ///< `--report`: the HTML report written at the end ("" = none)
  std::string history;      ///< `--history PATH`: SQLite run history (docs/compare.md "History")
};

/// The prefix of the built-in server's flags in `run` ("--server-tp", ...).
inline constexpr const char* kServerFlagPrefix = "server-";

/// Registers every `run` flag on `app`, bound to `flags` (which must outlive parsing).
void add_run_flags(CLI::App& app, RunFlags& flags);

}  // namespace llmbench::cli
