#pragma once
/// @file
/// vLLM's KV-cache capacity arithmetic (V1 `Worker.determine_available_memory` and
/// `kv_cache_utils.get_num_blocks`; docs/simulator.md "KV cache capacity"):
/// available = total × gpu_memory_utilization − weights − activation peak − non-torch memory;
/// num_gpu_blocks = floor(available / (block_size × kv_bytes_per_token)).

#include "llmbench/sim/profiles.hpp"

#include <cstdint>
#include <optional>

namespace llmbench::sim {

/// Bytes per GiB (2^30).
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// KV bytes left after the memory profile: `total × utilization − peak_torch − non_torch`
/// (all bytes; `peak_torch` includes the weights). Clamped at 0. vLLM issue #10927's start-up
/// log: 79.10 GiB × 0.9 − 30.56 − 5.21 = 35.42 GiB.
double available_kv_bytes(double total_bytes, double gpu_memory_utilization,
                          double peak_torch_bytes, double non_torch_bytes) noexcept;

/// Blocks that fit: floor(kv_bytes / (block_size × kv_bytes_per_token)), ≥ 0.
std::int64_t num_gpu_blocks(double kv_bytes, std::int64_t block_size,
                            double kv_bytes_per_token) noexcept;

/// vLLM's "Maximum concurrency for N tokens per request": blocks / ceil(N / block_size).
double max_concurrency(std::int64_t num_blocks, std::int64_t block_size,
                       std::int64_t tokens_per_request) noexcept;

/// Inputs of the capacity plan. Activation peak and non-torch defaults follow the llm-d
/// capacity planner (via BLIS): 8 GiB MoE / 5.5 GiB dense; 0.15 GiB at TP1, 0.6 GiB at TP > 1.
struct MemoryOptions {
  int tp = 1;  ///< tensor-parallel size (GPUs per replica)
  int ep = 1;  ///< expert-parallel size (1 = experts TP-sharded; else ep = tp × dp, vLLM's rule)
  int dp = 1;  ///< attention data-parallel replicas (each with its own KV cache)
  double swap_space_gib = 0;  ///< vLLM V0 `--swap-space`: CPU swap per GPU, GiB (0 = none)
  double gpu_memory_utilization = 0.9;                  ///< vLLM `--gpu-memory-utilization`
  std::int64_t block_size = 16;                         ///< tokens per KV block
  std::optional<double> activation_peak_bytes;          ///< default by model kind (above)
  std::optional<double> non_torch_bytes;                ///< default by TP (above)
  std::optional<std::int64_t> num_gpu_blocks_override;  ///< vLLM `--num-gpu-blocks-override`
};

/// The result of the arithmetic, per GPU (blocks are per replica: every rank holds the same
/// block table).
struct MemoryPlan {
  double total_bytes = 0;
  double weight_bytes_per_gpu = 0;  ///< model weights / tp
  double activation_peak_bytes = 0;
  double non_torch_bytes = 0;
  double kv_bytes = 0;            ///< available for the KV cache on each GPU
  double kv_bytes_per_token = 0;  ///< per GPU, all layers
  std::int64_t block_size = 0;
  std::int64_t num_gpu_blocks = 0;
  std::int64_t num_cpu_blocks = 0;  ///< swap blocks per replica (`num_cpu_blocks`)
  double expert_bytes_per_gpu = 0;  ///< routed-expert weights on each GPU (⊂ weights)
  double experts_per_gpu = 0;  ///< routed experts per MoE layer on each GPU (N/ep, or N TP-sharded)
  int dp = 1;                  ///< replicas (KV caches)
  [[nodiscard]] std::int64_t kv_tokens() const noexcept { return num_gpu_blocks * block_size; }
  /// Bytes the instance wants on each GPU before the KV cache: weights + activations + non-torch.
  [[nodiscard]] double fixed_bytes() const noexcept {
    return weight_bytes_per_gpu + activation_peak_bytes + non_torch_bytes;
  }
};

/// vLLM's allowed `--block-size` values (`vllm/config/cache.py` `BlockSize = Literal[1, 8, 16,
/// 32, 64, 128]`; 256 added in newer releases).
inline constexpr std::int64_t kAllowedBlockSizes[] = {1, 8, 16, 32, 64, 128, 256};

/// Throws `Exception` (source `--block-size`) unless `block_size` is one of
/// `kAllowedBlockSizes`; the message lists them.
void validate_block_size(std::int64_t block_size);

/// Checks the parallel layout against the model, as vLLM does at start-up; throws `Exception`
/// naming the flag: tp, ep, dp ≥ 1 (`--tp`, `--ep`, `--dp`); tp divides `num_attention_heads`
/// ("Total number of attention heads (H) must be divisible by tensor parallel size (T)"); ep > 1
/// only for MoE models, ep divides `n_routed_experts`, and ep = tp × dp (vLLM's expert-parallel
/// group spans every GPU of the deployment).
void validate_parallelism(const ModelProfile& model, int tp, int ep, int dp);

/// Throws `Exception` (source `--tp`) when `plan` leaves no KV block: the message says by how
/// much the per-GPU needs (weights + activation peak + non-torch) exceed total × utilization,
/// or, when they fit, that the remainder is smaller than one block. No-op otherwise.
void require_fit(const MemoryPlan& plan, const ModelProfile& model, const HardwareProfile& gpu,
                 const MemoryOptions& options);

/// CPU swap blocks per replica: floor(swap_space_gib · 2^30 / (block_size × KV bytes per token
/// per GPU)) (vLLM V0 `CacheEngine`: `num_cpu_blocks = swap_space_bytes // cache_block_size`).
std::int64_t num_cpu_blocks(double swap_space_gib, std::int64_t block_size,
                            double kv_bytes_per_token) noexcept;

/// Tokens one routed expert is given for a batch of `tokens` tokens: T·k/N·capacity_factor
/// (GShard/Switch expert capacity; factor 1 = perfectly balanced routing). 0 for dense models.
double expert_capacity(const ModelProfile& model, double tokens, double capacity_factor) noexcept;

/// Computes the plan for `model` on `gpu`. Weights per GPU: non-expert weights / tp + routed
/// experts / (ep > 1 ? ep : tp). Throws `Exception` naming the flag on a bad knob
/// (`validate_parallelism`, `validate_block_size`, utilization outside (0, 1], negative
/// activation / non-torch / swap sizes, override < 1); a model that does not fit yields 0 blocks
/// (`require_fit` turns that into an error).
MemoryPlan plan_memory(const ModelProfile& model, const HardwareProfile& gpu,
                       const MemoryOptions& options);

}  // namespace llmbench::sim
