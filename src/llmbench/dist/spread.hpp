#pragma once
/// @file
/// One benchmark spread over the ranks of an MPI job (docs/distributed.md): each rank's share
/// of the plan, the digest that proves every rank drew the same schedule, what a rank hands
/// rank 0 after its load (`RankPart`), the merge of the parts onto rank 0's clock and the
/// per-rank figures written beside the merged ones (`SpreadFacts`).

#include "llmbench/dist/world.hpp"
#include "llmbench/loadgen/loadgen.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/workload/dataset.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::dist {

/// Ping-pong rounds per peer for each clock offset (the least round trip of them is kept).
inline constexpr int kOffsetRounds = 32;

/// How many of `count` plan indices are rank `rank`'s of `ranks` (i mod ranks == rank).
[[nodiscard]] std::int64_t quota(std::int64_t count, int rank, int ranks) noexcept;

/// Rank `rank`'s part of a concurrency cap `cap` (≤ 0: none, unchanged): `cap` / `ranks`, the
/// first `cap` mod `ranks` ranks one more. Throws `Exception` naming `--max-concurrency` when
/// the cap is below the number of ranks (a rank would have no slot).
[[nodiscard]] std::int64_t cap_share(std::int64_t cap, int rank, int ranks);

/// FNV-1a 64 of everything the ranks' schedules are made of: the load's shape (counts, rate,
/// burstiness, seed, ramp, duration), the samples (prompt, token ids, messages, lengths, own
/// arrival times, turns) and, for a counted open loop at a rate, the arrival times themselves
/// (`workload::arrival_times`). Equal digests: equal schedules.
[[nodiscard]] std::uint64_t schedule_digest(const std::vector<workload::Sample>& samples,
                                            const loadgen::LoadOptions& load);

/// What a rank hands rank 0 after its load: its records (its own clock, run-relative) and the
/// facts only it knows.
struct RankPart {
  int rank = 0;
  std::string host;
  TimeNs run_start_steady_ns = 0;  ///< this rank's steady clock at its record time 0
  std::uint64_t connections_opened = 0;
  std::int64_t ports_in_use_peak = 0;                    ///< its connections open at once, at most
  std::map<std::string, std::int64_t> connect_errors{};  ///< its failed connects by cause
  std::vector<float> loop_lag_ms{};                      ///< its workers' event-loop lag samples
  std::vector<metrics::RequestRecord> records{};
};

/// `part` as text for `World::gather`: one JSON line of its facts, then its records as JSONL.
[[nodiscard]] std::string encode_part(const RankPart& part);
/// The part `encode_part` wrote; throws `Exception` naming the rank and the line on bad text.
[[nodiscard]] RankPart decode_part(std::string_view text);

/// One rank's figures beside the merged ones (the results' `distributed.ranks`).
struct RankFacts {
  int rank = 0;
  std::string host;
  std::int64_t quota = 0;      ///< measured requests (conversation starts) dealt to it
  std::int64_t requests = 0;   ///< measured requests it sent (later turns included)
  std::int64_t completed = 0;  ///< of them, completed
  std::int64_t failed = 0;     ///< failed (cancelled not counted)
  std::int64_t cancelled = 0;
  std::int64_t connect_errors = 0;  ///< failed with `ErrorKind::Connect`
  std::int64_t output_tokens = 0;   ///< of its completed requests
  double request_throughput = 0;    ///< completed / the merged duration, req/s
  double output_throughput = 0;     ///< output tokens / the merged duration, tok/s
  double lateness_mean_ms = 0;      ///< sent − slot of its measured requests
  double lateness_max_ms = 0;
  double loop_lag_p99_ms = 0;  ///< its event loops' lag
  std::uint64_t connections_opened = 0;
  std::int64_t ports_in_use_peak = 0;  ///< the local ports its connections held at most
  /// Its failed connect attempts by cause (an errno name; `http::failure_cause`); a request
  /// may count more than one (a retry).
  std::map<std::string, std::int64_t> connect_errors_by_cause{};
  ClockOffset before;         ///< its clock against rank 0's before the load
  ClockOffset after;          ///< and after it
  TimeNs error_bound_ns = 0;  ///< max(bound before, bound after) + |drift|: instants mapped
                              ///< with `before` are within this of rank 0's clock
};

/// The spread of a run (the results' `distributed` section).
struct SpreadFacts {
  int ranks = 1;
  std::uint64_t schedule_digest = 0;
  TimeNs max_error_bound_ns = 0;  ///< the largest `RankFacts::error_bound_ns`
  std::vector<RankFacts> per_rank;
  std::vector<std::string> warnings;  ///< a clock bound above the window length, a failed rank
};

/// Merges the ranks' parts onto rank 0's clock: each record's instants (scheduled, slot, sent,
/// headers, done, chunks) move from its rank's run clock to one run clock of rank 0's steady
/// clock, zero at the earliest rank's start (`*run_start_steady_ns`, rank 0's clock), with the
/// offsets measured before the load; sorted by `done_ns`, then rank, then id.
[[nodiscard]] std::vector<metrics::RequestRecord> merge_parts(
    std::vector<RankPart>& parts, const std::vector<ClockOffset>& before,
    TimeNs* run_start_steady_ns);

/// The per-rank figures of the merged `records` (on rank 0's clock), with each rank's quota of
/// `planned` measured requests, the offsets before and after the load and the run's merged
/// duration (s); a warning when a clock bound exceeds `window_s`.
[[nodiscard]] SpreadFacts spread_facts(const std::vector<metrics::RequestRecord>& records,
                                       const std::vector<RankPart>& parts, std::int64_t planned,
                                       const std::vector<ClockOffset>& before,
                                       const std::vector<ClockOffset>& after, double duration_s,
                                       double window_s);

/// The results' `distributed` section.
[[nodiscard]] nlohmann::json to_json(const SpreadFacts& facts);

}  // namespace llmbench::dist
