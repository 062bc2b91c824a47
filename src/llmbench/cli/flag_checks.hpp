#pragma once
/// @file
/// Checks of engine, server, `plan` and size flags that parsing alone does not catch (every
/// bad value gets a clear error naming the flag instead of being replaced by a
/// default, wrapped or accepted). Each throws `Exception` with the flag as typed (with `prefix`,
/// e.g. "--server-block-size" for `run`).

#include "llmbench/cli/server_flags.hpp"
#include "llmbench/workload/dataset.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::cli {

/// `--<prefix>block-size` must not be negative (0 = the attention kind's default) and
/// `--<prefix>step-overhead-us` must be a finite number ≥ 0, as must the efficiencies be finite.
void check_engine_flags(const EngineFlags& flags, const std::string& prefix);

/// The engine flags (`check_engine_flags`) and `--<prefix>max-model-len`, which must be ≥ 1 when
/// given; a length of 0 would start a server that rejects every request.
void check_serve_flags(const ServeFlags& flags, const std::string& prefix);

/// `plan`'s sizes: `--block-size` ≥ 0 (0 = default), `--activation-peak-gib` and
/// `--non-torch-gib` finite and ≥ 0 when given.
void check_plan_flags(std::int64_t block_size, std::optional<double> activation_peak_gib,
                      std::optional<double> non_torch_gib);

/// A rough upper estimate of the memory one request of `dataset` takes while a run holds its
/// sample and its record (bytes): 8 bytes per prompt token (text or ids, and the simulator's
/// pseudo tokens), 48 per output token (chunk records) and 2 KiB of fixed overhead. Datasets of
/// prompts of their own lengths are taken at 2,048 prompt and output tokens (ShareGPT's longest
/// conversations are a few thousand tokens).
std::int64_t bytes_per_request_estimate(const workload::DatasetOptions& dataset);

/// Throws `Exception` naming `--num-prompts` when `count` requests of `dataset` would need more
/// than `memory_bytes` (the machine's physical memory; ≤ 0 = unknown, no check), so an absurd
/// size ends with a clear error before memory runs out instead of `std::bad_alloc`.
void check_memory_budget(std::int64_t count, const workload::DatasetOptions& dataset,
                         std::int64_t memory_bytes);

/// The machine's physical memory in bytes (sysconf), or 0 when unknown.
std::int64_t physical_memory_bytes() noexcept;

}  // namespace llmbench::cli
