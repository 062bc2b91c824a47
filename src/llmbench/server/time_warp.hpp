#pragma once
/// @file
/// Timing perturbations of the fixed timing model (`llmbench serve --stall`, `--drift`;
/// docs/sweep.md "Spikes" and "Extending a point"): stalls at known times and a latency that
/// drifts, then settles. Both are a monotone map between the timing model's own clock (engine
/// time: the ttft/itl schedule) and the wall clock, from an origin at the server's first
/// generation request, so a test knows when each stall happens and how latency moves.

#include "llmbench/core/clock.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace llmbench::server {

/// One stall: from `at_s` after the origin, for `for_s` seconds of wall time, the engine clock
/// stops. No chunk is due inside it; every chunk due at or after its start (in the unstalled
/// schedule) moves later by `for_s`, as when an engine pauses (a GC pause, a long blocking step).
struct Stall {
  double at_s = 0;   ///< seconds after the origin (wall), ≥ 0
  double for_s = 0;  ///< seconds (wall), > 0
};

/// A drift: at the origin the engine clock runs `factor` times slower than the wall (every
/// latency × factor), and the slowdown returns linearly in engine time to 1 over `over_s`
/// seconds, then stays at 1 (a server that warms up). factor = 1 is no drift; factor < 1 is a
/// server that starts fast and settles slower.
struct Drift {
  double factor = 1;  ///< latency multiple at the origin, in (0, 100]
  double over_s = 0;  ///< seconds of engine time until the multiple is 1 (> 0 when factor ≠ 1)
};

/// Everything that perturbs the fixed schedule.
struct TimingPerturbation {
  std::vector<Stall> stalls;  ///< in any order; they must not overlap
  Drift drift;
  /// True when there is a stall or a drift.
  [[nodiscard]] bool active() const noexcept { return !stalls.empty() || drift.factor != 1.0; }
};

/// Parses `--stall AT_S:FOR_S` ("2.5:0.4"). Throws `Exception` naming `flag` and the text.
Stall parse_stall(std::string_view text, const std::string& flag);
/// Parses `--drift FACTOR:SECONDS` ("3:8"). Throws `Exception` naming `flag` and the text.
Drift parse_drift(std::string_view text, const std::string& flag);

/// Throws `Exception` naming --stall or --drift when a value is out of range or two stalls
/// overlap.
void validate_perturbation(const TimingPerturbation& p);

/// The map itself. Times are ns since the origin; negative times (before the origin) map to
/// themselves. Immutable, thread-safe.
class TimeWarp {
 public:
  explicit TimeWarp(TimingPerturbation p);

  /// Wall time of engine time `engine_ns`: the drift's integral of the slowdown
  /// (f·τ + (1 − f)·τ²/(2T) up to T, then + (τ − T)), then every stall whose start is at or
  /// before it added in order of start.
  [[nodiscard]] TimeNs to_wall(TimeNs engine_ns) const noexcept;
  /// Engine time of wall time `wall_ns` (the inverse of `to_wall`; a time inside a stall maps
  /// to the stall's start).
  [[nodiscard]] TimeNs to_engine(TimeNs wall_ns) const noexcept;

 private:
  TimingPerturbation p_;
};

}  // namespace llmbench::server
