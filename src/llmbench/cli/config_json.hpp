#pragma once
/// @file
/// The `config_requested` section of the results JSON (docs/metrics.md, after MLPerf LoadGen's
/// requested settings), serialized into the plan when the flags are resolved (the effective
/// section is `app/config_json.hpp`): every flag as typed, one serializer per flags struct, so
/// `run`, `simulate` (and a sweep) that share a struct write the same keys; key = the flag's long
/// name with '_' for '-' ("--random-input-len" → "random_input_len"), except that negative flags
/// are written positively ("--no-stream" → "stream"), `--header` as "header_names" (values may be
/// secrets) and `--api-key` as "api_key_given". A number that JSON cannot hold (an infinite
/// duration) is written "inf".

#include "llmbench/cli/run_flags.hpp"
#include "llmbench/cli/server_flags.hpp"
#include "llmbench/cli/simulate_flags.hpp"
#include "llmbench/cli/workload_flags.hpp"

#include <nlohmann/json.hpp>

namespace llmbench::cli {

/// Requested: the workload and load-shape flags (`WorkloadFlags`), shared by `run` and
/// `simulate`.
nlohmann::json workload_flags_json(const WorkloadFlags& flags);

/// Requested: the engine flags (`EngineFlags`); `--ep`/`--dp` are written under their long
/// aliases "expert_parallel_size" and "data_parallel_size", `--swap-space` as "swap_space". A
/// flag not given is written as the default its help shows, 0 for the counts vLLM derives from
/// the GPU or the model (max_num_seqs, max_num_batched_tokens, block_size,
/// expert_parallel_size) and null for the overrides without a fixed default
/// (num_gpu_blocks_override, the efficiencies: the GPU profile's).
nlohmann::json engine_flags_json(const EngineFlags& flags);

/// Requested: the built-in server's flags (`ServeFlags`: timing, the fixed model's knobs,
/// max_model_len (null when not given: the profile's context), admission_window_ms and every
/// engine key of `engine_flags_json`).
nlohmann::json serve_flags_json(const ServeFlags& flags);

/// Requested: every `run` flag; the `--server-*` flags are under "server" without the prefix.
nlohmann::json run_flags_json(const RunFlags& flags);

/// Requested: every `simulate` flag, with the workload keys of `workload_flags_json` (as `run`)
/// and the engine keys of `engine_flags_json` at the top level (as `run`'s "server" object).
nlohmann::json simulate_flags_json(const SimulateFlags& flags);

}  // namespace llmbench::cli
