#pragma once
/// @file
/// One load point of `run` or `simulate` run from a flags struct, for `llmbench sweep`
/// (docs/sweep.md): `RunSession` starts the target once (the built-in server when the flags name
/// none) and runs point after point against it; `simulate_point` runs one simulation. Both
/// write the point's results JSON and records as the command itself does.

#include "llmbench/cli/run_flags.hpp"
#include "llmbench/cli/run_report.hpp"
#include "llmbench/cli/simulate_flags.hpp"
#include "llmbench/cli/steady_state.hpp"
#include "llmbench/server/server.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace llmbench::cli {

/// A series of `run` points against one target. The first point starts the built-in server
/// (when its flags name no `--base-url` / `--host`) and loads the workload (`--tokenizer`, the
/// samples); later points reuse both. A point whose `--seed` differs from the last one draws
/// its samples again (same dataset flags, its own prompts); `sweep` gives each measurement its
/// own seed so that a server's prefix cache cannot serve a point from an earlier point's
/// prompts (docs/sweep.md, "Running points"). The server is stopped on destruction. Not
/// thread-safe; not movable (the server and the load point at the session's tokenizer).
class RunSession {
 public:
  RunSession();
  ~RunSession();
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;
  RunSession(RunSession&&) = delete;
  RunSession& operator=(RunSession&&) = delete;

  /// Resolves `flags` (`resolve_run`), runs the load and reports it as `run` does
  /// (`report_run` with a `PointReport`: no console table). SIGINT / SIGTERM / SIGHUP end the
  /// point early (`PointReport::interrupted`). Throws `Exception` on a bad flag or target.
  PointReport run_point(const RunFlags& flags);

 private:
  std::unique_ptr<server::Server> builtin_;
  std::string builtin_url_;  ///< "" until the built-in server listens
  std::optional<RunWorkload> workload_;
  std::uint64_t samples_seed_ = 0;  ///< the `--seed` the samples in `workload_` were drawn with
};

/// Runs `flags` as `llmbench simulate` does and reports it; `console` prints its table and
/// engine timeline (the command), else nothing but logs (a sweep's point). Throws `Exception` on a
/// bad flag.
PointReport simulate_point(const SimulateFlags& flags, bool console);

}  // namespace llmbench::cli
