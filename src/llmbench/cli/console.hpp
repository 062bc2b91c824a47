#pragma once
/// @file
/// The console of `run`, `simulate` and `sweep`: what a finished point prints (the vLLM-shaped
/// result table with the load-accuracy or engine lines and the verdicts, the multi-turn or
/// engine-timeline tables) and the live progress line while a load runs. Printing only: every
/// number comes from the typed `app::RunResult`.

#include "llmbench/app/result.hpp"
#include "llmbench/app/session.hpp"

#include <atomic>
#include <string>
#include <thread>
#include <utility>

namespace llmbench::cli {

/// The console line of the stability verdict: label and value ("<state>: <reason>").
std::pair<std::string, std::string> stability_line(const app::RunResult& r);
/// The console line of the spikes: label and value (`analysis::spike_summary`: "none" or the
/// count, the worst and when; then the prefill interference when found).
std::pair<std::string, std::string> spike_line(const app::RunResult& r);
/// The console line of the run's one verdict (`analysis::verdict_label`, then every invalid
/// reason).
std::pair<std::string, std::string> verdict_line(const app::RunResult& r);
/// The console line of the batching verdict ("no: ..." / "FIRED: ..."); label "" when it was
/// not evaluated.
std::pair<std::string, std::string> batching_line(const app::RunResult& r);

/// Prints the result table of a finished point to stdout: for `run` with the requested against
/// the achieved send rate, connections, local token counts and the verdicts, then the per-turn
/// table of a multi-turn run; for `simulate` with the engine's counters and the verdicts, then
/// the engine over time.
void print_result(const app::RunResult& r);

/// The console of a command that runs one point: a live "done/total, rate, errors" line on a
/// terminal while the load runs (when `progress`), and the result table once it is analysed.
class ConsoleObserver final : public app::LoadObserver {
 public:
  explicit ConsoleObserver(bool progress) : progress_(progress) {}
  ~ConsoleObserver() override { stop(); }
  ConsoleObserver(const ConsoleObserver&) = delete;
  ConsoleObserver& operator=(const ConsoleObserver&) = delete;
  ConsoleObserver(ConsoleObserver&&) = delete;
  ConsoleObserver& operator=(ConsoleObserver&&) = delete;

  void load_started(const loadgen::Progress& progress) override;
  void load_finished() override { stop(); }
  void analysed(const app::RunResult& result) override { print_result(result); }

 private:
  void stop();
  void loop(const loadgen::Progress& progress);

  bool progress_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace llmbench::cli
