#pragma once
/// @file
/// Batch-at-a-time scheduling policies, for comparison with vLLM's continuous batching
/// (`VllmV1Scheduler`). A batch is admitted only when the previous one has completely finished;
/// its members' KV blocks are reserved for prompt + output at admission (so a batch never
/// preempts), then the batch runs its prefill steps (prompt chunks under the token budget, no
/// decodes) and then decode steps (one token per unfinished member) until every member is done.
/// The two policies differ only in how the next batch is formed:
/// * `StaticBatchScheduler` — everything WAITING, in arrival order, up to `max_num_seqs` and
///   while the reservation fits the free KV blocks (classic static batching: FasterTransformer,
///   HF `generate`).
/// * `DynamicBatchScheduler` — the adaptive grouping of the docs/serving-notes.md "Adaptive dynamic
/// batching"
/// ("基于请求到达时间戳
///   与序列长度预测的自适应分组策略"): arriving requests are put into groups; a request opens a new
///   group when it arrives more than τ after the first request of the open group, or when its
///   length is ≥ ⌈β·L̂⌉ (L̂ = mean length of the previous 3 requests). Each group becomes one batch
///   (capped by `max_num_seqs` and KV fit). docs/simulator.md gives the reading of the note.
/// Prefix caching is not used by these policies (no lookups, no hits).

#include "llmbench/sim/scheduler.hpp"

#include <deque>
#include <vector>

namespace llmbench::sim {

/// Shared machinery: batch execution, KV reservation, statistics. Subclasses form batches.
class BatchScheduler : public Scheduler {
 public:
  BatchScheduler(const SchedulerConfig& config, std::int64_t num_blocks, std::int64_t block_size);
  void schedule_into(SchedulerOutput& out) override;
  void update_into(const SchedulerOutput& output, StepResult& result) override;
  /// Unfinished members of the current batch.
  [[nodiscard]] std::size_t num_running() const override { return batch_.size(); }
  [[nodiscard]] const BlockManager& blocks() const override { return blocks_; }
  [[nodiscard]] const SchedulerStats& stats() const override { return stats_; }
  /// Ids of the current batch's unfinished members, in batch order (for tests).
  [[nodiscard]] std::vector<std::int64_t> batch_ids() const;
  /// Removes `id` from the batch (freeing its reservation) or from the waiting queue
  /// (`remove_waiting`).
  bool abort(std::int64_t id) override;

 protected:
  /// Removes a waiting (not yet batched) request; nullptr when none has `id`.
  virtual RequestState* remove_waiting(std::int64_t id) = 0;
  /// Moves the next batch's members into `batch_` (in order) with `try_admit`; called only when
  /// no batch is running. May leave `batch_` empty (nothing waiting).
  virtual void form_batch() = 0;
  /// Admits `request` into the current batch when the batch has fewer than `max_num_seqs`
  /// members and ceil((prompt + output) / block_size) blocks are free (reserved now). False
  /// (nothing changed) otherwise.
  bool try_admit(RequestState* request);

  SchedulerConfig config_;

 private:
  BlockManager blocks_;
  std::vector<RequestState*> batch_;
  SchedulerStats stats_;
};

/// Static batching: the next batch is the head of WAITING (FCFS) up to `max_num_seqs` members
/// and KV fit.
class StaticBatchScheduler final : public BatchScheduler {
 public:
  StaticBatchScheduler(const SchedulerConfig& config, std::int64_t num_blocks,
                       std::int64_t block_size);
  void add_request(RequestState* request) override;
  [[nodiscard]] std::size_t num_waiting() const override { return waiting_.size(); }
  /// WAITING ids in order (for tests).
  [[nodiscard]] std::vector<std::int64_t> waiting_ids() const;

 private:
  void form_batch() override;
  RequestState* remove_waiting(std::int64_t id) override;
  std::deque<RequestState*> waiting_;
};

/// Adaptive dynamic batching (docs/serving-notes.md "Adaptive dynamic batching"). Arrival times
/// come from `set_now` (the driver calls it before `add_request`); without it every request arrives
/// at 0 and only the length rule splits groups. The open group is also closed when it is taken as
/// the next batch (the engine never idles waiting for τ to pass: it has no timer event for that).
class DynamicBatchScheduler final : public BatchScheduler {
 public:
  DynamicBatchScheduler(const SchedulerConfig& config, std::int64_t num_blocks,
                        std::int64_t block_size);
  void add_request(RequestState* request) override;
  void set_now(TimeNs now_ns) override { now_ns_ = now_ns; }
  [[nodiscard]] std::size_t num_waiting() const override;
  /// Waiting groups, oldest first, each as request ids in arrival order (for tests).
  [[nodiscard]] std::vector<std::vector<std::int64_t>> group_ids() const;
  /// L̂ for the next arrival: mean length (prompt + output) of the last `length_history`
  /// arrivals; 0 before the first.
  [[nodiscard]] double predicted_length() const;

 private:
  struct Group {
    TimeNs first_arrival_ns = 0;
    std::deque<RequestState*> members;
  };
  void form_batch() override;
  /// Removes the member from its group (an emptied group is dropped; the open group stays open).
  RequestState* remove_waiting(std::int64_t id) override;

  std::deque<Group> groups_;
  bool open_ = false;  ///< the back group still accepts arrivals
  std::deque<std::int64_t> history_;
  TimeNs now_ns_ = 0;
};

}  // namespace llmbench::sim
