#include "llmbench/telemetry/self_monitor.hpp"

#include "llmbench/core/json_number.hpp"
#include "llmbench/core/thread_name.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

namespace llmbench::telemetry {

namespace {

using nlohmann::json;

double timeval_s(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

/// The first line of a small file (a /proc entry, whose size reads as 0), "" when unreadable.
std::string first_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

/// utime + stime of `/proc/self/task/<tid>/stat` in seconds: the fields after the
/// parenthesised comm (which may hold spaces), 14 and 15 counted from 1 (proc(5)).
double thread_cpu_s(const std::filesystem::path& stat_path, double ticks_per_s) {
  const std::string stat = first_line(stat_path);
  const auto close = stat.rfind(')');
  if (close == std::string::npos)
    return std::nan("");
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  double utime = 0;
  double stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14)
      utime = std::stod(field);
    if (i == 15)
      stime = std::stod(field);
  }
  return (utime + stime) / ticks_per_s;
}

bool excluded(const std::string& name, const SelfMonitorOptions& options) {
  return std::any_of(options.excluded_name_prefixes.begin(), options.excluded_name_prefixes.end(),
                     [&](const std::string& p) { return name.rfind(p, 0) == 0; });
}

/// Per-thread CPU and sampled time over consecutive sample pairs that both saw the thread.
std::vector<ThreadCpu> thread_cpu(const std::vector<SelfSample>& samples,
                                  const SelfMonitorOptions& options) {
  std::map<int, ThreadCpu> by_tid;
  for (std::size_t i = 1; i < samples.size(); ++i) {
    const double dt = ns_to_s(samples[i].t_ns - samples[i - 1].t_ns);
    for (const auto& [tid, now] : samples[i].threads) {
      auto& t = by_tid[tid];
      t.tid = tid;
      t.name = now.name;
      t.client = !excluded(now.name, options);
      const auto before = samples[i - 1].threads.find(tid);
      if (before == samples[i - 1].threads.end() || std::isnan(now.cpu_s) ||
          std::isnan(before->second.cpu_s))
        continue;
      t.cpu_s += std::max(0.0, now.cpu_s - before->second.cpu_s);
      t.sampled_s += dt;
    }
  }
  std::vector<ThreadCpu> out;
  for (auto& [tid, t] : by_tid) {
    t.busy_fraction = t.sampled_s > 0 ? t.cpu_s / t.sampled_s : 0;
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(),
            [](const ThreadCpu& a, const ThreadCpu& b) { return a.cpu_s > b.cpu_s; });
  return out;
}

/// The evidence that others took the host's CPU ("" when there is none).
std::string host_evidence(const SelfMonitorSummary& s, const SelfMonitorOptions& options) {
  std::vector<std::string> parts;
  if (s.host_steal_fraction >= options.steal_threshold)
    parts.push_back(fmt::format("{:.0f}% of the CPU time stolen by the hypervisor",
                                100 * s.host_steal_fraction));
  if (s.others_cores >= options.others_threshold * s.cores)
    parts.push_back(
        fmt::format("other processes used {:.2f} of {} cores", s.others_cores, s.cores));
  if (s.load_mean >= s.cores)
    parts.push_back(fmt::format("load average {:.1f} on {} cores", s.load_mean, s.cores));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

/// Files a lag `reason`: the client's own when its threads were busy or the host shows no sign
/// of others, else the host's.
void attribute_lag(SelfMonitorSummary& s, const std::string& reason,
                   const SelfMonitorOptions& options) {
  const std::string host = host_evidence(s, options);
  if (s.client_busy || host.empty()) {
    s.reasons.push_back(reason);
    s.client_saturated = true;
    return;
  }
  s.host_contended = true;
  s.host_reasons.push_back(fmt::format(
      "{}, while the client threads used only {:.2f} cores: the host's CPU was taken by others "
      "({})",
      reason, s.client_cores, host));
}

}  // namespace

HostCpu parse_host_cpu(const std::string& stat_line, const std::string& loadavg_line,
                       double ticks_per_s) {
  HostCpu h;
  std::istringstream in(stat_line);
  std::string label;
  in >> label;
  if (label == "cpu" && ticks_per_s > 0) {
    std::vector<double> f;
    double v = 0;
    while (f.size() < 8 && in >> v) f.push_back(v);
    if (f.size() >= 4) {
      f.resize(8, 0.0);  // older kernels lack iowait, irq, softirq or steal
      // user nice system idle iowait irq softirq steal
      h.busy_s = (f[0] + f[1] + f[2] + f[5] + f[6]) / ticks_per_s;
      h.steal_s = f[7] / ticks_per_s;
      h.total_s = (f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7]) / ticks_per_s;
    }
  }
  std::istringstream load(loadavg_line);
  double l = 0;
  if (load >> l)
    h.load1 = l;
  return h;
}

void name_this_thread(const std::string& name) {
  set_thread_name(name);
}

SelfSample read_self_sample() {
  SelfSample s{.t_ns = steady_now_ns()};
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0)
    s.process_cpu_s = timeval_s(usage.ru_utime) + timeval_s(usage.ru_stime);
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    const std::string tid_text = entry.path().filename().string();
    const int tid = std::atoi(tid_text.c_str());
    if (tid <= 0)
      continue;
    s.threads[tid] = ThreadTime{.name = first_line(entry.path() / "comm"),
                                .cpu_s = thread_cpu_s(entry.path() / "stat", ticks)};
  }
  s.host = parse_host_cpu(first_line("/proc/stat"), first_line("/proc/loadavg"), ticks);
  return s;
}

SelfMonitorSummary summarize_self(const std::vector<SelfSample>& samples,
                                  const SelfMonitorOptions& options) {
  SelfMonitorSummary out;
  out.cores = options.cores > 0
                  ? options.cores
                  : static_cast<unsigned int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  std::vector<double> lags;
  lags.reserve(samples.size());
  for (const auto& s : samples) lags.push_back(s.lag_ms);
  out.lag_ms = describe_series(lags);
  out.threads = thread_cpu(samples, options);
  if (samples.size() < 2)
    return out;
  out.span_s = ns_to_s(samples.back().t_ns - samples.front().t_ns);
  out.process_cpu_s = samples.back().process_cpu_s - samples.front().process_cpu_s;
  for (const auto& t : out.threads) {
    if (!t.client)
      continue;
    out.client_cpu_s += t.cpu_s;
    if (t.sampled_s > 0 && t.busy_fraction >= options.busy_threshold) {
      out.reasons.push_back(fmt::format("client thread {} ({}) was busy {:.0f}% of {:.1f} s", t.tid,
                                        t.name, 100 * t.busy_fraction, t.sampled_s));
    }
  }
  out.client_cores = out.span_s > 0 ? out.client_cpu_s / out.span_s : std::nan("");
  if (out.client_cores >= options.busy_threshold * out.cores) {
    out.reasons.push_back(
        fmt::format("the client threads used {:.2f} of {} cores", out.client_cores, out.cores));
  }
  out.client_busy = !out.reasons.empty();
  out.client_saturated = out.client_busy;
  // The host's share: steal against all CPU time, other processes' busy cores against ours.
  const HostCpu& h0 = samples.front().host;
  const HostCpu& h1 = samples.back().host;
  const double total = h1.total_s - h0.total_s;
  if (total > 0) {
    out.host_steal_fraction = (h1.steal_s - h0.steal_s) / total;
    if (out.span_s > 0)
      out.others_cores = std::max(0.0, (h1.busy_s - h0.busy_s - out.process_cpu_s) / out.span_s);
  }
  std::vector<double> loads;
  loads.reserve(samples.size());
  for (const auto& s : samples) loads.push_back(s.host.load1);
  out.load_mean = describe_series(loads).mean;
  if (out.lag_ms.count > 0 && out.lag_ms.p99 >= options.lag_threshold_ms) {
    attribute_lag(out,
                  fmt::format("the monitor thread woke up to {:.1f} ms late (p99): the host's "
                              "CPUs were saturated",
                              out.lag_ms.p99),
                  options);
  }
  return out;
}

void add_event_loop_lag(SelfMonitorSummary& summary, std::span<const float> lags_ms,
                        const SelfMonitorOptions& options) {
  const std::vector<double> lags(lags_ms.begin(), lags_ms.end());
  summary.event_loop_lag_ms = describe_series(lags);
  const auto& s = summary.event_loop_lag_ms;
  if (s.count > 0 && s.p99 >= options.lag_threshold_ms) {
    attribute_lag(summary,
                  fmt::format("the client's event loops ran up to {:.1f} ms late (p99; max {:.1f} "
                              "ms): chunks waited that long before their time was taken",
                              s.p99, s.max),
                  options);
  }
}

void add_connections(SelfMonitorSummary& summary, std::int64_t ports_in_use_peak,
                     std::map<std::string, std::int64_t> connect_errors) {
  summary.ports_in_use_peak = ports_in_use_peak;
  summary.connect_errors = std::move(connect_errors);
}

std::int64_t connect_error_count(
    const std::map<std::string, std::int64_t>& connect_errors) noexcept {
  std::int64_t n = 0;
  for (const auto& [cause, count] : connect_errors) n += count;
  return n;
}

json self_monitor_json(const std::vector<SelfSample>& samples, const SelfMonitorSummary& summary,
                       const SelfMonitorOptions& options, TimeNs run_start_ns) {
  json t_ms = json::array();
  json process_cores = json::array();
  json client_cores = json::array();
  json lag = json::array();
  for (std::size_t i = 0; i < samples.size(); ++i) {
    t_ms.push_back(ns_to_ms(samples[i].t_ns - run_start_ns));
    lag.push_back(finite_or_null(samples[i].lag_ms));
    if (i == 0) {
      process_cores.push_back(nullptr);
      client_cores.push_back(nullptr);
      continue;
    }
    const double dt = ns_to_s(samples[i].t_ns - samples[i - 1].t_ns);
    double client = 0;
    for (const auto& [tid, now] : samples[i].threads) {
      const auto before = samples[i - 1].threads.find(tid);
      if (before != samples[i - 1].threads.end() && !excluded(now.name, options))
        client += std::max(0.0, now.cpu_s - before->second.cpu_s);
    }
    process_cores.push_back(finite_or_null(
        dt > 0 ? (samples[i].process_cpu_s - samples[i - 1].process_cpu_s) / dt : NAN));
    client_cores.push_back(finite_or_null(dt > 0 ? client / dt : NAN));
  }
  json threads = json::array();
  for (const auto& t : summary.threads) {
    threads.push_back({{"tid", t.tid},
                       {"name", t.name},
                       {"client", t.client},
                       {"cpu_s", t.cpu_s},
                       {"busy_fraction", t.busy_fraction}});
  }
  json lag_stats = {{"mean", finite_or_null(summary.lag_ms.mean)},
                    {"p99", finite_or_null(summary.lag_ms.p99)},
                    {"max", finite_or_null(summary.lag_ms.max)}};
  const auto& loop = summary.event_loop_lag_ms;
  json loop_stats = {{"count", loop.count},
                     {"mean", finite_or_null(loop.mean)},
                     {"p50", finite_or_null(loop.p50)},
                     {"p99", finite_or_null(loop.p99)},
                     {"max", finite_or_null(loop.max)}};
  return {{"client_saturated", summary.client_saturated},
          {"reasons", summary.reasons},
          {"host_contended", summary.host_contended},
          {"host_reasons", summary.host_reasons},
          {"host",
           {{"steal_fraction", finite_or_null(summary.host_steal_fraction)},
            {"others_cores", finite_or_null(summary.others_cores)},
            {"load_mean", finite_or_null(summary.load_mean)}}},
          {"rule",
           {{"busy_threshold", options.busy_threshold},
            {"lag_threshold_ms", options.lag_threshold_ms},
            {"steal_threshold", options.steal_threshold},
            {"others_threshold", options.others_threshold},
            {"excluded_name_prefixes", options.excluded_name_prefixes}}},
          {"interval_ms", options.interval.count()},
          {"cores", summary.cores},
          {"span_s", finite_or_null(summary.span_s)},
          {"process_cpu_s", finite_or_null(summary.process_cpu_s)},
          {"client_cpu_s", summary.client_cpu_s},
          {"client_cores", finite_or_null(summary.client_cores)},
          {"wakeup_lag_ms", lag_stats},
          {"event_loop_lag_ms", loop_stats},
          {"connections",
           {{"ports_in_use_peak", summary.ports_in_use_peak},
            {"connect_errors", connect_error_count(summary.connect_errors)},
            {"connect_errors_by_cause", summary.connect_errors}}},
          {"threads", threads},
          {"series",
           {{"t_ms", t_ms},
            {"process_cpu_cores", process_cores},
            {"client_cpu_cores", client_cores},
            {"wakeup_lag_ms", lag}}}};
}

SelfMonitor::SelfMonitor(SelfMonitorOptions options) : options_(std::move(options)) {}

SelfMonitor::~SelfMonitor() {
  stop();
}

void SelfMonitor::start() {
  if (thread_.joinable())
    return;
  thread_ = std::thread([this] {
    name_this_thread("llmb-telem-self");
    loop();
  });
}

void SelfMonitor::loop() {
  {
    const std::lock_guard lock(mutex_);
    samples_.push_back(read_self_sample());
  }
  auto next = std::chrono::steady_clock::now() + options_.interval;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_until(lock, next, [this] { return stopping_; })) {
    const auto woke = std::chrono::steady_clock::now();
    SelfSample s = read_self_sample();
    s.lag_ms = std::chrono::duration<double, std::milli>(woke - next).count();
    samples_.push_back(std::move(s));
    next = std::max(next + options_.interval, std::chrono::steady_clock::now());
  }
  samples_.push_back(read_self_sample());
}

void SelfMonitor::stop() {
  if (!thread_.joinable())
    return;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

}  // namespace llmbench::telemetry
