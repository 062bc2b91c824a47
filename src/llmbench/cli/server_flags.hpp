#pragma once
/// @file
/// Flags of the simulated engine and of the built-in server, shared by `simulate` (engine flags),
/// `serve` (plain names) and `run` (prefixed with "server-" so they don't clash with the
/// benchmark's own flags). Engine flag names are vLLM's `EngineArgs` names.

#include "llmbench/core/error.hpp"
#include "llmbench/server/options.hpp"
#include "llmbench/sim/cost_model.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/sim/memory.hpp"
#include "llmbench/sim/profiles.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdint>
#include <optional>
#include <string>

namespace llmbench::cli {

/// The engine as typed: model and GPU profiles, parallelism, vLLM scheduler and cache knobs,
/// step-time model overrides. 0 means "vLLM V1's default for the GPU" where noted.
struct EngineFlags {
  std::string model_profile = "deepseek-r1";
  std::string gpu = "h200";
  int tp = 8;
  std::int64_t max_num_seqs = 0;            ///< 0 = 1024 on >= 70 GiB non-A100 GPUs, else 256
  std::int64_t max_num_batched_tokens = 0;  ///< 0 = 8192 on >= 70 GiB non-A100 GPUs, else 2048
  std::int64_t block_size = 0;              ///< 0 = 64 for MLA, else 16
  double gpu_memory_utilization = 0.9;
  std::optional<std::int64_t> num_gpu_blocks_override;
  bool enable_prefix_caching = true;
  std::int64_t long_prefill_token_threshold = 0;
  std::string scheduler = "vllm-v1";
  double batch_window_ms = 50;     ///< `--scheduler dynamic`: τ, ms
  double batch_length_beta = 1.2;  ///< `--scheduler dynamic`: β
  double swap_space_gib = 0;       ///< vLLM V0 `--swap-space`, GiB per GPU (0 = recompute only)
  int ep = 0;                      ///< expert-parallel size; 0 = 1, or tp × dp with EP enabled
  bool enable_expert_parallel = false;  ///< vLLM `--enable-expert-parallel` (ep = tp × dp)
  int dp = 1;                           ///< data-parallel engine replicas
  std::string exec_model = "roofline";
  std::optional<double> compute_efficiency;
  std::optional<double> memory_efficiency;
  std::optional<double> step_overhead_us;
};

/// Adds --<prefix>model-profile, --<prefix>gpu, --<prefix>tp (alias tensor-parallel-size),
/// --<prefix>max-num-seqs, --<prefix>max-num-batched-tokens, --<prefix>block-size,
/// --<prefix>gpu-memory-utilization, --<prefix>num-gpu-blocks-override,
/// --<prefix>[no-]enable-prefix-caching (alias no-prefix-caching),
/// --<prefix>long-prefill-token-threshold, --<prefix>scheduler (with --<prefix>batch-window-ms and
/// --<prefix>batch-length-beta for `dynamic`), --<prefix>swap-space,
/// --<prefix>enable-expert-parallel, --<prefix>ep (alias expert-parallel-size), --<prefix>dp
/// (alias data-parallel-size), --<prefix>exec-model and the efficiency overrides, bound to `f`.
inline void add_engine_flags(CLI::App& app, EngineFlags& f, const std::string& prefix,
                             const std::string& what) {
  const auto name = [&](const char* n) { return "--" + prefix + n; };
  app.add_option(name("model-profile"), f.model_profile,
                 what + "model profile name, HF id or .json path (data/sim/models)")
      ->capture_default_str();
  app.add_option(name("gpu"), f.gpu, what + "GPU profile name or .json path (data/sim/gpus)")
      ->capture_default_str();
  app.add_option(name("tp") + "," + name("tensor-parallel-size"), f.tp,
                 what + "tensor-parallel GPUs per replica")
      ->capture_default_str();
  app.add_option(name("max-num-seqs"), f.max_num_seqs,
                 what +
                     "cap on running requests (default: vLLM V1's, 1024 on >= 70 GiB non-A100 "
                     "GPUs, else 256; fixed timing: 256)");
  app.add_option(name("max-num-batched-tokens"), f.max_num_batched_tokens,
                 what + "token budget per step (default: vLLM V1 API server's, 8192 or 2048)");
  app.add_option(name("block-size"), f.block_size,
                 what + "tokens per KV block (default 64 MLA, 16 GQA)");
  app.add_option(name("gpu-memory-utilization"), f.gpu_memory_utilization)->capture_default_str();
  app.add_option(name("num-gpu-blocks-override"), f.num_gpu_blocks_override,
                 what + "force the number of KV blocks (to study preemption)");
  app.add_flag(name("enable-prefix-caching") + ",!" + name("no-enable-prefix-caching") + ",!" +
                   name("no-prefix-caching"),
               f.enable_prefix_caching, what + "automatic prefix caching (default on)");
  app.add_option(name("long-prefill-token-threshold"), f.long_prefill_token_threshold,
                 what + "cap per-request prefill chunk per step (0 = off)");
  app.add_option(name("scheduler"), f.scheduler,
                 what + "scheduler: vllm-v1 (continuous batching), static or dynamic")
      ->capture_default_str();
  app.add_option(name("batch-window-ms"), f.batch_window_ms,
                 what + "--scheduler dynamic: tau, arrival window of a group (ms)")
      ->capture_default_str();
  app.add_option(name("batch-length-beta"), f.batch_length_beta,
                 what +
                     "--scheduler dynamic: beta, a request of length >= beta x the mean of the "
                     "last 3 opens a new group")
      ->capture_default_str();
  app.add_option(name("swap-space"), f.swap_space_gib,
                 what +
                     "CPU swap space per GPU, GiB (vLLM V0): preempted requests are swapped out "
                     "instead of recomputed while it lasts (0 = recompute only, as V1)")
      ->capture_default_str();
  app.add_flag(name("enable-expert-parallel"), f.enable_expert_parallel,
               what + "expert parallelism over every GPU (ep = tp x dp, vLLM's rule)");
  app.add_option(name("ep") + "," + name("expert-parallel-size"), f.ep,
                 what +
                     "expert-parallel size (must equal tp x dp; default 1, or tp x dp with "
                     "--" +
                     prefix + "enable-expert-parallel)");
  app.add_option(name("dp") + "," + name("data-parallel-size"), f.dp,
                 what +
                     "data-parallel engine replicas, each with its own scheduler and KV cache; "
                     "requests go to the least-loaded replica")
      ->capture_default_str();
  app.add_option(name("exec-model"), f.exec_model, what + "step-time model: roofline")
      ->capture_default_str();
  app.add_option(name("compute-efficiency"), f.compute_efficiency,
                 what + "override the GPU profile's compute efficiency (0-1]");
  app.add_option(name("memory-efficiency"), f.memory_efficiency,
                 what + "override the GPU profile's memory-bandwidth efficiency (0-1]");
  app.add_option(name("step-overhead-us"), f.step_overhead_us,
                 what + "override the fixed cost per engine step (µs)");
}

/// The engine built from `EngineFlags`: profiles, the KV memory plan and the engine and
/// step-time model configuration.
struct EngineSetup {
  sim::ModelProfile model;
  sim::HardwareProfile gpu;
  sim::MemoryPlan plan;
  sim::EngineConfig engine;
  sim::ExecModelKind exec_kind = sim::ExecModelKind::Roofline;
  sim::ExecModelParams exec;
  int data_parallel_size = 1;  ///< engine replicas (`--dp`), each with `engine`'s config
  /// "deepseek-r1 on 8 x h200 (TP8 EP1 DP1): # GPU blocks: 1234 per replica (block size 64, ...),
  /// # CPU blocks: 0, ..." for logs.
  [[nodiscard]] std::string describe() const {
    return fmt::format(
        "{} on {} x {} (TP{} EP{} DP{}): # GPU blocks: {} per replica (block size {}, {} KV "
        "tokens, {:.2f} GiB KV per GPU), # CPU blocks: {}, max_num_seqs {}, "
        "max_num_batched_tokens {}, prefix caching {}",
        model.name, exec.tp * data_parallel_size, gpu.name, exec.tp, exec.ep, data_parallel_size,
        plan.num_gpu_blocks, plan.block_size, plan.kv_tokens(), plan.kv_bytes / sim::kGiB,
        plan.num_cpu_blocks, engine.scheduler.max_num_seqs, engine.scheduler.max_num_batched_tokens,
        engine.scheduler.enable_prefix_caching ? "on" : "off");
  }
};

/// Runs `fn` and returns its result; an `Exception` whose source is a flag ("--x") is re-thrown
/// with the flag's prefixed name ("--server-x" for `run`), so errors name the flag as typed.
template <typename Fn>
auto with_flag_prefix(const std::string& prefix, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Exception& e) {
    Error err = e.error();
    if (prefix.empty() || err.source.rfind("--", 0) != 0)
      throw;
    err.source = "--" + prefix + err.source.substr(2);
    throw Exception(std::move(err));
  }
}

/// Loads the profiles from `data_dir`, plans the KV cache and applies vLLM V1's defaults
/// (SIMULATOR-NOTES.md §2.1). Throws `Exception` naming the flag (with `prefix`) on a bad value
/// or a model that does not fit.
inline EngineSetup build_engine_setup(const EngineFlags& f, const std::string& data_dir,
                                      const std::string& prefix) {
  EngineSetup s;
  s.model = sim::load_model_profile(data_dir, f.model_profile);
  s.gpu = sim::load_hardware_profile(data_dir, f.gpu);
  const bool big_gpu =
      s.gpu.memory_bytes >= 70 * sim::kGiB && s.gpu.name.find("a100") == std::string::npos;
  sim::MemoryOptions mem;
  mem.tp = f.tp;
  mem.dp = f.dp;
  mem.ep = f.ep > 0 ? f.ep : (f.enable_expert_parallel ? f.tp * f.dp : 1);
  mem.swap_space_gib = f.swap_space_gib;
  mem.gpu_memory_utilization = f.gpu_memory_utilization;
  mem.block_size =
      f.block_size > 0 ? f.block_size : (s.model.attention == sim::AttentionKind::Mla ? 64 : 16);
  mem.num_gpu_blocks_override = f.num_gpu_blocks_override;
  if (f.max_num_seqs < 0 || f.max_num_batched_tokens < 0 || f.long_prefill_token_threshold < 0) {
    throw Exception(Error{"must not be negative",
                          "--" + prefix +
                              "max-num-seqs / max-num-batched-tokens / "
                              "long-prefill-token-threshold",
                          -1});
  }
  with_flag_prefix(prefix, [&] {
    s.plan = sim::plan_memory(s.model, s.gpu, mem);
    sim::require_fit(s.plan, s.model, s.gpu, mem);
    s.engine.scheduler_kind = sim::parse_scheduler_kind(f.scheduler);
  });
  s.engine.scheduler.max_num_seqs = f.max_num_seqs > 0 ? f.max_num_seqs : (big_gpu ? 1024 : 256);
  s.engine.scheduler.max_num_batched_tokens =
      f.max_num_batched_tokens > 0 ? f.max_num_batched_tokens : (big_gpu ? 8192 : 2048);
  s.engine.scheduler.enable_prefix_caching = f.enable_prefix_caching;
  s.engine.scheduler.long_prefill_token_threshold = f.long_prefill_token_threshold;
  s.engine.scheduler.num_cpu_blocks = s.plan.num_cpu_blocks;
  s.engine.scheduler.batch_window_ms = f.batch_window_ms;
  s.engine.scheduler.batch_length_beta = f.batch_length_beta;
  with_flag_prefix(prefix, [&] { sim::validate_scheduler_config(s.engine.scheduler); });
  s.data_parallel_size = s.plan.dp;
  s.engine.num_gpu_blocks = s.plan.num_gpu_blocks;
  s.engine.block_size = s.plan.block_size;
  s.exec_kind = sim::parse_exec_model_kind(f.exec_model);
  s.exec.model = s.model;
  s.exec.gpu = s.gpu;
  s.exec.tp = f.tp;
  s.exec.ep = mem.ep;
  s.exec.dp = mem.dp;
  s.exec.efficiency = s.gpu.efficiency;
  if (f.compute_efficiency)
    s.exec.efficiency.compute = *f.compute_efficiency;
  if (f.memory_efficiency)
    s.exec.efficiency.memory = *f.memory_efficiency;
  if (f.step_overhead_us)
    s.exec.efficiency.step_overhead_us = *f.step_overhead_us;
  if (!(s.exec.efficiency.compute > 0 && s.exec.efficiency.compute <= 1) ||
      !(s.exec.efficiency.memory > 0 && s.exec.efficiency.memory <= 1)) {
    throw Exception(
        Error{"efficiencies must be in (0, 1]", "--" + prefix + "compute/memory-efficiency", -1});
  }
  return s;
}

/// The built-in server as typed: timing mode, the fixed model's knobs, the engine's flags.
struct ServeFlags {
  std::string timing = "engine";
  server::ServerOptions options;  ///< fixed-timing knobs and listener settings
  EngineFlags engine;
  double admission_window_ms = 5.0;
  std::string model;  ///< served model name; "" = the profile name (engine) or "llmbench-sim"
  /// Unset = the profile's context (engine) or 32768 (fixed); a value < 1 is refused by
  /// `server::validate`.
  std::optional<std::int64_t> max_model_len;
};

/// Adds --<prefix>timing, the fixed model's --<prefix>ttft-ms, --<prefix>itl-ms,
/// --<prefix>tokens-per-chunk, --<prefix>default-output-len, --<prefix>max-model-len,
/// --<prefix>admission-window-ms and
/// every engine flag (`add_engine_flags`; --<prefix>max-num-seqs serves both timings).
inline void add_server_flags(CLI::App& app, ServeFlags& f, const std::string& prefix) {
  const std::string what = prefix.empty() ? "" : "Built-in server: ";
  const auto name = [&](const char* n) { return "--" + prefix + n; };
  app.add_option(name("timing"), f.timing,
                 what +
                     "engine (the simulated serving engine in real time) or fixed (exact "
                     "ttft/itl timing, for tests)")
      ->capture_default_str();
  app.add_option(name("ttft-ms"), f.options.ttft_ms,
                 what + "fixed timing: admission to first output chunk (ms)")
      ->capture_default_str();
  app.add_option(name("itl-ms"), f.options.itl_ms,
                 what + "fixed timing: time per output token (ms)")
      ->capture_default_str();
  app.add_option(name("tokens-per-chunk"), f.options.tokens_per_chunk,
                 what +
                     "fixed timing: tokens per streamed chunk (>1 mimics MTP / speculative "
                     "decoding)")
      ->capture_default_str();
  app.add_option(name("default-output-len"), f.options.default_output_len,
                 what + "output tokens when a request sets no max_tokens")
      ->capture_default_str();
  app.add_option(name("max-model-len"), f.max_model_len,
                 what +
                     "context length: prompt + max_tokens above it is a 400, as in vLLM "
                     "(default: the model profile's, 32768 with fixed timing)");
  app.add_option(name("admission-window-ms"), f.admission_window_ms,
                 what +
                     "engine timing: each batch forms this long after its nominal start so "
                     "requests sent in reaction to the previous step join it, as in simulate "
                     "(0 = strict)")
      ->capture_default_str();
  add_engine_flags(app, f.engine, prefix, what.empty() ? "Engine: " : what);
}

/// Resolves `f` into server options: with engine timing, loads the profiles from `data_dir` and
/// builds the engine (`build_engine_setup`); `setup` (optional) receives it.
inline server::ServerOptions resolve_server_options(const ServeFlags& f,
                                                    const std::string& data_dir,
                                                    const std::string& prefix,
                                                    EngineSetup* setup = nullptr) {
  server::ServerOptions o = f.options;
  o.timing = server::parse_timing(f.timing, "--" + prefix + "timing");
  if (f.engine.max_num_seqs < 0)
    throw Exception(Error{"must be >= 1", "--" + prefix + "max-num-seqs", -1});
  o.max_num_seqs = f.engine.max_num_seqs > 0 ? static_cast<int>(f.engine.max_num_seqs) : 256;
  o.model = f.model.empty() ? "llmbench-sim" : f.model;
  if (o.timing == server::Timing::Engine) {
    EngineSetup s = build_engine_setup(f.engine, data_dir, prefix);
    if (s.data_parallel_size > 1) {
      throw Exception(Error{fmt::format("the real-time engine runs one replica; data parallelism "
                                        "({} replicas) is simulated by `llmbench simulate` only",
                                        s.data_parallel_size),
                            "--" + prefix + "dp", -1});
    }
    server::EngineSettings e;
    e.engine = s.engine;
    e.exec_kind = s.exec_kind;
    e.exec = s.exec;
    e.admission_window_ms = f.admission_window_ms;
    o.engine = e;
    if (f.model.empty())
      o.model = s.model.name;
    if (s.model.max_position_embeddings > 0)
      o.max_model_len = s.model.max_position_embeddings;
    if (setup != nullptr)
      *setup = std::move(s);
  }
  if (f.max_model_len)
    o.max_model_len = *f.max_model_len;
  return o;
}

}  // namespace llmbench::cli
