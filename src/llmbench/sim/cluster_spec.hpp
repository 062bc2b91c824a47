#pragma once
/// @file
/// The cluster a `simulate --cluster FILE` run serves with (docs/simulator.md "Cluster"): replica
/// groups (each with its engine, parallelism, count and role: mixed, prefill or decode), the
/// router and its policy, the version buckets of fingerprint routing and the KV link between the
/// prefill and decode pools. `load_cluster_spec` reads the JSON file; `resolve_cluster` turns it
/// into engine specs and step-time models, once per group.

#include "llmbench/core/name_table.hpp"
#include "llmbench/sim/engine_spec.hpp"
#include "llmbench/sim/lockstep.hpp"
#include "llmbench/sim/speculative.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::sim {

/// What a replica group does: whole requests (`Mixed`), prompts only, handing their KV to the
/// decode pool (`Prefill`), or the decoding of prompts computed by the prefill pool (`Decode`).
enum class PoolRole { Mixed, Prefill, Decode };

/// Routing policies (docs/simulator.md "Cluster", routing).
enum class RoutePolicy {
  RoundRobin,       ///< each replica in turn
  LeastRequests,    ///< fewest requests running + waiting (vLLM's DP coordinator)
  LeastTokens,      ///< fewest outstanding tokens (prompt + output of its live requests)
  PrefixAware,      ///< the longest cached prefix among replicas within `load_cap` of the least
  SessionAffinity,  ///< a conversation stays on the replica of its first turn
};

/// The one table of pool role names.
inline constexpr auto kPoolRoles = make_name_table<PoolRole>({
    {PoolRole::Mixed, "mixed"},
    {PoolRole::Prefill, "prefill"},
    {PoolRole::Decode, "decode"},
});

/// The one table of routing policy names.
inline constexpr auto kRoutePolicies = make_name_table<RoutePolicy>({
    {RoutePolicy::RoundRobin, "round_robin"},
    {RoutePolicy::LeastRequests, "least_requests"},
    {RoutePolicy::LeastTokens, "least_tokens"},
    {RoutePolicy::PrefixAware, "prefix_aware"},
    {RoutePolicy::SessionAffinity, "session_affinity"},
});

/// The name of `role` / `policy` in its table.
std::string_view pool_role_name(PoolRole role) noexcept;
std::string_view route_policy_name(RoutePolicy policy) noexcept;
/// Parses a policy name; throws `Exception` naming `source` and the valid names.
RoutePolicy parse_route_policy(std::string_view name, const std::string& source);

/// One group of identical replicas.
struct ReplicaGroupSpec {
  std::string name;
  PoolRole role = PoolRole::Mixed;
  int count = 1;  ///< replicas (units) of the group
  /// The engine of one replica, vLLM `EngineArgs` names (engine_spec.hpp). With `lockstep`, `dp`
  /// is the number of attention ranks of the unit (each an engine with its own KV cache);
  /// without it, `dp` engines that step on their own.
  EngineOverrides engine;
  /// Extra routed experts for load balancing (EPLB's redundant experts, e.g. 32 for 288 in
  /// all): they take memory on the GPUs and let EP sizes divide 256 + redundant.
  int redundant_experts = 0;
  bool lockstep = false;  ///< DP attention in lockstep with wide EP (`wide_ep` applies)
  WideEpConfig wide_ep;
  MtpConfig mtp;
  std::string version;  ///< the version it serves (`VersionSpec::name`); empty = every version
};

/// The router in front of the replicas.
struct RouterSpec {
  RoutePolicy policy = RoutePolicy::LeastRequests;
  /// Prefix-aware: only replicas whose load (requests running + waiting) is within `load_cap`
  /// of the least loaded are candidates (SGLang's router falls back to the shortest queue past an
  /// absolute imbalance threshold, 32 by default).
  std::int64_t load_cap = 32;
  /// The policy that picks the decode replica of a prefilled request.
  RoutePolicy decode_policy = RoutePolicy::LeastRequests;
};

/// A version with its traffic share (fingerprint gray routing).
struct VersionSpec {
  std::string name;
  double share = 0;  ///< fraction of requests, the shares summing to 1
};

/// The KV transfer from a prefill to a decode replica: latency + bytes / bandwidth, transfers of
/// one prefill replica queued on its link.
struct KvTransferSpec {
  double link_gb_s = 50;  ///< per prefill replica (one 400 Gb/s NIC per GPU: 50 GB/s)
  double latency_us = 20;
  /// Bytes per prompt token moved; 0 = the model's KV bytes per token (MLA: its compressed
  /// latent, 576 elements × layers × KV dtype bytes).
  double bytes_per_token = 0;
};

/// A whole cluster.
struct ClusterSpec {
  std::string source;    ///< the file it came from (for messages)
  std::string model_id;  ///< the model id of fingerprints; default: the first group's model
  std::vector<ReplicaGroupSpec> groups;
  RouterSpec router;
  std::vector<VersionSpec> versions;  ///< empty = one version, no buckets
  std::int64_t buckets = 10000;       ///< fingerprint % buckets → bucket → version
  KvTransferSpec kv_transfer;
};

/// Parses the cluster JSON text of `path` (docs/simulator.md "Cluster" lists the fields).
/// Unknown fields, bad values and inconsistent groups (a prefill pool without a decode pool, a
/// version without a replica in a pool) are `Exception`s naming the file and the field path
/// (`groups[1].engine.tp`); malformed JSON names the byte offset.
ClusterSpec parse_cluster_spec(std::string_view text, const std::string& path);
/// Reads and parses `path`.
ClusterSpec load_cluster_spec(const std::string& path);

/// One group resolved: its engine spec (per engine: one attention rank of a lockstep unit), the
/// step-time model of one engine (with MTP when on) and, for lockstep units, the pricer.
struct ResolvedGroup {
  ReplicaGroupSpec spec;
  EngineSpec engine;
  std::shared_ptr<const ExecTimeModel> model;
  std::shared_ptr<const LockstepPricer> lockstep;  ///< null unless `spec.lockstep`
  int engines_per_unit = 1;                        ///< `dp` with lockstep, else 1
  int units = 1;  ///< stepping units: `count` with lockstep, else count × dp
  /// Expected tokens per decode step (1 without MTP).
  [[nodiscard]] double tokens_per_step() const noexcept {
    return expected_tokens_per_step(spec.mtp);
  }
  /// GPUs of one unit (tp × engines_per_unit for lockstep; tp for a plain engine).
  [[nodiscard]] int gpus_per_unit() const noexcept { return engine.memory.tp * engines_per_unit; }
};

/// Resolves every group against the profiles in `data_dir` (`load_engine_spec`, with the model's
/// routed experts raised by `redundant_experts`); checks the scheduler kinds (`vllm-v1` for
/// prefill and decode pools) and that every pool that caches prefixes uses one block size.
/// Throws `Exception` naming the group.
std::vector<ResolvedGroup> resolve_cluster(const ClusterSpec& spec, const std::string& data_dir);

}  // namespace llmbench::sim
