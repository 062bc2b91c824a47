#pragma once
/// @file
/// Schedulers decide each engine step's batch. `VllmV1Scheduler` follows vLLM V1
/// (`vllm/v1/core/sched/scheduler.py`; docs/simulator.md "Scheduler"): no prefill/decode phases,
/// every request advances `num_computed_tokens` toward `num_tokens` under a token budget; RUNNING
/// requests first, then WAITING ones; preemption by recompute of the newest running request.
/// Schedulers are chosen by `SchedulerKind` through a registry (docs/simulator.md "Structure").

#include "llmbench/core/clock.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/sim/batch_sums.hpp"
#include "llmbench/sim/block_manager.hpp"
#include "llmbench/sim/decode_lane.hpp"

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
  /// CPU swap blocks of the replica (vLLM V0 `--swap-space` GiB per GPU turned into blocks by
  /// `num_cpu_blocks`). 0 = recompute preemption only (V1). When > 0 a preempted request's
  /// blocks are swapped out while CPU blocks last; otherwise it falls back to recompute.
  std::int64_t num_cpu_blocks = 0;
  /// Dynamic batching (`SchedulerKind::Dynamic`, docs/serving-notes.md "Adaptive dynamic
  /// batching"): τ, the arrival window in ms — a request arriving more than τ after the first
  /// request of the open group opens a new group.
  double batch_window_ms = 50;
  /// Dynamic batching β: a request whose length (prompt + output tokens) is ≥ ⌈β·L̂⌉ opens a new
  /// group, L̂ = mean length of the previous `length_history` requests (note 003: 1.2, 3).
  double batch_length_beta = 1.2;
  std::int64_t length_history = 3;  ///< requests averaged into L̂
  /// SGLang `--max-prefill-tokens`: the largest prefill batch, tokens (`SglangScheduler`); 0 =
  /// `max_num_batched_tokens` alone limits it.
  std::int64_t max_prefill_tokens = 0;
  /// SGLang `--num-continuous-decode-steps`: decode steps run back to back before waiting
  /// requests are considered again (`SglangScheduler`); ≥ 1.
  std::int64_t num_continuous_decode_steps = 1;
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
  /// Decode-lane bookkeeping (`DecodeLane` reads and writes it; nothing else does).
  LaneMember lane;
  /// Set by `EngineCore::begin_step` the first time a batch contains the request (a later
  /// preemption and re-scheduling does not clear it).
  bool scheduled_once = false;
  /// Prompt tokens whose KV arrived from another engine (PD disaggregation: the prefill
  /// engine's KV transferred to a decode engine): the first admission takes them as computed,
  /// without a prefix-cache lookup; 0 afterwards (a preempted request recomputes).
  std::int64_t num_external_tokens = 0;
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
  /// Decode lane (`Scheduler::enable_decode_lane`): steady decodes scheduled this step but not
  /// listed in `seqs` (one new token each, all sampling; included in `sums`).
  LaneShare lane;
  [[nodiscard]] bool empty() const noexcept { return seqs.empty() && lane.seqs == 0; }
};

/// What a finished step produced.
struct StepResult {
  std::vector<RequestState*> emitted;   ///< requests that got one new token, batch order
  std::vector<RequestState*> finished;  ///< requests that reached output_len (blocks freed)
  /// Decode lane: lane stays that ended while forming or applying this step (their tokens are
  /// not in `emitted`), in the order they ended; empty without a lane.
  std::vector<LaneRun> lane_runs;
};

/// Steps a scheduler can apply without forming them one by one (`Scheduler::steady_run`): the
/// decode lane alone runs, nothing else is running or waiting, no lane member finishes before
/// them and the free KV blocks cover every member that needs a new one in them. Every such step
/// schedules `seqs` decodes whose Σ (context + 1) is `context` in the first of them and grows by
/// `seqs` per step.
struct SteadyRun {
  std::int64_t steps = 0;
  std::int64_t seqs = 0;
  std::int64_t context = 0;
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

/// The end of a step for one scheduled sequence, the same under every policy (vLLM V1
/// `Scheduler.update_from_output`): its new tokens are computed; when the step samples, the
/// request gains one output token and becomes `Finished` once it has `output_len`. Returns
/// whether it sampled. Freeing a finished request's blocks is left to the caller (the policies
/// free in different orders).
inline bool apply_step(const ScheduledSeq& s) {
  RequestState* req = s.request;
  LLMBENCH_ASSERT(req->status == RequestStatus::Running, "updating a request not running");
  const bool samples = s.samples();
  req->num_computed_tokens += s.num_new_tokens;
  if (!samples)
    return false;
  ++req->num_output_tokens;
  if (req->num_output_tokens >= req->output_len)
    req->status = RequestStatus::Finished;
  return true;
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
  /// Turns on the decode lane (decode_lane.hpp) before any request is added, where the policy has
  /// one: the batches, token counts, block operations and finishes stay exactly those without
  /// it, but `SchedulerOutput::seqs` and `StepResult::emitted` then list only the explicit part;
  /// the lane is summed in `SchedulerOutput::lane` and reported per request as
  /// `StepResult::lane_runs`. Returns false (nothing changed) for a policy without a lane.
  virtual bool enable_decode_lane() { return false; }
  /// Free CPU swap blocks (0 when swap is off).
  [[nodiscard]] virtual std::int64_t num_free_cpu_blocks() const { return 0; }
  /// The steady steps that follow from here (`SteadyRun`); none by default (a policy without a
  /// decode lane has none).
  [[nodiscard]] virtual SteadyRun steady_run() const { return {}; }
  /// Applies `k` ≤ `steady_run().steps` steady steps at once: the same state as `k` rounds of
  /// `schedule_into` + `update_into`, whose outputs would list no sequence and no event (the lane
  /// reports its runs when its members leave it, as always). The default accepts only 0.
  virtual void skip_steady_steps(std::int64_t k) {
    LLMBENCH_ASSERT(k == 0, "this scheduler has no steady steps");
  }
  /// Aborts request `id` (client gone): removes it from whichever queue holds it (WAITING,
  /// RUNNING, SWAPPED, a batch or a group), frees its KV blocks (cached prefix hashes stay, as
  /// on a normal finish) and its CPU swap blocks, and marks it Finished. Must not be called
  /// between `schedule` and `update` of a batch that contains it (`EngineCore::abort` defers).
  /// Returns false (nothing changed) when no queue holds `id`.
  virtual bool abort(std::int64_t id) = 0;
};

/// vLLM V1's policy (FCFS), plus V0's swap preemption when `num_cpu_blocks` > 0: a victim whose
/// blocks fit the free CPU pool is swapped out (keeps `num_computed_tokens`, goes to the SWAPPED
/// queue); SWAPPED requests are swapped back in (FIFO) before any WAITING request is admitted and
/// only in steps without a preemption (V0 `_schedule_default`). When the CPU pool is full the
/// victim is recomputed (V0 would abort the request instead). With `enable_decode_lane` the
/// steady decodes wait in a `DecodeLane` (decode_lane.hpp) outside `running_` between the steps
/// that need them one by one; the batches are the same.
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
  /// Before the first request (the lane assumes it has seen every step); returns true.
  bool enable_decode_lane() override;
  /// With the lane on: RUNNING outside the lane, WAITING and SWAPPED empty, the lane within the
  /// token budget; as many steps as come before a member finishes or more members need a new
  /// block than there are free blocks (`DecodeLane::steady_steps`). `skip_steady_steps` gives
  /// the members that need a block theirs at their step, in RUNNING order, without forming it.
  [[nodiscard]] SteadyRun steady_run() const override;
  void skip_steady_steps(std::int64_t k) override;

 private:
  void preempt(RequestState* victim, SchedulerOutput& out);
  /// Tokens that the blocks covering `tokens` tokens hold (rounded up to whole blocks).
  [[nodiscard]] std::int64_t slots_for(std::int64_t tokens) const noexcept;

  /// Inserts `r` into `running_` at its admission position.
  void insert_running(RequestState* r);

  struct StepDraft;
  /// With the lane on, returns to RUNNING the lane members that need a block in this step, or
  /// every member when the step cannot be formed with the lane.
  void release_lane_for_step();
  /// The RUNNING pass of a step: in admission order while budget lasts, preempting from the
  /// back of RUNNING when a request's blocks do not fit.
  void schedule_running(StepDraft& d, SchedulerOutput& out);
  /// Swaps SWAPPED requests back in (FIFO) while budget, `max_num_seqs` and blocks allow.
  void schedule_swapped(StepDraft& d, SchedulerOutput& out);
  /// Admits WAITING requests (FCFS) with their prefix-cache hits while budget, `max_num_seqs`
  /// and blocks allow; never preempts on their behalf.
  void schedule_waiting(StepDraft& d);

  SchedulerConfig config_;
  BlockManager blocks_;
  std::vector<RequestState*> running_;  ///< RUNNING outside the lane, by `admit_seq`
  bool lane_on_ = false;                ///< `enable_decode_lane` was called
  DecodeLane lane_;                     ///< steady decodes, when `lane_on_`
  std::vector<RequestState*> due_;      ///< scratch of `skip_steady_steps`
  std::uint64_t next_admit_seq_ = 0;
  std::deque<RequestState*> waiting_;
  std::deque<RequestState*> swapped_;
  std::int64_t cpu_free_ = 0;
  SchedulerStats stats_;
};

/// Scheduler kinds: vLLM V1 continuous batching, static batching (`StaticBatchScheduler`) and
/// adaptive dynamic batching (docs/serving-notes.md) (`DynamicBatchScheduler`), both in
/// batch_schedulers.hpp, and SGLang's prefill-first batching (`SglangScheduler`).
enum class SchedulerKind { VllmV1, Static, Dynamic, Sglang };
/// Parses "vllm-v1" (or "vllm", "continuous"), "static", "dynamic", "sglang" (SGLang's
/// prefill-first policy, sglang_scheduler.hpp); throws `Exception` (source `--scheduler`)
/// listing the known names otherwise.
SchedulerKind parse_scheduler_kind(std::string_view name);

using SchedulerFactory = std::function<std::unique_ptr<Scheduler>(
    const SchedulerConfig&, std::int64_t num_blocks, std::int64_t block_size)>;
/// Kind → factory (vidur-style registry).
const std::map<SchedulerKind, SchedulerFactory>& scheduler_registry();
/// Builds the scheduler of `kind` from the registry.
std::unique_ptr<Scheduler> make_scheduler(SchedulerKind kind, const SchedulerConfig& config,
                                          std::int64_t num_blocks, std::int64_t block_size);

}  // namespace llmbench::sim
