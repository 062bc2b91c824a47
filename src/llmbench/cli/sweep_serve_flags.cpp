#include "llmbench/cli/sweep_serve_flags.hpp"

#include "llmbench/core/error.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

namespace llmbench::cli {

void add_serve_cmd_flags(CLI::App& app, ServeCmdFlags& f) {
  app.add_option("--serve-cmd", f.serve_cmd,
                 "Start the server for each engine setting from this command line, with {knob} "
                 "placeholders: {max_num_seqs}, {max_num_batched_tokens}, {block_size}, ... for "
                 "engine-knob axes, {NAME} for a free axis --sweep NAME=a,b, {host} and {port} of "
                 "the target; each setting runs the load axes, then its server is stopped");
  app.add_option("--server-ready-timeout", f.server_ready_timeout_s,
                 "--serve-cmd: seconds to wait for /health and /v1/models to answer")
      ->capture_default_str();
  app.add_option("--server-stop-grace", f.server_stop_grace_s,
                 "--serve-cmd: seconds between SIGTERM and SIGKILL when stopping a server")
      ->capture_default_str();
  app.add_flag("--restart-per-point", f.restart_per_point,
               "--serve-cmd: start a fresh server for every point (an empty cache each), not "
               "once per setting");
  app.add_option("--reset-cmd,--after-bench-cmd", f.reset_cmd,
                 "--serve-cmd: run this command (same {placeholders}) between two points of a "
                 "setting instead of POST /reset_prefix_cache (vLLM), then /flush_cache (SGLang)");
}

void take_serve_cmd_flags(std::vector<std::string>& given, ServeCmdFlags& f) {
  constexpr std::array<std::string_view, 2> kCompanions{"--server-ready-timeout",
                                                        "--server-stop-grace"};
  const auto companion = [&](const std::string& name) {
    return std::find(kCompanions.begin(), kCompanions.end(), name) != kCompanions.end();
  };
  std::copy_if(given.begin(), given.end(), std::back_inserter(f.given), companion);
  given.erase(std::remove_if(given.begin(), given.end(), companion), given.end());
}

void check_serve_cmd_flags(const ServeCmdFlags& f, bool simulate) {
  if (f.serve_cmd.empty() && !f.given.empty())
    throw Exception(Error{"applies to a sweep with --serve-cmd", f.given.front(), -1});
  if (!(f.server_ready_timeout_s > 0 && std::isfinite(f.server_ready_timeout_s)))
    throw Exception(Error{"must be a number of seconds > 0", "--server-ready-timeout", -1});
  if (!(f.server_stop_grace_s >= 0 && f.server_stop_grace_s <= 600))
    throw Exception(Error{"must be in [0, 600] seconds", "--server-stop-grace", -1});
  if (f.serve_cmd.empty() && f.restart_per_point)
    throw Exception(Error{"applies to a sweep with --serve-cmd", "--restart-per-point", -1});
  if (f.serve_cmd.empty() && !f.reset_cmd.empty())
    throw Exception(Error{"applies to a sweep with --serve-cmd", "--reset-cmd", -1});
  if (f.restart_per_point && !f.reset_cmd.empty())
    throw Exception(
        Error{"a fresh server per point needs no reset: give one of "
              "--restart-per-point and --reset-cmd",
              "--reset-cmd", -1});
  if (simulate && !f.serve_cmd.empty())
    throw Exception(Error{"starts a real server; a --simulate sweep has none", "--serve-cmd", -1});
}

}  // namespace llmbench::cli
