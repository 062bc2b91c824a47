#include "llmbench/sim/memory.hpp"

#include "llmbench/core/error.hpp"

#include <algorithm>
#include <cmath>

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

MemoryPlan plan_memory(const ModelProfile& model, const HardwareProfile& gpu,
                       const MemoryOptions& options) {
  if (options.tp < 1)
    throw Exception(Error{"must be ≥ 1", "--tp", -1});
  if (options.block_size < 1)
    throw Exception(Error{"must be ≥ 1", "--block-size", -1});
  if (!(options.gpu_memory_utilization > 0 && options.gpu_memory_utilization <= 1))
    throw Exception(Error{"must be in (0, 1]", "--gpu-memory-utilization", -1});
  MemoryPlan p;
  p.total_bytes = gpu.memory_bytes;
  p.weight_bytes_per_gpu = model.weight_bytes_total() / options.tp;
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
  return p;
}

}  // namespace llmbench::sim
