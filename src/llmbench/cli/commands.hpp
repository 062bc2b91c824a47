#pragma once
/// @file
/// Subcommand registration (one file per subcommand). Each `add_*` registers its flags on the
/// CLI11 app and returns the callable that runs the command after parsing.

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>

namespace llmbench::cli {

/// Runs a parsed subcommand; returns the process exit code.
using Command = std::function<int()>;

/// `llmbench run`: benchmark an endpoint (or the built-in server when no --base-url is given).
Command add_run_command(CLI::App& app);
/// `llmbench serve`: the built-in OpenAI-compatible server.
Command add_serve_command(CLI::App& app);
/// `llmbench simulate`: the workload in virtual time through the simulated engine (no HTTP).
Command add_simulate_command(CLI::App& app);
/// `llmbench sweep`: a ladder of `run` or `simulate` points, knee and SLO search (docs/sweep.md).
Command add_sweep_command(CLI::App& app);
/// `llmbench calibrate`: fit the simulator to measured points or a live server.
Command add_calibrate_command(CLI::App& app);
/// `llmbench plan`: KV-cache capacity arithmetic for a model on a GPU.
Command add_plan_command(CLI::App& app);
/// `llmbench tokenize`: ids, tokens and counts of text with a tokenizer.json tokenizer.
Command add_tokenize_command(CLI::App& app);
/// `llmbench doctor`: preflight of GPUs, host and server (PASS / WARN / FAIL / N/A lines).
Command add_doctor_command(CLI::App& app);
/// `llmbench tokdiff`: compare two tokenizers over a corpus (counts, inflation, drift).
Command add_tokdiff_command(CLI::App& app);
/// `llmbench report`: HTML report, CSV or Markdown of results and sweep files (docs/report.md).
Command add_report_command(CLI::App& app);
/// `llmbench compare`: runs against a baseline with confidence intervals and gates.
Command add_compare_command(CLI::App& app);
/// `llmbench history`: runs recorded with --history: list, trend, regressions.
Command add_history_command(CLI::App& app);
/// `llmbench probe comm`: NCCL collectives timed and fitted for the simulator (telemetry/nccl.hpp).
Command add_probe_command(CLI::App& app);

}  // namespace llmbench::cli
