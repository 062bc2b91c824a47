#include "llmbench/cli/server_flags.hpp"

#include <fmt/core.h>

namespace llmbench::cli {

namespace {

/// `value` as CLI11 shows a default (`capture_default_str` cannot see through std::optional).
template <typename T>
std::string shown(const T& value) {
  return fmt::format("{}", value);
}

}  // namespace

void add_engine_flags(CLI::App& app, EngineFlags& f, const std::string& prefix,
                      const std::string& what) {
  const auto name = [&](const char* n) { return "--" + prefix + n; };
  const sim::SchedulerConfig scheduler_defaults;
  const sim::MemoryOptions memory_defaults;
  app.add_option(name("model-profile"), f.model_profile,
                 what + "model profile name, HF id or .json path (data/sim/models)")
      ->default_str(std::string(sim::kDefaultModelProfile));
  app.add_option(name("gpu"), f.gpu, what + "GPU profile name or .json path (data/sim/gpus)")
      ->default_str(std::string(sim::kDefaultGpu));
  app.add_option(name("tp") + "," + name("tensor-parallel-size"), f.tp,
                 what + "tensor-parallel GPUs per replica")
      ->default_str(shown(sim::kDefaultTensorParallelSize));
  app.add_option(name("max-num-seqs"), f.max_num_seqs,
                 what +
                     "cap on running requests (default: vLLM V1's, 1024 on >= 70 GiB non-A100 "
                     "GPUs, else 256; fixed timing: 256)");
  app.add_option(name("max-num-batched-tokens"), f.max_num_batched_tokens,
                 what + "token budget per step (default: vLLM V1 API server's, 8192 or 2048)");
  app.add_option(name("block-size"), f.block_size,
                 what + "tokens per KV block (default 64 MLA, 16 GQA)");
  app.add_option(name("gpu-memory-utilization"), f.gpu_memory_utilization,
                 what + "share of GPU memory for weights, activations and the KV cache (vLLM's)")
      ->default_str(shown(memory_defaults.gpu_memory_utilization));
  app.add_option(name("num-gpu-blocks-override"), f.num_gpu_blocks_override,
                 what + "force the number of KV blocks (to study preemption)");
  app.add_flag_function(
         name("enable-prefix-caching") + ",!" + name("no-enable-prefix-caching") + ",!" +
             name("no-prefix-caching"),
         [&f](std::int64_t count) { f.enable_prefix_caching = count > 0; },
         what + "automatic prefix caching (default on)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option(name("long-prefill-token-threshold"), f.long_prefill_token_threshold,
                 what + "cap per-request prefill chunk per step (0 = off)");
  app.add_option(name("scheduler"), f.scheduler,
                 what + "scheduler: vllm-v1 (continuous batching), static or dynamic")
      ->default_str(std::string(sim::kDefaultScheduler));
  app.add_option(name("batch-window-ms"), f.batch_window_ms,
                 what + "--scheduler dynamic: tau, arrival window of a group (ms)")
      ->default_str(shown(scheduler_defaults.batch_window_ms));
  app.add_option(name("batch-length-beta"), f.batch_length_beta,
                 what +
                     "--scheduler dynamic: beta, a request of length >= beta x the mean of the "
                     "last 3 opens a new group")
      ->default_str(shown(scheduler_defaults.batch_length_beta));
  app.add_option(name("swap-space"), f.swap_space_gib,
                 what +
                     "CPU swap space per GPU, GiB (vLLM V0): preempted requests are swapped out "
                     "instead of recomputed while it lasts (0 = recompute only, as V1)")
      ->default_str(shown(memory_defaults.swap_space_gib));
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
      ->default_str(shown(memory_defaults.dp));
  app.add_option(name("exec-model"), f.exec_model, what + "step-time model: roofline")
      ->default_str(std::string(sim::kDefaultExecModel));
  app.add_option(name("compute-efficiency"), f.compute_efficiency,
                 what + "override the GPU profile's compute efficiency (0-1]");
  app.add_option(name("memory-efficiency"), f.memory_efficiency,
                 what + "override the GPU profile's memory-bandwidth efficiency (0-1]");
  app.add_option(name("step-overhead-us"), f.step_overhead_us,
                 what + "override the fixed cost per engine step (µs)");
  app.add_option(name("engine"), f.engine,
                 what +
                     "engine family whose scheduling and defaults to mirror: vllm (V1), sglang "
                     "(prefill-first) or llamacpp (llama-server slots)")
      ->default_str("vllm");
  app.add_option(
      name("calibration"), f.calibration,
      what +
          "calibration file (llmbench calibrate, llmbench probe comm): its engine knobs, "
          "fitted cost model and serving overheads, and its comm section for the TP "
          "all-reduce and EP all-to-all terms (typed flags still win)");
}

sim::EngineSpec resolve_engine_spec(const EngineFlags& f, const std::string& data_dir,
                                    const std::string& prefix) {
  return with_flag_prefix(prefix, [&] { return sim::load_engine_spec(data_dir, f); });
}

void add_server_flags(CLI::App& app, ServeFlags& f, const std::string& prefix) {
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
      ->default_str(shown(server::EngineSettings{}.admission_window_ms));
  app.add_option(name("stall"), f.stalls,
                 what +
                     "fixed timing: AT_S:FOR_S, the server's clock stops for FOR_S seconds "
                     "AT_S seconds after its first request (repeatable; docs/sweep.md)");
  app.add_option(name("drift"), f.drift,
                 what +
                     "fixed timing: FACTOR:SECONDS, latency starts FACTOR times the set one and "
                     "returns to it linearly over SECONDS (docs/sweep.md)");
  add_engine_flags(app, f.engine, prefix, what.empty() ? "Engine: " : what);
}

server::ServerOptions resolve_server_options(const ServeFlags& f, const std::string& data_dir,
                                             const std::string& prefix) {
  server::ServerOptions o = f.options;
  o.timing = server::parse_timing(f.timing, "--" + prefix + "timing");
  const std::int64_t seqs = f.engine.max_num_seqs.value_or(0);
  if (seqs < 0)
    throw Exception(Error{"must be >= 1", "--" + prefix + "max-num-seqs", -1});
  if (seqs > 0)
    o.max_num_seqs = static_cast<int>(seqs);
  o.model = f.model.empty() ? "llmbench-sim" : f.model;
  for (const auto& text : f.stalls)
    o.perturbation.stalls.push_back(server::parse_stall(text, "--" + prefix + "stall"));
  if (!f.drift.empty())
    o.perturbation.drift = server::parse_drift(f.drift, "--" + prefix + "drift");
  if (o.timing == server::Timing::Engine) {
    server::EngineSettings e{.spec = resolve_engine_spec(f.engine, data_dir, prefix)};
    if (e.spec.data_parallel_size() > 1) {
      throw Exception(Error{fmt::format("the real-time engine runs one replica; data parallelism "
                                        "({} replicas) is simulated by `llmbench simulate` only",
                                        e.spec.data_parallel_size()),
                            "--" + prefix + "dp", -1});
    }
    e.admission_window_ms = f.admission_window_ms.value_or(e.admission_window_ms);
    if (f.model.empty())
      o.model = e.spec.model.name;
    if (e.spec.model.max_position_embeddings > 0)
      o.max_model_len = e.spec.model.max_position_embeddings;
    o.engine = std::move(e);
  }
  if (f.max_model_len)
    o.max_model_len = *f.max_model_len;
  return o;
}

}  // namespace llmbench::cli
