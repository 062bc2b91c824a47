#include "llmbench/sim/engine_spec.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/core.h>

namespace llmbench::sim {

V1SchedulerDefaults v1_scheduler_defaults(const HardwareProfile& gpu) noexcept {
  // vLLM V1 raised both limits for large-memory GPUs and then excluded the A100 again (its
  // compute does not keep up with 1024 sequences); docs/simulator.md "Engine spec".
  const bool large = gpu.memory_bytes >= 70 * kGiB && gpu.name.find("a100") == std::string::npos;
  if (large)
    return V1SchedulerDefaults{.max_num_seqs = 1024, .max_num_batched_tokens = 8192};
  return V1SchedulerDefaults{.max_num_seqs = 256, .max_num_batched_tokens = 2048};
}

std::int64_t default_block_size(const ModelProfile& model) noexcept {
  return model.attention == AttentionKind::Mla ? 64 : 16;
}

int resolve_expert_parallel_size(std::optional<int> ep, int tp, int dp,
                                 bool enable_expert_parallel) noexcept {
  if (ep && *ep > 0)
    return *ep;
  return enable_expert_parallel ? tp * dp : 1;
}

MemoryOptions resolve_memory_options(const ModelProfile& model, const EngineOverrides& o) {
  MemoryOptions m;
  m.tp = o.tp.value_or(kDefaultTensorParallelSize);
  m.dp = o.dp.value_or(m.dp);
  m.ep = resolve_expert_parallel_size(o.ep, m.tp, m.dp, o.enable_expert_parallel);
  m.swap_space_gib = o.swap_space_gib.value_or(m.swap_space_gib);
  m.gpu_memory_utilization = o.gpu_memory_utilization.value_or(m.gpu_memory_utilization);
  m.block_size = o.block_size.value_or(0) > 0 ? *o.block_size : default_block_size(model);
  m.num_gpu_blocks_override = o.num_gpu_blocks_override;
  if (o.activation_peak_gib)
    m.activation_peak_bytes = *o.activation_peak_gib * kGiB;
  if (o.non_torch_gib)
    m.non_torch_bytes = *o.non_torch_gib * kGiB;
  return m;
}

namespace {

/// The scheduler knobs: vLLM V1's defaults for the GPU, the rest from `SchedulerConfig`'s own
/// defaults, each replaced by its override.
SchedulerConfig resolve_scheduler(const HardwareProfile& gpu, const EngineOverrides& o,
                                  std::int64_t num_cpu_blocks) {
  const V1SchedulerDefaults v1 = v1_scheduler_defaults(gpu);
  SchedulerConfig c;
  c.max_num_seqs = o.max_num_seqs.value_or(0) > 0 ? *o.max_num_seqs : v1.max_num_seqs;
  c.max_num_batched_tokens = o.max_num_batched_tokens.value_or(0) > 0 ? *o.max_num_batched_tokens
                                                                      : v1.max_num_batched_tokens;
  c.enable_prefix_caching = o.enable_prefix_caching.value_or(c.enable_prefix_caching);
  c.long_prefill_token_threshold =
      o.long_prefill_token_threshold.value_or(c.long_prefill_token_threshold);
  c.num_cpu_blocks = num_cpu_blocks;
  c.batch_window_ms = o.batch_window_ms.value_or(c.batch_window_ms);
  c.batch_length_beta = o.batch_length_beta.value_or(c.batch_length_beta);
  return c;
}

}  // namespace

EngineSpec make_engine_spec(const HardwareProfile& gpu, const ModelProfile& model,
                            const EngineOverrides& o) {
  if (o.max_num_seqs.value_or(0) < 0 || o.max_num_batched_tokens.value_or(0) < 0 ||
      o.long_prefill_token_threshold.value_or(0) < 0) {
    throw Exception(Error{"must not be negative",
                          "--max-num-seqs / max-num-batched-tokens / long-prefill-token-threshold",
                          -1});
  }
  EngineSpec s;
  s.model = model;
  s.gpu = gpu;
  s.memory = resolve_memory_options(model, o);
  s.plan = plan_memory(s.model, s.gpu, s.memory);
  require_fit(s.plan, s.model, s.gpu, s.memory);
  s.engine.scheduler_kind =
      parse_scheduler_kind(o.scheduler.value_or(std::string(kDefaultScheduler)));
  s.engine.scheduler = resolve_scheduler(gpu, o, s.plan.num_cpu_blocks);
  validate_scheduler_config(s.engine.scheduler);
  s.engine.num_gpu_blocks = s.plan.num_gpu_blocks;
  s.engine.block_size = s.plan.block_size;
  s.exec_kind = parse_exec_model_kind(o.exec_model.value_or(std::string(kDefaultExecModel)));
  s.efficiency = gpu.efficiency;
  s.efficiency.compute = o.compute_efficiency.value_or(s.efficiency.compute);
  s.efficiency.memory = o.memory_efficiency.value_or(s.efficiency.memory);
  s.efficiency.step_overhead_us = o.step_overhead_us.value_or(s.efficiency.step_overhead_us);
  if (!(s.efficiency.compute > 0 && s.efficiency.compute <= 1) ||
      !(s.efficiency.memory > 0 && s.efficiency.memory <= 1)) {
    throw Exception(Error{"efficiencies must be in (0, 1]", "--compute/memory-efficiency", -1});
  }
  return s;
}

EngineSpec load_engine_spec(const std::string& data_dir, const EngineOverrides& overrides) {
  const ModelProfile model = load_model_profile(
      data_dir, overrides.model_profile.value_or(std::string(kDefaultModelProfile)));
  const HardwareProfile gpu =
      load_hardware_profile(data_dir, overrides.gpu.value_or(std::string(kDefaultGpu)));
  return make_engine_spec(gpu, model, overrides);
}

ExecModelParams EngineSpec::exec_params() const {
  return ExecModelParams{.model = model,
                         .gpu = gpu,
                         .tp = memory.tp,
                         .efficiency = efficiency,
                         .ep = memory.ep,
                         .dp = memory.dp};
}

std::unique_ptr<ExecTimeModel> EngineSpec::make_exec_model() const {
  return sim::make_exec_model(exec_kind, exec_params());
}

std::string EngineSpec::describe() const {
  return fmt::format(
      "{} on {} x {} (TP{} EP{} DP{}): # GPU blocks: {} per replica (block size {}, {} KV "
      "tokens, {:.2f} GiB KV per GPU), # CPU blocks: {}, max_num_seqs {}, "
      "max_num_batched_tokens {}, prefix caching {}",
      model.name, memory.tp * memory.dp, gpu.name, memory.tp, memory.ep, memory.dp,
      plan.num_gpu_blocks, plan.block_size, plan.kv_tokens(), plan.kv_bytes / kGiB,
      plan.num_cpu_blocks, engine.scheduler.max_num_seqs, engine.scheduler.max_num_batched_tokens,
      engine.scheduler.enable_prefix_caching ? "on" : "off");
}

}  // namespace llmbench::sim
