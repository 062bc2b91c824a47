#pragma once
/// @file
/// SGLang's scheduling policy (`python/sglang/srt/managers/scheduler.py`, the default event loop
/// without `--enable-mixed-chunk`): prefill first. Whenever a prompt can be (or is being)
/// prefilled, the step is a prefill-only batch — waiting requests in arrival order, each taking up
/// to `max_num_batched_tokens` (`--chunked-prefill-size`) of the step's token budget, the budget
/// also capped by `max_prefill_tokens` (`--max-prefill-tokens`) — and the running decodes wait.
/// Otherwise every running request decodes one token, with no token budget (SGLang's decode batch
/// is not counted against the chunk size), and `num_continuous_decode_steps` decode steps run
/// before waiting requests are looked at again (`--num-continuous-decode-steps`). A request whose
/// prompt is longer than the budget is prefilled over several steps (SGLang's chunked request),
/// before any decode step. When a decode cannot get a KV block the newest running request is
/// retracted (its KV dropped, back to the head of WAITING), as SGLang's `retract_decode` does when
/// memory runs out. Admission reserves KV for the decodes to come, as SGLang's `PrefillAdder`
/// does: a waiting request is admitted only while the free KV tokens, less
/// `new_token_ratio` × the remaining output tokens (each capped at 4096,
/// `SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION`) of every running request, hold its prompt plus
/// `new_token_ratio` × its own output; the ratio starts at 0.7 (`SGLANG_INIT_NEW_TOKEN_RATIO`),
/// falls linearly to 0.7 × 0.14 over 600 decode steps (`SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR`,
/// `SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS`), and goes back to 0.7 after a retraction or when the
/// engine runs empty. Prefix caching (SGLang's radix cache) reuses the block manager's hash
/// chain.
/// The differences from vLLM V1 that move TTFT and TPOT: a new prompt never shares a step with
/// decodes (so TTFT is shorter and TPOT is longer under load than V1's mixed batches).

#include "llmbench/sim/scheduler.hpp"

#include <deque>
#include <vector>

namespace llmbench::sim {

/// The prefill-first policy above over a `BlockManager`.
class SglangScheduler final : public Scheduler {
 public:
  SglangScheduler(const SchedulerConfig& config, std::int64_t num_blocks, std::int64_t block_size);
  void add_request(RequestState* request) override;
  void schedule_into(SchedulerOutput& out) override;
  void update_into(const SchedulerOutput& output, StepResult& result) override;
  [[nodiscard]] std::size_t num_running() const override { return running_.size(); }
  [[nodiscard]] std::size_t num_waiting() const override { return waiting_.size(); }
  [[nodiscard]] const BlockManager& blocks() const override { return blocks_; }
  [[nodiscard]] const SchedulerStats& stats() const override { return stats_; }
  bool abort(std::int64_t id) override;
  /// Request ids in RUNNING order (admission order), for tests.
  [[nodiscard]] std::vector<std::int64_t> running_ids() const;

 private:
  /// Tries to form a prefill-only batch into `out`; false (out untouched) when no prompt can
  /// make progress now.
  bool schedule_prefill(SchedulerOutput& out);
  /// Forms the decode batch of every running request whose prompt is done.
  void schedule_decode(SchedulerOutput& out);
  /// Retracts `victim` (newest running): KV freed, recomputed later from the head of WAITING.
  void retract(RequestState* victim, SchedulerOutput& out);
  [[nodiscard]] std::int64_t slots_for(std::int64_t tokens) const noexcept;

  SchedulerConfig config_;
  BlockManager blocks_;
  std::vector<RequestState*> running_;  ///< admission order
  std::deque<RequestState*> waiting_;
  std::int64_t decode_streak_ = 0;               ///< decode steps since the last prefill step
  double new_token_ratio_ = kInitNewTokenRatio;  ///< share of future outputs reserved

 public:
  /// SGLang's admission constants (`environ.py`).
  static constexpr double kInitNewTokenRatio = 0.7;
  static constexpr double kMinNewTokenRatio = 0.7 * 0.14;
  static constexpr double kNewTokenRatioDecay = (kInitNewTokenRatio - kMinNewTokenRatio) / 600;
  static constexpr std::int64_t kClipMaxNewTokens = 4096;

 private:
  SchedulerStats stats_;
};

}  // namespace llmbench::sim
