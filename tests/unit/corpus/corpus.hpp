#pragma once
/// @file
/// The labelled corpus (docs/sweep.md "The labelled corpus"): runs whose truth is known by
/// construction, on which every detector (stability, spikes, batching failure) is scored,
/// false alarms counted as well as hits. Three sources:
/// - the simulator (`sim::Simulation`): healthy Poisson runs at several loads and lengths, a
///   deterministic low rate with prefill interference, an overloaded open loop, a closed loop's
///   start-up ramp, a KV-starved engine that preempts heavily and the same with ample KV;
/// - the built-in server's fixed timing, laid out here as `serve --timing fixed` lays it out
///   (TTFT then one token per ITL on the server's clock) and mapped through the same
///   `server::TimeWarp` its `--stall` / `--drift` use: steady streams, stalls at known times, a
///   drift that settles and one that does not;
/// - records of real runs against llama.cpp's `llama-server` (tests/unit/corpus/data/, how
///   they were made is in its README.md).
/// Each case is a pure function of its parameters (seeded), so the corpus is cheap enough for CI.

#include "llmbench/analysis/batching.hpp"
#include "llmbench/analysis/spikes.hpp"
#include "llmbench/analysis/windows.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/metrics/token_runs.hpp"

#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::corpus {

/// What a case is, by construction.
struct Truth {
  analysis::Steadiness steadiness = analysis::Steadiness::Stable;
  bool batching_fails = false;
  std::vector<double> stalls_s{};  ///< wall seconds (since the first send) where a stall ends
  /// The batching rule has no engine queue to read (a run without scrapes): not scored.
  bool batching_observable = true;
  /// False where the engine stalls by its own design at times no one injected: a KV-starved
  /// engine recomputes the prefills of the requests it preempted, and those steps stall every
  /// decode (real spikes the client cannot tell from a stall; the batching rule names the
  /// cause). Spikes are counted there but not scored.
  bool spikes_scored = true;
};

/// One labelled run.
struct Case {
  std::string name{};
  std::string family{};  ///< "healthy", "ramp", "stall", "drift", "overload", "kv", "recorded"
  std::vector<metrics::RequestRecord> records{};
  std::optional<metrics::TokenRuns> tokens{};    ///< simulated runs: token times as runs
  std::vector<analysis::EngineSample> engine{};  ///< the engine's queue (steps or scrapes)
  double capacity = std::numeric_limits<double>::quiet_NaN();  ///< max_num_seqs; NaN unknown
  Truth truth{};
};

/// What the detectors said about one case.
struct Verdicts {
  std::vector<analysis::Window> windows;
  analysis::Stability stability;
  analysis::SpikeReport spikes;
  analysis::BatchingVerdict batching;
};

/// The windows (1 s) and every detector with its default rule, as `run` and `simulate` apply
/// them.
Verdicts judge(const Case& c);

/// The simulated cases.
std::vector<Case> simulated_cases();
/// The fixed-timing cases.
std::vector<Case> fixed_timing_cases();
/// The recorded llama.cpp cases (files under `data_dir`).
std::vector<Case> recorded_cases(const std::string& data_dir);

}  // namespace llmbench::corpus
