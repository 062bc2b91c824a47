#pragma once
/// @file
/// The state of a `run` between its steps (workload, target, outputs) and its last step, the
/// report: console table with the load-accuracy lines, the results JSON (`config_requested`
/// from the flags, `config_effective` from the plan that ran, config_json.hpp).

#include "llmbench/cli/run_flags.hpp"
#include "llmbench/cli/run_plan.hpp"
#include "llmbench/cli/run_telemetry.hpp"
#include "llmbench/cli/steady_state.hpp"
#include "llmbench/loadgen/loadgen.hpp"
#include "llmbench/metrics/record_file.hpp"
#include "llmbench/server/server.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"
#include "llmbench/workload/dataset.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::cli {

/// The loaded workload: the tokenizer (which the plan's load options point at) and samples.
struct RunWorkload {
  std::optional<tokenizer::Tokenizer> tokenizer;
  /// The tokenizer's chat template, for chat endpoints (prompt lengths, the built-in server).
  std::optional<tokenizer::ChatTemplate> chat_template;
  std::vector<workload::Sample> samples;
};

/// The running target: the built-in server (null for a given URL; owned by the caller of
/// `run`'s steps, so that stopping it stays out of a destructor) and its /v1/models answer (null
/// when it gave none).
// clang-tidy's exception-escape finding here is nlohmann::json's noexcept destructor, whose loop
// over nested values grows a std::vector (only bad_alloc, which ends the process anyway).
// NOLINTNEXTLINE(bugprone-exception-escape)
struct RunTarget {
  server::Server* builtin = nullptr;
  nlohmann::json server_models = nullptr;
};

/// The opened outputs: the file stem, the per-request JSONL (non-null when records are saved;
/// written on loadgen's writer thread, every write checked: metrics::RecordFileWriter).
struct RunOutputs {
  std::chrono::system_clock::time_point start_time;
  std::string stem;
  std::filesystem::path records_path;
  std::unique_ptr<metrics::RecordFileWriter> records;
  std::unique_ptr<RunTelemetry> telemetry;  ///< started before the load, stopped after it
};

/// The requested and effective configuration of `run` for the results JSON: requested =
/// `run_flags_json(flags)`; effective = the load, dataset and report setup of `plan`, the
/// built-in server that ran (null for a given URL) and the number of samples loaded.
nlohmann::json run_effective_config(const RunFlags& flags, const RunPlan& plan,
                                    std::size_t samples);

/// `--save-detailed`'s per-request arrays, one entry per measured (non-warm-up) record in
/// order, named as `vllm bench serve` names them where it has them: `ttfts`, `tpots`, `e2els`
/// (seconds; null where undefined: TPOT for N < 2 or output in one chunk, docs/metrics.md, and
/// every latency of a failed request, which enters no figure), `itls` (per request the
/// per-token ITL samples the summary's ITL is made of, in seconds: `metrics::append_itl_ms`;
/// vLLM lists one gap per chunk; empty for a failed request), `input_lens`, `output_lens`
/// (`metrics::input_token_count`, `output_token_count`) and `errors` ("" when it completed).
nlohmann::json detailed_arrays(const std::vector<metrics::RequestRecord>& records);

/// One warning per flag of `load`'s request shape that its backend cannot send
/// (`protocol::unhonoured_flags`), naming the flag and the backend; printed once before the run.
std::vector<std::string> unhonoured_flag_warnings(const loadgen::LoadOptions& load);

/// Summarizes `result` and its time windows (`--window-s`), prints the console table (with the
/// requested and achieved send rates, connections, local token counts, the stability verdict),
/// writes the results JSON with `--save-result`, and returns the exit code: 1 when a request
/// failed or the run was interrupted, else 0. With `point` (a sweep's point) the console table is
/// not printed and the summary, windows and results document are stored there.
int report_run(const RunFlags& flags, const RunPlan& plan, const RunWorkload& workload,
               const RunTarget& target, loadgen::LoadResult& result, const RunOutputs& outputs,
               PointReport* point = nullptr);

}  // namespace llmbench::cli
