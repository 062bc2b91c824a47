#include "llmbench/sim/memory.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace llmbench::sim {

double available_kv_bytes(double total_bytes, double gpu_memory_utilization,
                          double peak_torch_bytes, double non_torch_bytes) noexcept {
  return std::max(0.0, total_bytes * gpu_memory_utilization - peak_torch_bytes - non_torch_bytes);
}

std::int64_t num_gpu_blocks(double kv_bytes, std::int64_t block_size,
                            double kv_bytes_per_token) noexcept {
  const double page = static_cast<double>(block_size) * kv_bytes_per_token;
  if (!(page > 0) || !(kv_bytes > 0))
    return 0;
  return static_cast<std::int64_t>(std::floor(kv_bytes / page));
}

double max_concurrency(std::int64_t num_blocks, std::int64_t block_size,
                       std::int64_t tokens_per_request) noexcept {
  if (block_size <= 0 || tokens_per_request <= 0)
    return 0;
  const std::int64_t per_request = (tokens_per_request + block_size - 1) / block_size;
  return static_cast<double>(num_blocks) / static_cast<double>(per_request);
}

void validate_block_size(std::int64_t block_size) {
  for (const auto allowed : kAllowedBlockSizes) {
    if (block_size == allowed)
      return;
  }
  throw Exception(Error{fmt::format("{} is not a vLLM block size (allowed: 1, 8, 16, 32, 64, "
                                    "128, 256)",
                                    block_size),
                        "--block-size", -1});
}

void validate_parallelism(const ModelProfile& model, int tp, int ep, int dp) {
  if (tp < 1)
    throw Exception(Error{fmt::format("must be ≥ 1, got {}", tp), "--tp", -1});
  if (ep < 1)
    throw Exception(Error{fmt::format("must be ≥ 1, got {}", ep), "--ep", -1});
  if (dp < 1)
    throw Exception(Error{fmt::format("must be ≥ 1, got {}", dp), "--dp", -1});
  if (model.num_heads % tp != 0) {
    throw Exception(Error{fmt::format("total number of attention heads ({}) of {} must be "
                                      "divisible by tensor parallel size ({})",
                                      model.num_heads, model.name, tp),
                          "--tp", -1});
  }
  if (ep > 1) {
    if (!model.is_moe())
      throw Exception(Error{fmt::format("{} has no routed experts: expert parallelism needs an "
                                        "MoE model",
                                        model.name),
                            "--ep", -1});
    if (model.n_routed_experts % ep != 0) {
      throw Exception(Error{fmt::format("expert parallel size {} does not divide the {} routed "
                                        "experts of {}",
                                        ep, model.n_routed_experts, model.name),
                            "--ep", -1});
    }
    if (ep != tp * dp) {
      throw Exception(Error{fmt::format("expert parallel size {} must equal tp × dp = {} × {} = "
                                        "{} (vLLM's EP group spans every GPU)",
                                        ep, tp, dp, tp * dp),
                            "--ep", -1});
    }
  }
}

void require_fit(const MemoryPlan& plan, const ModelProfile& model, const HardwareProfile& gpu,
                 const MemoryOptions& options) {
  if (plan.num_gpu_blocks >= 1)
    return;
  const double usable = plan.total_bytes * options.gpu_memory_utilization;
  const double need = plan.fixed_bytes();
  const std::string where = fmt::format("{} on {} (TP{}, EP{}, DP{})", model.name, gpu.name,
                                        options.tp, options.ep, options.dp);
  if (need >= usable) {
    throw Exception(Error{
        fmt::format("{} does not fit: weights {:.2f} GiB + activation peak {:.2f} GiB + "
                    "non-torch {:.2f} GiB = {:.2f} GiB per GPU exceed {:.2f} GiB × {:.2f} = {:.2f} "
                    "GiB by {:.2f} GiB (raise --tp/--ep or --gpu-memory-utilization)",
                    where, plan.weight_bytes_per_gpu / kGiB, plan.activation_peak_bytes / kGiB,
                    plan.non_torch_bytes / kGiB, need / kGiB, plan.total_bytes / kGiB,
                    options.gpu_memory_utilization, usable / kGiB, (need - usable) / kGiB),
        "--tp", -1});
  }
  throw Exception(Error{fmt::format("{} leaves {:.0f} B per GPU for the KV cache, less than one "
                                    "block of {} tokens × {:.0f} B",
                                    where, plan.kv_bytes, plan.block_size, plan.kv_bytes_per_token),
                        "--block-size", -1});
}

std::int64_t num_cpu_blocks(double swap_space_gib, std::int64_t block_size,
                            double kv_bytes_per_token) noexcept {
  return num_gpu_blocks(swap_space_gib * kGiB, block_size, kv_bytes_per_token);
}

double expert_capacity(const ModelProfile& model, double tokens, double capacity_factor) noexcept {
  if (!model.is_moe() || tokens <= 0)
    return 0;
  return tokens * static_cast<double>(model.experts_per_token) /
         static_cast<double>(model.n_routed_experts) * capacity_factor;
}

MemoryPlan plan_memory(const ModelProfile& model, const HardwareProfile& gpu,
                       const MemoryOptions& options) {
  validate_parallelism(model, options.tp, options.ep, options.dp);
  validate_block_size(options.block_size);
  if (!(options.gpu_memory_utilization > 0 && options.gpu_memory_utilization <= 1)) {
    throw Exception(Error{fmt::format("must be in (0, 1], got {}", options.gpu_memory_utilization),
                          "--gpu-memory-utilization", -1});
  }
  const auto non_negative = [](const std::optional<double>& v, const char* flag) {
    if (v && !(*v >= 0))
      throw Exception(Error{fmt::format("must be ≥ 0, got {}", *v), flag, -1});
  };
  non_negative(options.activation_peak_bytes, "--activation-peak-gib");
  non_negative(options.non_torch_bytes, "--non-torch-gib");
  if (!(options.swap_space_gib >= 0))
    throw Exception(
        Error{fmt::format("must be ≥ 0 GiB, got {}", options.swap_space_gib), "--swap-space", -1});
  if (options.num_gpu_blocks_override && *options.num_gpu_blocks_override < 1) {
    throw Exception(Error{fmt::format("must be ≥ 1, got {}", *options.num_gpu_blocks_override),
                          "--num-gpu-blocks-override", -1});
  }
  MemoryPlan p;
  p.total_bytes = gpu.memory_bytes;
  p.dp = options.dp;
  const double expert_total = static_cast<double>(model.num_moe_layers() * model.n_routed_experts *
                                                  model.params_per_expert()) *
                              model.weight_bytes;
  const double expert_shards = options.ep > 1 ? options.ep : options.tp;
  p.expert_bytes_per_gpu = expert_total / expert_shards;
  p.experts_per_gpu =
      model.is_moe() ? (options.ep > 1 ? static_cast<double>(model.n_routed_experts / options.ep)
                                       : static_cast<double>(model.n_routed_experts))
                     : 0;
  p.weight_bytes_per_gpu =
      (model.weight_bytes_total() - expert_total) / options.tp + p.expert_bytes_per_gpu;
  p.activation_peak_bytes =
      options.activation_peak_bytes.value_or((model.is_moe() ? 8.0 : 5.5) * kGiB);
  p.non_torch_bytes = options.non_torch_bytes.value_or((options.tp > 1 ? 0.6 : 0.15) * kGiB);
  p.kv_bytes =
      available_kv_bytes(p.total_bytes, options.gpu_memory_utilization,
                         p.weight_bytes_per_gpu + p.activation_peak_bytes, p.non_torch_bytes);
  p.kv_bytes_per_token = model.kv_bytes_per_token(options.tp);
  p.block_size = options.block_size;
  p.num_gpu_blocks = options.num_gpu_blocks_override.value_or(
      num_gpu_blocks(p.kv_bytes, options.block_size, p.kv_bytes_per_token));
  p.num_cpu_blocks =
      num_cpu_blocks(options.swap_space_gib, options.block_size, p.kv_bytes_per_token);
  return p;
}

}  // namespace llmbench::sim
