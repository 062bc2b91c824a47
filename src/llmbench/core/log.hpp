#pragma once
/// @file
/// Minimal leveled logging to stderr. Thread-safe (one locked write per line). Never used on the
/// per-token hot path. Secrets (API keys) must never be passed to it.

#include <fmt/core.h>

#include <string_view>

namespace llmbench::log {

/// Severity of a log line; lines below the current level are dropped.
enum class Level { Debug = 0, Info = 1, Warn = 2, Error = 3, Off = 4 };

/// Sets the minimum level printed (default Info). Thread-safe.
void set_level(Level level) noexcept;
/// Current minimum level.
Level level() noexcept;
/// Writes "llmbench: <prefix>message\n" to stderr as one write.
void write(Level level, std::string_view message);

/// fmt-style helpers.
template <class... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::Debug)
    write(Level::Debug, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::Info)
    write(Level::Info, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::Warn)
    write(Level::Warn, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::Error)
    write(Level::Error, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace llmbench::log
