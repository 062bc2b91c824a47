#pragma once
/// @file
/// The one scoped guard for SIGINT, SIGTERM and SIGHUP of `run` and `sweep`: while a guard
/// lives, each of them sets one process-wide stop flag instead of ending the process, so the
/// load in flight ends early with every request it finished (docs/reliability.md); the handlers
/// that were there before come back when the outermost guard ends. Guards nest (a sweep's guard
/// and each of its points' guards): only the outermost one installs, clears and restores.

#include <atomic>

namespace llmbench::app {

/// Installs the handlers for its lifetime (outermost guard only). Construct and destroy on the
/// main thread, in nested order; `stop_flag()` may be read from any thread.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  StopSignals(StopSignals&&) = delete;
  StopSignals& operator=(StopSignals&&) = delete;

  /// True once a signal arrived since the outermost guard began.
  [[nodiscard]] static bool stop_requested() noexcept;
  /// The flag itself, for `loadgen::run_load`'s `stop`.
  [[nodiscard]] static const std::atomic<bool>* stop_flag() noexcept;

  /// The most process groups watched at once.
  static constexpr int kMaxWatched = 16;
  /// Adds process group `pgid` to those a stop signal sends SIGTERM to; false when
  /// `kMaxWatched` are watched already. Safe from any thread.
  static bool watch_process_group(pid_t pgid) noexcept;
  /// Removes `pgid` (a no-op when it is not watched).
  static void unwatch_process_group(pid_t pgid) noexcept;
};

}  // namespace llmbench::app
