#pragma once
/// @file
/// Helpers shared by the hand-traced sim tests: bare requests for the schedulers, the ids and
/// token counts of a scheduled batch, a step-time model simple enough to trace by hand, and small
/// engine options.

#include "llmbench/sim/cost_model.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/sim/scheduler.hpp"

#include <cstdint>
#include <vector>

namespace llmbench::sim::testing {

/// Request or sequence ids (also token counts), in schedule order.
using Ids = std::vector<std::int64_t>;

/// A waiting request `id` with a `prompt`-token prompt that generates `out` tokens.
inline RequestState make(std::int64_t id, std::int64_t prompt, std::int64_t out) {
  RequestState r;
  r.id = id;
  r.prompt_len = prompt;
  r.output_len = out;
  return r;
}

/// The request ids of the sequences in a scheduled step, in batch order.
inline Ids seq_ids(const SchedulerOutput& o) {
  Ids ids;
  for (const auto& s : o.seqs) ids.push_back(s.request->id);
  return ids;
}

/// The new tokens each sequence of a scheduled step computes, in batch order.
inline Ids seq_tokens(const SchedulerOutput& o) {
  Ids n;
  for (const auto& s : o.seqs) n.push_back(s.num_new_tokens);
  return n;
}

/// 1 ms per step plus 1 µs per token: easy to trace by hand.
class SimpleModel final : public ExecTimeModel {
 public:
  [[nodiscard]] StepCost step_cost(const std::vector<SeqWork>& batch) const override {
    StepCost c;
    c.fixed_s = 1e-3;
    for (const auto& s : batch) c.dense_linear_s += 1e-6 * static_cast<double>(s.num_new_tokens);
    return c;
  }
};

/// V1 scheduler knobs for the decode-lane tests: `max_num_seqs` running, 64 tokens per step
/// (the test then calls `enable_decode_lane`).
inline SchedulerConfig lane_config(std::int64_t max_num_seqs) {
  SchedulerConfig c;
  c.max_num_seqs = max_num_seqs;
  c.max_num_batched_tokens = 64;
  return c;
}

/// Forms and applies `steps` steps of `s` (the last step's batch and result stay in `out`/`res`).
inline void run_steps(Scheduler& s, SchedulerOutput& out, StepResult& res, int steps) {
  for (int i = 0; i < steps; ++i) {
    s.schedule_into(out);
    s.update_into(out, res);
  }
}

/// `SimpleModel`'s costs priced from `BatchSums` (1 ms + 1 µs per token, plus 0.1 µs per token
/// of decode context so that step times depend on the lane's context sum too): a model with
/// which the engine may use the V1 scheduler's decode lane.
class SumsModel final : public ExecTimeModel {
 public:
  [[nodiscard]] StepCost step_cost(const std::vector<SeqWork>& batch) const override {
    return step_cost_of_sums(BatchSums::of(batch));
  }
  [[nodiscard]] bool prices_from_sums() const noexcept override { return true; }
  [[nodiscard]] StepCost step_cost_of_sums(const BatchSums& sums) const override {
    StepCost c;
    c.fixed_s = 1e-3;
    c.dense_linear_s = 1e-6 * static_cast<double>(sums.tokens);
    c.attention_decode_s = 1e-7 * static_cast<double>(sums.decode_context);
    c.attention_prefill_s = 1e-9 * sums.prefill_qp;
    return c;
  }
};

/// Engine options with `blocks` KV blocks of 16 tokens and invariant checks on (the other fields
/// at their defaults).
inline SimOptions small_options(std::int64_t blocks) {
  SimOptions o;
  o.engine.num_gpu_blocks = blocks;
  o.engine.block_size = 16;
  o.engine.check_invariants = true;
  return o;
}

}  // namespace llmbench::sim::testing
