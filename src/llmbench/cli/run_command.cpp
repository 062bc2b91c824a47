// `llmbench run`: resolve the flags into a plan (run_plan.hpp), run it as one point of an
// `app::Session` (workload, target, load, analysis, outputs) and print it (console.hpp).

#include "llmbench/app/session.hpp"
#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/console.hpp"
#include "llmbench/cli/help_sections.hpp"
#include "llmbench/cli/run_flags.hpp"
#include "llmbench/cli/run_plan.hpp"
#include "llmbench/cli/vllm_flags.hpp"
#include "llmbench/cli/workload_flags.hpp"

#include <memory>

namespace llmbench::cli {

Command add_run_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "run", "Benchmark an OpenAI-compatible endpoint (the built-in server if no --base-url)");
  auto f = std::make_shared<RunFlags>();
  add_run_flags(*sub, *f);
  add_vllm_peer_flags(*sub, f->endpoint_type);
  apply_help_sections(*sub, help_all_requested());
  sub->footer(sub->get_footer() + run_examples());
  return [f, sub] {
    f->given = given_flags(*sub);
    const app::RunPlan plan = resolve_run(*f, ResolveEnv::current());
    app::Session session;
    ConsoleObserver console(plan.progress);
    return session.run(plan, &console).exit_code;
  };
}

}  // namespace llmbench::cli
