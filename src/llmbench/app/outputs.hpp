#pragma once
/// @file
/// The files of a point (docs/metrics.md, "Output files"): the results folder checked before any
/// work, the per-request JSONL opened before the load, the results JSON written or appended,
/// the `--history` entry and the `--report` page after it.

#include "llmbench/app/plan.hpp"
#include "llmbench/app/result.hpp"
#include "llmbench/metrics/record_file.hpp"
#include "llmbench/sim/engine.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace llmbench::app {

/// Creates the results folder `dir` (with parents) if needed and checks that files can be
/// created in it, before any work is done. Throws `Exception` naming `--result-dir` with the
/// system's reason ("Permission denied", "Not a directory", ...).
void prepare_result_dir(const std::filesystem::path& dir);

/// `text` with every character outside [A-Za-z0-9.+=-] replaced by '_': a part of a file name
/// made from a knob's or an axis's value (sweep point and server log names).
std::string file_safe(const std::string& text);

/// Opens `path` for writing (truncating); throws `Exception` naming the path and the system's
/// reason when it cannot.
std::ofstream open_for_writing(const std::filesystem::path& path);

/// Appends `document` as one JSON line to `path` (vLLM's --append-result: one result per line),
/// starting a new line first when the file does not end with one. Throws `Exception`.
void append_json_line(const std::filesystem::path& path, const nlohmann::json& document);

/// A point's per-request JSONL, written on loadgen's writer thread (every write checked:
/// `metrics::RecordFileWriter`).
struct RecordsFile {
  std::filesystem::path path;
  std::unique_ptr<metrics::RecordFileWriter> writer;
};

/// With `output.save_records`: the results folder checked and `<dir>/<stem>.records.jsonl`
/// opened, before the load, so a bad folder costs no requests; null otherwise. Throws
/// `Exception`.
std::unique_ptr<RecordsFile> open_records(const OutputPlan& output, const std::string& stem);

/// The outputs of a finished `run` point: the results JSON (written, or appended with
/// `--append-result`), the history entry, the HTML report, and the records file's fate (a lost
/// record is an error and makes the exit code 1). Sets `r.results_path`, `records_lost`,
/// `records_error` and `exit_code`.
void write_run_outputs(RunResult& r, RecordsFile* records);

/// The outputs of a finished `simulate` point: `<stem>.records.jsonl` (the format of `run`'s,
/// virtual ns from 0, so measured and simulated runs are compared record by record with the
/// same code; the token runs written as chunks) and `<stem>.json`. Sets `r.stem`,
/// `records_path` and `results_path`. Throws `Exception` when a file cannot be written.
void write_sim_outputs(RunResult& r);

/// `--trace`: the engine steps as a Chrome trace (`sim::steps_to_chrome_trace`) at `path`.
/// Throws `Exception` naming the path when it cannot be written.
void write_step_trace(const std::string& path, const std::vector<sim::StepTrace>& steps);

}  // namespace llmbench::app
