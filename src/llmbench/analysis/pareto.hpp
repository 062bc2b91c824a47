#pragma once
/// @file
/// The Pareto frontier of a set of measured points (a sweep's throughput against latency, as
/// vLLM's `bench sweep` plots it): the points no other point beats on both axes at once.

#include <cstddef>
#include <vector>

namespace llmbench::analysis {

/// One candidate: `gain` is to be maximized (e.g. output tok/s), `cost` minimized (e.g. p99
/// TTFT in ms).
struct ParetoPoint {
  double gain = 0;
  double cost = 0;
};

/// Indices into `points` of the frontier, sorted by ascending `gain`: a point is on it when no
/// other point has `gain` ≥ and `cost` ≤ its own with one of the two strictly better. Of exact
/// duplicates the first is kept. Points with a non-finite gain or cost are never on it.
/// O(n log n): sort by gain descending (cost ascending on ties) and keep each point cheaper
/// than every point before it.
std::vector<std::size_t> pareto_frontier(const std::vector<ParetoPoint>& points);

}  // namespace llmbench::analysis
