#pragma once
/// @file
/// Flag-value parsing shared by the subcommands (`run`, `simulate`, ...). Errors throw
/// `llmbench::Exception` naming the flag and the byte offset in its value.

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace llmbench::cli {

/// Parses a positive number or "inf"/"Inf"/"infinity" (`--request-rate`, `--burstiness`). A
/// number too large for a double ("1e400") is an error, not infinity: infinity is asked for by
/// name.
double parse_positive_or_inf(const std::string& text, const char* flag);

/// A CLI11 check for unsigned options (`--seed`, tokdiff's counts): the value must be a
/// non-negative integer, so "-1" is rejected instead of wrapping to 2^64 − 1 (CLI11 2.1 reads
/// unsigned values with `strtoull`, which negates "-1" modulo 2^64).
CLI::Validator non_negative_integer();

/// Throws `Exception` naming `flag` unless `lo <= value <= hi` (NaN fails); `what` describes
/// the valid values in the message ("a number of seconds in [0.001, 1e7]").
void require_in_range(double value, double lo, double hi, const std::string& flag,
                      const std::string& what);

/// Splits "a,b,,c" into {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_csv(const std::string& text);

/// Parses `--metric-percentiles` ("50,90,99.9"): each item a number in [0, 100].
std::vector<double> parse_percentiles(const std::string& text);

/// Folder of the bundled data (profiles, corpus, datasets): $LLMBENCH_DATA_DIR when set; else the
/// source tree's data/ at build time when it exists; else, for a binary copied elsewhere (an
/// install, another machine), `<binary's folder>/../share/llmbench/data` or `<binary's
/// folder>/data`, the first that exists; else the build-time folder (whose absence the reader
/// reports with its path).
std::string data_dir();

/// Registers `--window-s` (seconds per window of the results' `windows`) bound to `window_s`.
void add_window_flag(CLI::App& app, double& window_s);

/// Throws `Exception` naming `--window-s` unless 0.001 ≤ `window_s` ≤ 1e6.
void check_window(double window_s);

}  // namespace llmbench::cli
