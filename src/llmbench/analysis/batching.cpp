#include "llmbench/analysis/batching.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace llmbench::analysis {

BatchingVerdict batching_failure(const std::vector<Window>& windows,
                                 const std::vector<EngineSample>& samples, double capacity,
                                 const BatchingRule& rule) {
  BatchingVerdict v;
  if (windows.empty() || samples.empty()) {
    v.reason = "no engine queue observed (no engine timeline or /metrics scrapes)";
    return v;
  }
  v.evaluated = true;
  if (!(capacity > 0)) {
    capacity = 0;
    for (const auto& s : samples) capacity = std::max(capacity, s.running);
  }
  v.capacity = capacity;
  struct Sums {
    double weight = 0;
    double running = 0;
    double waiting = 0;
    std::size_t n = 0;
  };
  std::vector<Sums> sums(windows.size());
  const TimeNs start = windows.front().start_ns;
  const TimeNs width = windows.front().end_ns - windows.front().start_ns;
  for (const auto& s : samples) {
    if (s.t_ns < start || s.t_ns >= windows.back().end_ns || width <= 0 || !(s.weight > 0))
      continue;
    const auto i = std::min(windows.size() - 1, static_cast<std::size_t>((s.t_ns - start) / width));
    sums[i].weight += s.weight;
    sums[i].running += s.weight * s.running;
    sums[i].waiting += s.weight * s.waiting;
    ++sums[i].n;
  }
  std::size_t run = 0;
  bool fired = false;
  for (std::size_t i = 0; i < windows.size(); ++i) {
    BatchingWindow w{.start_ns = windows[i].start_ns, .end_ns = windows[i].end_ns};
    w.samples = sums[i].n;
    if (sums[i].n > 0) {
      w.mean_running = sums[i].running / sums[i].weight;
      w.mean_waiting = sums[i].waiting / sums[i].weight;
      const double could = std::min(capacity, w.mean_running + w.mean_waiting);
      w.share = could > 0 ? w.mean_running / could : 1.0;
      w.failed = w.mean_waiting >= rule.min_waiting && w.share < rule.shrink_ratio;
    }
    run = w.failed ? run + 1 : 0;
    v.longest_failed_run = std::max(v.longest_failed_run, run);
    if (!fired && run >= rule.consecutive) {
      fired = true;
      v.first_window = i + 1 - run;
    }
    v.windows.push_back(w);
  }
  v.fired = fired;
  if (fired) {
    const BatchingWindow& w = v.windows[v.first_window];
    v.reason = fmt::format(
        "from {:.1f} s the batch held {:.1f} requests while {:.1f} waited (share {:.2f} < {:g} "
        "of min(capacity {:g}, running + waiting)) for {} windows in a row (the rule: {})",
        ns_to_s(w.start_ns), w.mean_running, w.mean_waiting, w.share, rule.shrink_ratio, capacity,
        v.longest_failed_run, rule.consecutive);
  } else {
    v.reason = fmt::format(
        "at most {} window(s) in a row with requests waiting and the batch under {:g} of what it "
        "could hold (capacity {:g}); the rule needs {}",
        v.longest_failed_run, rule.shrink_ratio, capacity, rule.consecutive);
  }
  return v;
}

}  // namespace llmbench::analysis
