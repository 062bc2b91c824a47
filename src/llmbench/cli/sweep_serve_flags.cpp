#include "llmbench/cli/sweep_serve_flags.hpp"

#include "llmbench/core/error.hpp"

#include <cmath>

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
}

void check_serve_cmd_flags(const ServeCmdFlags& f, bool simulate) {
  if (!(f.server_ready_timeout_s > 0 && std::isfinite(f.server_ready_timeout_s)))
    throw Exception(Error{"must be a number of seconds > 0", "--server-ready-timeout", -1});
  if (!(f.server_stop_grace_s >= 0 && f.server_stop_grace_s <= 600))
    throw Exception(Error{"must be in [0, 600] seconds", "--server-stop-grace", -1});
  if (simulate && !f.serve_cmd.empty())
    throw Exception(Error{"starts a real server; a --simulate sweep has none", "--serve-cmd", -1});
}

}  // namespace llmbench::cli
