#include "llmbench/cli/cli.hpp"

#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/help_sections.hpp"
#include "llmbench/cli/vllm_flags.hpp"
#include "llmbench/core/build_info.hpp"
#include "llmbench/core/error.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench::cli {

namespace {

/// A subcommand: its name and the function that registers its flags.
struct Subcommand {
  std::string_view name;
  Command (*add)(CLI::App&);
};

/// Every subcommand, in the order `llmbench --help` lists them.
constexpr std::array<Subcommand, 13> kSubcommands{{{"run", add_run_command},
                                                   {"sweep", add_sweep_command},
                                                   {"serve", add_serve_command},
                                                   {"simulate", add_simulate_command},
                                                   {"calibrate", add_calibrate_command},
                                                   {"plan", add_plan_command},
                                                   {"tokenize", add_tokenize_command},
                                                   {"tokdiff", add_tokdiff_command},
                                                   {"report", add_report_command},
                                                   {"compare", add_compare_command},
                                                   {"history", add_history_command},
                                                   {"doctor", add_doctor_command},
                                                   {"probe", add_probe_command}}};

}  // namespace

int run_guarded(const std::function<int()>& command) {
  try {
    return command();
  } catch (const Exception& e) {
    std::fprintf(stderr, "llmbench: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "llmbench: internal error: out of memory (a size too large for this machine?)\n");
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llmbench: internal error: %s\n", e.what());
    return 3;
  }
}

int run(int argc, char** argv) {
  CLI::App app{"llmbench: measure how fast an LLM inference service really is", "llmbench"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", fmt::format("llmbench {} ({})", build_info::version(), build_info::git_sha()));
  // `--help-all`: `--help` with the built-in server's --server-* flags shown (help_sections.hpp).
  std::vector<std::string> args(argv, argv + argc);
  for (auto& a : args) {
    if (a == "--help-all") {
      request_help_all();
      a = "--help";
    }
  }
  // When the first argument names a subcommand, only that one is registered: registering all
  // of them costs CLI11 about 5 M instructions (`run` alone has some 80 flags), a quarter of a
  // `simulate` run's start-up (docs/performance.md). Anything else (--help, --version, a typo)
  // registers them all, so CLI11 lists or rejects them as before.
  const Subcommand* named = nullptr;
  for (const auto& sub : kSubcommands) {
    if (argc > 1 && std::string_view(argv[1]) == sub.name) {
      named = &sub;
    }
  }
  std::vector<std::pair<std::string_view, Command>> commands;
  for (const auto& sub : kSubcommands) {
    if (named == nullptr || named == &sub) {
      commands.emplace_back(sub.name, sub.add(app));
    }
  }
  // A flag abbreviated to a unique prefix, as argparse (and so vllm bench serve) allows.
  if (named != nullptr) {
    std::vector<std::string> rest(args.begin() + 2, args.end());
    for (const auto& note :
         expand_flag_prefixes(*app.get_subcommand(std::string(named->name)), rest))
      std::fprintf(stderr, "llmbench: warning: %s\n", note.c_str());
    std::copy(rest.begin(), rest.end(), args.begin() + 2);
  }
  std::vector<char*> arg_ptrs;
  arg_ptrs.reserve(args.size());
  for (auto& a : args) arg_ptrs.push_back(a.data());
  try {
    app.parse(argc, arg_ptrs.data());
  } catch (const CLI::ParseError& e) {
    // An unknown flag: name it with the closest known ones instead of CLI11's bare list.
    if (named != nullptr && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      const std::string message =
          unknown_flag_message(*app.get_subcommand(std::string(named->name)),
                               std::vector<std::string>(args.begin() + 2, args.end()));
      if (!message.empty()) {
        std::fprintf(stderr, "llmbench: error: %s\n", message.c_str());
        return 2;
      }
    }
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  for (const auto& [name, command] : commands) {
    if (app.got_subcommand(std::string(name))) {
      return run_guarded(command);
    }
  }
  return 2;
}

}  // namespace llmbench::cli
