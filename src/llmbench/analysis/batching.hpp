#pragma once
/// @file
/// The dynamic-batching-failure rule (docs/sweep.md "Batching failure"): the
/// batch shrinks or stalls while requests wait. Computed over the run's time windows from the
/// engine's queue as it was observed: the simulator's steps (RUNNING and WAITING after each
/// step's scheduling, weighted by the step's duration) or a real server's `/metrics` scraped
/// during the run (vLLM `num_requests_running` / `num_requests_waiting`, llama.cpp
/// `requests_processing` / `requests_deferred`; telemetry/server_metrics.hpp), each scrape
/// weighted alike.
///
/// Per window: the batch's share u = mean running / min(capacity, mean running + mean
/// waiting), the batch it holds against the batch it could hold. A window fails when requests
/// wait through it (mean waiting ≥ `min_waiting`) and u < `shrink_ratio` (a stall is u = 0:
/// nothing runs while requests wait). The rule fires when `consecutive` windows in a row fail.
/// Only steady windows are judged: the warm-up (`find_warmup`, windows.hpp: a start-up ramp, in
/// which a closed loop's requests all arrive at once and are prefilled a few per step, fills the
/// batch by design) and scrapes served late (`EngineSample::late`) are left out.

#include "llmbench/analysis/windows.hpp"

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace llmbench::analysis {

/// The rule's thresholds (ours, stated in docs/sweep.md).
struct BatchingRule {
  double shrink_ratio = 0.35;   ///< a window fails when the batch holds less than this share
  double min_waiting = 1.0;     ///< mean requests waiting for a window to count as "waiting"
  std::size_t consecutive = 3;  ///< failed windows in a row that make the rule fire
};

/// One window's queue.
struct BatchingWindow {
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  std::size_t samples = 0;
  double mean_running = std::numeric_limits<double>::quiet_NaN();
  double mean_waiting = std::numeric_limits<double>::quiet_NaN();
  double share = std::numeric_limits<double>::quiet_NaN();  ///< u above; NaN without samples
  bool failed = false;
  bool warmup = false;  ///< in the start-up transient: shown, never judged
};

/// The verdict.
struct BatchingVerdict {
  bool evaluated = false;  ///< false without samples (no engine timeline, no scrapes)
  bool fired = false;
  double capacity = std::numeric_limits<double>::quiet_NaN();  ///< the batch cap used
  std::size_t longest_failed_run = 0;                          ///< most failed windows in a row
  std::size_t first_window = 0;         ///< start of the first run that fired (when fired)
  std::size_t warmup_windows = 0;       ///< leading windows left out as warm-up
  std::size_t late_samples = 0;         ///< samples left out as late scrapes
  std::string reason;                   ///< one sentence with the numbers
  std::vector<BatchingWindow> windows;  ///< one per window of the run
};

/// Applies `rule` over `windows` (for their boundaries) to `samples` (any order; a sample
/// belongs to the window its time falls in, samples outside every window are left out).
/// `capacity` is the engine's batch cap (max_num_seqs × replicas); NaN = unknown, then the most
/// requests seen running in the samples is used (a real server whose cap the client cannot see:
/// a batch is judged against the largest it was seen to hold).
BatchingVerdict batching_failure(const std::vector<Window>& windows,
                                 const std::vector<EngineSample>& samples, double capacity,
                                 const BatchingRule& rule);

}  // namespace llmbench::analysis
