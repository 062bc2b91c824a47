#include "llmbench/cli/simulate_flags.hpp"

#include "llmbench/app/resources.hpp"
#include "llmbench/cli/config_json.hpp"
#include "llmbench/cli/flag_checks.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/core/error.hpp"

#include <filesystem>
#include <set>

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
  app.add_option("--cluster", f.cluster_path,
                 "Simulate the cluster of this JSON spec (replica groups, roles, router, version "
                 "buckets, KV link; docs/simulator.md \"Cluster\") instead of one engine");
  app.add_option("--records", f.records,
                 "With --cluster: per-request records to write with --save-result: none, sample "
                 "(one in 100) or all (default sample); results are summarised on the fly");
  app.add_option("--trace-tile-s", f.trace_tile_s,
                 "With --cluster and --dataset-name trace: tile the trace over this many seconds "
                 "to --num-prompts requests (copies at seeded offsets, each keeping its shape)");
}

namespace {

/// The engine flags beside `--cluster` are an error: the engines are in the file.
void check_no_engine_flags(const SimulateFlags& f) {
  CLI::App scratch_app;
  EngineFlags scratch;
  add_engine_flags(scratch_app, scratch, "", "");
  std::set<std::string> names;
  for (const CLI::Option* opt : scratch_app.get_options()) {
    for (const auto& n : opt->get_lnames()) names.insert("--" + n);
  }
  for (const auto& given : f.given) {
    if (names.count(given) != 0) {
      throw Exception(
          Error{"is an engine flag; with --cluster the engines are in the spec file", given, -1});
    }
  }
  // A sweep's engine axis sets the engine without a flag.
  if (engine_flags_json(f.engine) != engine_flags_json(EngineFlags{})) {
    throw Exception(
        Error{"engine knobs (a sweep's engine axis too) do not apply: the engines "
              "are in the spec file",
              "--cluster", -1});
  }
}

/// The cluster of `--cluster`: the spec read and its groups resolved against `data_dir`.
app::ClusterPlan cluster_plan(const SimulateFlags& f, const std::string& data_dir) {
  check_no_engine_flags(f);
  app::ClusterPlan c;
  c.path = f.cluster_path;
  c.records = sim::parse_records_mode(f.records.empty() ? "sample" : f.records);
  require_in_range(f.trace_tile_s, 0, 1e9, "--trace-tile-s", "a number of seconds >= 0");
  if (f.trace_tile_s > 0 && f.dataset_name != "trace")
    throw Exception(Error{"needs --dataset-name trace", "--trace-tile-s", -1});
  c.trace_tile_s = f.trace_tile_s;
  c.spec = sim::load_cluster_spec(f.cluster_path);
  c.groups = sim::resolve_cluster(c.spec, data_dir);
  return c;
}

}  // namespace

app::SimPlan resolve_simulate(const SimulateFlags& f, const std::string& data_dir,
                              std::int64_t memory_bytes) {
  app::SimPlan plan;
  plan.requested = simulate_flags_json(f);
  plan.report = report_setup(f);
  check_workload_flags(f);
  if (!f.cluster_path.empty()) {
    plan.cluster = cluster_plan(f, data_dir);
  } else {
    if (!f.records.empty() || f.trace_tile_s != 0) {
      throw Exception(Error{"needs --cluster (one engine writes every record)",
                            f.records.empty() ? "--trace-tile-s" : "--records", -1});
    }
    if (f.multi_turn) {
      // A turn's arrival depends on when the previous one finished: the one-engine simulation
      // takes every arrival up front (docs/workloads.md "Conversations").
      throw Exception(
          Error{"one simulated engine does not model conversations; give --cluster FILE (a "
                "cluster of one group will do) or use llmbench run against llmbench serve",
                "--multi-turn", -1});
    }
    check_engine_flags(f.engine, "");
  }
  require_in_range(f.timeline_interval_s, 0, 1e9, "--timeline-interval",
                   "a number of seconds >= 0 (0 = a tenth of the simulated time)");
  check_window(f.window_s);
  plan.num_prompts = f.num_prompts;
  plan.max_concurrency = f.max_concurrency;
  plan.ignore_eos = f.ignore_eos;
  plan.names = workload_names(f);
  plan.options = sim::SimOptions{};
  plan.options.max_concurrency = f.max_concurrency;
  if (!plan.cluster) {
    plan.engine = resolve_engine_spec(f.engine, data_dir, "");
    plan.engine_requested = f.engine;
    plan.options.engine = plan.engine.engine;
    plan.options.data_parallel_size = plan.engine.data_parallel_size();
  }
  plan.options.record_steps = true;  // the over-time table, --trace and the batching rule
  // Token times stay runs over the step ends: summarized without per-token chunks, which are
  // written only for --save-result's records file (24 bytes per token otherwise built for nothing).
  plan.options.expand_chunks = false;
  // A tiled trace reads the whole window and makes `--num-prompts` requests of it on the fly.
  const bool tiled = plan.cluster && plan.cluster->trace_tile_s > 0;
  const std::int64_t count = whole_trace(f) || tiled ? workload::kMaxNumPrompts : f.num_prompts;
  plan.dataset = dataset_options(f, count);
  plan.dataset.data_dir = data_dir;
  plan.dataset.random_text = false;  // random prompts are hashed from their corpus offset, not text
  if (!whole_trace(f) && !tiled)
    app::check_memory_budget(f.num_prompts, plan.dataset, memory_bytes);
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
