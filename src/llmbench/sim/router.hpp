#pragma once
/// @file
/// The cluster's router (docs/simulator.md "Cluster", routing): which replica a request goes to
/// under a `RoutePolicy`, and which version it belongs to by its fingerprint (model id + a hash of
/// its input → bucket → version, the gray routing of the canary a new engine or tokenizer gets).

#include "llmbench/sim/cluster_spec.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace llmbench::sim {

/// What the router knows of the replicas, by engine index: requests assigned and not finished
/// (running, waiting, or on their way to it), Σ (prompt + output tokens) of those, and how many
/// prompt tokens of a request (block hashes, prompt length) an engine holds cached.
struct RouteTargets {
  std::span<const std::int64_t> requests;
  std::span<const std::int64_t> tokens;
  std::function<std::int64_t(std::size_t engine, const std::vector<std::uint64_t>& hashes,
                             std::int64_t prompt_len)>
      cached_tokens;
};

/// A request as the router sees it.
struct RouteQuery {
  std::int64_t conversation = -1;
  const std::vector<std::uint64_t>* hashes = nullptr;  ///< its prompt's block hashes (may be null)
  std::int64_t prompt_len = 0;
};

/// The fingerprint of a request: a 64-bit hash of the model id and the input's hash (gray routing
/// as docs/simulator.md "Cluster" describes it keys on model_id + the first 8 bytes of SHA-256
/// of the input; a 64-bit SplitMix64 chain stands in for SHA-256 here, its entropy is the same
/// 2^64).
std::uint64_t fingerprint(std::uint64_t model_hash, std::uint64_t input_hash) noexcept;
/// FNV-1a-64 of a model id, the `model_hash` of `fingerprint`.
std::uint64_t model_id_hash(std::string_view model_id) noexcept;

/// The router: versions by fingerprint buckets, replicas by policy. Not thread-safe.
class Router {
 public:
  Router(const ClusterSpec& spec, std::string_view model_id);
  /// The version of a request with this input hash: bucket = fingerprint % buckets, version i
  /// owns buckets [floor(B·c_{i−1}), floor(B·c_i)) for the cumulative shares c. 0 without
  /// versions.
  [[nodiscard]] int version_of(std::uint64_t input_hash) const noexcept;
  /// The bucket of a request with this input hash.
  [[nodiscard]] std::int64_t bucket_of(std::uint64_t input_hash) const noexcept;
  /// Picks one of `candidates` (engine indices, in a fixed order; non-empty) for `query` under
  /// `policy`; `set` names the candidate list for round robin's counter. Ties go to the earlier
  /// candidate. Prefix-aware: the longest cached prefix among candidates with at most
  /// `load_cap` more requests than the least loaded, ties to fewer requests; least requests
  /// when none holds a prefix. Session affinity: a conversation's later turns go where its
  /// first went (least requests for the first, and when that replica is not a candidate).
  std::size_t pick(RoutePolicy policy, std::size_t set, std::span<const std::size_t> candidates,
                   const RouteTargets& targets, const RouteQuery& query);

 private:
  std::size_t least_requests(std::span<const std::size_t> candidates,
                             const RouteTargets& targets) const;
  RouterSpec spec_;
  std::uint64_t model_hash_ = 0;
  std::int64_t buckets_ = 1;
  std::vector<std::int64_t> bucket_end_;  ///< per version: its last bucket + 1
  std::unordered_map<std::size_t, std::uint64_t> round_robin_;
  std::unordered_map<std::int64_t, std::size_t> sessions_;
};

}  // namespace llmbench::sim
