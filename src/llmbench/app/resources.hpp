#pragma once
/// @file
/// The machine's memory a plan is checked against before anything is loaded: a run's samples
/// and records must fit, so an absurd size ends with a clear error instead of `std::bad_alloc`.

#include "llmbench/workload/dataset.hpp"

#include <cstdint>

namespace llmbench::app {

/// A rough upper estimate of the memory one request of `dataset` takes while a run holds its
/// sample and its record (bytes): 8 bytes per prompt token (text or ids, and the simulator's
/// pseudo tokens), 48 per output token (chunk records) and 2 KiB of fixed overhead. Datasets of
/// prompts of their own lengths are taken at 2,048 prompt and output tokens (ShareGPT's longest
/// conversations are a few thousand tokens).
std::int64_t bytes_per_request_estimate(const workload::DatasetOptions& dataset);

/// Throws `Exception` naming `--num-prompts` when `count` requests of `dataset` would need more
/// than `memory_bytes` (the machine's physical memory; ≤ 0 = unknown, no check).
void check_memory_budget(std::int64_t count, const workload::DatasetOptions& dataset,
                         std::int64_t memory_bytes);

/// The machine's physical memory in bytes (sysconf), or 0 when unknown.
std::int64_t physical_memory_bytes() noexcept;

}  // namespace llmbench::app
