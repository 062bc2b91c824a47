#pragma once
/// @file
/// Schedulers decide each engine step's batch. `VllmV1Scheduler` follows vLLM V1
/// (`vllm/v1/core/sched/scheduler.py`; SIMULATOR-NOTES.md §2.3): no prefill/decode phases, every
/// request advances `num_computed_tokens` toward `num_tokens` under a token budget; RUNNING
/// requests first, then WAITING ones; preemption by recompute of the newest running request.
/// Schedulers are chosen by `SchedulerKind` through a registry (STYLE.md "Simulator").

#include "llmbench/sim/block_manager.hpp"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

namespace llmbench::sim {

/// Scheduler knobs (vLLM `EngineArgs` names).
struct SchedulerConfig {
  std::int64_t max_num_seqs = 256;             ///< cap on RUNNING requests
  std::int64_t max_num_batched_tokens = 8192;  ///< token budget per step
  bool enable_chunked_prefill = true;          ///< V1: always on
  bool enable_prefix_caching = true;
  std::int64_t long_prefill_token_threshold = 0;  ///< per-request chunk cap; 0 = off
};

/// Lifecycle of a simulated request.
enum class RequestStatus { Waiting, Running, Preempted, Finished };

/// One request's engine-side state. Owned by the simulation; schedulers keep pointers.
struct RequestState {
  std::int64_t id = 0;
  std::int64_t prompt_len = 0;
  std::int64_t output_len = 0;              ///< tokens to generate (ignore-EOS semantics)
  std::vector<std::uint64_t> block_hashes;  ///< full prompt blocks (prefix caching)
  std::int64_t num_computed_tokens = 0;
  std::int64_t num_output_tokens = 0;
  std::int64_t num_preemptions = 0;
  std::int64_t cached_tokens = -1;  ///< prefix hit at first scheduling
  RequestStatus status = RequestStatus::Waiting;
  /// Prompt + generated tokens (the last generated token is not yet in the KV cache).
  [[nodiscard]] std::int64_t num_tokens() const noexcept { return prompt_len + num_output_tokens; }
};

/// One request's share of a step.
struct ScheduledSeq {
  RequestState* request = nullptr;
  std::int64_t num_new_tokens = 0;
  std::int64_t num_computed_before = 0;  ///< KV tokens present before the step (incl. hits)
  /// True when the step reaches `num_tokens`, so a token is sampled at its end.
  [[nodiscard]] bool samples() const noexcept {
    return num_computed_before + num_new_tokens == request->num_tokens();
  }
};

/// A step's batch.
struct SchedulerOutput {
  std::vector<ScheduledSeq> seqs;       ///< running requests first, then newly admitted
  std::vector<std::int64_t> preempted;  ///< ids preempted while building this batch, in order
  std::int64_t num_tokens = 0;          ///< Σ num_new_tokens ≤ max_num_batched_tokens
  [[nodiscard]] bool empty() const noexcept { return seqs.empty(); }
};

/// What a finished step produced.
struct StepResult {
  std::vector<RequestState*> emitted;   ///< requests that got one new token, batch order
  std::vector<RequestState*> finished;  ///< requests that reached output_len (blocks freed)
};

/// Counters over a simulation.
struct SchedulerStats {
  std::int64_t preemptions = 0;
  std::int64_t prefix_queries = 0;  ///< Σ num_tokens looked up (vLLM prefix_cache_queries)
  std::int64_t prefix_hits = 0;     ///< Σ tokens found cached (vLLM prefix_cache_hits)
  std::int64_t max_running = 0;
};

/// A batch-forming policy over a `BlockManager`.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  /// Appends a new request to WAITING.
  virtual void add_request(RequestState* request) = 0;
  /// Forms the next batch (possibly empty when nothing can run).
  virtual SchedulerOutput schedule() = 0;
  /// Applies a finished step: advances computed tokens, emits tokens, frees finished requests.
  virtual StepResult update(const SchedulerOutput& output) = 0;
  [[nodiscard]] virtual std::size_t num_running() const = 0;
  [[nodiscard]] virtual std::size_t num_waiting() const = 0;
  [[nodiscard]] virtual const BlockManager& blocks() const = 0;
  [[nodiscard]] virtual const SchedulerStats& stats() const = 0;
};

/// vLLM V1's policy (FCFS).
class VllmV1Scheduler final : public Scheduler {
 public:
  VllmV1Scheduler(const SchedulerConfig& config, std::int64_t num_blocks, std::int64_t block_size);
  void add_request(RequestState* request) override;
  SchedulerOutput schedule() override;
  StepResult update(const SchedulerOutput& output) override;
  [[nodiscard]] std::size_t num_running() const override { return running_.size(); }
  [[nodiscard]] std::size_t num_waiting() const override { return waiting_.size(); }
  [[nodiscard]] const BlockManager& blocks() const override { return blocks_; }
  [[nodiscard]] const SchedulerStats& stats() const override { return stats_; }
  /// Request ids in RUNNING order (admission order), for tests.
  [[nodiscard]] std::vector<std::int64_t> running_ids() const;
  /// Request ids in WAITING order, for tests.
  [[nodiscard]] std::vector<std::int64_t> waiting_ids() const;

 private:
  SchedulerConfig config_;
  BlockManager blocks_;
  std::vector<RequestState*> running_;
  std::deque<RequestState*> waiting_;
  SchedulerStats stats_;
};

/// Scheduler kinds.
enum class SchedulerKind { VllmV1 };
/// Parses "vllm-v1"; throws `Exception` (source `--scheduler`) otherwise.
SchedulerKind parse_scheduler_kind(std::string_view name);

using SchedulerFactory = std::function<std::unique_ptr<Scheduler>(
    const SchedulerConfig&, std::int64_t num_blocks, std::int64_t block_size)>;
/// Kind → factory (vidur-style registry).
const std::map<SchedulerKind, SchedulerFactory>& scheduler_registry();
/// Builds the scheduler of `kind` from the registry.
std::unique_ptr<Scheduler> make_scheduler(SchedulerKind kind, const SchedulerConfig& config,
                                          std::int64_t num_blocks, std::int64_t block_size);

}  // namespace llmbench::sim
