#pragma once
/// @file
/// `llmbench simulate`'s flags as typed: the workload of `run` (`WorkloadFlags`), the engine
/// (`EngineFlags`, plain names) and the simulation's own outputs; `resolve_simulate` turns them
/// into an `app::SimPlan`.

#include "llmbench/app/plan.hpp"
#include "llmbench/cli/server_flags.hpp"
#include "llmbench/cli/workload_flags.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace llmbench::cli {

/// Everything `llmbench simulate` accepts.
struct SimulateFlags : WorkloadFlags {
  SimulateFlags() { dataset_name = "random"; }  // synthetic lengths suit capacity what-ifs

  bool ignore_eos = false;  ///< accepted for symmetry with `run` (the full length is generated)
  EngineFlags engine;
  double timeline_interval_s = 0;  ///< seconds per timeline window; 0 = a tenth of the run
  bool save_result = false;
  std::string result_dir;
  std::string result_filename;
  std::string trace_path;  ///< `--trace`: Chrome trace of the engine steps ("" = none)
  double window_s = app::kDefaultWindowS;  ///< `--window-s`: seconds per window
  std::string label;   ///< `--label`: results label and file-name prefix (as `run`'s)
  bool quiet = false;  ///< `--quiet`: accepted as `run` takes it (simulate prints no progress)
  // the cluster (docs/simulator.md "Cluster")
  std::string cluster_path;  ///< `--cluster FILE`: a cluster spec instead of the engine flags
  std::string records;       ///< `--records none|sample|all` (with `--cluster`; "" = sample)
  double trace_tile_s = 0;   ///< `--trace-tile-s`: tile the trace over this long (0 = off)
};

/// Registers every `simulate` flag on `app`, bound to `flags` (which must outlive parsing).
void add_simulate_flags(CLI::App& app, SimulateFlags& flags);

/// Resolves `flags` into the plan of one simulation: checks every flag, resolves the engine from
/// the profiles under `data_dir` (or, with `--cluster`, reads the spec and resolves its groups;
/// engine flags beside it are an error) and sizes the workload against `memory_bytes` (≤ 0: no
/// check). A conversation workload needs `--cluster` (one engine takes every arrival up front).
/// Throws `Exception` naming the flag.
app::SimPlan resolve_simulate(const SimulateFlags& flags, const std::string& data_dir,
                              std::int64_t memory_bytes);

}  // namespace llmbench::cli
