// `llmbench simulate`: the workload of `llmbench run` in virtual time through the simulated
// serving engine (sim module), reported with the same console table and results JSON.

#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/cli/server_flags.hpp"
#include "llmbench/cli/sim_requests.hpp"
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

/// Everything `llmbench simulate` accepts.
struct SimulateFlags : WorkloadFlags {
  SimulateFlags() { dataset_name = "random"; }  // synthetic lengths suit capacity what-ifs

  bool ignore_eos = false;
  EngineFlags engine;
  double timeline_interval_s = 0;  // 0 = automatic (about 10 windows)
  bool save_result = false;
  std::string result_dir;
  std::string result_filename;
  std::string trace_path;
};

/// Prints the engine state over time: KV-cache usage, running/waiting, preemptions and the
/// prefix-cache hit rate per window (issue 3: "reports KV-cache usage, preemptions and
/// prefix-hit rate over time").
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

int execute_simulate(const SimulateFlags& f) {
  const std::string data = data_dir();
  const auto [rate, burstiness, percentiles, percentile_metrics, summary_options] = report_setup(f);

  // ---- engine configuration (vLLM V1 defaults: sim::make_engine_spec) ----
  const sim::EngineSpec spec = resolve_engine_spec(f.engine, data, "");
  const auto& model = spec.model;
  const auto& gpu = spec.gpu;
  const auto& plan = spec.plan;
  sim::SimOptions so;
  so.engine = spec.engine;
  so.data_parallel_size = spec.data_parallel_size();
  so.max_concurrency = f.max_concurrency;
  so.closed_loop = !(std::isfinite(rate) && rate > 0);  // as `run` plans it (loadgen.cpp)
  so.record_steps = true;                               // the over-time table and --trace
  // Token times stay runs over the step ends: summarized without per-token chunks, which are
  // written only for --save-result's records file (24 bytes per token otherwise built for nothing).
  so.expand_chunks = false;
  log::info("{}", spec.describe());

  // ---- workload ----
  // --tokenizer: exact prompt lengths (completions counting) and, for id prompts, real token ids
  // for prefix caching.
  const auto tok = load_tokenizer(f);
  auto dopt = dataset_options(f, f.num_prompts, tok ? &*tok : nullptr);
  dopt.random_text = false;  // random prompts are hashed from their corpus offset, not text
  const auto samples = workload::load_samples(dopt);
  workload::ArrivalOptions aopt;
  aopt.request_rate = rate;
  aopt.burstiness = burstiness;
  aopt.seed = f.seed;
  const auto arrivals = workload::arrival_times(static_cast<std::int64_t>(samples.size()), aopt);
  auto requests = to_sim_requests(samples, arrivals, f.random_prefix_len, so.engine.block_size);

  // ---- run ---- (the results folder is checked first, so a bad one costs no simulation)
  const bool saving = f.save_result || !f.result_dir.empty();
  const std::filesystem::path dir = f.result_dir.empty() ? "." : f.result_dir;
  if (saving)
    prepare_result_dir(dir);
  sim::Simulation engine(so, spec.make_exec_model());
  const TimeNs wall_start = steady_now_ns();
  auto result = engine.run(std::move(requests));
  const double wall_s = ns_to_s(steady_now_ns() - wall_start);
  const auto& st = result.stats;
  const double simulated_s = ns_to_s(st.end_ns);

  const auto summary = metrics::summarize(result.records, result.tokens, summary_options);
  auto copt = console_options(f, rate, percentile_metrics, summary_options.slo);
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
  copt.load_lines.emplace_back("Simulated s per wall s:",
                               fmt::format("{:.0f}", wall_s > 0 ? simulated_s / wall_s : 0.0));
  report::print_console(stdout, summary, copt);
  const TimeNs interval =
      f.timeline_interval_s > 0
          ? std::max<TimeNs>(1, static_cast<TimeNs>(f.timeline_interval_s * 1e9))
          : std::max<TimeNs>(1, (st.end_ns + 9) / 10);
  const auto timeline = sim::summarize_timeline(result.steps, interval);
  print_timeline(timeline);
  if (!f.trace_path.empty()) {
    std::ofstream trace(f.trace_path, std::ios::out | std::ios::trunc);
    trace << sim::steps_to_chrome_trace(result.steps);
    if (!trace)
      throw Exception(Error{"cannot write the trace", f.trace_path, -1});
    log::info("step trace ({} steps) written to {}", result.steps.size(), f.trace_path);
  }

  if (saving) {
    const auto now = std::chrono::system_clock::now();
    const std::string date =
        fmt::format("{:%Y%m%d-%H%M%S}", fmt::localtime(std::chrono::system_clock::to_time_t(now)));
    const std::string stem =
        f.result_filename.empty()
            ? fmt::format("simulate-{}-{}-tp{}-{}", model.name, gpu.name, spec.memory.tp, date)
            : std::filesystem::path(f.result_filename).replace_extension().string();
    // The per-request records, in the format of `run`'s <stem>.records.jsonl, so measured and
    // simulated runs are compared record by record with the same code (virtual ns from 0).
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
    info.request_rate = rate;
    info.burstiness = burstiness;
    info.max_concurrency = static_cast<int>(f.max_concurrency > 0 ? f.max_concurrency : -1);
    info.seed = f.seed;
    info.tool_version = std::string(build_info::version());
    info.git_sha = std::string(build_info::git_sha());
    info.percentiles = percentiles;
    info.slo = summary_options.slo;
    info.config_requested = {{"dataset_name", f.dataset_name},
                             {"dataset_path", f.dataset_path},
                             {"num_prompts", f.num_prompts},
                             {"random_input_len", f.random_input_len},
                             {"random_output_len", f.random_output_len},
                             {"random_range_ratio", f.random_range_ratio},
                             {"output_len", f.output_len},
                             {"max_concurrency", f.max_concurrency},
                             {"request_rate", f.request_rate},
                             {"burstiness", f.burstiness}};
    info.config_requested.update(requested_engine_json(f.engine));
    info.config_effective = {
        {"model_profile", model.name},
        {"gpu", gpu.name},
        {"tp", spec.memory.tp},
        {"max_num_seqs", so.engine.scheduler.max_num_seqs},
        {"max_num_batched_tokens", so.engine.scheduler.max_num_batched_tokens},
        {"block_size", plan.block_size},
        {"num_gpu_blocks", plan.num_gpu_blocks},
        {"num_cpu_blocks", plan.num_cpu_blocks},
        {"expert_parallel_size", spec.memory.ep},
        {"data_parallel_size", so.data_parallel_size},
        {"scheduler", f.engine.scheduler.value_or(std::string(sim::kDefaultScheduler))},
        {"kv_bytes_per_gpu", plan.kv_bytes},
        {"weight_bytes_per_gpu", plan.weight_bytes_per_gpu},
        {"enable_prefix_caching", so.engine.scheduler.enable_prefix_caching},
        {"efficiency",
         {{"compute", spec.efficiency.compute},
          {"memory", spec.efficiency.memory},
          {"step_overhead_us", spec.efficiency.step_overhead_us},
          {"layer_overhead_us", spec.efficiency.layer_overhead_us},
          {"request_overhead_us", spec.efficiency.request_overhead_us},
          {"allreduce_latency_us", spec.efficiency.allreduce_latency_us}}}};
    info.extra = {{"simulated", true},
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
    const auto path = dir / (stem + ".json");
    report::write_json_file(path.string(), report::results_json(summary, info));
    log::info("results written to {}, per-request records to {}", path.string(),
              records_path.string());
  }
  return summary.failed > 0 ? 1 : 0;
}

}  // namespace

Command add_simulate_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "simulate", "Run a workload through the simulated serving engine in virtual time (no HTTP)");
  auto f = std::make_shared<SimulateFlags>();
  add_workload_flags(*sub, *f);
  sub->add_flag("--ignore-eos", f->ignore_eos,
                "Accepted for symmetry with run: the simulator always generates the full length");
  add_engine_flags(*sub, f->engine, "", "");
  sub->add_option("--timeline-interval", f->timeline_interval_s,
                  "Seconds per window of the KV-cache / preemption / prefix-hit table (default: "
                  "a tenth of the simulated time)");
  sub->add_flag("--save-result", f->save_result, "Write the results JSON");
  sub->add_option("--result-dir", f->result_dir,
                  "Folder for the results JSON and its <stem>.records.jsonl (one record per "
                  "request, as run writes)");
  sub->add_option("--result-filename", f->result_filename);
  sub->add_option("--trace", f->trace_path,
                  "Write the engine steps as a Chrome trace (chrome://tracing, Perfetto)");
  return [f] { return execute_simulate(*f); };
}

}  // namespace llmbench::cli
