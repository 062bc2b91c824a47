#pragma once
/// @file
/// The Pareto frontier of a set of points that maximize two quantities
/// (docs/sweep.md "Pareto frontier"): throughput per GPU against interactivity (output tokens/s
/// per user), the trade-off the InferenceMAX charts of SemiAnalysis plot for every
/// configuration. A point is on the frontier when no other point is at least as good on both
/// and better on one.

#include <cstddef>
#include <utility>
#include <vector>

namespace llmbench::analysis {

/// The indices of the points (x, y) on the frontier that maximizes both, ordered by x
/// ascending (so y descends along it). Points with a non-finite coordinate are left out; of
/// equal points the first is kept. O(n log n).
std::vector<std::size_t> pareto_front(const std::vector<std::pair<double, double>>& points);

}  // namespace llmbench::analysis
