#pragma once

/// @file
/// Output token times kept as runs over shared time grids: what the simulator knows (a request
/// emits one token at the end of each engine step it decodes in), held in O(runs) memory instead
/// of one 24-byte `Chunk` per token. `expand_token_runs` writes the chunks when per-request
/// records are wanted; `summarize(records, runs, options)` gives the same `Summary` without them.

#include "llmbench/core/clock.hpp"
#include "llmbench/metrics/record.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llmbench::metrics {

/// Token times of many requests. Run r stands for `r.count` chunks, each one answer token with no
/// bytes, at times `grids[r.grid][r.first]` … `grids[r.grid][r.first + r.count − 1]`.
struct TokenRuns {
  /// Consecutive instants of one grid at which one request received one token each.
  struct Run {
    std::size_t request = 0;  ///< index of the request's record
    std::uint32_t grid = 0;   ///< index into `grids`
    std::int64_t first = 0;   ///< index of the first instant in the grid (≥ 0)
    std::int64_t count = 0;   ///< instants in the run (≥ 1)
  };
  /// Time grids (ns since run start), each non-decreasing: the simulator's per-replica step ends.
  std::vector<std::vector<TimeNs>> grids;
  /// The runs, requests in any order; the runs of one request in time order (they are appended
  /// to its chunks in this order).
  std::vector<Run> runs;
};

/// Checks that every run points into `num_records` records and into its grid, with count ≥ 1;
/// throws `Exception` naming the first bad run (its index and fields) otherwise.
void check_token_runs(const TokenRuns& runs, std::size_t num_records);

/// Appends every run's tokens to `records[run.request].chunks` (one chunk of one answer token and
/// no bytes per token, run order), reserving each record's chunks once. Throws `Exception` naming
/// the run when a run points outside `records` or its grid, or has count < 1.
void expand_token_runs(const TokenRuns& runs, std::vector<RequestRecord>& records);

}  // namespace llmbench::metrics
