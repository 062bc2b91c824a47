#pragma once
/// @file
/// Schedulers decide each engine step's batch. `VllmV1Scheduler` follows vLLM V1
/// (`vllm/v1/core/sched/scheduler.py`; SIMULATOR-NOTES.md §2.3): no prefill/decode phases, every
/// request advances `num_computed_tokens` toward `num_tokens` under a token budget; RUNNING
/// requests first, then WAITING ones; preemption by recompute of the newest running request.
/// Schedulers are chosen by `SchedulerKind` through a registry (STYLE.md "Simulator").

#include "llmbench/core/clock.hpp"
#include "llmbench/sim/batch_sums.hpp"
#include "llmbench/sim/block_manager.hpp"

#include <algorithm>
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
  /// `VllmV1Scheduler` only: keep steady decodes implicit (its decode lane). The batches, token
  /// counts, block operations and finishes are exactly those without it, but
  /// `SchedulerOutput::seqs` and `StepResult::emitted` then list only the explicit part; the
  /// lane is summed in `lane_seqs` / `lane_context` and reported per request as `lane_runs`.
  /// For the virtual-time `Simulation` (issue 4 speed); off by default.
  bool decode_lane = false;
  /// CPU swap blocks of the replica (vLLM V0 `--swap-space` GiB per GPU turned into blocks by
  /// `num_cpu_blocks`). 0 = recompute preemption only (V1). When > 0 a preempted request's
  /// blocks are swapped out while CPU blocks last; otherwise it falls back to recompute.
  std::int64_t num_cpu_blocks = 0;
  /// Dynamic batching (`SchedulerKind::Dynamic`, seeds note 003 §4.1): τ, the arrival window in
  /// ms — a request arriving more than τ after the first request of the open group opens a new
  /// group.
  double batch_window_ms = 50;
  /// Dynamic batching β: a request whose length (prompt + output tokens) is ≥ ⌈β·L̂⌉ opens a new
  /// group, L̂ = mean length of the previous `length_history` requests (note 003: 1.2, 3).
  double batch_length_beta = 1.2;
  std::int64_t length_history = 3;  ///< requests averaged into L̂
};

/// Checks every knob; throws `Exception` naming the flag (`--max-num-seqs`,
/// `--max-num-batched-tokens`, `--long-prefill-token-threshold`, `--swap-space`,
/// `--batch-window-ms`, `--batch-length-beta`) and the bad value.
void validate_scheduler_config(const SchedulerConfig& config);

/// Lifecycle of a simulated request.
enum class RequestStatus { Waiting, Running, Preempted, Finished, Swapped };

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
  std::int64_t num_swapped_blocks = 0;  ///< CPU blocks held while `Swapped`
  /// Tokens the request's GPU blocks can hold (blocks held × block_size; 0 when it holds none):
  /// the scheduler's cache that lets a decode skip the block manager when its block has room.
  std::int64_t num_kv_slots = 0;
  /// Position in RUNNING order (set at each admission; RUNNING is sorted by it).
  std::uint64_t admit_seq = 0;
  /// Decode lane: the scheduler step at which the request entered the lane (its computed and
  /// output counts are as of that step while it is in; −1 = not in the lane), and the step of
  /// its queued wake-up (−1 = none) and whether that one finishes it.
  std::int64_t lane_step = -1;
  std::int64_t lane_wake_step = -1;
  bool lane_wake_finish = false;
  /// Position in the scheduler's unordered decode lane while in it.
  std::size_t lane_index = 0;
  /// Neighbours in the list of its queued wake-up (`LaneWakes`); null at the ends.
  RequestState* wake_prev = nullptr;
  RequestState* wake_next = nullptr;
  /// Set by `EngineCore::begin_step` the first time a batch contains the request (a later
  /// preemption and re-scheduling does not clear it).
  bool scheduled_once = false;
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
  std::vector<ScheduledSeq> seqs;         ///< running requests first, then newly admitted
  std::vector<std::int64_t> preempted;    ///< ids preempted while building this batch, in order
  std::int64_t num_tokens = 0;            ///< Σ num_new_tokens ≤ max_num_batched_tokens
  std::vector<std::int64_t> swapped_out;  ///< of `preempted`, those swapped to CPU (not recomputed)
  std::vector<std::int64_t> swapped_in;   ///< ids brought back from CPU for this step
  std::int64_t num_swap_out_blocks = 0;   ///< GPU→CPU blocks copied before this step
  std::int64_t num_swap_in_blocks = 0;    ///< CPU→GPU blocks copied before this step
  /// `BatchSums` of `seqs` when `has_sums` (a scheduler may build them while it forms the batch,
  /// saving the pricing pass; `price_step` computes them otherwise).
  BatchSums sums;
  bool has_sums = false;
  /// Decode lane (`SchedulerConfig::decode_lane`): steady decodes scheduled this step but not
  /// listed in `seqs` (one new token each, all sampling; included in `sums`), and Σ (context +
  /// 1) over them.
  std::int64_t lane_seqs = 0;
  std::int64_t lane_context = 0;
  [[nodiscard]] bool empty() const noexcept { return seqs.empty() && lane_seqs == 0; }
};

/// Steps `first` … `last` (scheduler step numbers, counted from 0 by `update` calls) in which
/// request `id` emitted one token per step from the decode lane.
struct LaneRun {
  std::int64_t id = 0;
  std::int64_t first = 0;
  std::int64_t last = 0;
};

/// What a finished step produced.
struct StepResult {
  std::vector<RequestState*> emitted;   ///< requests that got one new token, batch order
  std::vector<RequestState*> finished;  ///< requests that reached output_len (blocks freed)
  /// Decode lane: lane stays that ended while forming or applying this step (their tokens are
  /// not in `emitted`), in the order they ended; empty without a lane.
  std::vector<LaneRun> lane_runs;
};

/// Counters over a simulation.
struct SchedulerStats {
  std::int64_t preemptions = 0;
  std::int64_t prefix_queries = 0;  ///< Σ num_tokens looked up (vLLM prefix_cache_queries)
  std::int64_t prefix_hits = 0;     ///< Σ tokens found cached (vLLM prefix_cache_hits)
  std::int64_t max_running = 0;
  std::int64_t swap_outs = 0;  ///< preemptions by swap (⊂ preemptions)
  std::int64_t swap_ins = 0;
  std::int64_t swap_out_blocks = 0;      ///< Σ blocks copied GPU→CPU
  std::int64_t swap_in_blocks = 0;       ///< Σ blocks copied CPU→GPU
  std::int64_t recompute_fallbacks = 0;  ///< swap wanted but the CPU pool was full
  std::int64_t batches = 0;              ///< static/dynamic policies: batches started
};

namespace detail {
/// Removes the request with `id` from `queue` (a deque or vector of `RequestState*`, order
/// kept) and returns it; nullptr when absent. O(size). Used by the schedulers' `abort`.
template <typename Queue>
RequestState* take_by_id(Queue& queue, std::int64_t id) {
  const auto it =
      std::find_if(queue.begin(), queue.end(), [id](const RequestState* r) { return r->id == id; });
  if (it == queue.end())
    return nullptr;
  RequestState* r = *it;
  queue.erase(it);
  return r;
}
}  // namespace detail

/// A batch-forming policy over a `BlockManager`.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  /// Appends a new request to WAITING.
  virtual void add_request(RequestState* request) = 0;
  /// Forms the next batch (possibly empty when nothing can run) into `out`, reusing its
  /// storage (cleared first): no allocation per step once the vectors have grown.
  virtual void schedule_into(SchedulerOutput& out) = 0;
  /// Applies a finished step into `result` (storage reused, cleared first): advances computed
  /// tokens, emits tokens, frees finished requests.
  virtual void update_into(const SchedulerOutput& output, StepResult& result) = 0;
  /// `schedule_into` a fresh output.
  SchedulerOutput schedule() {
    SchedulerOutput out;
    schedule_into(out);
    return out;
  }
  /// `update_into` a fresh result.
  StepResult update(const SchedulerOutput& output) {
    StepResult result;
    update_into(output, result);
    return result;
  }
  [[nodiscard]] virtual std::size_t num_running() const = 0;
  [[nodiscard]] virtual std::size_t num_waiting() const = 0;
  [[nodiscard]] virtual const BlockManager& blocks() const = 0;
  [[nodiscard]] virtual const SchedulerStats& stats() const = 0;
  /// Tells the scheduler the current time (virtual or real ns) before `add_request` /
  /// `schedule`; policies that group by arrival time (`Dynamic`) use it, others ignore it.
  virtual void set_now(TimeNs now_ns) { (void)now_ns; }
  /// Free CPU swap blocks (0 when swap is off).
  [[nodiscard]] virtual std::int64_t num_free_cpu_blocks() const { return 0; }
  /// Aborts request `id` (client gone): removes it from whichever queue holds it (WAITING,
  /// RUNNING, SWAPPED, a batch or a group), frees its KV blocks (cached prefix hashes stay, as
  /// on a normal finish) and its CPU swap blocks, and marks it Finished. Must not be called
  /// between `schedule` and `update` of a batch that contains it (`EngineCore::abort` defers).
  /// Returns false (nothing changed) when no queue holds `id`.
  virtual bool abort(std::int64_t id) = 0;
};

/// Decode-lane wake-ups by scheduler step: one FIFO list per step over a window of steps,
/// linked through `RequestState::wake_prev`/`wake_next`, so queueing, removing and taking
/// wake-ups allocates nothing (a hash map of vectors cost two allocations per lane entry).
class LaneWakes {
 public:
  /// Appends `r` (not queued) to the list of `step`.
  void push(std::int64_t step, RequestState* r);
  /// Unlinks `r` from the list of `step`, where it is queued.
  void remove(std::int64_t step, RequestState* r);
  /// Moves the list of `step` into `out` (cleared first), in push order, unlinked.
  void take(std::int64_t step, std::vector<RequestState*>& out);

 private:
  struct List {
    RequestState* head = nullptr;
    RequestState* tail = nullptr;
  };
  [[nodiscard]] List* find(std::int64_t step) noexcept;
  /// Forgets the empty lists at the front of the window (steps taken or emptied).
  void drop_empty_front() noexcept;
  std::deque<List> lists_;  ///< lists_[i] holds step base_ + i; no empty list at the front
  std::int64_t base_ = 0;
};

/// vLLM V1's policy (FCFS), plus V0's swap preemption when `num_cpu_blocks` > 0: a victim whose
/// blocks fit the free CPU pool is swapped out (keeps `num_computed_tokens`, goes to the SWAPPED
/// queue); SWAPPED requests are swapped back in (FIFO) before any WAITING request is admitted and
/// only in steps without a preemption (V0 `_schedule_default`). When the CPU pool is full the
/// victim is recomputed (V0 would abort the request instead).
class VllmV1Scheduler final : public Scheduler {
 public:
  VllmV1Scheduler(const SchedulerConfig& config, std::int64_t num_blocks, std::int64_t block_size);
  void add_request(RequestState* request) override;
  void schedule_into(SchedulerOutput& out) override;
  void update_into(const SchedulerOutput& output, StepResult& result) override;
  [[nodiscard]] std::size_t num_running() const override { return running_.size() + lane_.size(); }
  /// WAITING plus SWAPPED requests (both wait for the engine).
  [[nodiscard]] std::size_t num_waiting() const override {
    return waiting_.size() + swapped_.size();
  }
  [[nodiscard]] const BlockManager& blocks() const override { return blocks_; }
  [[nodiscard]] const SchedulerStats& stats() const override { return stats_; }
  /// Request ids in RUNNING order (admission order), decode lane included, for tests.
  [[nodiscard]] std::vector<std::int64_t> running_ids() const;
  /// Requests in the decode lane now.
  [[nodiscard]] std::size_t num_lane() const noexcept { return lane_.size(); }
  /// Request ids in WAITING order, for tests.
  [[nodiscard]] std::vector<std::int64_t> waiting_ids() const;
  /// Request ids in SWAPPED order, for tests.
  [[nodiscard]] std::vector<std::int64_t> swapped_ids() const;
  [[nodiscard]] std::int64_t num_free_cpu_blocks() const override { return cpu_free_; }
  bool abort(std::int64_t id) override;

 private:
  void preempt(RequestState* victim, SchedulerOutput& out);
  /// Tokens that the blocks covering `tokens` tokens hold (rounded up to whole blocks).
  [[nodiscard]] std::int64_t slots_for(std::int64_t tokens) const noexcept;

  // ---- decode lane ----
  // A RUNNING request that has just sampled (computed = num_tokens − 1) and whose KV blocks have
  // room for its next token is a steady decode: every following step schedules it with one token
  // that samples, touching nothing else, until it needs a new block or finishes. The lane holds
  // such requests implicitly: `running_` keeps only the rest, a lane member's counters advance by
  // the steps since it entered when it leaves, and a wake-up is queued for the step at which it
  // needs a block (it returns to `running_` before that step is formed) or finishes (it is
  // finished when that step is applied). A step is formed with the lane when no request of
  // `running_` can be preempted in it (their new blocks fit the free pool) and the budget cannot
  // run out before the lane's last member (in RUNNING order); otherwise the lane is drained into
  // `running_` first and the step is formed one request at a time. Either way the batch is the
  // one vLLM's loop forms.
  // Every lane member has exactly one queued wake-up, removed when it leaves the lane, so the
  // wake-up lists never point at a request that left (or was aborted and freed).
  /// Moves lane member `r` out of the lane (counters advanced to `step_`, its wake-up dequeued),
  /// reporting its lane run up to step `last_step` into `pending_runs_` (none when `last_step`
  /// < its entry step).
  void leave_lane(RequestState* r, std::int64_t last_step);
  /// Puts `r` (just sampled, not finished, counters current) into the lane when it qualifies.
  void maybe_enter_lane(RequestState* r);
  /// True when this step can be formed with the lane (see above).
  [[nodiscard]] bool lane_step_fits() const;
  /// Removes and returns the lane members whose wake-up in `wakes` falls on this step (their
  /// wake-up dequeued).
  const std::vector<RequestState*>& take_wakes(LaneWakes& wakes);
  /// Inserts `r` into `running_` at its admission position.
  void insert_running(RequestState* r);

  SchedulerConfig config_;
  BlockManager blocks_;
  std::vector<RequestState*> running_;  ///< RUNNING outside the lane, by `admit_seq`
  /// The decode lane, unordered (`RequestState::lane_index`; RUNNING order is `admit_seq`).
  std::vector<RequestState*> lane_;
  std::uint64_t lane_last_seq_ = 0;  ///< the largest `admit_seq` in the lane (when not empty)
  /// Lane members by the step before which they need a block / in which they finish.
  LaneWakes block_wakes_;
  LaneWakes finish_wakes_;
  std::vector<RequestState*> due_;     ///< `take_wakes`' result (storage reused)
  std::vector<LaneRun> pending_runs_;  ///< lane runs ended since the last `update`
  std::int64_t lane_context_ = 0;      ///< Σ (computed + 1) over the lane, as of `step_`
  std::int64_t step_ = 0;              ///< steps applied (`update` calls)
  std::uint64_t next_admit_seq_ = 0;
  std::deque<RequestState*> waiting_;
  std::deque<RequestState*> swapped_;
  std::int64_t cpu_free_ = 0;
  SchedulerStats stats_;
};

/// Scheduler kinds: vLLM V1 continuous batching, static batching (`StaticBatchScheduler`) and
/// the seeds notes' adaptive dynamic batching (`DynamicBatchScheduler`), both in
/// batch_schedulers.hpp.
enum class SchedulerKind { VllmV1, Static, Dynamic };
/// Parses "vllm-v1" (or "vllm", "continuous"), "static", "dynamic"; throws `Exception` (source
/// `--scheduler`) listing the known names otherwise.
SchedulerKind parse_scheduler_kind(std::string_view name);

using SchedulerFactory = std::function<std::unique_ptr<Scheduler>(
    const SchedulerConfig&, std::int64_t num_blocks, std::int64_t block_size)>;
/// Kind → factory (vidur-style registry).
const std::map<SchedulerKind, SchedulerFactory>& scheduler_registry();
/// Builds the scheduler of `kind` from the registry.
std::unique_ptr<Scheduler> make_scheduler(SchedulerKind kind, const SchedulerConfig& config,
                                          std::int64_t num_blocks, std::int64_t block_size);

}  // namespace llmbench::sim
