#include "llmbench/app/stop_signals.hpp"

#include <csignal>

namespace llmbench::app {

namespace {

std::atomic<bool> g_stop{false};
int g_depth = 0;  // guards alive (main thread only)
struct sigaction g_old_int {};
struct sigaction g_old_term {};
struct sigaction g_old_hup {};

extern "C" void on_stop_signal(int /*sig*/) {
  g_stop.store(true);
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

}  // namespace llmbench::app
