// `llmbench plan`: vLLM's KV-cache capacity arithmetic for a model profile on a GPU profile
// (sim/memory.hpp; SIMULATOR-NOTES.md §2.2 and §6.3), printed like vLLM's start-up log.

#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/flag_checks.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/core/build_info.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/sim/cost_model.hpp"
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

struct PlanFlags {
  std::string model_profile = "deepseek-r1";
  std::string gpu = "h200";
  int tp = 8;
  int ep = 1;
  int dp = 1;
  double swap_space_gib = 0;
  double capacity_factor = 1.0;
  std::vector<std::int64_t> batch_tokens{256, 2048, 8192};
  std::int64_t block_size = 0;  // 0 = 64 for MLA, else 16
  double gpu_memory_utilization = 0.9;
  std::optional<double> activation_peak_gib;
  std::optional<double> non_torch_gib;
  std::optional<std::int64_t> num_gpu_blocks_override;
  std::vector<std::int64_t> context_lens{1024, 2048, 8192, 32768, 131072};
  bool list = false;
};

void line(const std::string& label, const std::string& value) {
  std::printf("%-44s %s\n", label.c_str(), value.c_str());
}

int execute_plan(const PlanFlags& f) {
  const std::string data = data_dir();
  if (f.list) {
    std::printf("models:");
    for (const auto& n : sim::list_profiles(data, "models")) std::printf(" %s", n.c_str());
    std::printf("\ngpus:");
    for (const auto& n : sim::list_profiles(data, "gpus")) std::printf(" %s", n.c_str());
    std::printf("\n");
    return 0;
  }
  check_plan_flags(f.block_size, f.activation_peak_gib, f.non_torch_gib);
  const auto model = sim::load_model_profile(data, f.model_profile);
  const auto gpu = sim::load_hardware_profile(data, f.gpu);
  sim::MemoryOptions o;
  o.tp = f.tp;
  o.ep = f.ep;
  o.dp = f.dp;
  o.swap_space_gib = f.swap_space_gib;
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
  o.gpu_memory_utilization = f.gpu_memory_utilization;
  o.block_size =
      f.block_size > 0 ? f.block_size : (model.attention == sim::AttentionKind::Mla ? 64 : 16);
  if (f.activation_peak_gib)
    o.activation_peak_bytes = *f.activation_peak_gib * sim::kGiB;
  if (f.non_torch_gib)
    o.non_torch_bytes = *f.non_torch_gib * sim::kGiB;
  o.num_gpu_blocks_override = f.num_gpu_blocks_override;
  const auto p = sim::plan_memory(model, gpu, o);
  const double gib = sim::kGiB;

  std::printf("%s\n", std::string(60, '=').c_str());
  line("Model profile:", fmt::format("{} ({})", model.name, model.source));
  line("GPU profile:",
       fmt::format("{} × {} (TP{}, EP{}, DP{})", f.tp * f.dp, gpu.name, f.tp, f.ep, f.dp));
  line("Parameters (B):", fmt::format("{:.2f}", static_cast<double>(model.total_params()) / 1e9));
  if (model.is_moe()) {
    const double active = static_cast<double>(model.dense_params() + model.experts_per_token *
                                                                         model.num_moe_layers() *
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
         f.ep > 1 ? fmt::format("{:g} whole (EP{})", p.experts_per_gpu, f.ep)
                  : fmt::format("{} (each 1/{} TP-sharded)", model.n_routed_experts, f.tp));
    line("Routed-expert weights per GPU (GiB):",
         fmt::format("{:.2f}", p.expert_bytes_per_gpu / sim::kGiB));
    // Tokens per expert for a step of T tokens (GShard capacity T·k/N·factor); with EP the
    // MoE layer sees the tokens of all DP replicas.
    for (const auto t : f.batch_tokens) {
      const double global = static_cast<double>(t) * (f.ep > 1 ? f.dp : 1);
      const double per_expert = sim::expert_capacity(model, global, f.capacity_factor);
      line(fmt::format("Expert capacity, {} tokens/replica (x{:g}):", t, f.capacity_factor),
           fmt::format("{:.1f} tokens per expert, {:.0f} per GPU", per_expert,
                       per_expert * p.experts_per_gpu));
    }
  }
  line("GPU memory (GiB):", fmt::format("{:.2f}", p.total_bytes / gib));
  line("GPU memory utilization:", fmt::format("{:.2f}", f.gpu_memory_utilization));
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
  if (f.dp > 1)
    line(fmt::format("KV cache tokens, all {} replicas:", f.dp),
         std::to_string(p.kv_tokens() * f.dp));
  if (f.swap_space_gib > 0) {
    line("Swap space per GPU (GiB):", fmt::format("{:.2f}", f.swap_space_gib));
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
  sub->add_option("--model-profile", f->model_profile, "Model profile name, HF id or .json path")
      ->capture_default_str();
  sub->add_option("--gpu", f->gpu, "GPU profile name or .json path")->capture_default_str();
  sub->add_option("--tp,--tensor-parallel-size", f->tp, "Tensor-parallel GPUs per replica")
      ->capture_default_str();
  sub->add_option("--ep,--expert-parallel-size", f->ep,
                  "Expert-parallel GPUs (1 = experts TP-sharded; else must equal tp × dp)")
      ->capture_default_str();
  sub->add_option("--dp,--data-parallel-size", f->dp, "Attention data-parallel replicas")
      ->capture_default_str();
  sub->add_option("--swap-space", f->swap_space_gib, "CPU swap space per GPU, GiB (vLLM V0)")
      ->capture_default_str();
  sub->add_option("--capacity-factor", f->capacity_factor,
                  "Expert capacity factor for the tokens-per-expert lines")
      ->capture_default_str();
  sub->add_option("--batch-tokens", f->batch_tokens,
                  "Step sizes (tokens per replica) for the expert-capacity lines (repeatable)");
  sub->add_option("--block-size", f->block_size, "Tokens per KV block (default 64 MLA, 16 GQA)");
  sub->add_option("--gpu-memory-utilization", f->gpu_memory_utilization)->capture_default_str();
  sub->add_option("--activation-peak-gib", f->activation_peak_gib,
                  "Activation peak per GPU (default 8 MoE / 5.5 dense)");
  sub->add_option("--non-torch-gib", f->non_torch_gib,
                  "Non-torch memory per GPU (default 0.15 at TP1, 0.6 at TP>1)");
  sub->add_option("--num-gpu-blocks-override", f->num_gpu_blocks_override);
  sub->add_option("--context-len", f->context_lens,
                  "Tokens per request for the max-concurrency lines (repeatable)");
  sub->add_flag("--list", f->list, "List the bundled model and GPU profiles");
  return [f] { return execute_plan(*f); };
}

}  // namespace llmbench::cli
