#pragma once
/// @file
/// The workload and load-shape flags that `run` and `simulate` share (vLLM `bench serve` names),
/// registered once so both commands accept the same spelling, defaults and help.

#include "llmbench/app/plan.hpp"
#include "llmbench/workload/dataset.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::cli {

/// Dataset selection and load shape as typed on the command line.
struct WorkloadFlags {
  std::string dataset_name = "mtbench";
  std::string dataset_path;
  std::int64_t num_prompts = 200;
  std::uint64_t seed = 0;
  std::int64_t random_input_len = 1024;
  std::int64_t random_output_len = 128;
  double random_range_ratio = 0.0;
  std::int64_t random_prefix_len = 0;
  std::string random_prompt_kind = "text";  ///< text | token-ids
  std::string tokenizer;                    ///< `--tokenizer` PATH or NAME; empty = none
  std::int64_t sonnet_input_len = 550;
  std::int64_t sonnet_output_len = 150;
  std::int64_t sonnet_prefix_len = 200;
  std::int64_t output_len = -1;       ///< -1 = the dataset's own (else 256)
  std::int64_t max_concurrency = -1;  ///< -1 = no cap
  std::string request_rate = "inf";   ///< parsed by `parse_positive_or_inf`
  std::string burstiness = "1.0";
  std::vector<std::string> goodput;  ///< `--goodput` SLOs, `metrics::parse_slo`
  std::string percentile_metrics = "ttft,tpot,itl,e2el";  ///< comma-separated metric names
  std::string metric_percentiles = "50,90,95,99";         ///< comma-separated percentiles
  // trace replay (`--dataset-name trace`, workload/trace.hpp)
  std::string trace_format;  ///< `--trace-format`; empty = detected from the file
  double trace_speedup = 1;
  double trace_start_s = 0;
  double trace_duration_s = std::numeric_limits<double>::infinity();
  bool trace_spread = false;
  std::int64_t trace_block_size = 512;
  std::string corpus;  ///< `--corpus`: text the synthetic prompts are cut from; empty = bundled
  workload::SharedPrefixOptions gsp;                    ///< `--gsp-*` (SGLang names)
  std::string gsp_popularity = "uniform";               ///< `--gsp-popularity`
  workload::PrefixRepetitionOptions prefix_repetition;  ///< `--prefix-repetition-*` (vLLM)
  std::int64_t long_doc_input_len = 32768;              ///< `--long-doc-input-len`
  // conversations (docs/workloads.md "Conversations")
  bool multi_turn = false;                ///< `--multi-turn`
  std::int64_t max_turns = 0;             ///< `--max-turns`; 0 = every turn
  double think_time_ms = 0;               ///< `--think-time-ms`
  std::string think_time_dist = "fixed";  ///< `--think-time-dist`: fixed | exponential
  /// Long names ("--random-input-len") of the flags given on the command line (`given_flags`
  /// after parsing): conflict checks tell a choice from a default with it.
  std::vector<std::string> given;
};

/// Registers --tokenizer, --dataset-name, --dataset-path, --num-prompts, --seed, --random-*
/// (--random-prompt-kind included), --sonnet-*,
/// --output-len (aliases --sharegpt-output-len, --custom-output-len), --max-concurrency,
/// --request-rate, --burstiness, --goodput, --percentile-metrics and --metric-percentiles on
/// `app`, bound to `flags` (which must outlive parsing).
void add_workload_flags(CLI::App& app, WorkloadFlags& flags);

/// Long names ("--seed", "--server-tp") of the options of `app` that were given on its command
/// line, in registration order. Call after parsing.
std::vector<std::string> given_flags(const CLI::App& app);

/// True when `flag` ("--seed") is in `flags.given`.
bool was_given(const WorkloadFlags& flags, const std::string& flag);

/// Checks the workload flags beyond parsing: a dataset's own flags (`--random-*`, `--sonnet-*`)
/// given with another `--dataset-name` are an error (they would be ignored), and
/// `--percentile-metrics` must name a metric; `--max-turns`, `--think-time-ms` and
/// `--think-time-dist` need `--multi-turn` and valid values. Throws `Exception` naming the flag.
void check_workload_flags(const WorkloadFlags& flags);

/// Parses `--request-rate` and `--burstiness` (`parse_positive_or_inf`), `--metric-percentiles`
/// (`parse_percentiles`), `--percentile-metrics` (`split_csv`, then
/// `report::check_percentile_metrics`) and `--goodput` (`metrics::parse_slo`), in that order.
/// Throws `Exception` naming the flag on a bad value.
app::ReportSetup report_setup(const WorkloadFlags& flags);

/// The dataset options for `num_prompts` samples from the flags, with the bundled data folder
/// (`data_dir()`) filled in; with a tokenizer (loaded by the session, never set here) lengths are
/// counted as a completions server counts them unless `chat` (then the content alone).
workload::DatasetOptions dataset_options(const WorkloadFlags& flags, std::int64_t num_prompts,
                                         bool chat = false);

/// The names of the workload flags as typed (`app::WorkloadNames`).
app::WorkloadNames workload_names(const WorkloadFlags& flags);

/// True for `--dataset-name trace` without `--num-prompts`: every row of the window is replayed
/// (the dataset then decides the request count).
bool whole_trace(const WorkloadFlags& flags);

}  // namespace llmbench::cli
