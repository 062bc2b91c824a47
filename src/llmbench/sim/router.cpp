#include "llmbench/sim/router.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmbench::sim {

std::uint64_t model_id_hash(std::string_view model_id) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a-64
  for (const char c : model_id) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::uint64_t fingerprint(std::uint64_t model_hash, std::uint64_t input_hash) noexcept {
  return splitmix64(model_hash ^ splitmix64(input_hash));
}

Router::Router(const ClusterSpec& spec, std::string_view model_id)
    : spec_(spec.router), model_hash_(model_id_hash(model_id)), buckets_(spec.buckets) {
  double cumulative = 0;
  for (const auto& v : spec.versions) {
    cumulative += v.share;
    bucket_end_.push_back(
        static_cast<std::int64_t>(std::floor(static_cast<double>(buckets_) * cumulative + 1e-9)));
  }
  if (!bucket_end_.empty())
    bucket_end_.back() = buckets_;  // rounding never leaves a bucket without a version
}

std::int64_t Router::bucket_of(std::uint64_t input_hash) const noexcept {
  return static_cast<std::int64_t>(fingerprint(model_hash_, input_hash) %
                                   static_cast<std::uint64_t>(buckets_));
}

int Router::version_of(std::uint64_t input_hash) const noexcept {
  if (bucket_end_.empty())
    return 0;
  const std::int64_t b = bucket_of(input_hash);
  const auto it = std::upper_bound(bucket_end_.begin(), bucket_end_.end(), b);
  return static_cast<int>(it - bucket_end_.begin());
}

std::size_t Router::least_requests(std::span<const std::size_t> candidates,
                                   const RouteTargets& targets) const {
  std::size_t best = candidates.front();
  std::int64_t best_load = std::numeric_limits<std::int64_t>::max();
  for (const std::size_t e : candidates) {
    const std::int64_t load = targets.requests[e];
    if (load < best_load) {
      best = e;
      best_load = load;
    }
  }
  return best;
}

std::size_t Router::pick(RoutePolicy policy, std::size_t set,
                         std::span<const std::size_t> candidates, const RouteTargets& targets,
                         const RouteQuery& query) {
  LLMBENCH_ASSERT(!candidates.empty(), "no replica to route to");
  switch (policy) {
    case RoutePolicy::RoundRobin: {
      std::uint64_t& next = round_robin_[set];
      return candidates[static_cast<std::size_t>(next++ % candidates.size())];
    }
    case RoutePolicy::LeastRequests:
      return least_requests(candidates, targets);
    case RoutePolicy::LeastTokens: {
      std::size_t best = candidates.front();
      std::int64_t best_tokens = std::numeric_limits<std::int64_t>::max();
      for (const std::size_t e : candidates) {
        const std::int64_t t = targets.tokens[e];
        if (t < best_tokens) {
          best = e;
          best_tokens = t;
        }
      }
      return best;
    }
    case RoutePolicy::PrefixAware: {
      std::int64_t min_load = std::numeric_limits<std::int64_t>::max();
      for (const std::size_t e : candidates) min_load = std::min(min_load, targets.requests[e]);
      std::size_t best = candidates.front();
      std::int64_t best_cached = 0;
      std::int64_t best_load = std::numeric_limits<std::int64_t>::max();
      const bool has_prefix = query.hashes != nullptr && !query.hashes->empty();
      for (const std::size_t e : candidates) {
        const std::int64_t load = targets.requests[e];
        if (load > min_load + spec_.load_cap)
          continue;
        const std::int64_t cached =
            has_prefix ? targets.cached_tokens(e, *query.hashes, query.prompt_len) : 0;
        if (cached > best_cached || (cached == best_cached && load < best_load)) {
          best = e;
          best_cached = cached;
          best_load = load;
        }
      }
      return best;
    }
    case RoutePolicy::SessionAffinity: {
      if (query.conversation < 0)
        return least_requests(candidates, targets);
      const auto it = sessions_.find(query.conversation);
      if (it != sessions_.end() &&
          std::find(candidates.begin(), candidates.end(), it->second) != candidates.end())
        return it->second;
      const std::size_t e = least_requests(candidates, targets);
      sessions_[query.conversation] = e;
      return e;
    }
  }
  return candidates.front();
}

}  // namespace llmbench::sim
