// `llmbench simulate`: the workload of `llmbench run` in virtual time through the simulated
// serving engine (sim module), reported with the same console table and results JSON.

#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/config_json.hpp"
#include "llmbench/cli/flag_checks.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/cli/run_point.hpp"
#include "llmbench/cli/server_flags.hpp"
#include "llmbench/cli/sim_requests.hpp"
#include "llmbench/cli/simulate_flags.hpp"
#include "llmbench/cli/workload_flags.hpp"
#include "llmbench/core/build_info.hpp"
#include "llmbench/core/clock.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/metrics/record_io.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/report/report.hpp"
#include "llmbench/sim/cost_model.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/sim/engine_spec.hpp"
#include "llmbench/sim/memory.hpp"
#include "llmbench/sim/profiles.hpp"
#include "llmbench/workload/arrivals.hpp"
#include "llmbench/workload/dataset.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::cli {

namespace {

using nlohmann::json;

/// Prints the engine state over time: KV-cache usage, running/waiting, preemptions and the
/// prefix-cache hit rate per window (docs/simulator.md "Over time": "reports KV-cache usage,
/// preemptions and prefix-hit rate over time").
void print_timeline(const std::vector<sim::TimelineBucket>& timeline) {
  if (timeline.empty())
    return;
  std::printf("%s\n", fmt::format("{:=^72}", " Engine over time ").c_str());
  std::printf("%s\n",
              fmt::format("{:>15} {:>6} {:>6} {:>8} {:>8} {:>8} {:>7} {:>8}", "window (s)", "busy%",
                          "steps", "KV mean%", "KV max%", "running", "preempt", "prefix%")
                  .c_str());
  for (const auto& b : timeline) {
    std::printf(
        "%s\n",
        fmt::format("{:>15} {:>6.1f} {:>6} {:>8.1f} {:>8.1f} {:>8.1f} {:>7} {:>8.1f}",
                    fmt::format("{:.2f}-{:.2f}", ns_to_s(b.start_ns), ns_to_s(b.end_ns)),
                    100 * b.busy_fraction, b.steps, 100 * b.mean_kv_usage, 100 * b.max_kv_usage,
                    b.mean_running, b.preemptions, 100 * b.prefix_hit_rate())
            .c_str());
  }
  std::printf("%s\n", std::string(72, '=').c_str());
}

/// The timeline as a JSON array for the results file (`sim_timeline`).
json timeline_json(const std::vector<sim::TimelineBucket>& timeline) {
  json out = json::array();
  for (const auto& b : timeline) {
    out.push_back({{"start_s", ns_to_s(b.start_ns)},
                   {"end_s", ns_to_s(b.end_ns)},
                   {"steps", b.steps},
                   {"busy_fraction", b.busy_fraction},
                   {"mean_kv_cache_usage", b.mean_kv_usage},
                   {"max_kv_cache_usage", b.max_kv_usage},
                   {"mean_running", b.mean_running},
                   {"max_waiting", b.max_waiting},
                   {"preemptions", b.preemptions},
                   {"prefix_cache_queries", b.prefix_queries},
                   {"prefix_cache_hits", b.prefix_hits},
                   {"prefix_cache_hit_rate", b.prefix_hit_rate()}});
  }
  return out;
}

/// The engine that runs (vLLM V1 defaults: `sim::make_engine_spec`) and the simulation's own
/// options; `rate` (requests/s, inf = all at once) decides open or closed loop as `run` does.
struct SimSetup {
  sim::EngineSpec engine;
  sim::SimOptions options;
};

SimSetup build_simulation(const SimulateFlags& f, const std::string& data, double rate) {
  SimSetup s{.engine = resolve_engine_spec(f.engine, data, ""), .options = {}};
  auto& so = s.options;
  so.engine = s.engine.engine;
  so.data_parallel_size = s.engine.data_parallel_size();
  so.max_concurrency = f.max_concurrency;
  so.closed_loop = !(std::isfinite(rate) && rate > 0);  // as `run` plans it (loadgen.cpp)
  so.record_steps = true;                               // the over-time table and --trace
  // Token times stay runs over the step ends: summarized without per-token chunks, which are
  // written only for --save-result's records file (24 bytes per token otherwise built for nothing).
  so.expand_chunks = false;
  return s;
}

/// The engine's counters under the console table.
void add_engine_lines(const sim::SimResult& result, const sim::SimOptions& so, double wall_s,
                      report::ConsoleOptions& copt) {
  const auto& st = result.stats;
  copt.load_lines.emplace_back("Simulated engine steps:", std::to_string(st.steps));
  copt.load_lines.emplace_back("Mean tokens per step:", fmt::format("{:.1f}", st.mean_step_tokens));
  copt.load_lines.emplace_back("Preemptions:", std::to_string(st.preemptions));
  if (so.engine.scheduler.num_cpu_blocks > 0) {
    copt.load_lines.emplace_back("Swapped out / in:",
                                 fmt::format("{} / {}", st.swap_outs, st.swap_ins));
    copt.load_lines.emplace_back("Swap blocks out / in:",
                                 fmt::format("{} / {}", st.swap_out_blocks, st.swap_in_blocks));
    copt.load_lines.emplace_back("Recompute fallbacks:", std::to_string(st.recompute_fallbacks));
  }
  if (so.data_parallel_size > 1)
    copt.load_lines.emplace_back("Data-parallel replicas:", std::to_string(so.data_parallel_size));
  copt.load_lines.emplace_back(
      "Prefix cache hit rate (%):",
      fmt::format("{:.2f}", st.prefix_queries > 0 ? 100.0 * static_cast<double>(st.prefix_hits) /
                                                        static_cast<double>(st.prefix_queries)
                                                  : 0.0));
  copt.load_lines.emplace_back("Max running requests:", std::to_string(st.max_running));
  const double simulated_s = ns_to_s(st.end_ns);
  copt.load_lines.emplace_back("Simulated s per wall s:",
                               fmt::format("{:.0f}", wall_s > 0 ? simulated_s / wall_s : 0.0));
}

/// What one simulation was, for its results file.
struct SimRun {
  const SimulateFlags& flags;
  const ReportSetup& report;
  const SimSetup& setup;
  const workload::DatasetOptions& dataset;
  std::size_t samples = 0;
  double wall_s = 0;
  TimeNs timeline_interval_ns = 0;
};

/// Effective: the engine that ran, the dataset and report setup, and the load shape.
json simulate_effective_config(const SimRun& run) {
  json j = engine_spec_json(run.setup.engine, run.flags.engine);
  j.update(dataset_json(run.dataset, run.flags));
  j.update(report_setup_json(run.report));
  j.update(json{{"num_prompts", run.flags.num_prompts},
                {"max_concurrency", run.setup.options.max_concurrency},
                {"ignore_eos", run.flags.ignore_eos},
                {"timeline_interval", ns_to_s(run.timeline_interval_ns)},
                {"samples", run.samples}});
  return j;
}

json simulation_extra(const sim::SimResult& result, double wall_s,
                      const std::vector<sim::TimelineBucket>& timeline,
                      const std::filesystem::path& records_path) {
  const auto& st = result.stats;
  return {{"simulated", true},
          {"records_file", records_path.filename().string()},
          {"sim_steps", st.steps},
          {"sim_preemptions", st.preemptions},
          {"sim_swap_outs", st.swap_outs},
          {"sim_swap_ins", st.swap_ins},
          {"sim_swap_out_blocks", st.swap_out_blocks},
          {"sim_swap_in_blocks", st.swap_in_blocks},
          {"sim_recompute_fallbacks", st.recompute_fallbacks},
          {"sim_prefix_cache_queries", st.prefix_queries},
          {"sim_prefix_cache_hits", st.prefix_hits},
          {"sim_wall_s", wall_s},
          {"sim_timeline", timeline_json(timeline)}};
}

/// Writes <stem>.records.jsonl (the format of `run`'s, virtual ns from 0, so measured and
/// simulated runs are compared record by record with the same code) and <stem>.json (with the
/// time windows of `steady`); stores the document and its path in `point`.
void save_simulation(const SimRun& run, sim::SimResult& result, const metrics::Summary& summary,
                     const std::vector<sim::TimelineBucket>& timeline,
                     const std::filesystem::path& dir, const SteadyState& steady,
                     PointReport& point) {
  const auto& f = run.flags;
  const auto& model = run.setup.engine.model;
  const auto now = std::chrono::system_clock::now();
  const std::string date =
      fmt::format("{:%Y%m%d-%H%M%S}", fmt::localtime(std::chrono::system_clock::to_time_t(now)));
  const std::string stem =
      f.result_filename.empty()
          ? fmt::format("simulate-{}-{}-tp{}-{}", model.name, run.setup.engine.gpu.name,
                        run.setup.engine.memory.tp, date)
          : std::filesystem::path(f.result_filename).replace_extension().string();
  const auto records_path = dir / (stem + ".records.jsonl");
  metrics::expand_token_runs(result.tokens, result.records);
  {
    std::ofstream records_out = open_for_writing(records_path);
    for (const auto& r : result.records) records_out << metrics::record_to_json_line(r) << '\n';
    if (!records_out)
      throw Exception(Error{"cannot write the records", records_path.string(), -1});
  }
  report::RunInfo info;
  info.date = date;
  info.backend = "simulate";
  info.model_id = model.name;
  info.tokenizer_id = f.tokenizer.empty() ? model.name : f.tokenizer;
  info.num_prompts = f.num_prompts;
  info.request_rate = run.report.rate;
  info.burstiness = run.report.burstiness;
  info.max_concurrency = static_cast<int>(f.max_concurrency > 0 ? f.max_concurrency : -1);
  info.seed = f.seed;
  info.tool_version = std::string(build_info::version());
  info.git_sha = std::string(build_info::git_sha());
  info.percentiles = run.report.percentiles;
  info.slo = run.report.summary.slo;
  info.config_requested = simulate_flags_json(f);
  info.config_effective = simulate_effective_config(run);
  info.extra = simulation_extra(result, run.wall_s, timeline, records_path);
  info.extra.update(steady_state_json(steady));
  const auto path = dir / (stem + ".json");
  point.results = report::results_json(summary, info);
  report::write_json_file(path.string(), point.results);
  point.results_path = path;
  log::info("results written to {}, per-request records to {}", path.string(),
            records_path.string());
}

/// `--trace`: the engine steps as a Chrome trace.
void write_trace(const std::string& path, const sim::SimResult& result) {
  std::ofstream trace(path, std::ios::out | std::ios::trunc);
  trace << sim::steps_to_chrome_trace(result.steps);
  if (!trace)
    throw Exception(Error{"cannot write the trace", path, -1});
  log::info("step trace ({} steps) written to {}", result.steps.size(), path);
}

}  // namespace

PointReport simulate_point(const SimulateFlags& f, bool console) {
  const std::string data = data_dir();
  const ReportSetup report = report_setup(f);
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
  const SimSetup setup = build_simulation(f, data, report.rate);
  log::info("{}", setup.engine.describe());

  // --tokenizer: exact prompt lengths (completions counting) and, for id prompts, real token ids
  // for prefix caching.
  const auto tok = load_tokenizer(f);
  const std::int64_t count = whole_trace(f) ? workload::kMaxNumPrompts : f.num_prompts;
  auto dopt = dataset_options(f, count, tok ? &*tok : nullptr);
  dopt.random_text = false;  // random prompts are hashed from their corpus offset, not text
  if (!whole_trace(f))
    check_memory_budget(f.num_prompts, dopt, physical_memory_bytes());
  const auto samples = workload::load_samples(dopt);
  const workload::ArrivalOptions aopt{
      .request_rate = report.rate, .burstiness = report.burstiness, .seed = f.seed};
  // A trace brings its own schedule; other datasets get the arrival process.
  auto arrivals = workload::dataset_arrivals(samples, 0, static_cast<std::int64_t>(samples.size()));
  if (arrivals.empty())
    arrivals = workload::arrival_times(static_cast<std::int64_t>(samples.size()), aopt);
  auto requests = to_sim_requests(samples, arrivals, f.random_prefix_len,
                                  setup.options.engine.block_size, f.trace_block_size);

  // ---- run ---- (the results folder is checked first, so a bad one costs no simulation)
  const bool saving = f.save_result || !f.result_dir.empty();
  const std::filesystem::path dir = f.result_dir.empty() ? "." : f.result_dir;
  if (saving)
    prepare_result_dir(dir);
  sim::Simulation engine(setup.options, setup.engine.make_exec_model());
  const TimeNs wall_start = steady_now_ns();
  auto result = engine.run(std::move(requests));
  const double wall_s = ns_to_s(steady_now_ns() - wall_start);

  PointReport point{
      .summary = metrics::summarize(result.records, result.tokens, report.summary),
      .steady = steady_state(result.records, result.tokens, f.window_s, report.percentiles),
      .results = nullptr,
      .results_path = {},
      .exit_code = 0,
      .interrupted = false};
  point.steady.tails = tail_cis(point.summary, [&](const metrics::SummaryOptions& o) {
    metrics::SummaryOptions again = report.summary;
    again.percentiles = o.percentiles;
    return metrics::summarize(result.records, result.tokens, again);
  });
  add_batching(point.steady, step_samples(result.steps),
               static_cast<double>(setup.options.engine.scheduler.max_num_seqs), "engine timeline");
  const auto& summary = point.summary;
  auto copt = console_options(f, report.rate, report.percentile_metrics, report.summary.slo);
  add_engine_lines(result, setup.options, wall_s, copt);
  copt.load_lines.push_back(stability_line(point.steady));
  copt.load_lines.push_back(spike_line(point.steady));
  if (point.steady.batching.evaluated)
    copt.load_lines.push_back(batching_line(point.steady));
  if (console)
    report::print_console(stdout, summary, copt);
  const TimeNs interval =
      f.timeline_interval_s > 0
          ? std::max<TimeNs>(1, static_cast<TimeNs>(f.timeline_interval_s * 1e9))
          : std::max<TimeNs>(1, (result.stats.end_ns + 9) / 10);
  const auto timeline = sim::summarize_timeline(result.steps, interval);
  if (console)
    print_timeline(timeline);
  if (!f.trace_path.empty())
    write_trace(f.trace_path, result);
  if (saving) {
    const SimRun run{.flags = f,
                     .report = report,
                     .setup = setup,
                     .dataset = dopt,
                     .samples = samples.size(),
                     .wall_s = wall_s,
                     .timeline_interval_ns = interval};
    save_simulation(run, result, summary, timeline, dir, point.steady, point);
  }
  point.exit_code = summary.failed > 0 ? 1 : 0;
  return point;
}

namespace {

int execute_simulate(const SimulateFlags& f) {
  return simulate_point(f, true).exit_code;
}

}  // namespace

Command add_simulate_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "simulate", "Run a workload through the simulated serving engine in virtual time (no HTTP)");
  auto f = std::make_shared<SimulateFlags>();
  add_simulate_flags(*sub, *f);
  return [f, sub] {
    f->given = given_flags(*sub);
    return execute_simulate(*f);
  };
}

}  // namespace llmbench::cli
