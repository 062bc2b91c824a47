#pragma once
/// @file
/// What a cluster simulation reports, summarised while it runs (docs/simulator.md "Cluster",
/// results): latency distributions in log-bucketed histograms (exact count, mean, standard
/// deviation, minimum and maximum; percentiles within 1/128 of their value), throughput counters,
/// and per version, per pool and per replica tables, so that ten million requests need no list
/// of records.

#include "llmbench/core/clock.hpp"
#include "llmbench/metrics/statistics.hpp"
#include "llmbench/metrics/summary.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace llmbench::sim {

/// A distribution of non-negative values: counts in buckets of 1/128 of an octave (the top 7
/// mantissa bits of the double), plus exact sums. O(1) per value, 70 KiB.
class StreamingHistogram {
 public:
  StreamingHistogram();
  /// Adds `value` (≥ 0; NaN is ignored) with weight `count` > 0 (a value seen `count` times).
  void add(double value, double count = 1.0) noexcept;
  /// Adds the `n` values first + i·step (i = 0 … n − 1), each with weight `count`: the same
  /// sums and counts as `n` calls of `add`, in O(buckets spanned).
  void add_linear(double first, double step, std::int64_t n, double count) noexcept;
  /// Adds every value of `other`.
  void merge(const StreamingHistogram& other) noexcept;
  [[nodiscard]] double count() const noexcept { return count_; }
  [[nodiscard]] double mean() const noexcept;
  /// Summary at percentiles `qs` (numpy's linear interpolation between order statistics, each
  /// order statistic taken as the middle of its bucket, clamped to [min, max]); mean and
  /// population standard deviation exact up to summation order.
  [[nodiscard]] metrics::Stats stats(const std::vector<double>& qs) const;
  /// The value at percentile `q` in [0, 100] (as in `stats`); NaN when empty.
  [[nodiscard]] double percentile(double q) const;

 private:
  [[nodiscard]] double value_at_rank(double rank) const;
  std::vector<double> buckets_;
  double zeros_ = 0;  ///< values that are exactly 0
  double count_ = 0;
  double sum_ = 0;
  double sum_sq_ = 0;
  double min_ = 0;
  double max_ = 0;
};

/// Latency and throughput of a set of requests (the whole cluster, one version).
struct LatencyStats {
  std::int64_t completed = 0;
  std::int64_t failed = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cached_tokens = 0;  ///< prompt tokens found in a prefix cache
  TimeNs first_arrival_ns = -1;
  TimeNs last_done_ns = -1;
  StreamingHistogram ttft_ms, tpot_ms, itl_ms, e2el_ms;
  /// Adds one completed request.
  void add_request(TimeNs arrival_ns, TimeNs first_token_ns, TimeNs done_ns,
                   std::int64_t input_tokens, std::int64_t output_tokens,
                   std::int64_t cached_tokens);
  /// first arrival → last completion, s.
  [[nodiscard]] double duration_s() const noexcept;
};

/// The summary `report::print_console` and `report::results_json` take, from streamed stats:
/// counts, throughputs and the TTFT, TPOT, ITL and E2E distributions (the other metrics of a
/// real run stay empty: there is no client).
metrics::Summary to_summary(const LatencyStats& stats, const std::vector<double>& percentiles);

/// Where the time of a disaggregated request went, by pool.
struct PoolTimes {
  StreamingHistogram prefill_ms;   ///< arrival → prompt computed on the prefill pool
  StreamingHistogram transfer_ms;  ///< prompt computed → its KV on the decode replica
  StreamingHistogram admit_ms;     ///< KV arrived → taken into a decode step (first token)
};

/// One engine's counters.
struct ReplicaStats {
  std::string group;
  int role = 0;               ///< `PoolRole` value
  int unit = 0;               ///< its stepping unit
  std::int64_t requests = 0;  ///< requests it finished (prefill: prompts it computed)
  std::int64_t prefix_queries = 0;
  std::int64_t prefix_hits = 0;
  std::int64_t preemptions = 0;
  std::int64_t steps = 0;
  double busy_s = 0;
  std::int64_t input_tokens = 0;   ///< prompt tokens of the requests it computed
  std::int64_t output_tokens = 0;  ///< tokens it decoded
  [[nodiscard]] double hit_rate() const noexcept {
    return prefix_queries > 0
               ? static_cast<double>(prefix_hits) / static_cast<double>(prefix_queries)
               : 0.0;
  }
};

/// One version's share and results.
struct VersionStats {
  std::string name;
  double share = 0;           ///< configured
  std::int64_t requests = 0;  ///< routed to it
  LatencyStats latency;
};

}  // namespace llmbench::sim
