#pragma once
/// @file
/// Time base: every timestamp in llmbench is int64 nanoseconds on the steady clock, relative to
/// the start of a run (docs/architecture.md "Conventions the code relies on": time).

#include <chrono>
#include <cstdint>

namespace llmbench {

/// Nanoseconds on the steady clock (absolute or relative to a `RunClock`, as documented).
using TimeNs = std::int64_t;

/// Absolute steady-clock time in nanoseconds since an unspecified epoch (monotonic, never jumps).
inline TimeNs steady_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The `std::chrono::steady_clock` time point of absolute steady-clock ns `t_ns` (the inverse
/// of `steady_now_ns`), for timers: `steady_timer::expires_at(steady_time_point(t))`.
inline std::chrono::steady_clock::time_point steady_time_point(TimeNs t_ns) noexcept {
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(t_ns));
}

/// The zero point of a run. Thread-safe: immutable after construction.
class RunClock {
 public:
  RunClock() noexcept : start_ns_(steady_now_ns()) {}
  explicit RunClock(TimeNs start_ns) noexcept : start_ns_(start_ns) {}
  /// Nanoseconds elapsed since the run started.
  [[nodiscard]] TimeNs now() const noexcept { return steady_now_ns() - start_ns_; }
  /// Absolute steady-clock time of the start (for converting to absolute deadlines).
  [[nodiscard]] TimeNs start_ns() const noexcept { return start_ns_; }

 private:
  TimeNs start_ns_;
};

/// Converts nanoseconds to milliseconds as a double.
constexpr double ns_to_ms(TimeNs ns) noexcept {
  return static_cast<double>(ns) / 1e6;
}
/// Converts nanoseconds to seconds as a double.
constexpr double ns_to_s(TimeNs ns) noexcept {
  return static_cast<double>(ns) / 1e9;
}
/// Converts milliseconds to nanoseconds, rounding to nearest.
constexpr TimeNs ms_to_ns(double ms) noexcept {
  return static_cast<TimeNs>(ms * 1e6 + (ms >= 0 ? 0.5 : -0.5));
}

}  // namespace llmbench
