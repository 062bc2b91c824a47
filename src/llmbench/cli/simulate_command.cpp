// `llmbench simulate`: the workload of `llmbench run` in virtual time through the simulated
// serving engine (sim module), reported with the same console table and results JSON.

#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/cli/workload_flags.hpp"
#include "llmbench/core/build_info.hpp"
#include "llmbench/core/clock.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
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
  std::string model_profile = "deepseek-r1";
  std::string gpu = "h200";
  int tp = 8;
  std::int64_t max_num_seqs = 0;            // 0 = vLLM V1 default for the GPU
  std::int64_t max_num_batched_tokens = 0;  // 0 = vLLM V1 default for the GPU
  std::int64_t block_size = 0;              // 0 = 64 for MLA, else 16
  double gpu_memory_utilization = 0.9;
  std::optional<std::int64_t> num_gpu_blocks_override;
  bool no_prefix_caching = false;
  std::int64_t long_prefill_token_threshold = 0;
  std::string scheduler = "vllm-v1";
  std::string exec_model = "roofline";
  std::optional<double> compute_efficiency;
  std::optional<double> memory_efficiency;
  std::optional<double> step_overhead_us;
  std::vector<std::string> goodput;
  std::string percentile_metrics = "ttft,tpot,itl,e2el";
  std::string metric_percentiles = "50,90,95,99";
  bool save_result = false;
  std::string result_dir;
  std::string result_filename;
  std::string trace_path;
};

int execute_simulate(const SimulateFlags& f) {
  const std::string data = data_dir();
  const auto model = sim::load_model_profile(data, f.model_profile);
  const auto gpu = sim::load_hardware_profile(data, f.gpu);
  const double rate = parse_positive_or_inf(f.request_rate, "--request-rate");
  const double burstiness = parse_positive_or_inf(f.burstiness, "--burstiness");
  const auto percentiles = parse_percentiles(f.metric_percentiles);
  const auto percentile_metrics = split_csv(f.percentile_metrics);
  report::check_percentile_metrics(percentile_metrics);
  metrics::SummaryOptions summary_options;
  summary_options.percentiles = percentiles;
  summary_options.slo = metrics::parse_slo(f.goodput);

  // ---- engine configuration (vLLM V1 defaults: SIMULATOR-NOTES.md §2.1) ----
  const bool big_gpu =
      gpu.memory_bytes >= 70 * sim::kGiB && gpu.name.find("a100") == std::string::npos;
  sim::MemoryOptions mem;
  mem.tp = f.tp;
  mem.gpu_memory_utilization = f.gpu_memory_utilization;
  mem.block_size =
      f.block_size > 0 ? f.block_size : (model.attention == sim::AttentionKind::Mla ? 64 : 16);
  mem.num_gpu_blocks_override = f.num_gpu_blocks_override;
  const auto plan = sim::plan_memory(model, gpu, mem);
  if (plan.num_gpu_blocks < 1) {
    throw Exception(Error{
        fmt::format("{} does not fit on {} × {} at --gpu-memory-utilization {}: weights {:.1f} "
                    "GiB per GPU, {:.1f} GiB usable",
                    model.name, f.tp, gpu.name, f.gpu_memory_utilization,
                    plan.weight_bytes_per_gpu / sim::kGiB,
                    plan.total_bytes * f.gpu_memory_utilization / sim::kGiB),
        "--tp", -1});
  }
  sim::SimOptions so;
  so.scheduler_kind = sim::parse_scheduler_kind(f.scheduler);
  so.scheduler.max_num_seqs = f.max_num_seqs > 0 ? f.max_num_seqs : (big_gpu ? 1024 : 256);
  so.scheduler.max_num_batched_tokens =
      f.max_num_batched_tokens > 0 ? f.max_num_batched_tokens : (big_gpu ? 8192 : 2048);
  so.scheduler.enable_prefix_caching = !f.no_prefix_caching;
  so.scheduler.long_prefill_token_threshold = f.long_prefill_token_threshold;
  so.num_gpu_blocks = plan.num_gpu_blocks;
  so.block_size = plan.block_size;
  so.max_concurrency = f.max_concurrency;
  so.record_steps = !f.trace_path.empty();
  sim::ExecModelParams ep;
  ep.model = model;
  ep.gpu = gpu;
  ep.tp = f.tp;
  ep.efficiency = gpu.efficiency;
  if (f.compute_efficiency)
    ep.efficiency.compute = *f.compute_efficiency;
  if (f.memory_efficiency)
    ep.efficiency.memory = *f.memory_efficiency;
  if (f.step_overhead_us)
    ep.efficiency.step_overhead_us = *f.step_overhead_us;
  if (!(ep.efficiency.compute > 0 && ep.efficiency.compute <= 1) ||
      !(ep.efficiency.memory > 0 && ep.efficiency.memory <= 1)) {
    throw Exception(Error{"efficiencies must be in (0, 1]", "--compute/--memory-efficiency", -1});
  }
  log::info(
      "{} on {} × {} (TP{}): # GPU blocks: {} (block size {}, {} KV tokens, {:.2f} GiB KV "
      "per GPU)",
      model.name, f.tp, gpu.name, f.tp, plan.num_gpu_blocks, plan.block_size, plan.kv_tokens(),
      plan.kv_bytes / sim::kGiB);

  // ---- workload ----
  const auto dopt = dataset_options(f, f.num_prompts);
  const auto samples = workload::load_samples(dopt);
  workload::ArrivalOptions aopt;
  aopt.request_rate = rate;
  aopt.burstiness = burstiness;
  aopt.seed = f.seed;
  const auto arrivals = workload::arrival_times(static_cast<std::int64_t>(samples.size()), aopt);
  std::vector<sim::SimRequest> requests;
  requests.reserve(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    std::string text = s.prompt;
    for (const auto& m : s.messages) text += m.content;
    const std::int64_t prompt_len = std::max<std::int64_t>(
        1, s.prompt_len >= 0 ? s.prompt_len : workload::estimate_tokens(text));
    requests.push_back(sim::SimRequest{arrivals[i], prompt_len,
                                       std::max<std::int64_t>(1, s.output_len),
                                       sim::pseudo_tokens(text, prompt_len, i + 1), false});
  }

  // ---- run ----
  sim::Simulation engine(so, sim::make_exec_model(sim::parse_exec_model_kind(f.exec_model), ep));
  const TimeNs wall_start = steady_now_ns();
  auto result = engine.run(std::move(requests));
  const double wall_s = ns_to_s(steady_now_ns() - wall_start);
  const auto& st = result.stats;
  const double simulated_s = ns_to_s(st.end_ns);

  const auto summary = metrics::summarize(result.records, summary_options);
  auto copt = console_options(f, rate, percentile_metrics, summary_options.slo);
  copt.load_lines.emplace_back("Simulated engine steps:", std::to_string(st.steps));
  copt.load_lines.emplace_back("Mean tokens per step:", fmt::format("{:.1f}", st.mean_step_tokens));
  copt.load_lines.emplace_back("Preemptions:", std::to_string(st.preemptions));
  copt.load_lines.emplace_back(
      "Prefix cache hit rate (%):",
      fmt::format("{:.2f}", st.prefix_queries > 0 ? 100.0 * static_cast<double>(st.prefix_hits) /
                                                        static_cast<double>(st.prefix_queries)
                                                  : 0.0));
  copt.load_lines.emplace_back("Max running requests:", std::to_string(st.max_running));
  copt.load_lines.emplace_back("Simulated s per wall s:",
                               fmt::format("{:.0f}", wall_s > 0 ? simulated_s / wall_s : 0.0));
  report::print_console(stdout, summary, copt);
  if (!f.trace_path.empty()) {
    std::ofstream trace(f.trace_path, std::ios::out | std::ios::trunc);
    trace << sim::steps_to_chrome_trace(result.steps);
    if (!trace)
      throw Exception(Error{"cannot write the trace", f.trace_path, -1});
    log::info("step trace ({} steps) written to {}", result.steps.size(), f.trace_path);
  }

  if (f.save_result || !f.result_dir.empty()) {
    const auto now = std::chrono::system_clock::now();
    const std::string date =
        fmt::format("{:%Y%m%d-%H%M%S}", fmt::localtime(std::chrono::system_clock::to_time_t(now)));
    const std::string stem =
        f.result_filename.empty()
            ? fmt::format("simulate-{}-{}-tp{}-{}", model.name, gpu.name, f.tp, date)
            : std::filesystem::path(f.result_filename).replace_extension().string();
    const std::filesystem::path dir = f.result_dir.empty() ? "." : f.result_dir;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    report::RunInfo info;
    info.date = date;
    info.backend = "simulate";
    info.model_id = model.name;
    info.tokenizer_id = model.name;
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
                             {"burstiness", f.burstiness},
                             {"model_profile", f.model_profile},
                             {"gpu", f.gpu},
                             {"tp", f.tp},
                             {"max_num_seqs", f.max_num_seqs},
                             {"max_num_batched_tokens", f.max_num_batched_tokens},
                             {"block_size", f.block_size},
                             {"gpu_memory_utilization", f.gpu_memory_utilization}};
    info.config_effective = {{"model_profile", model.name},
                             {"gpu", gpu.name},
                             {"tp", f.tp},
                             {"max_num_seqs", so.scheduler.max_num_seqs},
                             {"max_num_batched_tokens", so.scheduler.max_num_batched_tokens},
                             {"block_size", plan.block_size},
                             {"num_gpu_blocks", plan.num_gpu_blocks},
                             {"kv_bytes_per_gpu", plan.kv_bytes},
                             {"weight_bytes_per_gpu", plan.weight_bytes_per_gpu},
                             {"enable_prefix_caching", so.scheduler.enable_prefix_caching},
                             {"efficiency",
                              {{"compute", ep.efficiency.compute},
                               {"memory", ep.efficiency.memory},
                               {"step_overhead_us", ep.efficiency.step_overhead_us},
                               {"layer_overhead_us", ep.efficiency.layer_overhead_us},
                               {"request_overhead_us", ep.efficiency.request_overhead_us},
                               {"allreduce_latency_us", ep.efficiency.allreduce_latency_us}}}};
    info.extra = {{"simulated", true},
                  {"sim_steps", st.steps},
                  {"sim_preemptions", st.preemptions},
                  {"sim_prefix_cache_queries", st.prefix_queries},
                  {"sim_prefix_cache_hits", st.prefix_hits},
                  {"sim_wall_s", wall_s}};
    const auto path = dir / (stem + ".json");
    report::write_json_file(path.string(), report::results_json(summary, info));
    log::info("results written to {}", path.string());
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
  sub->add_option("--model-profile", f->model_profile,
                  "Model profile name, HF id or .json path (data/sim/models)")
      ->capture_default_str();
  sub->add_option("--gpu", f->gpu, "GPU profile name or .json path (data/sim/gpus)")
      ->capture_default_str();
  sub->add_option("--tp,--tensor-parallel-size", f->tp, "Tensor-parallel GPUs per replica")
      ->capture_default_str();
  sub->add_option("--max-num-seqs", f->max_num_seqs,
                  "Cap on running requests (default: vLLM V1's, 1024 on >= 70 GiB non-A100 GPUs, "
                  "else 256)");
  sub->add_option("--max-num-batched-tokens", f->max_num_batched_tokens,
                  "Token budget per step (default: vLLM V1 API server's, 8192 or 2048)");
  sub->add_option("--block-size", f->block_size, "Tokens per KV block (default 64 MLA, 16 GQA)");
  sub->add_option("--gpu-memory-utilization", f->gpu_memory_utilization)->capture_default_str();
  sub->add_option("--num-gpu-blocks-override", f->num_gpu_blocks_override,
                  "Force the number of KV blocks (to study preemption)");
  sub->add_flag("--no-enable-prefix-caching,--no-prefix-caching", f->no_prefix_caching,
                "Disable automatic prefix caching");
  sub->add_option("--long-prefill-token-threshold", f->long_prefill_token_threshold,
                  "Cap per-request prefill chunk per step (0 = off)");
  sub->add_option("--scheduler", f->scheduler, "Scheduler: vllm-v1")->capture_default_str();
  sub->add_option("--exec-model", f->exec_model, "Step-time model: roofline")
      ->capture_default_str();
  sub->add_option("--compute-efficiency", f->compute_efficiency,
                  "Override the GPU profile's compute efficiency (0-1]");
  sub->add_option("--memory-efficiency", f->memory_efficiency,
                  "Override the GPU profile's memory-bandwidth efficiency (0-1]");
  sub->add_option("--step-overhead-us", f->step_overhead_us,
                  "Override the fixed cost per engine step (µs)");
  sub->add_option("--goodput", f->goodput, "SLOs as ttft:MS tpot:MS e2el:MS");
  sub->add_option("--percentile-metrics", f->percentile_metrics)->capture_default_str();
  sub->add_option("--metric-percentiles", f->metric_percentiles)->capture_default_str();
  sub->add_flag("--save-result", f->save_result, "Write the results JSON");
  sub->add_option("--result-dir", f->result_dir, "Folder for the results JSON");
  sub->add_option("--result-filename", f->result_filename);
  sub->add_option("--trace", f->trace_path,
                  "Write the engine steps as a Chrome trace (chrome://tracing, Perfetto)");
  return [f] { return execute_simulate(*f); };
}

}  // namespace llmbench::cli
