#include "llmbench/analysis/batching.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace llmbench::analysis {

BatchingVerdict batching_failure(const std::vector<Window>& windows,
                                 const std::vector<EngineSample>& samples, double capacity,
                                 const BatchingRule& rule) {
  BatchingVerdict v;
  for (const auto& s : samples) v.late_samples += s.late ? 1 : 0;
  if (windows.empty() || samples.size() == v.late_samples) {
    v.reason = samples.empty()
                   ? "no engine queue observed (no engine timeline or /metrics scrapes)"
                   : fmt::format("every one of the {} scrapes was served late: no gauge to judge",
                                 samples.size());
    return v;
  }
  v.evaluated = true;
  if (!(capacity > 0)) {
    capacity = 0;
    for (const auto& s : samples) {
      if (!s.late)
        capacity = std::max(capacity, s.running);
    }
  }
  v.capacity = capacity;
  const std::vector<EngineWindow> engine = engine_windows(windows, samples);
  const Warmup warm = find_warmup(windows, engine);
  v.warmup_windows = warm.warmup;
  const TimeNs steady_from =
      warm.warmup > 0 && warm.warmup <= warm.judged.size()
          ? (warm.warmup < warm.judged.size() ? windows[warm.judged[warm.warmup]].start_ns
                                              : windows.back().end_ns)
          : windows.front().start_ns;
  std::size_t run = 0;
  bool fired = false;
  for (std::size_t i = 0; i < windows.size(); ++i) {
    BatchingWindow w{.start_ns = windows[i].start_ns, .end_ns = windows[i].end_ns};
    w.samples = engine[i].samples;
    w.warmup = windows[i].start_ns < steady_from;
    if (w.samples > 0) {
      w.mean_running = engine[i].mean_running;
      w.mean_waiting = engine[i].mean_waiting;
      const double could = std::min(capacity, w.mean_running + w.mean_waiting);
      w.share = could > 0 ? w.mean_running / could : 1.0;
      w.failed = !w.warmup && w.mean_waiting >= rule.min_waiting && w.share < rule.shrink_ratio;
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
        "at most {} steady window(s) in a row with requests waiting and the batch under {:g} of "
        "what it could hold (capacity {:g}); the rule needs {}",
        v.longest_failed_run, rule.shrink_ratio, capacity, rule.consecutive);
  }
  if (v.warmup_windows > 0) {
    v.reason += fmt::format("; {} warm-up window(s) to {:.1f} s not judged ({})", v.warmup_windows,
                            ns_to_s(steady_from), warm.note);
  }
  if (v.late_samples > 0)
    v.reason += fmt::format("; {} late scrape(s) left out", v.late_samples);
  return v;
}

}  // namespace llmbench::analysis
