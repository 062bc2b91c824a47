#include "llmbench/cli/simulate_flags.hpp"

#include "llmbench/cli/config_json.hpp"
#include "llmbench/cli/flag_checks.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/core/error.hpp"

#include <filesystem>

namespace llmbench::cli {

void add_simulate_flags(CLI::App& app, SimulateFlags& f) {
  add_workload_flags(app, f);
  app.add_flag("--ignore-eos", f.ignore_eos,
               "Accepted for symmetry with run: the simulator always generates the full length");
  add_engine_flags(app, f.engine, "", "");
  app.add_option("--timeline-interval", f.timeline_interval_s,
                 "Seconds per window of the KV-cache / preemption / prefix-hit table (default: a "
                 "tenth of the simulated time)");
  app.add_flag("--save-result", f.save_result, "Write the results JSON");
  app.add_option("--result-dir", f.result_dir,
                 "Folder for the results JSON and its <stem>.records.jsonl (one record per "
                 "request, as run writes)");
  app.add_option("--result-filename", f.result_filename,
                 "Results file name (default: simulate-...-date.json); the records go beside it "
                 "as <stem>.records.jsonl");
  app.add_option("--trace", f.trace_path,
                 "Write the engine steps as a Chrome trace (chrome://tracing, Perfetto)");
  add_window_flag(app, f.window_s);
  // The output flags `run` shares (STYLE: one flag, one meaning across subcommands).
  app.add_option("--label", f.label,
                 "Label of the results, and the prefix of the default file name instead of "
                 "'simulate' (as run's --label)");
  app.add_flag("--quiet,--disable-tqdm", f.quiet,
               "Accepted as run takes it: simulate prints no progress line");
}

app::SimPlan resolve_simulate(const SimulateFlags& f, const std::string& data_dir,
                              std::int64_t memory_bytes) {
  app::SimPlan plan;
  plan.requested = simulate_flags_json(f);
  plan.report = report_setup(f);
  check_workload_flags(f);
  if (f.multi_turn) {
    // A turn's arrival depends on when the previous one finished: the virtual-time engine takes
    // every arrival up front (docs/workloads.md "Conversations").
    throw Exception(
        Error{"llmbench simulate does not model conversations yet; use llmbench run "
              "(against llmbench serve for the simulated engine)",
              "--multi-turn", -1});
  }
  check_engine_flags(f.engine, "");
  require_in_range(f.timeline_interval_s, 0, 1e9, "--timeline-interval",
                   "a number of seconds >= 0 (0 = a tenth of the simulated time)");
  check_window(f.window_s);
  plan.num_prompts = f.num_prompts;
  plan.max_concurrency = f.max_concurrency;
  plan.ignore_eos = f.ignore_eos;
  plan.names = workload_names(f);
  plan.engine = resolve_engine_spec(f.engine, data_dir, "");
  plan.engine_requested = f.engine;
  plan.options = sim::SimOptions{};
  plan.options.engine = plan.engine.engine;
  plan.options.data_parallel_size = plan.engine.data_parallel_size();
  plan.options.max_concurrency = f.max_concurrency;
  plan.options.record_steps = true;  // the over-time table, --trace and the batching rule
  // Token times stay runs over the step ends: summarized without per-token chunks, which are
  // written only for --save-result's records file (24 bytes per token otherwise built for nothing).
  plan.options.expand_chunks = false;
  const std::int64_t count = whole_trace(f) ? workload::kMaxNumPrompts : f.num_prompts;
  plan.dataset = dataset_options(f, count);
  plan.dataset.data_dir = data_dir;
  plan.dataset.random_text = false;  // random prompts are hashed from their corpus offset, not text
  if (!whole_trace(f))
    check_memory_budget(f.num_prompts, plan.dataset, memory_bytes);
  plan.timeline_interval_s = f.timeline_interval_s;
  plan.window_s = f.window_s;
  plan.output = app::SimOutputPlan{
      .save = f.save_result || !f.result_dir.empty(),
      .dir = f.result_dir.empty() ? "." : f.result_dir,
      .stem = f.result_filename.empty()
                  ? std::string()
                  : std::filesystem::path(f.result_filename).replace_extension().string(),
      .trace_path = f.trace_path,
      .label = f.label};
  return plan;
}

}  // namespace llmbench::cli
