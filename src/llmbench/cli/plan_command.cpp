// `llmbench plan`: vLLM's KV-cache capacity arithmetic for a model profile on a GPU profile
// (sim/memory.hpp; SIMULATOR-NOTES.md §2.2 and §6.3), printed like vLLM's start-up log.

#include "llmbench/cli/commands.hpp"
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
  const auto model = sim::load_model_profile(data, f.model_profile);
  const auto gpu = sim::load_hardware_profile(data, f.gpu);
  sim::MemoryOptions o;
  o.tp = f.tp;
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
  line("GPU profile:", fmt::format("{} × {} (TP{})", f.tp, gpu.name, f.tp));
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
  for (const auto n : f.context_lens) {
    line(fmt::format("Maximum concurrency for {} tokens:", n),
         fmt::format("{:.2f}x", sim::max_concurrency(p.num_gpu_blocks, p.block_size, n)));
  }
  std::printf("%s\n", std::string(60, '=').c_str());
  if (p.num_gpu_blocks == 0) {
    std::fprintf(stderr,
                 "llmbench: warning: the model does not fit: no memory is left for the KV cache "
                 "(raise --tp or --gpu-memory-utilization)\n");
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
