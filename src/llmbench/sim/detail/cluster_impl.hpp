#pragma once
/// @file
/// The inside of `ClusterSimulation` (cluster.hpp), shared by cluster.cpp (requests: arrival,
/// routing, the KV handoff, completion) and cluster_steps.cpp (units: steps and steady runs).

#include "llmbench/sim/cluster.hpp"

#include <cstdint>
#include <deque>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

namespace llmbench::sim {

/// Event kinds; the value is the tie-break at equal time (lower first), as in `Simulation`: a
/// finished step (or steady run) frees its requests before arrivals at the same instant are
/// queued, and the next step starts after both.
enum class ClusterEventKind : std::uint8_t {
  StepEnd = 0,
  KvArrival = 1,
  Arrival = 2,
  StepStart = 3
};

/// One event of the cluster's clock (32 bytes: the queue moves them).
struct ClusterEvent {
  TimeNs time_ns = 0;
  ClusterEventKind kind = ClusterEventKind::Arrival;
  /// StepEnd: the unit's generation (a cut steady run's end is stale); KvArrival: the decode
  /// engine.
  std::uint32_t tag = 0;
  std::uint64_t seq = 0;     ///< insertion order (last tie-break)
  std::int64_t target = -1;  ///< unit (steps), slot (arrivals, KV), −1 = the source's next
};
static_assert(sizeof(ClusterEvent) == 32);

/// "Later than", for `std::priority_queue` (earliest on top): by time, kind, seq.
struct ClusterEventLater {
  bool operator()(const ClusterEvent& a, const ClusterEvent& b) const noexcept {
    if (a.time_ns != b.time_ns)
      return a.time_ns > b.time_ns;
    if (a.kind != b.kind)
      return a.kind > b.kind;
    return a.seq > b.seq;
  }
};

/// Step end times of one engine, by its step number (the decode lane's numbering), for the last
/// `kSize` steps: enough for any lane run, which ends within one block of steps.
class StepRing {
 public:
  static constexpr std::int64_t kSize = std::int64_t{1} << 14;
  void push(TimeNs end_ns) {
    if (ends_.empty())
      ends_.assign(static_cast<std::size_t>(kSize), 0);
    ends_[static_cast<std::size_t>(count_ & (kSize - 1))] = end_ns;
    ++count_;
  }
  [[nodiscard]] TimeNs at(std::int64_t step) const;
  [[nodiscard]] std::int64_t count() const noexcept { return count_; }

 private:
  std::vector<TimeNs> ends_;
  std::int64_t count_ = 0;
};

/// One engine of the cluster.
struct ClusterEngine {
  std::unique_ptr<EngineCore> core;
  int group = 0;
  int unit = 0;
  PoolRole role = PoolRole::Mixed;
  TimeNs link_free_ns = 0;  ///< prefill: when its KV link is free
  bool began = false;       ///< in the unit's current step
  StepRing ring;            ///< records only
  ReplicaStats stats;
};

/// How a unit steps now.
enum class UnitState : std::uint8_t { Idle, StepQueued, InStep, Steady };

/// A stepping unit: one engine, or the ranks of a lockstep group.
struct ClusterUnit {
  int group = 0;
  std::vector<std::size_t> engines;
  UnitState state = UnitState::Idle;
  std::uint32_t gen = 0;
  // The steady run: `run_steps` steps from `run_start_ns`. Step j (0-based) lasts
  // run_p0_ns + j·run_slope_ns when `run_affine` (the end of step j is the cumulative sum rounded
  // once), else run_ends[j] − run_ends[j − 1] (each step rounded, as `price_step` rounds).
  TimeNs run_start_ns = 0;
  std::int64_t run_steps = 0;
  bool run_affine = false;
  double run_p0_ns = 0;
  double run_slope_ns = 0;
  std::vector<TimeNs> run_ends;      ///< not affine: end of each step, relative to the start
  std::vector<SteadyRun> run_ranks;  ///< per engine, as the run began (steps 0 = idle rank)
  std::vector<BatchSums> sums;       ///< scratch, per engine
  std::int64_t steps = 0;
  std::int64_t steady_steps = 0;
  double busy_s = 0;
};

/// A request in the cluster, from its arrival to its end.
struct ClusterSlot {
  ClusterRequest request;
  std::int64_t index = 0;  ///< order of arrival at the router (the record's id)
  TimeNs slot_ns = -1;     ///< admitted past the concurrency cap
  TimeNs first_token_ns = -1;
  TimeNs prefill_done_ns = -1;
  TimeNs kv_arrival_ns = -1;
  int version = 0;
  std::int64_t engine = -1;  ///< where it is (or goes)
  std::int64_t cached_tokens = -1;
  bool sampled = false;
  std::uint64_t mtp_state = 0;   ///< records: the acceptance draws, replayed per step
  std::int64_t tokens_left = 0;  ///< records: decode tokens still to hand out as chunks
  std::vector<metrics::Chunk> chunks;
};

struct ClusterSimulation::Impl {
  Impl(const ClusterSpec& spec, std::vector<ResolvedGroup> groups, ClusterOptions options);

  // ---- cluster.cpp: requests ----
  ClusterResult run(RequestSource& source);
  void push(ClusterEvent e);
  /// The router's view of the engines at `now` (prefix lookups bring steady runs up to now).
  RouteTargets route_targets(TimeNs now);
  void on_arrival(const ClusterEvent& e);
  void admit(std::int64_t slot, TimeNs now);
  void route_front(std::int64_t slot, TimeNs now);
  void on_kv_arrival(const ClusterEvent& e);
  void prefill_done(std::int64_t slot, std::size_t engine, TimeNs now);
  void complete(std::int64_t slot, TimeNs now);
  void reject(std::int64_t slot, TimeNs now);
  std::int64_t new_slot(ClusterRequest&& request);
  void free_slot(std::int64_t slot);
  /// Engine outputs (1 + verification steps) of a request of `n` tokens on `group`.
  std::int64_t engine_outputs(int group, std::int64_t n, std::uint64_t seed) const;
  void emit_chunk(ClusterSlot& s, TimeNs time_ns, bool first);
  void finish_result(ClusterResult& out);

  // ---- cluster_steps.cpp: units ----
  void wake(int unit, TimeNs now);
  void on_step_start(const ClusterEvent& e);
  void on_step_end(const ClusterEvent& e);
  void after_step(int unit, TimeNs now);
  void start_steady(int unit, std::int64_t steps, TimeNs now);
  void cut_steady(int unit, TimeNs now);
  /// Applies the steady steps of `unit` that start before `now`, keeping the rest of the run.
  void sync_steady(int unit, TimeNs now);
  /// The steady steps of `unit`'s run that start before `now` (and their end).
  [[nodiscard]] std::pair<std::int64_t, TimeNs> steps_before(const ClusterUnit& u,
                                                             TimeNs now) const;
  /// ns from the run's start to the end of its first `j` steps.
  [[nodiscard]] static TimeNs run_elapsed(const ClusterUnit& u, std::int64_t j) noexcept;
  void apply_steady(int unit, std::int64_t steps);
  [[nodiscard]] double price_steady_step(ClusterUnit& u, std::int64_t j) const;
  void add_itl(int group, double step_ms, std::int64_t decodes);

  ClusterSpec spec_;
  std::vector<ResolvedGroup> groups_;
  ClusterOptions options_;
  Router router_;
  std::vector<ClusterEngine> engines_;
  std::vector<std::int64_t> assigned_;         ///< per engine: requests routed, not finished
  std::vector<std::int64_t> assigned_tokens_;  ///< per engine: Σ prompt + output of those
  std::vector<ClusterUnit> units_;
  /// Candidate engines per (pool role, version): [role][version].
  std::array<std::vector<std::vector<std::size_t>>, 3> candidates_;
  bool has_prefill_ = false;
  bool has_decode_ = false;
  bool has_mixed_ = false;
  std::int64_t cache_block_size_ = 0;  ///< the prefix-caching pools' block size (0 = none caches)
  std::vector<int> group_version_;     ///< per group: version index, −1 = every version
  /// Per group of single engines: the step time's growth per token of decode context, s
  /// (learnt from a steady run; −1 until then).
  std::vector<double> group_slope_;

  std::priority_queue<ClusterEvent, std::vector<ClusterEvent>, ClusterEventLater> queue_;
  std::uint64_t seq_ = 0;
  RequestSource* source_ = nullptr;
  ClusterRequest source_next_;
  bool source_pending_ = false;
  std::vector<ClusterSlot> slots_;
  std::vector<std::int64_t> free_slots_;
  std::deque<std::int64_t> blocked_;
  std::int64_t in_flight_ = 0;
  std::int64_t arrived_ = 0;
  ClusterResult result_;
};

}  // namespace llmbench::sim
