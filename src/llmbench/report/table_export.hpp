#pragma once
/// @file
/// CSV and Markdown export of results and sweep files (docs/report.md "CSV and Markdown"): one
/// row per run or sweep point with its summary metrics, and a per-request CSV of the records.

#include "llmbench/report/inputs.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::report {

/// The results-JSON keys of a summary row, in column order (vLLM's key names, docs/metrics.md).
inline constexpr std::array<std::string_view, 22> kSummaryColumns{"completed",
                                                                  "failed",
                                                                  "duration",
                                                                  "request_throughput",
                                                                  "output_throughput",
                                                                  "total_token_throughput",
                                                                  "request_goodput",
                                                                  "mean_ttft_ms",
                                                                  "median_ttft_ms",
                                                                  "p99_ttft_ms",
                                                                  "mean_tpot_ms",
                                                                  "median_tpot_ms",
                                                                  "p99_tpot_ms",
                                                                  "mean_itl_ms",
                                                                  "median_itl_ms",
                                                                  "p99_itl_ms",
                                                                  "mean_e2el_ms",
                                                                  "median_e2el_ms",
                                                                  "p99_e2el_ms",
                                                                  "total_input_tokens",
                                                                  "total_output_tokens",
                                                                  "max_concurrent_requests"};

/// A table of cells: each cell a JSON string, number or null (undefined).
// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json's destructor, as RunData
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<nlohmann::json>> rows;  ///< each as long as `header`
};

/// The configuration columns of a summary row, after `status` (docs/report.md "CSV and
/// Markdown"): `verdict` (the badges of report/verdicts.hpp, "invalid, unstable, 3 spikes"),
/// `differs` (the run's values of the knobs in which the rows differ, "max_num_seqs 256"),
/// then what the run was: model, backend, dataset, mean input and output tokens per request,
/// num_prompts, request_rate, max_concurrency, gpus, date, git_sha.
inline constexpr std::array<std::string_view, 13> kConfigColumns{"verdict",
                                                                 "differs",
                                                                 "model",
                                                                 "backend",
                                                                 "dataset",
                                                                 "mean_input_tokens",
                                                                 "mean_output_tokens",
                                                                 "num_prompts",
                                                                 "request_rate",
                                                                 "max_concurrency",
                                                                 "gpus",
                                                                 "date",
                                                                 "git_sha"};

/// One row per run of `inputs.runs` (in order), then one per point of each sweep (every point
/// of its `points`, those that failed to run included): columns `run` (the run's name or the
/// point's "p<NN> axis=value"), `sweep` (the sweep's name, "" for a run), one column per sweep
/// axis (the union over the sweeps, in first-seen order; empty for a run), `status` ("ok" for a
/// run; the point's status), `kConfigColumns`, then `kSummaryColumns`. A point's metrics come
/// from its results file when it was read, else from the sweep JSON's row; a key that neither
/// has is null.
Table summary_table(const ReportInputs& inputs);

/// The table of `to_compact_markdown`: one row per run, then per sweep point sorted by
/// configuration and load, with the columns run, differs (only when the rows differ), verdict,
/// failed, req/s, out tok/s, TTFT p50, TTFT p99, TPOT p99, ITL p99, E2EL p99 (ms).
Table compact_table(const ReportInputs& inputs);

/// A Markdown summary short enough for a pull-request comment (`report --format markdown
/// --compact`): one line with what every row shares (model, backend, dataset and lengths, load
/// where it is shared, llmbench version), then `compact_table` as a GitHub table, then the runs'
/// headline answers (knee, SLO answer) as bullets.
std::string to_compact_markdown(const ReportInputs& inputs);

/// One row per record of every run and sweep point (warm-ups included, flagged): run, id,
/// warmup, status ("ok" or the error kind), http_status, scheduled_s, sent_s, ttft_ms, tpot_ms,
/// itl_mean_ms, e2el_ms, input_tokens, output_tokens (as the summary counts them), chunks,
/// finish_reason, error_message. Latencies of failed requests are null. Throws `Exception`
/// naming the run when its records could not be read (`RunData::records_note`).
Table records_table(const ReportInputs& inputs);

/// RFC 4180 CSV of `table`: a header line, then one line per row, CRLF-free ('\n' line ends);
/// a field with a comma, a double quote or a line break is quoted, quotes doubled; numbers in
/// their shortest round-trip form; null as an empty field.
std::string to_csv(const Table& table);

/// A GitHub-flavoured Markdown table of `table`: integers as written, other numbers with two
/// decimals, null as "n/a", '|' in text escaped as "\|" and line breaks as spaces.
std::string to_markdown(const Table& table);

/// What `llmbench report` writes (`--format`).
enum class ExportFormat : std::uint8_t { Html, Csv, Markdown };

/// The formats' names in order, comma-separated ("html, csv, markdown"): the help and the
/// error of `parse_export_format`.
std::string export_format_names();

/// The format named `text`; throws `Exception` naming `--format` with the valid names.
ExportFormat parse_export_format(const std::string& text);

/// The CSV or Markdown text of `inputs`: the summary rows, or the records' rows
/// (`per_request`), or the compact Markdown summary (`compact`, Markdown only).
std::string export_text(const ReportInputs& inputs, ExportFormat format, bool per_request,
                        bool compact);

}  // namespace llmbench::report
