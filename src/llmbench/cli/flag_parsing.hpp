#pragma once
/// @file
/// Flag-value parsing shared by the subcommands (`run`, `simulate`, ...). Errors throw
/// `llmbench::Exception` naming the flag and the byte offset in its value.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace llmbench::cli {

/// Parses a positive number or "inf"/"Inf"/"infinity" (`--request-rate`, `--burstiness`).
double parse_positive_or_inf(const std::string& text, const char* flag);

/// Splits "a,b,,c" into {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_csv(const std::string& text);

/// Parses `--metric-percentiles` ("50,90,99.9"): each item a number in [0, 100].
std::vector<double> parse_percentiles(const std::string& text);

/// Folder of the bundled data: $LLMBENCH_DATA_DIR, else the source tree's data/ at build time.
std::string data_dir();

/// Creates the results folder `dir` (with parents) if needed and checks that files can be
/// created in it, before any work is done. Throws `Exception` naming `--result-dir` (or the
/// path) with the system's reason ("Permission denied", "Not a directory", ...).
void prepare_result_dir(const std::filesystem::path& dir);

/// Opens `path` for writing (truncating); throws `Exception` naming the path and the system's
/// reason when it cannot.
std::ofstream open_for_writing(const std::filesystem::path& path);

}  // namespace llmbench::cli
