// `llmbench simulate`: the workload of `llmbench run` in virtual time through the simulated
// serving engine, as one point of an `app::Session`, reported with the same console table and
// results JSON as `run`.

#include "llmbench/app/resources.hpp"
#include "llmbench/app/session.hpp"
#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/console.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/cli/help_sections.hpp"
#include "llmbench/cli/simulate_flags.hpp"

#include <memory>

namespace llmbench::cli {

Command add_simulate_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "simulate", "Run a workload through the simulated serving engine in virtual time (no HTTP)");
  auto f = std::make_shared<SimulateFlags>();
  add_simulate_flags(*sub, *f);
  apply_help_sections(*sub, help_all_requested());
  return [f, sub] {
    f->given = given_flags(*sub);
    const app::SimPlan plan = resolve_simulate(*f, data_dir(), app::physical_memory_bytes());
    app::Session session;
    ConsoleObserver console(false);
    return session.simulate(plan, &console).exit_code;
  };
}

}  // namespace llmbench::cli
