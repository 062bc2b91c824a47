// `llmbench plan`: vLLM's KV-cache capacity arithmetic for a model profile on a GPU profile
// (sim/memory.hpp; docs/simulator.md "KV cache capacity"), printed like vLLM's start-up log.

#include "llmbench/app/comm_report.hpp"
#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/flag_checks.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/core/build_info.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/sim/calibration_file.hpp"
#include "llmbench/sim/cost_model.hpp"
#include "llmbench/sim/engine_spec.hpp"
#include "llmbench/sim/memory.hpp"
#include "llmbench/sim/profiles.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::cli {

namespace {

/// What `llmbench plan` accepts: the memory-related engine overrides (defaults applied by
/// `sim::resolve_memory_options`, as for `simulate` and `serve`) and the lines to print.
struct PlanFlags {
  sim::EngineOverrides engine;
  double capacity_factor = 1.0;
  std::vector<std::int64_t> batch_tokens{256, 2048, 8192};
  std::vector<std::int64_t> context_lens{1024, 2048, 8192, 32768, 131072};
  bool list = false;
};

void line(const std::string& label, const std::string& value) {
  std::printf("%-44s %s\n", label.c_str(), value.c_str());
}

/// `--list`: the bundled model and GPU profile names, one line each.
void print_profile_list(const std::string& data) {
  std::printf("models:");
  for (const auto& n : sim::list_profiles(data, "models")) std::printf(" %s", n.c_str());
  std::printf("\ngpus:");
  for (const auto& n : sim::list_profiles(data, "gpus")) std::printf(" %s", n.c_str());
  std::printf("\n");
}

/// The MoE lines: activated parameters, experts hit, experts per GPU and the tokens per expert
/// of each `--batch-tokens` step.
void print_moe_lines(const PlanFlags& f, const sim::ModelProfile& model,
                     const sim::MemoryOptions& o, const sim::MemoryPlan& p) {
  const double active =
      static_cast<double>(model.dense_params() + model.experts_per_token * model.num_moe_layers() *
                                                     model.params_per_expert());
  line("Activated parameters per token (B):", fmt::format("{:.2f}", active / 1e9));
  line("Routed experts per MoE layer / top-k:",
       fmt::format("{} / {} (+{} shared), {} MoE layers", model.n_routed_experts,
                   model.experts_per_token, model.n_shared_experts, model.num_moe_layers()));
  const double per_expert_gb =
      static_cast<double>(model.params_per_expert()) * model.weight_bytes / 1e9;
  line("Bytes per expert (GB):", fmt::format("{:.4f}", per_expert_gb));
  for (const double tokens : {1.0, 8.0, 64.0, 512.0}) {
    line(fmt::format("Distinct experts hit by {:g} tokens:", tokens),
         fmt::format("{:.1f}", sim::expected_distinct_experts(
                                   static_cast<double>(model.n_routed_experts),
                                   static_cast<double>(model.experts_per_token), tokens)));
  }
  line("Routed experts per GPU per MoE layer:",
       o.ep > 1 ? fmt::format("{:g} whole (EP{})", p.experts_per_gpu, o.ep)
                : fmt::format("{} (each 1/{} TP-sharded)", model.n_routed_experts, o.tp));
  line("Routed-expert weights per GPU (GiB):",
       fmt::format("{:.2f}", p.expert_bytes_per_gpu / sim::kGiB));
  // Tokens per expert for a step of T tokens (GShard capacity T·k/N·factor); with EP the
  // MoE layer sees the tokens of all DP replicas.
  for (const auto t : f.batch_tokens) {
    const double global = static_cast<double>(t) * (o.ep > 1 ? o.dp : 1);
    const double per_expert = sim::expert_capacity(model, global, f.capacity_factor);
    line(fmt::format("Expert capacity, {} tokens/replica (x{:g}):", t, f.capacity_factor),
         fmt::format("{:.1f} tokens per expert, {:.0f} per GPU", per_expert,
                     per_expert * p.experts_per_gpu));
  }
}

int execute_plan(const PlanFlags& f) {
  const std::string data = data_dir();
  if (f.list) {
    print_profile_list(data);
    return 0;
  }
  check_plan_flags(f.engine.block_size.value_or(0), f.engine.activation_peak_gib,
                   f.engine.non_torch_gib);
  // --calibration: read once, before anything is printed (its knobs, cost model and comm section)
  const std::optional<sim::Calibration> cal =
      f.engine.calibration ? std::optional(sim::load_calibration(*f.engine.calibration))
                           : std::nullopt;
  const sim::EngineOverrides engine = cal ? sim::merge_overrides(f.engine, cal->engine) : f.engine;
  const auto model = sim::load_model_profile(
      data, engine.model_profile.value_or(std::string(sim::kDefaultModelProfile)));
  const auto gpu =
      sim::load_hardware_profile(data, engine.gpu.value_or(std::string(sim::kDefaultGpu)));
  const sim::MemoryOptions o = sim::resolve_memory_options(model, engine);
  if (!(f.capacity_factor > 0))
    throw Exception(
        Error{fmt::format("must be > 0, got {}", f.capacity_factor), "--capacity-factor", -1});
  for (const auto n : f.context_lens) {
    if (n < 1)
      throw Exception(Error{fmt::format("must be ≥ 1, got {}", n), "--context-len", -1});
  }
  for (const auto n : f.batch_tokens) {
    if (n < 1)
      throw Exception(Error{fmt::format("must be ≥ 1, got {}", n), "--batch-tokens", -1});
  }
  const auto p = sim::plan_memory(model, gpu, o);
  const double gib = sim::kGiB;

  std::printf("%s\n", std::string(60, '=').c_str());
  line("Model profile:", fmt::format("{} ({})", model.name, model.source));
  line("GPU profile:",
       fmt::format("{} × {} (TP{}, EP{}, DP{})", o.tp * o.dp, gpu.name, o.tp, o.ep, o.dp));
  line("Parameters (B):", fmt::format("{:.2f}", static_cast<double>(model.total_params()) / 1e9));
  if (model.is_moe())
    print_moe_lines(f, model, o, p);
  line("GPU memory (GiB):", fmt::format("{:.2f}", p.total_bytes / gib));
  line("GPU memory utilization:", fmt::format("{:.2f}", o.gpu_memory_utilization));
  line("Weights per GPU (GiB):", fmt::format("{:.2f}", p.weight_bytes_per_gpu / gib));
  line("Activation peak per GPU (GiB):", fmt::format("{:.2f}", p.activation_peak_bytes / gib));
  line("Non-torch memory per GPU (GiB):", fmt::format("{:.2f}", p.non_torch_bytes / gib));
  line("KV cache memory per GPU (GiB):", fmt::format("{:.2f}", p.kv_bytes / gib));
  line("KV bytes per token per GPU:",
       fmt::format("{:.0f}{}", p.kv_bytes_per_token,
                   model.attention == sim::AttentionKind::Mla ? " (MLA latent, replicated)" : ""));
  line("Block size (tokens):", std::to_string(p.block_size));
  line("# GPU blocks:", std::to_string(p.num_gpu_blocks));
  line("KV cache tokens:", std::to_string(p.kv_tokens()));
  if (o.dp > 1)
    line(fmt::format("KV cache tokens, all {} replicas:", o.dp),
         std::to_string(p.kv_tokens() * o.dp));
  if (o.swap_space_gib > 0) {
    line("Swap space per GPU (GiB):", fmt::format("{:.2f}", o.swap_space_gib));
    line("# CPU blocks:", std::to_string(p.num_cpu_blocks));
    if (gpu.host_link_bandwidth_gb_s > 0)
      line("Swap of one block (ms):",
           fmt::format("{:.4f}", static_cast<double>(p.block_size) * p.kv_bytes_per_token /
                                     (gpu.host_link_bandwidth_gb_s * 1e9) * 1e3));
  }
  for (const auto n : f.context_lens) {
    line(fmt::format("Maximum concurrency for {} tokens:", n),
         fmt::format("{:.2f}x", sim::max_concurrency(p.num_gpu_blocks, p.block_size, n)));
  }
  app::print_comm_plan(app::CommPlanInput{
      .model = model,
      .gpu = gpu,
      .efficiency = cal && cal->has_cost_model ? cal->cost_model : gpu.efficiency,
      .comm = cal && cal->comm ? &*cal->comm : nullptr,
      .calibration_file = f.engine.calibration.value_or(""),
      .tp = o.tp,
      .ep = o.ep,
      .dp = o.dp,
      .batch_tokens = f.batch_tokens});
  std::printf("%s\n", std::string(60, '=').c_str());
  if (p.num_gpu_blocks == 0) {
    try {
      sim::require_fit(p, model, gpu, o);
    } catch (const Exception& e) {
      std::fprintf(stderr, "llmbench: error: %s: %s\n", e.error().source.c_str(),
                   e.error().message.c_str());
    }
    return 1;
  }
  return 0;
}

}  // namespace

Command add_plan_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "plan", "KV-cache capacity arithmetic: weights per GPU, KV memory, blocks, max concurrency");
  auto f = std::make_shared<PlanFlags>();
  sim::EngineOverrides& e = f->engine;
  sub->add_option("--model-profile", e.model_profile, "Model profile name, HF id or .json path")
      ->default_str(std::string(sim::kDefaultModelProfile));
  sub->add_option("--gpu", e.gpu, "GPU profile name or .json path")
      ->default_str(std::string(sim::kDefaultGpu));
  sub->add_option("--tp,--tensor-parallel-size", e.tp, "Tensor-parallel GPUs per replica")
      ->default_str(std::to_string(sim::kDefaultTensorParallelSize));
  sub->add_option("--ep,--expert-parallel-size", e.ep,
                  "Expert-parallel GPUs (1 = experts TP-sharded; else must equal tp × dp; "
                  "default 1, or tp × dp with --enable-expert-parallel)");
  sub->add_flag("--enable-expert-parallel", e.enable_expert_parallel,
                "Expert parallelism over every GPU (ep = tp x dp, vLLM's rule)");
  sub->add_option("--dp,--data-parallel-size", e.dp, "Attention data-parallel replicas")
      ->default_str(std::to_string(sim::MemoryOptions{}.dp));
  sub->add_option("--swap-space", e.swap_space_gib, "CPU swap space per GPU, GiB (vLLM V0)")
      ->default_str(fmt::format("{}", sim::MemoryOptions{}.swap_space_gib));
  sub->add_option("--capacity-factor", f->capacity_factor,
                  "Expert capacity factor for the tokens-per-expert lines")
      ->capture_default_str();
  sub->add_option("--batch-tokens", f->batch_tokens,
                  "Step sizes (tokens per replica) for the expert-capacity lines (repeatable)");
  sub->add_option("--block-size", e.block_size, "Tokens per KV block (default 64 MLA, 16 GQA)");
  sub->add_option("--gpu-memory-utilization", e.gpu_memory_utilization)
      ->default_str(fmt::format("{}", sim::MemoryOptions{}.gpu_memory_utilization));
  sub->add_option("--activation-peak-gib", e.activation_peak_gib,
                  "Activation peak per GPU (default 8 MoE / 5.5 dense)");
  sub->add_option("--non-torch-gib", e.non_torch_gib,
                  "Non-torch memory per GPU (default 0.15 at TP1, 0.6 at TP>1)");
  sub->add_option("--num-gpu-blocks-override", e.num_gpu_blocks_override);
  sub->add_option("--context-len", f->context_lens,
                  "Tokens per request for the max-concurrency lines (repeatable)");
  sub->add_flag("--list", f->list, "List the bundled model and GPU profiles");
  sub->add_option("--engine", e.engine, "Engine family: vllm, sglang or llamacpp")
      ->default_str("vllm");
  sub->add_option("--calibration", e.calibration,
                  "Calibration file (llmbench calibrate, llmbench probe comm): its target and "
                  "engine knobs fill in what was not typed, its comm section prices the "
                  "communication lines");
  return [f] { return execute_plan(*f); };
}

}  // namespace llmbench::cli
