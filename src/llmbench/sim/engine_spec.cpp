#include "llmbench/sim/engine_spec.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/sim/calibration_file.hpp"

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

EngineFamily parse_engine_family(std::string_view name) {
  if (name == "llama.cpp" || name == "llama-server")
    return EngineFamily::Llamacpp;
  for (const auto& [family, known] : kEngineFamilyNames) {
    if (name == known)
      return family;
  }
  throw Exception(Error{fmt::format("unknown engine '{}' (known: vllm, sglang, llamacpp)", name),
                        "--engine", -1});
}

std::string_view to_string(EngineFamily family) noexcept {
  for (const auto& [f, name] : kEngineFamilyNames) {
    if (f == family)
      return name;
  }
  return "vllm";
}

FamilyDefaults family_defaults(EngineFamily family, const HardwareProfile& gpu,
                               const ModelProfile& model) noexcept {
  FamilyDefaults d;
  d.block_size = default_block_size(model);
  switch (family) {
    case EngineFamily::Vllm: {
      const V1SchedulerDefaults v1 = v1_scheduler_defaults(gpu);
      d.max_num_seqs = v1.max_num_seqs;
      d.max_num_batched_tokens = v1.max_num_batched_tokens;
      return d;
    }
    case EngineFamily::Sglang: {
      // server_args.py: chunked prefill by GPU memory (MiB thresholds 35 · 1024 and 160 · 1024).
      const double mib = gpu.memory_bytes / (1024.0 * 1024.0);
      d.scheduler = SchedulerKind::Sglang;
      d.max_num_batched_tokens = mib < 35 * 1024 ? 2048 : (mib < 160 * 1024 ? 8192 : 16384);
      d.max_prefill_tokens = 16384;
      d.max_num_seqs = 2048;
      d.gpu_memory_utilization = 0.88;
      return d;
    }
    case EngineFamily::Llamacpp:
      d.max_num_seqs = 1;
      d.max_num_batched_tokens = 2048;
      d.enable_prefix_caching = false;
      d.block_size = 16;
      d.tp = 1;
      d.context_size = 4096;
      return d;
  }
  return d;
}

int resolve_expert_parallel_size(std::optional<int> ep, int tp, int dp,
                                 bool enable_expert_parallel) noexcept {
  if (ep && *ep > 0)
    return *ep;
  return enable_expert_parallel ? tp * dp : 1;
}

MemoryOptions resolve_memory_options(const ModelProfile& model, const EngineOverrides& o) {
  MemoryOptions m;
  const bool llamacpp = o.engine && parse_engine_family(*o.engine) == EngineFamily::Llamacpp;
  m.tp = o.tp.value_or(llamacpp ? 1 : kDefaultTensorParallelSize);
  m.dp = o.dp.value_or(m.dp);
  m.ep = resolve_expert_parallel_size(o.ep, m.tp, m.dp, o.enable_expert_parallel);
  m.swap_space_gib = o.swap_space_gib.value_or(m.swap_space_gib);
  m.gpu_memory_utilization = o.gpu_memory_utilization.value_or(m.gpu_memory_utilization);
  m.block_size =
      o.block_size.value_or(0) > 0 ? *o.block_size : (llamacpp ? 16 : default_block_size(model));
  m.num_gpu_blocks_override = o.num_gpu_blocks_override;
  if (o.activation_peak_gib)
    m.activation_peak_bytes = *o.activation_peak_gib * kGiB;
  if (o.non_torch_gib)
    m.non_torch_bytes = *o.non_torch_gib * kGiB;
  return m;
}

namespace {

/// The scheduler knobs: the family's defaults for the GPU, the rest from `SchedulerConfig`'s own
/// defaults, each replaced by its override.
SchedulerConfig resolve_scheduler(const FamilyDefaults& d, const EngineOverrides& o,
                                  std::int64_t num_cpu_blocks) {
  SchedulerConfig c;
  c.max_num_seqs = o.max_num_seqs.value_or(0) > 0 ? *o.max_num_seqs : d.max_num_seqs;
  c.max_num_batched_tokens = o.max_num_batched_tokens.value_or(0) > 0 ? *o.max_num_batched_tokens
                                                                      : d.max_num_batched_tokens;
  c.max_prefill_tokens = o.max_prefill_tokens.value_or(d.max_prefill_tokens);
  c.num_continuous_decode_steps =
      o.num_continuous_decode_steps.value_or(c.num_continuous_decode_steps);
  c.enable_prefix_caching = o.enable_prefix_caching.value_or(d.enable_prefix_caching);
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
  s.family = parse_engine_family(o.engine.value_or(std::string(to_string(EngineFamily::Vllm))));
  s.model = model;
  s.gpu = gpu;
  if (o.kv_cache_dtype) {
    if (*o.kv_cache_dtype == "fp8" || o.kv_cache_dtype->rfind("fp8_", 0) == 0)
      s.model.kv_cache_bytes = 1;
    else if (*o.kv_cache_dtype != "auto")
      throw Exception(Error{"must be auto or fp8 (fp8_e4m3, fp8_e5m2)", "--kv-cache-dtype", -1});
  }
  const FamilyDefaults d = family_defaults(s.family, gpu, s.model);
  s.stream_interval = o.stream_interval.value_or(1);
  s.memory = resolve_memory_options(s.model, o);
  if (s.family == EngineFamily::Sglang) {
    // SGLang's --mem-fraction-static covers weights and the KV pool only: activations and the
    // rest live in the remaining fraction (server_args.py), so nothing else is subtracted.
    if (!o.gpu_memory_utilization)
      s.memory.gpu_memory_utilization = d.gpu_memory_utilization;
    if (!o.activation_peak_gib)
      s.memory.activation_peak_bytes = 0.0;
    if (!o.non_torch_gib)
      s.memory.non_torch_bytes = 0.0;
  }
  s.engine.scheduler = resolve_scheduler(d, o, 0);
  validate_scheduler_config(s.engine.scheduler);
  const std::int64_t context = o.context_size.value_or(d.context_size);
  if (context > 0 && !s.memory.num_gpu_blocks_override) {
    // llama.cpp: every slot owns ctx / slots KV cells, allocated at start, never paged out.
    const std::int64_t per_slot = context / s.engine.scheduler.max_num_seqs;
    if (per_slot < 1)
      throw Exception(Error{"--ctx-size must give each slot (--max-num-seqs) at least one cell",
                            "--ctx-size", -1});
    s.engine.max_request_tokens = per_slot;
    s.memory.num_gpu_blocks_override = s.engine.scheduler.max_num_seqs *
                                       ((per_slot + s.memory.block_size - 1) / s.memory.block_size);
  }
  s.plan = plan_memory(s.model, s.gpu, s.memory);
  require_fit(s.plan, s.model, s.gpu, s.memory);
  s.engine.scheduler.num_cpu_blocks = s.plan.num_cpu_blocks;
  // llama.cpp: slots keep their prompt cache in one KV cache that every step attends over.
  s.engine.slot_cache = s.family == EngineFamily::Llamacpp;
  s.engine.scheduler_kind = o.scheduler ? parse_scheduler_kind(*o.scheduler) : d.scheduler;
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
  s.calibrated_on = gpu.calibrated_on;
  return s;
}

namespace {

/// A typed profile or parallelism that differs from the calibration's target.
void check_target(const std::optional<std::string>& typed, const std::string& target,
                  const char* flag, const std::string& file) {
  if (typed && !target.empty() && *typed != target) {
    throw Exception(Error{fmt::format("the calibration {} was fitted for {} {}; it does not carry "
                                      "over to {} (calibrate again, or drop the flag)",
                                      file, flag + 2, target, *typed),
                          flag, -1});
  }
}

}  // namespace

EngineSpec load_engine_spec(const std::string& data_dir, const EngineOverrides& typed) {
  std::optional<Calibration> cal;
  EngineOverrides overrides = typed;
  if (typed.calibration) {
    cal = load_calibration(*typed.calibration);
    check_target(typed.gpu, cal->target.gpu, "--gpu", cal->origin);
    check_target(typed.model_profile, cal->target.model_profile, "--model-profile", cal->origin);
    if (typed.tp && cal->target.tp > 0 && *typed.tp != cal->target.tp)
      check_target(std::to_string(*typed.tp), std::to_string(cal->target.tp), "--tp", cal->origin);
    overrides = merge_overrides(typed, cal->engine);
  }
  const ModelProfile model = load_model_profile(
      data_dir, overrides.model_profile.value_or(std::string(kDefaultModelProfile)));
  HardwareProfile gpu =
      load_hardware_profile(data_dir, overrides.gpu.value_or(std::string(kDefaultGpu)));
  if (cal && cal->has_cost_model) {
    gpu.efficiency = cal->cost_model;
    gpu.calibrated_on = cal->fit_summary.empty() ? cal->origin : cal->fit_summary;
  }
  EngineSpec spec = make_engine_spec(gpu, model, overrides);
  if (cal) {
    spec.engine.overheads = cal->serving;
    spec.calibration_file = cal->origin;
    spec.comm = cal->comm;
  }
  return spec;
}

ExecModelParams EngineSpec::exec_params() const {
  return ExecModelParams{.model = model,
                         .gpu = gpu,
                         .tp = memory.tp,
                         .efficiency = efficiency,
                         .ep = memory.ep,
                         .dp = memory.dp,
                         .comm = comm ? comm_terms(*comm, memory.tp, memory.ep) : CommTerms{},
                         .shared_kv_window = family == EngineFamily::Llamacpp};
}

std::unique_ptr<ExecTimeModel> EngineSpec::make_exec_model() const {
  return sim::make_exec_model(exec_kind, exec_params());
}

std::string EngineSpec::describe() const {
  return fmt::format(
      "{} on {} x {} (TP{} EP{} DP{}), engine {}: # GPU blocks: {} per replica (block size {}, {} "
      "KV tokens, {:.2f} GiB KV per GPU), # CPU blocks: {}, max_num_seqs {}, "
      "max_num_batched_tokens {}, prefix caching {}; cost model {}",
      model.name, memory.tp * memory.dp, gpu.name, memory.tp, memory.ep, memory.dp,
      to_string(family), plan.num_gpu_blocks, plan.block_size, plan.kv_tokens(),
      plan.kv_bytes / kGiB, plan.num_cpu_blocks, engine.scheduler.max_num_seqs,
      engine.scheduler.max_num_batched_tokens,
      engine.scheduler.enable_prefix_caching ? "on" : "off",
      calibrated_on.empty() ? std::string("UNCALIBRATED (datasheet defaults of the GPU profile)")
                            : "calibrated on " + calibrated_on);
}

}  // namespace llmbench::sim
