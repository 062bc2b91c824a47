#pragma once
/// @file
/// The flags of a sweep that starts the server itself, once per engine setting (docs/sweep.md
/// "Restarting the server per setting"), named as `vllm bench sweep serve` names them where it
/// has the concept: `--serve-cmd` (a template with `{knob}` placeholders, not vLLM's fixed
/// command plus `--serve-params`), `--server-ready-timeout`, `--after-bench-cmd` (also
/// `--reset-cmd`); and `--server-stop-grace`, `--restart-per-point`.

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace llmbench::cli {

/// `sweep --serve-cmd` and its companions.
struct ServeCmdFlags {
  std::string serve_cmd;                ///< the template ("" = the sweep does not start a server)
  double server_ready_timeout_s = 300;  ///< start to ready, at most (vLLM's default)
  double server_stop_grace_s = 10;      ///< SIGTERM to SIGKILL when stopping a server
  bool restart_per_point = false;       ///< a fresh server for every point, not per setting
  std::string reset_cmd;                ///< between points of a setting (`--after-bench-cmd`)
  std::vector<std::string> given;       ///< which of the companions were given (`take_...`)
};

/// Registers the flags on `app`, bound to `flags` (which must outlive parsing).
void add_serve_cmd_flags(CLI::App& app, ServeCmdFlags& flags);

/// Moves the companions of `--serve-cmd` out of `given` (a sweep's given flags) into
/// `flags.given`: they start with `--server-`, the prefix `run` keeps for its built-in server's
/// flags (which a sweep with a target refuses), but they belong to the sweep.
void take_serve_cmd_flags(std::vector<std::string>& given, ServeCmdFlags& flags);

/// Checks the values after parsing: a positive, finite timeout and a grace in [0, 600] s; and
/// that `--serve-cmd` is not given with `--simulate`, and that its companions come with it. Throws
/// `Exception` naming the flag.
void check_serve_cmd_flags(const ServeCmdFlags& flags, bool simulate);

}  // namespace llmbench::cli
