#pragma once
/// @file
/// Flag-value parsing shared by the subcommands (`run`, `simulate`, ...). Errors throw
/// `llmbench::Exception` naming the flag and the byte offset in its value.

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

}  // namespace llmbench::cli
