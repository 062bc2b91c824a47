// The console of `run`, `sweep` and `simulate` (cli/help_sections.hpp, cli/vllm_flags.hpp):
// help in sections with every flag described, sweep's own flags first, the built-in server's
// flags behind --help-all; vllm bench serve's flags accepted or refused by one table, unique
// prefixes expanded as argparse does, and "did you mean" for an unknown flag.

#include "llmbench/cli/vllm_flags.hpp"

#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/help_sections.hpp"
#include "llmbench/cli/workload_flags.hpp"
#include "llmbench/core/error.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace llmbench::cli {
namespace {

/// A top-level app with `add` registered; returns its subcommand `name`. The command's action,
/// which owns the flags its options write into, is kept alive for the test's whole run.
CLI::App* command(CLI::App& app, Command (*add)(CLI::App&), const char* name) {
  static std::vector<Command> kept;
  kept.push_back(add(app));
  return app.get_subcommand(name);
}

TEST(Help, EveryFlagIsDescribedAndRunsFlagsHaveASection) {
  struct Sub {
    Command (*add)(CLI::App&);
    const char* name;
  };
  for (const auto& [add, name] : {Sub{add_run_command, "run"}, Sub{add_sweep_command, "sweep"},
                                  Sub{add_simulate_command, "simulate"}}) {
    CLI::App app;
    const CLI::App* sub = command(app, add, name);
    for (const CLI::Option* opt : sub->get_options()) {
      EXPECT_FALSE(opt->get_description().empty()) << name << " " << opt->get_name(false, true);
      if (std::string(name) == "run" && !opt->get_lnames().empty() &&
          opt->get_lnames().front() != "help" && !opt->get_group().empty()) {
        EXPECT_FALSE(help_section("--" + opt->get_lnames().front()).empty())
            << "run " << opt->get_name() << " has no section";
      }
    }
  }
}

TEST(Help, RunHelpIsInSectionsWithTheServerFlagsBehindHelpAll) {
  CLI::App app;
  CLI::App* run = command(app, add_run_command, "run");
  const std::string help = run->help();
  for (const char* section :
       {"Server target:", "TLS:", "Load:", "Dataset:", "Sampling and request shape:",
        "Output and report:", "Telemetry:", "Examples:"}) {
    EXPECT_NE(help.find(section), std::string::npos) << section << "\n" << help;
  }
  EXPECT_EQ(help.find("--server-max-num-seqs"), std::string::npos) << help;
  EXPECT_NE(help.find("run --help-all"), std::string::npos) << help;
  EXPECT_EQ(help.find("--trust-remote-code"), std::string::npos) << "vLLM's flags are hidden";
  EXPECT_GT(help.find("Examples:"), help.find("Telemetry:"));  // examples at the end
  apply_help_sections(*run, true);
  EXPECT_NE(run->help().find("--server-max-num-seqs"), std::string::npos);
}

TEST(Help, SweepHelpStartsWithTheSweepsOwnFlags) {
  CLI::App app;
  const std::string help = command(app, add_sweep_command, "sweep")->help();
  const auto own = help.find("--sweep ");
  ASSERT_NE(own, std::string::npos) << help;
  EXPECT_LT(help.find("Sweep:"), help.find("Server target:")) << help;
  for (const char* runs : {"--base-url", "--num-prompts", "--temperature"})
    EXPECT_LT(own, help.find(runs)) << runs;
}

TEST(VllmFlags, PrefixesExpandAsArgparseDoes) {
  CLI::App app;
  const CLI::App* run = command(app, add_run_command, "run");
  std::vector<std::string> args = {
      "--random-input", "2048", "--random-output=8", "--max-concurrency", "4", "--random", "x",
      "--ran"};
  const auto notes = expand_flag_prefixes(*run, args);
  EXPECT_EQ(args, (std::vector<std::string>{"--random-input-len", "2048", "--random-output-len=8",
                                            "--max-concurrency", "4", "--random", "x", "--ran"}));
  ASSERT_EQ(notes.size(), 2U);
  EXPECT_EQ(notes[0], "--random-input read as --random-input-len (the one flag it starts)");
}

TEST(VllmFlags, UnknownFlagGetsTheClosestNames) {
  CLI::App app;
  const CLI::App* run = command(app, add_run_command, "run");
  EXPECT_EQ(unknown_flag_message(*run, {"--max-concurency", "4"}),
            "unknown flag --max-concurency (did you mean '--max-concurrency'?); llmbench run "
            "--help lists them");
  EXPECT_EQ(unknown_flag_message(*run, {"--num-prompts", "3", "--bogus-flag-zz=1"}),
            "unknown flag --bogus-flag-zz; llmbench run --help lists them");
  EXPECT_EQ(unknown_flag_message(*run, {"--num-prompts", "3"}), "");
}

// Each flag of the table parses with its arity and lands in the given flags: ignored ones in
// one warning, refused ones as an error naming the flag.
TEST(VllmFlags, EveryTableFlagParsesAndIsWarnedOrRefused) {
  for (const auto& p : vllm_peer_flags()) {
    CLI::App app;
    CLI::App* run = command(app, add_run_command, "run");
    std::vector<std::string> argv = {"llmbench", "run", std::string(p.flag)};
    if (p.arity != 0)
      argv.push_back("openai");
    if (p.arity < 0)
      argv.push_back("second");
    std::vector<char*> ptrs;
    for (auto& a : argv) ptrs.push_back(a.data());
    ASSERT_NO_THROW(app.parse(static_cast<int>(ptrs.size()), ptrs.data())) << p.flag;
    const auto given = given_flags(*run);
    ASSERT_NE(std::find(given.begin(), given.end(), p.flag), given.end()) << p.flag;
    if (p.rule == PeerFlagRule::Refused) {
      EXPECT_THROW((void)vllm_peer_flag_warning(given), Exception) << p.flag;
    } else {
      const std::string w = vllm_peer_flag_warning(given);
      EXPECT_NE(w.find(std::string(p.flag) + " (" + std::string(p.note) + ")"), std::string::npos)
          << w;
    }
  }
}

}  // namespace
}  // namespace llmbench::cli
