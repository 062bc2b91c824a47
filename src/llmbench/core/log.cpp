#include "llmbench/core/log.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

namespace llmbench::log {
namespace {
std::atomic<Level> g_level{Level::Info};
std::mutex g_mutex;
}  // namespace

void set_level(Level level) noexcept {
  g_level.store(level, std::memory_order_relaxed);
}
Level level() noexcept {
  return g_level.load(std::memory_order_relaxed);
}

void write(Level level, std::string_view message) {
  const char* prefix = "";
  switch (level) {
    case Level::Debug:
      prefix = "debug: ";
      break;
    case Level::Warn:
      prefix = "warning: ";
      break;
    case Level::Error:
      prefix = "error: ";
      break;
    default:
      break;
  }
  std::string line = "llmbench: ";
  line += prefix;
  line += message;
  line += '\n';
  const std::lock_guard<std::mutex> lock(g_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace llmbench::log
