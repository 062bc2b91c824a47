#pragma once
/// @file
/// Thread names, so that a reader of `/proc/self/task/<tid>/comm` (proc(5)), `top -H` or the
/// client self-monitor (docs/telemetry.md) can tell the run's threads apart. The names in use:
/// `llmb-load-<i>` (loadgen workers), `llmb-records` (the record writer), `llmb-http-<i>` and
/// `llmb-engine` (the built-in server), `llmb-telem-*` (telemetry samplers).

#include <string_view>

namespace llmbench {

/// Names the calling thread (`pthread_setname_np(3)`; Linux keeps at most 15 bytes, so a longer
/// name is cut there). Never fails: a name the kernel refuses is ignored.
void set_thread_name(std::string_view name) noexcept;

}  // namespace llmbench
