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
/// A lag is the client's own only when its threads were busy (the first two rules); a lag while
/// the client's threads were not busy and the host's CPU was taken by others (steal time from
/// a hypervisor ≥ `steal_threshold` of the host's CPU time, other processes using ≥
/// `others_threshold` of the cores, or a load average ≥ the cores; /proc/stat and /proc/loadavg,
/// proc(5)) is reported as `host_contended` instead, and `client_saturated` stays false: the
/// client did not lag on its own work.
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
  double busy_threshold = 0.9;    ///< fraction of one core (a thread) or of all cores
  double lag_threshold_ms = 10;   ///< p99 wake-up lag
  unsigned int cores = 0;         ///< 0 = `sysconf(_SC_NPROCESSORS_ONLN)`
  double steal_threshold = 0.10;  ///< share of the host's CPU time stolen by the hypervisor
  double others_threshold = 0.5;  ///< share of the cores used by processes other than ours
};

/// The host's CPU counters at one sample (/proc/stat's `cpu` line, in seconds, cumulative; NaN
/// when unreadable) and the 1-minute load average (/proc/loadavg).
struct HostCpu {
  double busy_s = std::numeric_limits<double>::quiet_NaN();   ///< user+nice+system+irq+softirq
  double steal_s = std::numeric_limits<double>::quiet_NaN();  ///< taken by the hypervisor
  double total_s = std::numeric_limits<double>::quiet_NaN();  ///< every field but guest ones
  double load1 = std::numeric_limits<double>::quiet_NaN();
};

/// Parses /proc/stat's first line ("cpu  user nice system idle iowait irq softirq steal ...", in
/// clock ticks of `ticks_per_s`) and /proc/loadavg's first field. Fields missing: NaN.
HostCpu parse_host_cpu(const std::string& stat_line, const std::string& loadavg_line,
                       double ticks_per_s);

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
  HostCpu host{};                       ///< the whole host's CPU at this sample
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
  /// Over the span: the host's CPU stolen by the hypervisor (share of its CPU time), the cores
  /// used by processes other than this one, and the mean 1-minute load average (NaN when the
  /// host counters could not be read).
  double host_steal_fraction = std::numeric_limits<double>::quiet_NaN();
  double others_cores = std::numeric_limits<double>::quiet_NaN();
  double load_mean = std::numeric_limits<double>::quiet_NaN();
  bool client_busy = false;  ///< a client thread or the client threads together were busy
  bool client_saturated = false;
  std::vector<std::string> reasons{};  ///< one line per rule that fired
  /// Lag while the client was not busy and the host's CPU was taken by others.
  bool host_contended = false;
  std::vector<std::string> host_reasons{};
  /// The run's connections (`add_connections`): the most open at once, i.e. the local
  /// ephemeral ports they held at the peak (about 28,000 per source address and destination,
  /// `net.ipv4.ip_local_port_range`), and its failed connects by cause (an errno name).
  std::int64_t ports_in_use_peak = 0;
  std::map<std::string, std::int64_t> connect_errors{};
};

/// Applies the file comment's rule to `samples` (in time order).
[[nodiscard]] SelfMonitorSummary summarize_self(const std::vector<SelfSample>& samples,
                                                const SelfMonitorOptions& options);

/// Adds the loadgen workers' event-loop lag samples (ms; `loadgen::LoadResult::loop_lag_ms`) to
/// `summary`: their statistics, and the file comment's last rule as one more reason (which sets
/// `client_saturated`).
void add_event_loop_lag(SelfMonitorSummary& summary, std::span<const float> lags_ms,
                        const SelfMonitorOptions& options);

/// Adds the run's connection facts (`loadgen::LoadResult::ports_in_use_peak` and
/// `connect_errors`) to `summary`.
void add_connections(SelfMonitorSummary& summary, std::int64_t ports_in_use_peak,
                     std::map<std::string, std::int64_t> connect_errors);

/// The total of `connect_errors`' counts.
[[nodiscard]] std::int64_t connect_error_count(
    const std::map<std::string, std::int64_t>& connect_errors) noexcept;

/// The results JSON `telemetry.client` object: the rule's inputs and verdict, per-thread CPU,
/// and the series (t_ms relative to `run_start_ns`, process and client CPU in cores per
/// interval, wake-up lag), and `connections`: `ports_in_use_peak`, `connect_errors` (the count)
/// and `connect_errors_by_cause` (errno name → count).
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
