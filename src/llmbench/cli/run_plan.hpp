#pragma once
/// @file
/// The typed plan of `llmbench run`: `resolve_run` turns the parsed flags into an `app::RunPlan`
/// (the requested configuration as typed, the load options, the built-in server's options if
/// any, the dataset options, the outputs and telemetry), checking every flag, with no network,
/// no server started and nothing written. `run` is then one point of an `app::Session` and its
/// printing (run_command.cpp).

#include "llmbench/app/plan.hpp"
#include "llmbench/cli/run_flags.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::cli {

/// What `resolve_run` reads from the process's surroundings, passed in so that it stays pure.
struct ResolveEnv {
  std::string api_key;                ///< $OPENAI_API_KEY ("" when unset)
  int hardware_threads = 1;           ///< cores (the default `--client-threads`)
  std::int64_t open_file_limit = -1;  ///< RLIMIT_NOFILE after raising it; ≤ 0 = unknown
  std::int64_t memory_bytes = 0;      ///< physical memory; ≤ 0 = unknown (no size check)
  std::string data_dir;               ///< bundled data (`data_dir()`): profiles, datasets

  /// The environment of this process: reads $OPENAI_API_KEY and raises the open-file limit
  /// (`server::raise_open_file_limit`, the one side effect).
  static ResolveEnv current();
};

/// Resolves `flags` into a plan. Pure: reads only `flags`, `env` and the profile files under
/// `env.data_dir` (for the built-in engine). Throws `Exception` naming the flag on a bad value or
/// a conflict: `--host`/`--port` with `--base-url`, `--port` without `--host`, `--server-*` flags
/// with a target given, a dataset's flags with another dataset, a URL with a query
/// (`http::parse_url`). The API key is `--api-key`, else `env.api_key`; it is not sent when
/// `--header` sets Authorization (a warning says so).
app::RunPlan resolve_run(const RunFlags& flags, const ResolveEnv& env);

}  // namespace llmbench::cli
