#pragma once
/// @file
/// Thread names, so that a reader of `/proc/self/task/<tid>/comm` (proc(5)), `top -H` or the
/// client self-monitor (docs/telemetry.md) can tell the run's threads apart. The names in use:
/// `llmb-load-<i>` (loadgen workers), `llmb-records` (the record writer), `llmb-http-<i>` and
/// `llmb-engine` (the built-in server), `llmb-telem-*` (telemetry samplers). Also the calling
/// thread's timer slack, for the threads whose timers decide when a request is sent.

#include <string_view>

namespace llmbench {

/// Names the calling thread (`pthread_setname_np(3)`; Linux keeps at most 15 bytes, so a longer
/// name is cut there). Never fails: a name the kernel refuses is ignored.
void set_thread_name(std::string_view name) noexcept;

/// Sets the calling thread's timer slack to `ns` nanoseconds (`prctl(2)` PR_SET_TIMERSLACK; at
/// least 1). Linux fires a sleeping thread's timers up to its slack late, 50 us by default, to
/// merge wake-ups; the loadgen workers ask for 1 ns so a request is written at its time. Never
/// fails: a value the kernel refuses leaves the slack as it was.
void set_thread_timer_slack_ns(unsigned long ns) noexcept;

}  // namespace llmbench
