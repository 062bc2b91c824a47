#pragma once
/// @file
/// The decode lane: a speed device of `VllmV1Scheduler`, fenced here. A RUNNING
/// request that has just sampled (computed = num_tokens − 1) and whose KV blocks have room for
/// its next token is a steady decode: every following step schedules it with one token that
/// samples and touches nothing else, until it needs a new block or finishes. The lane holds such
/// requests implicitly (the scheduler's RUNNING queue keeps only the rest): a member's counters
/// advance by the steps since it entered when it leaves, and a wake-up is queued for the step at
/// which it needs a block (it returns to RUNNING before that step is formed) or finishes (it is
/// finished when that step is applied). The batches, token counts, block operations and finishes
/// are exactly those of the one-by-one path (test `Simulation.DecodeLaneGivesTheSameRunAsOneByOne`
/// compares both); the floor that justifies it is in docs/performance.md.

#include <cstdint>
#include <vector>

namespace llmbench::sim {

struct RequestState;

/// Steps `first` … `last` (scheduler step numbers, counted from 0 by `update` calls) in which
/// request `id` emitted one token per step from the decode lane.
struct LaneRun {
  std::int64_t id = 0;
  std::int64_t first = 0;
  std::int64_t last = 0;
};

/// The lane's bookkeeping carried by each `RequestState` (read and written by `DecodeLane` only).
struct LaneMember {
  /// Step at which the request entered the lane (its computed and output counts are as of that
  /// step while it is in); −1 = not in the lane.
  std::int64_t entry_step = -1;
  std::int64_t wake_step = -1;  ///< step of its queued wake-up; −1 = none
  bool wake_finishes = false;   ///< the wake-up finishes it (else it needs a block)
  std::size_t index = 0;        ///< position in the (unordered) lane
  /// Neighbours in the list of its queued wake-up (`LaneWakes`); null at the ends.
  RequestState* wake_prev = nullptr;
  RequestState* wake_next = nullptr;
};

/// The lane's part of one step's batch: members scheduled with one sampling token each (not
/// listed in `SchedulerOutput::seqs`), and Σ (context + 1) over them.
struct LaneShare {
  std::int64_t seqs = 0;
  std::int64_t context = 0;
};

/// Decode-lane wake-ups by scheduler step: one FIFO list per step, linked through
/// `LaneMember::wake_prev`/`wake_next`, in a ring of lists indexed by step (a wake-up lies
/// within a block's steps of the current one, so the ring stays small), so queueing, removing
/// and taking wake-ups allocates nothing and costs no work per step without a wake-up (a deque
/// with one list per step cost a list per step of every lane; a hash map of vectors two
/// allocations per lane entry).
class LaneWakes {
 public:
  /// Appends `r` (not queued) to the list of `step`.
  void push(std::int64_t step, RequestState* r);
  /// Unlinks `r` from the list of `step`, where it is queued.
  void remove(std::int64_t step, RequestState* r);
  /// Moves the list of `step` into `out` (cleared first), in push order, unlinked.
  void take(std::int64_t step, std::vector<RequestState*>& out);
  /// The earliest step with a queued wake-up; INT64_MAX when none is queued.
  [[nodiscard]] std::int64_t first_step() const noexcept;

 private:
  struct List {
    RequestState* head = nullptr;
    RequestState* tail = nullptr;
    std::int64_t step = -1;  ///< the step it holds while not empty
  };
  [[nodiscard]] List* find(std::int64_t step) noexcept;
  /// A ring large enough that the steps lo … hi have distinct slots.
  void grow(std::int64_t lo, std::int64_t hi);
  /// After the list of `base_` emptied: `base_` to the next non-empty list.
  void advance_base() noexcept;
  std::vector<List> ring_;  ///< step s in slot s & (size − 1); size a power of two
  std::int64_t base_ = 0;   ///< the first step with a non-empty list (while `lists_` > 0)
  std::int64_t last_ = 0;   ///< no list after this step is non-empty
  std::int64_t lists_ = 0;  ///< non-empty lists
};

/// The lane of one scheduler. It counts the scheduler's steps itself (`step_applied`), so its
/// members' counters can be brought up to date when they leave. The returned member lists are
/// storage reused until the next call. Every member has exactly one queued wake-up, removed when
/// it leaves, so no wake-up list points at a request that left (or was aborted and freed).
class DecodeLane {
 public:
  [[nodiscard]] bool empty() const noexcept { return members_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return members_.size(); }
  /// The lane's share of the step being formed (one token per member).
  [[nodiscard]] LaneShare share() const noexcept {
    return LaneShare{.seqs = static_cast<std::int64_t>(members_.size()), .context = context_};
  }
  /// The members, unordered (RUNNING order is `RequestState::admit_seq`).
  [[nodiscard]] const std::vector<RequestState*>& members() const noexcept { return members_; }
  [[nodiscard]] static bool contains(const RequestState& r) noexcept;

  /// True when the step being formed can keep the lane: no request of `running` (the RUNNING
  /// requests outside the lane, by `admit_seq`) can be preempted in it (the new blocks they need
  /// fit `free_blocks`) and the token budget reaches the lane's last member in RUNNING order.
  /// Otherwise the caller must `release_all` and form the step one request at a time.
  [[nodiscard]] bool step_fits(const std::vector<RequestState*>& running,
                               std::int64_t max_num_batched_tokens,
                               std::int64_t long_prefill_token_threshold, std::int64_t free_blocks,
                               std::int64_t block_size) const;

  /// Before a step is formed: removes the members that need a new KV block in it (counters
  /// brought up to the steps applied so far) and returns them, for RUNNING.
  const std::vector<RequestState*>& release_block_wakes();
  /// Removes every member (counters brought up to date) and returns them, for RUNNING.
  const std::vector<RequestState*>& release_all();
  /// After a step is applied (before `step_applied`): removes the members that sampled their
  /// last token in it, with that token counted, and returns them (the caller finishes them).
  const std::vector<RequestState*>& finish_due();
  /// Counts one applied step: every member computed and sampled one more token.
  void step_applied() noexcept;
  /// Puts `r` into the lane when it is a steady decode (just sampled, not finished, counters
  /// current, prompt computed, room for its next token in its blocks).
  void try_enter(RequestState* r);
  /// Removes member `r` (aborted): its tokens of the steps applied so far stay emitted.
  void remove(RequestState* r);
  /// Moves the lane runs that ended since the last call into `out` (its old content dropped).
  void take_runs(std::vector<LaneRun>& out);
  /// Steps from the one being formed next that would schedule the lane alone and report
  /// nothing, at most `max_steps`: before the first step in which a member samples its last
  /// token (that step must report it), and before the first step at which the new blocks the
  /// members need (each one block every `block_size` steps once its room is used up) would
  /// outnumber `free_blocks` (that step could preempt). The members that need a block before
  /// then get it from `skip_steps`' caller. 0 for an empty lane. O(members × steps / block).
  [[nodiscard]] std::int64_t steady_steps(std::int64_t free_blocks, std::int64_t block_size,
                                          std::int64_t max_steps) const;
  /// The step of the first queued block wake-up; INT64_MAX when none is queued.
  [[nodiscard]] std::int64_t next_block_wake() const noexcept { return block_wakes_.first_step(); }
  /// The lane's step counter (steps applied).
  [[nodiscard]] std::int64_t step() const noexcept { return step_; }
  /// Applies `k` steps before the next block wake-up at once: every member computes and samples
  /// `k` more tokens (its counters advance when it leaves, as after `k` `step_applied` calls).
  void skip_steps(std::int64_t k) noexcept;

 private:
  /// Removes `r` (counters advanced to `step_`, its wake-up dequeued), reporting its run up to
  /// step `last_step` (none when `last_step` < its entry step).
  void leave(RequestState* r, std::int64_t last_step);
  /// Dequeues the wake-ups of this step from `wakes` into `due_`.
  void take_wakes(LaneWakes& wakes);

  std::vector<RequestState*> members_;
  std::uint64_t last_seq_ = 0;  ///< the largest `admit_seq` among the members (when not empty)
  LaneWakes block_wakes_;       ///< members by the step before which they need a block
  LaneWakes finish_wakes_;      ///< members by the step in which they finish
  std::vector<RequestState*> due_;
  std::vector<LaneRun> runs_;                ///< runs ended since the last `take_runs`
  mutable std::vector<std::int64_t> needs_;  ///< scratch of `steady_steps`
  std::int64_t context_ = 0;                 ///< Σ (computed + 1) over the members, as of `step_`
  std::int64_t step_ = 0;                    ///< steps applied
};

}  // namespace llmbench::sim
