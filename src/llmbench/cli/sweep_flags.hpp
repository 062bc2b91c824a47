#pragma once
/// @file
/// `llmbench sweep`'s flags (docs/sweep.md "Flags"): every `run` flag (`add_run_flags`, the
/// flags of each point), the engine flags of `simulate` under their plain names for
/// `--simulate`, and the sweep's own: `--sweep`, `--simulate`, `--slo`, `--slo-resolution`,
/// `--max-points`, `--max-trials`, `--min-duration`, `--min-requests`, `--predict`,
/// `--verify-top`.

#include "llmbench/analysis/validity.hpp"
#include "llmbench/cli/run_flags.hpp"
#include "llmbench/cli/server_flags.hpp"
#include "llmbench/cli/simulate_flags.hpp"
#include "llmbench/cli/sweep_serve_flags.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace llmbench::cli {

/// Everything `llmbench sweep` accepts.
struct SweepFlags {
  RunFlags run;        ///< the flags every point starts from (`run`'s, as typed)
  EngineFlags engine;  ///< `--simulate`: the engine, as `simulate` takes it
  bool simulate = false;
  std::string cluster_path;        ///< `--simulate --cluster FILE`: a cluster instead of one engine
  std::string records;             ///< `--simulate --cluster`: `--records` of each point
  std::vector<std::string> sweep;  ///< `--sweep AXIS=...`, repeatable (app/sweep_axes.hpp)
  std::string slo;                 ///< `--slo 'p99_ttft_ms<=2000,...'` ("" = a ladder)
  double slo_resolution = 0.05;    ///< relative width at which the SLO search stops
  int max_points = 10;             ///< most points an SLO search measures
  /// Most measurements of one point while it is not stable (perf_analyzer's `--max-trials`);
  /// each further trial doubles the point's requests (or `--duration`). 1 = measure once.
  int max_trials = 1;
  analysis::ValidityRule validity;    ///< `--valid-min-duration`, `--valid-min-completed`, ...
  std::string profile;                ///< `--profile auto` ("" = the `--sweep` axes)
  int profile_rates = 5;              ///< rates between the synchronous and saturating points
  int profile_max_concurrency = 256;  ///< the saturation search's highest concurrency
  ServeCmdFlags serve;                ///< `--serve-cmd`: a server started per engine setting
  bool verbose = false;               ///< `--verbose`: the fits' parameters and errors
  double min_duration_s = 0;          ///< `--min-duration`: a point measures this long at least
  std::size_t min_requests = 0;       ///< `--min-requests`: a point completes this many at least
  bool predict = false;               ///< `--predict`: simulate the grid, verify the best settings
  int verify_top = 2;                 ///< `--verify-top K`: settings measured for real
};

/// Registers every `sweep` flag on `app`, bound to `flags` (which must outlive parsing).
void add_sweep_flags(CLI::App& app, SweepFlags& flags);

/// Checks flags that only one mode reads, after parsing (`flags.run.given` filled): `--sweep`
/// or `--profile auto` must be given (not both); with `--simulate` every given flag must be one
/// `simulate` has (no target, backend or `--server-*` flag); without it no plain engine flag
/// (`--gpu`: the built-in server's is `--server-gpu`). Throws `Exception` naming the flag.
void check_sweep_flags(const SweepFlags& flags);

/// The `simulate` flags of a `--simulate` point: the workload (the dataset defaults to
/// `simulate`'s "random" when `--dataset-name` was not given), the engine, `--ignore-eos`,
/// `--window-s` and the results folder.
SimulateFlags simulate_flags_of(const SweepFlags& flags);

}  // namespace llmbench::cli
