#pragma once
/// @file
/// `llmbench calibrate`'s flags as typed, and the live-probe step it shares with nothing else:
/// running the probe plan (`calib::probe_plan`) as `run` points resolved from `run`'s flags
/// (docs/simulator.md "Calibration"); the server's facts are `app::discover_server`.

#include "llmbench/calib/points.hpp"
#include "llmbench/calib/probes.hpp"
#include "llmbench/cli/server_flags.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::cli {

/// Everything `llmbench calibrate` accepts.
struct CalibrateFlags {
  std::vector<std::string> inputs;  ///< result files or CSVs of points (positional)
  std::string base_url;             ///< `--base-url`: probe this live server
  std::string model;                ///< served model name ("" = the server's first)
  std::string backend = "openai";   ///< request dialect of the probes
  std::string tokenizer;            ///< `--tokenizer` for exact probe prompt lengths
  EngineFlags engine;               ///< engine flags (`add_engine_flags`), `--calibration` to start
  std::string engine_version;       ///< recorded in the file ("" = from the server, or unknown)
  int num_gpus = 0;                 ///< per-GPU figures of summaries; 0 = tp × dp
  std::vector<std::string> select;  ///< `--select KEY=VALUE[,VALUE…]` (all must match)
  std::vector<std::string> holdout;  ///< `--holdout KEY=VALUE[,VALUE…]` (any matches: judged only)
  std::vector<std::string> fit;      ///< parameters to fit (`calib::kParamNames`); empty = all
  int jobs = 1;                      ///< points simulated at once
  std::string output = "calibration.json";
  bool evaluate = false;  ///< `--evaluate`: predict the points with the engine as given, no fit
  std::string probe_dir;  ///< where probe results go ("" = <output stem>.probes)
  double max_probe_s = 300;
  std::int64_t probe_output_len = 64;
  std::int64_t probe_concurrency = 0;  ///< 0 = the server's slots (llama.cpp), else 16
  std::int64_t probe_max_input = 2048;
};

/// Registers every `calibrate` flag on `app`, bound to `flags`.
void add_calibrate_flags(CLI::App& app, CalibrateFlags& flags);

/// Runs `plan` against the live server of `flags` (at most `flags.max_probe_s` seconds in all:
/// the probes left when the time is up are skipped, with a warning) and returns the points read
/// back from their results files (per-request lengths from the records). Each point is tagged
/// `probe=<kind>` and `source=<base url>`.
std::vector<calib::Point> run_probes(const CalibrateFlags& flags,
                                     const std::vector<calib::Probe>& plan,
                                     const std::string& probe_dir, int num_gpus);

}  // namespace llmbench::cli
