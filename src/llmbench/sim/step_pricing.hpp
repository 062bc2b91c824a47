#pragma once
/// @file
/// Glue between a scheduler's batch and an execution-time model: the per-sequence work of a
/// `SchedulerOutput` and the step's duration including swap copies (docs/simulator.md "Swap
/// preemption"). For engine drivers (`EngineCore::begin_step`).

#include "llmbench/core/clock.hpp"
#include "llmbench/sim/cost_model.hpp"
#include "llmbench/sim/scheduler.hpp"

#include <vector>

namespace llmbench::sim {

/// Fills `work` (cleared first, storage reused) with one `SeqWork` per scheduled sequence, in
/// batch order: {num_new_tokens, num_computed_before, samples()}. Returns the number of decode
/// sequences (one new token after some context), counted in the same pass.
std::int64_t step_work(const SchedulerOutput& output, std::vector<SeqWork>& work);

/// `BatchSums` of scheduled sequences: one pass, in batch order.
BatchSums batch_sums(const std::vector<ScheduledSeq>& seqs);

/// Duration of the step in ns (≥ 1): the model's step cost plus
/// `model.swap_time_s(num_swap_out_blocks + num_swap_in_blocks, block_size)` (V0 copies the
/// swapped blocks before the forward pass). A model that `prices_from_sums()` gets the batch's
/// `BatchSums` (one pass, `work` untouched); any other gets `step_work`'s list in `work`
/// (scratch storage). `num_decode_seqs` (optional) receives the number of decode sequences.
/// `retained_cells` goes into the sums (`BatchSums::retained_cells`: KV cells idle llama.cpp
/// slots keep).
TimeNs price_step(const ExecTimeModel& model, const SchedulerOutput& output,
                  std::int64_t block_size, std::vector<SeqWork>& work,
                  std::int64_t* num_decode_seqs = nullptr, std::int64_t retained_cells = 0);

}  // namespace llmbench::sim
