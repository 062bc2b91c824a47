#pragma once
/// @file
/// `llmbench report RESULTS... [-o PATH] [--format html|csv|markdown] [--per-request]`
/// (docs/report.md): the HTML report, CSV or Markdown of results and sweep files; and the
/// `--report PATH` of `run` and `sweep`, which writes the HTML report at their end.

#include "llmbench/report/inputs.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace llmbench::cli {

/// Registers `--report PATH` (write the HTML report there at the end) bound to `path`. Parsing
/// fails (exit 2, before any request is sent) with `report::kChartLibraryMissing` when this
/// build has no chart library.
void add_report_flag(CLI::App& app, std::string& path);

/// Writes the HTML report of `inputs` (default `report::ReportOptions`) to `path` and logs where.
/// Throws `Exception` as `report::write_html_report` does.
void write_report(const std::string& path, const report::ReportInputs& inputs);

}  // namespace llmbench::cli
