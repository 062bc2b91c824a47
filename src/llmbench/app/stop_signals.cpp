#include "llmbench/app/stop_signals.hpp"

#include <array>
#include <csignal>

namespace llmbench::app {

namespace {

std::atomic<bool> g_stop{false};
int g_depth = 0;  // guards alive (main thread only)
struct sigaction g_old_int {};
struct sigaction g_old_term {};
struct sigaction g_old_hup {};

// Process groups to stop with the run (0 = a free slot); read in the handler (kill(2) is
// async-signal-safe, and so is a lock-free atomic load).
std::array<std::atomic<pid_t>, StopSignals::kMaxWatched> g_groups{};

extern "C" void on_stop_signal(int /*sig*/) {
  g_stop.store(true);
  for (auto& group : g_groups) {
    const pid_t pgid = group.load();
    if (pgid > 0)
      kill(-pgid, SIGTERM);
  }
}

}  // namespace

StopSignals::StopSignals() {
  if (g_depth++ > 0)
    return;
  g_stop.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  sigaction(SIGHUP, &sa, &g_old_hup);  // a closed terminal stops the run as SIGTERM does
}

StopSignals::~StopSignals() {
  if (--g_depth > 0)
    return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGHUP, &g_old_hup, nullptr);
}

bool StopSignals::stop_requested() noexcept {
  return g_stop.load();
}

const std::atomic<bool>* StopSignals::stop_flag() noexcept {
  return &g_stop;
}

bool StopSignals::watch_process_group(pid_t pgid) noexcept {
  for (auto& group : g_groups) {
    pid_t expected = 0;
    if (group.compare_exchange_strong(expected, pgid))
      return true;
  }
  return false;
}

void StopSignals::unwatch_process_group(pid_t pgid) noexcept {
  for (auto& group : g_groups) {
    pid_t expected = pgid;
    group.compare_exchange_strong(expected, 0);
  }
}

}  // namespace llmbench::app
