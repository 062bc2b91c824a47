#include "llmbench/analysis/pareto.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmbench::analysis {

std::vector<std::size_t> pareto_frontier(const std::vector<ParetoPoint>& points) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (std::isfinite(points[i].gain) && std::isfinite(points[i].cost))
      order.push_back(i);
  }
  // Highest gain first; on equal gain the cheapest first, then the earliest index (so of exact
  // duplicates the first is the one kept).
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a].gain != points[b].gain)
      return points[a].gain > points[b].gain;
    return points[a].cost < points[b].cost;
  });
  std::vector<std::size_t> frontier;
  double cheapest = std::numeric_limits<double>::infinity();
  for (const std::size_t i : order) {
    // Every point before this one has gain >= its gain: it survives only by being strictly
    // cheaper than all of them.
    if (points[i].cost < cheapest) {
      frontier.push_back(i);
      cheapest = points[i].cost;
    }
  }
  std::reverse(frontier.begin(), frontier.end());
  return frontier;
}

}  // namespace llmbench::analysis
