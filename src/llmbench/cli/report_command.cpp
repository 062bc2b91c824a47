/// @file
/// `llmbench report`: reads results and sweep files (report::load_inputs) and writes one HTML
/// report (report::write_html_report), or their summary rows (or per-request records) as CSV or
/// Markdown (report/table_export.hpp), to a file or stdout.

#include "llmbench/cli/report_command.hpp"

#include "llmbench/cli/commands.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/report/html.hpp"
#include "llmbench/report/report.hpp"
#include "llmbench/report/table_export.hpp"
#include "llmbench/report/web_assets.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <memory>
#include <string_view>
#include <vector>

namespace llmbench::cli {

namespace {

using report::ExportFormat;

struct ReportFlags {
  std::vector<std::string> inputs;
  std::string output;
  std::string format = "html";
  bool per_request = false;
  bool compact = false;
  std::string title = report::ReportOptions{}.title;
  std::size_t max_timeline_requests = report::ReportOptions{}.max_timeline_requests;
};

int execute_report(const ReportFlags& f) {
  const ExportFormat format = report::parse_export_format(f.format);
  if (f.per_request && format == ExportFormat::Html)
    throw Exception(Error{"is for --format csv or markdown", "--per-request", -1});
  if (f.compact && (format != ExportFormat::Markdown || f.per_request))
    throw Exception(Error{"is for --format markdown (without --per-request)", "--compact", -1});
  if (format == ExportFormat::Html && !report::chart_library_available())
    throw Exception(Error{std::string(report::kChartLibraryMissing), "report", -1});
  const auto inputs = report::load_inputs(f.inputs);
  if (format == ExportFormat::Html) {
    const std::string path = f.output.empty() ? "llmbench-report.html" : f.output;
    if (path == "-")
      throw Exception(Error{"an HTML report is written to a file, not stdout", "-o", -1});
    report::write_html_report(
        inputs, {.title = f.title, .max_timeline_requests = f.max_timeline_requests}, path);
    log::info("report written to {}", path);
    return 0;
  }
  const std::string text = report::export_text(inputs, format, f.per_request, f.compact);
  if (f.output.empty() || f.output == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size())
      throw Exception(Error{"cannot write to stdout", "report", -1});
    return 0;
  }
  report::write_text_file(f.output, text, f.format);
  log::info("{} written to {}", f.format, f.output);
  return 0;
}

}  // namespace

void add_report_flag(CLI::App& app, std::string& path) {
  app.add_option("--report", path,
                 "Write the self-contained HTML report (docs/report.md) to this file at the end")
      ->check(
          [](const std::string&) {
            return report::chart_library_available() ? std::string()
                                                     : std::string(report::kChartLibraryMissing);
          },
          "FILE");
}

void write_report(const std::string& path, const report::ReportInputs& inputs) {
  report::write_html_report(inputs, {}, path);
  log::info("report written to {}", path);
}

Command add_report_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "report",
      "HTML report (self-contained, charts inlined), CSV or Markdown of results and "
      "sweep files");
  auto f = std::make_shared<ReportFlags>();
  sub->add_option("results", f->inputs,
                  "Results JSON of run / simulate (their records beside them) or sweep JSON")
      ->required();
  sub->add_option("-o,--output", f->output,
                  "Output file (html: default llmbench-report.html; csv / markdown: default "
                  "stdout, or -)");
  sub->add_option("--format", f->format, "One of: " + report::export_format_names())
      ->capture_default_str();
  sub->add_flag("--per-request", f->per_request,
                "csv / markdown: one row per request from the records instead of one per run");
  sub->add_flag("--compact", f->compact,
                "markdown: a short summary for a pull-request comment (shared configuration, "
                "one row per run with its verdict and key percentiles, the sweep's answers)");
  sub->add_option("--title", f->title, "html: the page title")->capture_default_str();
  sub->add_option("--max-timeline-requests", f->max_timeline_requests,
                  "html: most requests per run in the per-request timeline (an even sample "
                  "beyond)")
      ->capture_default_str();
  return [f] { return execute_report(*f); };
}

}  // namespace llmbench::cli
