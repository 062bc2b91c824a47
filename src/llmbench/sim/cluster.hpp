#pragma once
/// @file
/// A cluster of simulated engines on one virtual clock (docs/simulator.md "Cluster"): replica
/// groups (each engine an `EngineCore`; DP-attention ranks stepping in lockstep as one unit), a
/// router with its policies and version buckets, prefill and decode pools joined by a KV link,
/// MTP, conversations whose turns arrive when the previous turn ends, and results summarised
/// while the run goes (`cluster_stats.hpp`), so a day of ten million requests runs in bounded
/// memory.
///
/// Speed: while a unit's engines run only their decode lanes (nothing waiting, no block needed,
/// no request finishing), its steps change nothing but the lanes' counters, so the unit takes
/// them as one "steady run" (`EngineCore::skip_steady_steps`): one event for as many steps as
/// come before the next wake-up, step times priced in a loop (by two evaluations and a line when
/// the step time is affine in the growing context, checked at the run's last step). A request
/// routed to the unit during the run cuts it at the first step that starts at or after its
/// arrival, as the step-by-step run would take it in. The run is the same as step by step, step
/// times included up to their rounding to ns (test `Cluster.SteadyRunsGiveTheStepByStepRun`).

#include "llmbench/core/clock.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/sim/cluster_spec.hpp"
#include "llmbench/sim/cluster_stats.hpp"
#include "llmbench/sim/cluster_workload.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/sim/router.hpp"

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::sim {

/// Which per-request records a cluster run hands out (`simulate --records`).
enum class RecordsMode { None, Sample, All };

/// The one table of records-mode names.
inline constexpr auto kRecordsModes = make_name_table<RecordsMode>({
    {RecordsMode::None, "none"},
    {RecordsMode::Sample, "sample"},
    {RecordsMode::All, "all"},
});

/// Parses a records-mode name; throws `Exception` naming `--records` and the valid names.
RecordsMode parse_records_mode(std::string_view name);

/// How to run the cluster.
struct ClusterOptions {
  std::int64_t max_concurrency = -1;  ///< requests in flight at most (closed loop); ≤ 0 = none
  bool closed_loop = false;           ///< records' `scheduled_ns` = the slot time, as `run`'s
  RecordsMode records = RecordsMode::None;
  std::int64_t sample_every = 100;  ///< `Sample`: one request in this many (by its index's hash)
  /// Receives each record handed out, when its request ends (in completion order).
  std::function<void(metrics::RequestRecord&&)> record_sink;
  std::uint64_t seed = 0;  ///< MTP acceptance draws
  /// Turn off steady runs (every step formed one by one): the reference they are tested against.
  bool steady_runs = true;
};

/// Everything a cluster run reports.
struct ClusterResult {
  LatencyStats overall;
  std::vector<VersionStats> versions;  ///< one per configured version (empty without)
  PoolTimes pools;                     ///< disaggregated runs
  std::vector<ReplicaStats> replicas;  ///< one per engine
  std::int64_t arrived = 0;            ///< requests that reached the router
  std::int64_t rejected = 0;           ///< could never fit the KV cache of their replica
  std::int64_t unit_steps = 0;         ///< steps of the stepping units (lockstep: one per unit)
  std::int64_t steady_steps = 0;       ///< of them, taken inside steady runs
  std::int64_t events = 0;
  std::int64_t kv_transfers = 0;
  double kv_bytes = 0;
  TimeNs end_ns = 0;
  int units = 0;
  int engines = 0;
};

/// The cluster on a virtual clock. Single-threaded; runs once.
class ClusterSimulation {
 public:
  /// `groups` from `resolve_cluster(spec, …)`.
  ClusterSimulation(const ClusterSpec& spec, std::vector<ResolvedGroup> groups,
                    ClusterOptions options);
  ClusterSimulation(const ClusterSimulation&) = delete;
  ClusterSimulation& operator=(const ClusterSimulation&) = delete;
  ~ClusterSimulation();
  /// Runs every request of `source` (and its follow-up turns) to completion.
  ClusterResult run(RequestSource& source);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmbench::sim
