#pragma once
/// @file
/// One engine specification for every command that runs or sizes the simulated engine
/// (`simulate`, `serve`, `plan`, and the built-in server of `run`): the overrides a user typed
/// (`EngineOverrides`, all optional), and the resolved spec (`EngineSpec`) with vLLM V1's
/// start-up defaults filled in as a function of the GPU and the model. Each knob has its default
/// in exactly one place: a default member initializer of `SchedulerConfig` / `MemoryOptions` /
/// `Efficiency` (from the GPU profile) for the fixed ones, a function below for those vLLM derives
/// from the hardware or the model. The vLLM facts are in docs/simulator.md ("Engine spec").

#include "llmbench/sim/comm_model.hpp"
#include "llmbench/sim/cost_model.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/sim/memory.hpp"
#include "llmbench/sim/profiles.hpp"
#include "llmbench/sim/scheduler.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace llmbench::sim {

/// llmbench's default deployment when no profile is named: DeepSeek-R1 on H200s.
inline constexpr std::string_view kDefaultModelProfile = "deepseek-r1";
inline constexpr std::string_view kDefaultGpu = "h200";
/// Default tensor-parallel size: 8, the GPUs DeepSeek-R1's FP8 weights need on H200s (vLLM's own
/// default is 1, which would not fit the default model).
inline constexpr int kDefaultTensorParallelSize = 8;
/// Default scheduler and step-time model names (`parse_scheduler_kind`, `parse_exec_model_kind`).
inline constexpr std::string_view kDefaultScheduler = "vllm-v1";
inline constexpr std::string_view kDefaultExecModel = "roofline";

/// Serving-engine families whose scheduling and start-up defaults the simulator mirrors
/// (docs/simulator.md "Engine families"): vLLM V1 (mixed prefill/decode batches under a token
/// budget), SGLang (prefill-first batches, `SglangScheduler`) and llama.cpp's `llama-server`
/// (slots as `max_num_seqs`, `--batch-size` as the token budget, a fixed context per slot, no
/// paged preemption).
enum class EngineFamily { Vllm, Sglang, Llamacpp };
/// The one name table of `EngineFamily` (`--engine` values).
inline constexpr std::array<std::pair<EngineFamily, std::string_view>, 3> kEngineFamilyNames{{
    {EngineFamily::Vllm, "vllm"},
    {EngineFamily::Sglang, "sglang"},
    {EngineFamily::Llamacpp, "llamacpp"},
}};
/// Parses an engine family name ("llama.cpp" is accepted for llamacpp); throws `Exception`
/// (source `--engine`) listing the known names otherwise.
EngineFamily parse_engine_family(std::string_view name);
/// The name of `family` in `kEngineFamilyNames`.
std::string_view to_string(EngineFamily family) noexcept;

/// The engine knobs as given (CLI flags, vLLM `EngineArgs` names). Unset (or, for the counts
/// where vLLM uses 0 for "automatic", 0) means "the default for this GPU and model"; a set value
/// always wins. Plain data; `make_engine_spec` checks the values.
struct EngineOverrides {
  std::optional<std::string> model_profile;  ///< name, HF id or .json path (data/sim/models)
  std::optional<std::string> gpu;            ///< name or .json path (data/sim/gpus)
  std::optional<int> tp;                     ///< `--tensor-parallel-size`
  std::optional<int> dp;                     ///< `--data-parallel-size`: engine replicas
  std::optional<int> ep;                     ///< expert-parallel size; ≤ 0 = automatic
  bool enable_expert_parallel = false;       ///< `--enable-expert-parallel` (ep = tp × dp)
  std::optional<std::int64_t> max_num_seqs;  ///< 0 = `v1_scheduler_defaults`
  std::optional<std::int64_t> max_num_batched_tokens;  ///< 0 = `v1_scheduler_defaults`
  std::optional<std::int64_t> block_size;              ///< 0 = `default_block_size`
  std::optional<double> gpu_memory_utilization;        ///< fraction (0, 1]
  std::optional<std::int64_t> num_gpu_blocks_override;
  std::optional<bool> enable_prefix_caching;
  std::optional<std::int64_t> long_prefill_token_threshold;  ///< 0 = off
  std::optional<std::string> scheduler;                      ///< vllm-v1 | static | dynamic
  std::optional<double> batch_window_ms;                     ///< `dynamic`: τ, ms
  std::optional<double> batch_length_beta;                   ///< `dynamic`: β
  std::optional<double> swap_space_gib;                      ///< vLLM V0 swap per GPU, GiB
  std::optional<double> activation_peak_gib;  ///< memory plan: activation peak per GPU, GiB
  std::optional<double> non_torch_gib;        ///< memory plan: non-torch memory per GPU, GiB
  std::optional<std::string> exec_model;      ///< roofline
  std::optional<double> compute_efficiency;   ///< η_F, replaces the GPU profile's
  std::optional<double> memory_efficiency;    ///< η_M, replaces the GPU profile's
  std::optional<double> step_overhead_us;     ///< T_step0, replaces the GPU profile's
  std::optional<std::string> engine;          ///< `--engine`: family name (default vllm)
  /// `--calibration FILE`: a calibration file (calibration_file.hpp) whose knobs fill in what was
  /// not typed, whose fitted cost model replaces the GPU profile's and whose `comm` section, when
  /// present, replaces the datasheet TP all-reduce and EP all-to-all terms.
  std::optional<std::string> calibration;
  std::optional<std::int64_t> max_prefill_tokens;           ///< SGLang `--max-prefill-tokens`
  std::optional<std::int64_t> num_continuous_decode_steps;  ///< SGLang's, ≥ 1
  /// SGLang `--stream-interval` (tokens per streamed chunk after the first). Recorded with the
  /// engine; the simulator emits every token (docs/simulator.md "Engine families").
  std::optional<std::int64_t> stream_interval;
  std::optional<std::int64_t> context_size;   ///< llama.cpp `--ctx-size`: KV cells of all slots
  std::optional<std::string> kv_cache_dtype;  ///< "auto" (the model's) or "fp8" (1 byte)
};

/// vLLM V1's scheduler defaults for the OpenAI API server on `gpu` (`EngineArgs`'s usage-context
/// defaults): a GPU with at least 70 GiB of memory that is not an A100 gets max_num_seqs 1024
/// and max_num_batched_tokens 8192, every other GPU 256 and 2048.
struct V1SchedulerDefaults {
  std::int64_t max_num_seqs = 256;
  std::int64_t max_num_batched_tokens = 2048;
};
/// The defaults above for `gpu` (A100 is matched by its profile name containing "a100").
V1SchedulerDefaults v1_scheduler_defaults(const HardwareProfile& gpu) noexcept;

/// vLLM's KV block size for `model`: 64 with MLA (the FlashMLA backend requires it), else 16
/// (`CacheConfig`'s default).
std::int64_t default_block_size(const ModelProfile& model) noexcept;

/// Expert-parallel size: `ep` when > 0, else tp × dp with `enable_expert_parallel` (vLLM's
/// expert-parallel group spans every GPU of the deployment), else 1 (experts TP-sharded).
int resolve_expert_parallel_size(std::optional<int> ep, int tp, int dp,
                                 bool enable_expert_parallel) noexcept;

/// The start-up defaults of an engine family on `gpu` for `model`: scheduler kind and limits,
/// prefix caching, block size. vLLM: `v1_scheduler_defaults`, `default_block_size`. SGLang
/// (`server_args.py`): `--chunked-prefill-size` 2048 below 35 GiB of GPU memory, 8192 below 160
/// GiB, else 16384; `--max-prefill-tokens` 16384; `--max-running-requests` 2048 (SGLang sizes it
/// from the KV pool, 2048 to 4096); radix cache on; `--mem-fraction-static` 0.88 (its fallback),
/// which holds weights and KV only. llama.cpp (`common.h`): one slot
/// (`--parallel 1`), `--batch-size` 2048, `--ctx-size` 4096, prompt cache not modelled (off),
/// block size 16, TP 1.
struct FamilyDefaults {
  SchedulerKind scheduler = SchedulerKind::VllmV1;
  std::int64_t max_num_seqs = 256;
  std::int64_t max_num_batched_tokens = 2048;
  std::int64_t max_prefill_tokens = 0;
  bool enable_prefix_caching = true;
  std::int64_t block_size = 16;
  int tp = kDefaultTensorParallelSize;
  std::int64_t context_size = 0;  ///< llama.cpp: KV cells of all slots; 0 = not slot-based
  /// SGLang: `--mem-fraction-static` (weights + KV pool, nothing else subtracted); others:
  /// `MemoryOptions`'s vLLM default.
  double gpu_memory_utilization = MemoryOptions{}.gpu_memory_utilization;
};
/// The defaults above for `family`, `gpu` and `model`.
FamilyDefaults family_defaults(EngineFamily family, const HardwareProfile& gpu,
                               const ModelProfile& model) noexcept;

/// The inputs of the KV memory plan from `overrides` with their defaults for `model` (TP, DP,
/// EP, block size, utilization, swap space, override, activation and non-torch sizes). Not
/// checked here: `plan_memory` checks them.
MemoryOptions resolve_memory_options(const ModelProfile& model, const EngineOverrides& overrides);

/// The resolved engine: profiles, memory plan, one replica's engine configuration and the
/// step-time model's kind and efficiencies. Every field is derived once by `make_engine_spec`;
/// the step-time model's parameters are built from them (`exec_params`), not stored twice.
struct EngineSpec {
  ModelProfile model;
  HardwareProfile gpu;
  MemoryOptions memory;  ///< the plan's inputs (parallelism, block size, utilization, …)
  MemoryPlan plan;       ///< KV blocks per replica, bytes per GPU
  /// One replica: scheduler kind and knobs, `plan.num_gpu_blocks`, `plan.block_size`.
  EngineConfig engine;
  ExecModelKind exec_kind = ExecModelKind::Roofline;
  Efficiency efficiency;  ///< the GPU profile's (or the calibration's), with the overrides applied
  EngineFamily family = EngineFamily::Vllm;
  std::int64_t stream_interval = 1;  ///< recorded, not modelled (`EngineOverrides`)
  /// The calibration file applied (`EngineOverrides::calibration`), "" when none.
  std::string calibration_file;
  /// The calibration file's measured collectives (its `comm` section); nullopt without a file or
  /// when the file has none.
  std::optional<CommModel> comm;
  /// What the cost model's parameters were fitted on: the calibration's summary, else the GPU
  /// profile's `calibrated_on`, "" when they are the uncalibrated datasheet defaults.
  std::string calibrated_on;

  /// Engine replicas (`--dp`), each with `engine`'s configuration.
  [[nodiscard]] int data_parallel_size() const noexcept { return memory.dp; }
  /// The step-time model's parameters: profiles, tp / ep / dp, `efficiency`, and the measured
  /// communication terms of `comm` for this tp and ep (`comm_terms`).
  [[nodiscard]] ExecModelParams exec_params() const;
  /// A new step-time model of `exec_kind` (`make_exec_model`).
  [[nodiscard]] std::unique_ptr<ExecTimeModel> make_exec_model() const;
  /// "deepseek-r1 on 8 x h200 (TP8 EP1 DP1): # GPU blocks: 1234 per replica (block size 64, …
  /// KV tokens, … GiB KV per GPU), # CPU blocks: 0, max_num_seqs …, max_num_batched_tokens …,
  /// prefix caching on" for logs.
  [[nodiscard]] std::string describe() const;
};

/// Resolves `overrides` against `gpu` and `model` into a checked spec: parallelism (EP rule
/// above), block size by attention kind, the KV memory plan (`plan_memory`, which must leave at
/// least one block: `require_fit`), vLLM V1's scheduler defaults for the GPU, the scheduler and
/// step-time model kinds and the efficiencies. The profile names in `overrides` are ignored (the
/// profiles are given). Throws `Exception` naming the flag ("--max-num-seqs", "--tp", …) on a
/// bad value or a model that does not fit.
EngineSpec make_engine_spec(const HardwareProfile& gpu, const ModelProfile& model,
                            const EngineOverrides& overrides);

/// Loads the model and GPU profiles `overrides` names (default `kDefaultModelProfile`,
/// `kDefaultGpu`) from `data_dir` and resolves them (`make_engine_spec`). With
/// `overrides.calibration`, the file's knobs fill in what was not typed (`merge_overrides`), its
/// fitted cost model replaces the GPU profile's efficiencies (typed efficiency flags still win),
/// its serving overheads go into `EngineConfig::overheads` and its `comm` section into
/// `EngineSpec::comm`; a typed `--gpu`, `--model-profile` or `--tp` that differs from the file's
/// target is an `Exception` (the fit does not carry over).
EngineSpec load_engine_spec(const std::string& data_dir, const EngineOverrides& overrides);

}  // namespace llmbench::sim
