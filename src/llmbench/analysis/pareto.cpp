#include "llmbench/analysis/pareto.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace llmbench::analysis {

std::vector<std::size_t> pareto_front(const std::vector<std::pair<double, double>>& points) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (std::isfinite(points[i].first) && std::isfinite(points[i].second))
      order.push_back(i);
  }
  // By x descending, then y descending, then index: a sweep from the right keeps a point when
  // its y beats every y seen so far (every point seen has x at least as large).
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a].first != points[b].first)
      return points[a].first > points[b].first;
    return points[a].second > points[b].second;
  });
  std::vector<std::size_t> front;
  double best_y = -std::numeric_limits<double>::infinity();
  for (const std::size_t i : order) {
    if (points[i].second > best_y) {
      front.push_back(i);
      best_y = points[i].second;
    }
  }
  std::reverse(front.begin(), front.end());
  return front;
}

}  // namespace llmbench::analysis
