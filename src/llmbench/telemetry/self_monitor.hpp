#pragma once
/// @file
/// Was the client itself the bottleneck? A monitor thread samples, every interval, the process's
/// CPU time (`getrusage(RUSAGE_SELF)`, getrusage(2)), each thread's CPU time and name
/// (`/proc/self/task/<tid>/stat` fields 14 utime and 15 stime in clock ticks, and `.../comm`;
/// proc(5)) and its own wake-up lag (how late it woke against its schedule: when the host's CPUs
/// are saturated every event loop wakes late by about as much). The rule behind
/// `client_saturated` (`summarize_self`), stated in docs/telemetry.md too: the client came near
/// saturation when any of
/// - one client thread was busy ≥ `busy_threshold` (90 %) of the time it was sampled (an event
///   loop that cannot take more),
/// - the client threads together used ≥ `busy_threshold` of the online cores,
/// - the monitor's p99 wake-up lag was ≥ `lag_threshold_ms` (10 ms),
/// - the loadgen workers' p99 event-loop lag was ≥ `lag_threshold_ms` (`add_event_loop_lag`):
///   a chunk that arrived waited that long before the client read its time.
/// Threads whose name starts with one of `excluded_name_prefixes` (the built-in server's
/// `llmb-http-*` workers and `llmb-engine`, the telemetry samplers' `llmb-telem-*`) are reported
/// but not counted as client threads. Thread names: core/thread_name.hpp.

#include "llmbench/core/clock.hpp"
#include "llmbench/telemetry/series_stats.hpp"

#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace llmbench::telemetry {

/// Names the calling thread (`pthread_setname_np`, at most 15 characters kept), so that the
/// self-monitor can tell telemetry threads from client threads.
void name_this_thread(const std::string& name);

/// Settings of the self-monitor and its saturation rule.
struct SelfMonitorOptions {
  std::chrono::milliseconds interval{250};
  std::vector<std::string> excluded_name_prefixes{"llmb-http", "llmb-engine", "llmb-telem"};
  double busy_threshold = 0.9;   ///< fraction of one core (a thread) or of all cores
  double lag_threshold_ms = 10;  ///< p99 wake-up lag
  unsigned int cores = 0;        ///< 0 = `sysconf(_SC_NPROCESSORS_ONLN)`
};

/// One thread's cumulative CPU time at one sample.
struct ThreadTime {
  std::string name{};
  double cpu_s = 0;
};

/// One sample of the process.
struct SelfSample {
  TimeNs t_ns = 0;           ///< absolute steady clock
  double process_cpu_s = 0;  ///< user + system, cumulative
  /// How late the monitor woke against its schedule, ms (NaN for the samples at start and stop).
  double lag_ms = std::numeric_limits<double>::quiet_NaN();
  std::map<int, ThreadTime> threads{};  ///< by tid
};

/// One thread over the run.
struct ThreadCpu {
  int tid = 0;
  std::string name{};
  double cpu_s = 0;          ///< Σ CPU time between consecutive samples that both saw it
  double sampled_s = 0;      ///< Σ wall time of those intervals
  double busy_fraction = 0;  ///< cpu_s / sampled_s (0 when never seen twice)
  bool client = true;        ///< false for an excluded name
};

/// The self-monitor's verdict.
struct SelfMonitorSummary {
  double span_s = std::numeric_limits<double>::quiet_NaN();
  unsigned int cores = 0;
  double process_cpu_s = std::numeric_limits<double>::quiet_NaN();  ///< last − first
  double client_cpu_s = 0;  ///< Σ `cpu_s` of the client threads
  double client_cores = std::numeric_limits<double>::quiet_NaN();  ///< client_cpu_s / span_s
  SeriesStats lag_ms{};
  /// The loadgen workers' event-loop lag, ms (`add_event_loop_lag`; count 0 until then).
  SeriesStats event_loop_lag_ms{};
  std::vector<ThreadCpu> threads{};  ///< by CPU time, largest first
  bool client_saturated = false;
  std::vector<std::string> reasons{};  ///< one line per rule that fired
};

/// Applies the file comment's rule to `samples` (in time order).
[[nodiscard]] SelfMonitorSummary summarize_self(const std::vector<SelfSample>& samples,
                                                const SelfMonitorOptions& options);

/// Adds the loadgen workers' event-loop lag samples (ms; `loadgen::LoadResult::loop_lag_ms`) to
/// `summary`: their statistics, and the file comment's last rule as one more reason (which sets
/// `client_saturated`).
void add_event_loop_lag(SelfMonitorSummary& summary, std::span<const float> lags_ms,
                        const SelfMonitorOptions& options);

/// The results JSON `telemetry.client` object: the rule's inputs and verdict, per-thread CPU,
/// and the series (t_ms relative to `run_start_ns`, process and client CPU in cores per
/// interval, wake-up lag).
[[nodiscard]] nlohmann::json self_monitor_json(const std::vector<SelfSample>& samples,
                                               const SelfMonitorSummary& summary,
                                               const SelfMonitorOptions& options,
                                               TimeNs run_start_ns);

/// Reads the process and its threads now (`lag_ms` NaN).
[[nodiscard]] SelfSample read_self_sample();

/// Samples on its own thread (`llmb-telem-self`) from `start()` to `stop()` (one sample at each
/// end). `start`/`stop` from one controlling thread; `samples()` after `stop()`.
class SelfMonitor {
 public:
  explicit SelfMonitor(SelfMonitorOptions options);
  ~SelfMonitor();
  SelfMonitor(const SelfMonitor&) = delete;
  SelfMonitor& operator=(const SelfMonitor&) = delete;
  SelfMonitor(SelfMonitor&&) = delete;
  SelfMonitor& operator=(SelfMonitor&&) = delete;

  void start();
  /// Takes the last sample and joins. Idempotent.
  void stop();
  [[nodiscard]] const std::vector<SelfSample>& samples() const noexcept { return samples_; }
  [[nodiscard]] const SelfMonitorOptions& options() const noexcept { return options_; }

 private:
  void loop();

  SelfMonitorOptions options_;
  std::vector<SelfSample> samples_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace llmbench::telemetry
