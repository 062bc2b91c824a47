#pragma once
/// @file
/// vLLM's KV-cache capacity arithmetic (V1 `Worker.determine_available_memory` and
/// `kv_cache_utils.get_num_blocks`; SIMULATOR-NOTES.md §2.2 and §6.3):
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
  int tp = 1;                                           ///< tensor-parallel size (GPUs per replica)
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
  [[nodiscard]] std::int64_t kv_tokens() const noexcept { return num_gpu_blocks * block_size; }
};

/// Computes the plan for `model` on `gpu`. Throws `Exception` (source "--tp" or
/// "--block-size") on tp < 1 or block_size < 1; a model that does not fit yields 0 blocks.
MemoryPlan plan_memory(const ModelProfile& model, const HardwareProfile& gpu,
                       const MemoryOptions& options);

}  // namespace llmbench::sim
