#include "llmbench/cli/cli.hpp"

#include "llmbench/cli/commands.hpp"
#include "llmbench/core/build_info.hpp"
#include "llmbench/core/error.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>
#include <exception>

namespace llmbench::cli {

int run(int argc, char** argv) {
  CLI::App app{"llmbench: measure how fast an LLM inference service really is", "llmbench"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", fmt::format("llmbench {} ({})", build_info::version(), build_info::git_sha()));
  Command run_cmd = add_run_command(app);
  Command serve_cmd = add_serve_command(app);
  Command simulate_cmd = add_simulate_command(app);
  Command plan_cmd = add_plan_command(app);
  Command tokenize_cmd = add_tokenize_command(app);
  Command tokdiff_cmd = add_tokdiff_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (app.got_subcommand("run")) {
      return run_cmd();
    }
    if (app.got_subcommand("serve")) {
      return serve_cmd();
    }
    if (app.got_subcommand("simulate")) {
      return simulate_cmd();
    }
    if (app.got_subcommand("plan")) {
      return plan_cmd();
    }
    if (app.got_subcommand("tokenize")) {
      return tokenize_cmd();
    }
    if (app.got_subcommand("tokdiff")) {
      return tokdiff_cmd();
    }
    return 2;
  } catch (const Exception& e) {
    std::fprintf(stderr, "llmbench: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llmbench: internal error: %s\n", e.what());
    return 3;
  }
}

}  // namespace llmbench::cli
