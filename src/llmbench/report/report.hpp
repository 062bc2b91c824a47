#pragma once
/// @file
/// Console and JSON reports of a run's `metrics::Summary`. The console layout and the JSON key
/// names of shared metrics are those of vLLM's `vllm bench serve` (its result table and
/// `--save-result` file), so users' habits and scripts carry over (README.md "Benchmarking a
/// server"); llmbench's own numbers are added beside them with the same naming pattern.

#include "llmbench/metrics/summary.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::report {

/// Options for the console table.
struct ConsoleOptions {
  /// Metrics that get a percentile section, in order (`--percentile-metrics`). vLLM's: ttft,
  /// tpot, itl, e2el; ours: ttfat, inter_chunk, ttft_sched, e2el_sched, lateness, queue_wait.
  std::vector<std::string> percentile_metrics{"ttft", "tpot", "itl"};
  /// Print "Request goodput (req/s)" (vLLM prints it only when `--goodput` was given).
  bool show_goodput = false;
  /// Printed as "Maximum request concurrency" when set (`--max-concurrency`), as vLLM does.
  std::optional<int> max_concurrency;
  /// Printed as "Request rate configured (RPS)" when set and finite (`--request-rate`).
  std::optional<double> request_rate;
  /// Extra "label: value" lines printed in a "Load Generator" section before the closing line
  /// (requested vs achieved send rate, connections opened). Values are pre-formatted.
  std::vector<std::pair<std::string, std::string>> load_lines;
};

/// Names accepted in `ConsoleOptions::percentile_metrics`, in their canonical order.
const std::vector<std::string_view>& percentile_metric_names();

/// Throws `Exception` naming `--percentile-metrics` and the first unknown name in `names`.
void check_percentile_metrics(const std::vector<std::string>& names);

/// Renders the result table as text. Layout (vLLM `bench serve`): a 50-wide
/// "============ Serving Benchmark Result ============" banner; lines formatted like Python's
/// "{:<40} {:<10}" (label padded to 40, one space, value left-aligned in 10 with trailing blanks;
/// floats with 2 decimals, "n/a" for a metric with no samples); per metric a 50-wide '-'-filled
/// centered header and Mean / Median / P<q> lines (q printed as an integer when whole, e.g. P99,
/// else P99.9); then llmbench's extra sections (failures by kind with their most frequent messages,
/// token accounting with requested against delivered output, client lateness, queue wait when
/// requests waited for a slot); a closing line of 50 '='. Throws `Exception` on an unknown
/// percentile metric.
std::string console_text(const metrics::Summary& summary, const ConsoleOptions& options);

/// Warnings a summary calls for, one sentence each (today: outputs that arrived in one chunk,
/// so the stream was not incremental and their TPOT is undefined). Empty when there are none.
std::vector<std::string> summary_warnings(const metrics::Summary& summary);

/// Writes `console_text(summary, options)` to `out` (e.g. stdout), then logs each of
/// `summary_warnings(summary)` as a warning (stderr).
void print_console(std::FILE* out, const metrics::Summary& summary, const ConsoleOptions& options);

/// What the results JSON records about how the run was made (LoadGen-style: what was asked,
/// what was used, version and seed).
struct RunInfo {
  std::string date;          ///< local time of the run start, "%Y%m%d-%H%M%S" like vLLM
  std::string backend;       ///< `--backend` (e.g. "openai-chat", "vllm")
  std::string model_id;      ///< `--model`
  std::string tokenizer_id;  ///< `--tokenizer` (the model id when not given)
  std::string base_url;
  std::string endpoint;
  std::int64_t num_prompts = 0;
  double request_rate = 0;  ///< req/s; +inf (all at once) is written as the string "inf"
  double burstiness = 1.0;
  int max_concurrency = -1;  ///< -1 = no limit (written as null)
  std::uint64_t seed = 0;
  std::string tool_version;  ///< llmbench version
  std::string git_sha;       ///< git SHA llmbench was built from
  std::string host;  ///< the client's host name (`host`); "" writes this machine's (gethostname)
  nlohmann::json config_requested = nlohmann::json::object();  ///< configuration as asked
  nlohmann::json config_effective = nlohmann::json::object();  ///< after validation/defaults
  nlohmann::json server_models = nlohmann::json::object();     ///< the server's `/v1/models`
  std::int64_t run_start_steady_ns = 0;  ///< absolute steady clock of record time 0
  /// `--metric-percentiles`: written as given and the p<q> keys of every metric (a value the
  /// summary lacks is null); when empty, each metric's own `Stats::percentiles` are written.
  std::vector<double> percentiles;
  metrics::Slo slo;  ///< `--goodput`; when none is set `request_goodput` is null (as vLLM)
  /// Extra keys (e.g. vLLM's `--metadata KEY=VALUE`) merged into the top level last, so they
  /// override computed keys of the same name. Must be an object or null.
  nlohmann::json extra = nlohmann::json::object();
};

/// The results document (the `--save-result` file). Shared metrics use vLLM's key names
/// exactly: duration, completed, total_input_tokens, total_output_tokens, request_throughput,
/// request_goodput, output_throughput, total_token_throughput, max_output_tokens_per_s,
/// max_concurrent_requests, and for ttft, tpot, itl, e2el: mean_<m>_ms, median_<m>_ms,
/// std_<m>_ms, p<q>_<m>_ms (q as vLLM formats it: p50, p99, p99.9). llmbench adds min_<m>_ms and
/// max_<m>_ms for those and the same set for ttfat, inter_chunk, ttft_sched, e2el_sched,
/// lateness and queue_wait, plus failed, failures_by_kind, top_errors_by_kind (kind → [{message,
/// count}]), token_count_mismatches, usage_missing, single_chunk_outputs,
/// finished_before_max_tokens, total_requested_output_tokens, requests_with_max_tokens,
/// good_requests, total_requests, host and the run information of `info`. Non-finite numbers are
/// written as null (JSON has no NaN); an infinite request rate as "inf". Throws `Exception` when
/// `info.extra` is neither an object nor null.
nlohmann::json results_json(const metrics::Summary& summary, const RunInfo& info);

/// vLLM's spelling of a percentile in key names and labels: "99" for 99.0, "99.9" for 99.9
/// (Python's `str(int(p)) if int(p) == p else str(p)`).
std::string percentile_label(double q);

/// Writes `document` (2-space indented, trailing newline) to `path` atomically: into a
/// temporary file beside it, then renamed over `path`, so readers never see half a file.
/// Throws `Exception` naming the path on any failure (the temporary file is removed).
void write_json_file(const std::string& path, const nlohmann::json& document);

/// Writes `text` to `path` atomically as `write_json_file` does; errors read "cannot write
/// <what_file>: ..." (e.g. "results", "report").
void write_text_file(const std::string& path, std::string_view text, std::string_view what_file);

}  // namespace llmbench::report
