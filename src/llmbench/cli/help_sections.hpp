#pragma once
/// @file
/// `run`, `sweep` and `simulate --help` in sections (target, TLS, load, dataset, sampling and
/// request shape, output, telemetry, the built-in server), the built-in server's `--server-*`
/// flags shown only by `--help-all`, and examples at the end.

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

namespace llmbench::cli {

/// The section a flag of `run` belongs to ("--max-concurrency" → "Load"), or "" when none of
/// the section table's rules names it.
std::string_view help_section(std::string_view flag);

/// Puts every option of `app` with a long name into its `help_section` (those it names), leaving
/// options with no section where they are; the `--server-*` flags go to the "Built-in server"
/// section when `show_all`, else are hidden (a line of the footer says how to see them).
void apply_help_sections(CLI::App& app, bool show_all);

/// True when the command line asked for `--help-all` (`cli::run` reads it before parsing and
/// turns it into `--help`).
bool help_all_requested() noexcept;

/// Records that `--help-all` was asked for.
void request_help_all() noexcept;

/// The examples `run --help` ends with.
std::string run_examples();

}  // namespace llmbench::cli
