#include "llmbench/app/outputs.hpp"

#include "llmbench/app/history_record.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/metrics/record_io.hpp"
#include "llmbench/metrics/token_runs.hpp"
#include "llmbench/report/html.hpp"
#include "llmbench/report/inputs.hpp"
#include "llmbench/report/report.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <unistd.h>

namespace llmbench::app {

using nlohmann::json;

void prepare_result_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw Exception(
        Error{fmt::format("cannot create the results folder {}: {}", dir.string(), ec.message()),
              "--result-dir", -1});
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    throw Exception(Error{fmt::format("{} is not a folder", dir.string()), "--result-dir", -1});
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw Exception(
        Error{fmt::format("cannot write into {}: {}", dir.string(), std::strerror(errno)),
              "--result-dir", -1});
  }
}

std::ofstream open_for_writing(const std::filesystem::path& path) {
  errno = 0;
  std::ofstream out(path, std::ios::out | std::ios::trunc);
  if (!out) {
    throw Exception(Error{fmt::format("cannot open for writing: {}",
                                      errno != 0 ? std::strerror(errno) : "unknown reason"),
                          path.string(), -1});
  }
  return out;
}

void append_json_line(const std::filesystem::path& path, const json& document) {
  const auto old = read_file(path);
  std::ofstream out(path, std::ios::app | std::ios::binary);
  if (!out)
    throw Exception(Error{"cannot open for appending", path.string(), -1});
  if (old && !old->empty() && old->back() != '\n')
    out << '\n';
  out << document.dump() << '\n';
  if (!out.flush())
    throw Exception(Error{"cannot write", path.string(), -1});
}

std::unique_ptr<RecordsFile> open_records(const OutputPlan& output, const std::string& stem) {
  if (!output.save_records)
    return nullptr;
  prepare_result_dir(output.dir);
  auto file = std::make_unique<RecordsFile>();
  file->path = output.dir / (stem + ".records.jsonl");
  file->writer = std::make_unique<metrics::RecordFileWriter>(file->path.string());
  return file;
}

void write_run_outputs(RunResult& r, RecordsFile* records) {
  const RunPlan& plan = *r.run_plan;
  const OutputPlan& output = plan.output;
  const json document = r.to_json();
  const auto path = output.dir / (r.stem + ".json");
  if (output.save_result && output.append) {
    append_json_line(path, document);
    log::info("results appended to {}", path.string());
  } else if (output.save_result) {
    report::write_json_file(path.string(), document);
    log::info("results written to {}", path.string());
  }
  r.results_path = output.save_result ? path : std::filesystem::path();
  if (!output.history.empty()) {
    record_history(output.history, output.label, output.history_kind, document, r.results_path,
                   records != nullptr ? records->path : std::filesystem::path());
  }
  if (!output.report_path.empty()) {
    report::ReportInputs inputs;
    inputs.runs.push_back({.name = report::run_name(document, r.stem),
                           .source = r.results_path.string(),
                           .results = document,
                           .records = r.records,
                           .records_loaded = true,
                           .records_note = {}});
    report::write_html_report(inputs, {}, output.report_path);
    log::info("report written to {}", output.report_path);
  }
  if (records == nullptr)
    return;
  r.records_lost = records->writer->lost();
  if (r.records_lost > 0) {
    r.records_error = records->writer->error();
    log::error(
        "{} of {} per-request records were lost writing {} ({}); the summary above "
        "counts every request",
        r.records_lost, r.records_lost + records->writer->written(), records->path.string(),
        r.records_error);
    r.exit_code = 1;
    return;
  }
  log::info("per-request records written to {}", records->path.string());
}

void write_sim_outputs(RunResult& r) {
  const SimPlan& plan = *r.sim_plan;
  const auto& dir = plan.output.dir;
  const auto& engine = plan.engine;
  r.start_time = std::chrono::system_clock::now();
  const std::string date = fmt::format(
      "{:%Y%m%d-%H%M%S}", fmt::localtime(std::chrono::system_clock::to_time_t(r.start_time)));
  r.stem = plan.output.stem.empty()
               ? fmt::format("{}-{}-{}-tp{}-{}",
                             plan.output.label.empty() ? "simulate" : plan.output.label,
                             engine.model.name, engine.gpu.name, engine.memory.tp, date)
               : plan.output.stem;
  r.records_path = dir / (r.stem + ".records.jsonl");
  metrics::expand_token_runs(r.tokens, r.records);
  {
    std::ofstream records_out = open_for_writing(r.records_path);
    for (const auto& record : r.records)
      records_out << metrics::record_to_json_line(record) << '\n';
    if (!records_out)
      throw Exception(Error{"cannot write the records", r.records_path.string(), -1});
  }
  const auto path = dir / (r.stem + ".json");
  report::write_json_file(path.string(), r.to_json());
  r.results_path = path;
  log::info("results written to {}, per-request records to {}", path.string(),
            r.records_path.string());
}

void write_step_trace(const std::string& path, const std::vector<sim::StepTrace>& steps) {
  std::ofstream trace(path, std::ios::out | std::ios::trunc);
  trace << sim::steps_to_chrome_trace(steps);
  if (!trace)
    throw Exception(Error{"cannot write the trace", path, -1});
  log::info("step trace ({} steps) written to {}", steps.size(), path);
}

std::string file_safe(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-' || c == '+' || c == '=';
    if (!safe)
      c = '_';
  }
  return out;
}

}  // namespace llmbench::app
