// The client self-monitor (telemetry/self_monitor.hpp): the saturation rule on fixed samples,
// and the live reading of this process's threads from /proc.

#include "llmbench/telemetry/self_monitor.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <ctime>
#include <string>
#include <thread>

namespace llmbench::telemetry {
namespace {

SelfSample at(double t_s, double process_cpu_s, double lag_ms, std::map<int, ThreadTime> threads) {
  return SelfSample{.t_ns = static_cast<TimeNs>(t_s * 1e9),
                    .process_cpu_s = process_cpu_s,
                    .lag_ms = lag_ms,
                    .threads = std::move(threads)};
}

SelfMonitorOptions four_cores() {
  SelfMonitorOptions o;
  o.cores = 4;
  return o;
}

TEST(SelfMonitor, ABusyClientThreadAndLateWakeupsMeanSaturated) {
  const std::vector<SelfSample> samples = {
      at(0, 0, NAN, {{10, {"llmbench", 0}}, {11, {"llmb-http-0", 0}}}),
      at(1, 2, 2, {{10, {"llmbench", 0.95}}, {11, {"llmb-http-0", 1}}}),
      at(2, 4, 30, {{10, {"llmbench", 1.9}}, {11, {"llmb-http-0", 2}}, {12, {"late", 5}}}),
  };
  const auto s = summarize_self(samples, four_cores());
  EXPECT_EQ(s.span_s, 2);
  EXPECT_EQ(s.process_cpu_s, 4);
  ASSERT_EQ(s.threads.size(), 3U);
  EXPECT_EQ(s.threads[0].tid, 11);  // largest CPU time first
  EXPECT_FALSE(s.threads[0].client);
  EXPECT_EQ(s.threads[1].tid, 10);
  EXPECT_DOUBLE_EQ(s.threads[1].busy_fraction, 0.95);
  EXPECT_EQ(s.threads[2].sampled_s, 0);  // seen once: no interval to count
  EXPECT_DOUBLE_EQ(s.client_cpu_s, 1.9);
  EXPECT_DOUBLE_EQ(s.client_cores, 0.95);
  EXPECT_DOUBLE_EQ(s.lag_ms.p99, 2 + 28 * 0.99);
  EXPECT_TRUE(s.client_saturated);
  ASSERT_EQ(s.reasons.size(), 2U);
  EXPECT_EQ(s.reasons[0], "client thread 10 (llmbench) was busy 95% of 2.0 s");
  EXPECT_EQ(s.reasons[1],
            "the monitor thread woke up to 29.7 ms late (p99): the host's CPUs were saturated");
  const auto j = self_monitor_json(samples, s, four_cores(), 0);
  EXPECT_EQ(j["client_saturated"], true);
  EXPECT_EQ(j["series"]["process_cpu_cores"], nlohmann::json::parse("[null, 2.0, 2.0]"));
  EXPECT_DOUBLE_EQ(j["series"]["client_cpu_cores"][2].get<double>(), 0.95);
}

TEST(SelfMonitor, ReportsThePortsInUseAndTheConnectErrorsByCause) {
  SelfMonitorSummary s;
  add_connections(s, 12, {{"ECONNREFUSED", 3}, {"EADDRNOTAVAIL", 2}});
  EXPECT_EQ(connect_error_count(s.connect_errors), 5);
  const auto j = self_monitor_json({}, s, four_cores(), 0);
  EXPECT_EQ(j["connections"]["ports_in_use_peak"], 12);
  EXPECT_EQ(j["connections"]["connect_errors"], 5);
  EXPECT_EQ(j["connections"]["connect_errors_by_cause"]["ECONNREFUSED"], 3);
  EXPECT_EQ(j["connections"]["connect_errors_by_cause"]["EADDRNOTAVAIL"], 2);
  // None: a count of zero and an empty object.
  const auto none = self_monitor_json({}, SelfMonitorSummary{}, four_cores(), 0);
  EXPECT_EQ(none["connections"]["connect_errors"], 0);
  EXPECT_TRUE(none["connections"]["connect_errors_by_cause"].empty());
}

TEST(SelfMonitor, HostCountersAreReadFromProcStat) {
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice, in ticks of 100 Hz.
  const HostCpu h =
      parse_host_cpu("cpu  100 20 30 800 10 5 5 40 0 0", "3.25 2.00 1.00 2/300 42", 100);
  EXPECT_DOUBLE_EQ(h.busy_s, 1.6);
  EXPECT_DOUBLE_EQ(h.steal_s, 0.4);
  EXPECT_DOUBLE_EQ(h.total_s, 10.1);
  EXPECT_DOUBLE_EQ(h.load1, 3.25);
  EXPECT_TRUE(std::isnan(parse_host_cpu("intr 1 2", "", 100).busy_s));
  // The live host has the line.
  EXPECT_GT(read_self_sample().host.total_s, 0);
}

TEST(SelfMonitor, LagWhileOthersTakeTheHostIsTheHostsNotTheClients) {
  // The client used 0.2 of 4 cores, yet its loops woke 30 ms late: the hypervisor stole 40% of
  // the CPU time and other processes kept 3 cores busy. That is the host, not the client.
  auto a = at(0, 0, NAN, {{10, {"llmbench", 0}}});
  auto b = at(1, 0.2, 30, {{10, {"llmbench", 0.2}}});
  auto c = at(2, 0.4, 30, {{10, {"llmbench", 0.4}}});
  a.host = {.busy_s = 0, .steal_s = 0, .total_s = 0, .load1 = 6};
  b.host = {.busy_s = 3.2, .steal_s = 1.6, .total_s = 4, .load1 = 6};
  c.host = {.busy_s = 6.4, .steal_s = 3.2, .total_s = 8, .load1 = 6};
  const auto s = summarize_self({a, b, c}, four_cores());
  EXPECT_DOUBLE_EQ(s.host_steal_fraction, 0.4);
  EXPECT_DOUBLE_EQ(s.others_cores, 3.0);
  EXPECT_DOUBLE_EQ(s.load_mean, 6);
  EXPECT_FALSE(s.client_saturated);
  EXPECT_TRUE(s.reasons.empty());
  EXPECT_TRUE(s.host_contended);
  ASSERT_EQ(s.host_reasons.size(), 1U);
  EXPECT_NE(s.host_reasons[0].find("the host's CPU was taken by others (40% of the CPU time "
                                   "stolen by the hypervisor, other processes used 3.00 of 4 "
                                   "cores, load average 6.0 on 4 cores)"),
            std::string::npos)
      << s.host_reasons[0];
  // The same lag with the client's own thread busy is the client's.
  auto d = at(1, 0.95, 30, {{10, {"llmbench", 0.95}}});
  d.host = b.host;
  auto e = at(2, 1.9, 30, {{10, {"llmbench", 1.9}}});
  e.host = c.host;
  const auto own = summarize_self({a, d, e}, four_cores());
  EXPECT_TRUE(own.client_saturated);
  EXPECT_FALSE(own.host_contended);
  // And lag with no sign of others stays the client's (nothing else explains it).
  auto quiet_b = b;
  quiet_b.host = {.busy_s = 0.2, .steal_s = 0, .total_s = 4, .load1 = 0.5};
  auto quiet_c = c;
  quiet_c.host = {.busy_s = 0.4, .steal_s = 0, .total_s = 8, .load1 = 0.5};
  const auto quiet = summarize_self({a, quiet_b, quiet_c}, four_cores());
  EXPECT_TRUE(quiet.client_saturated);
  EXPECT_FALSE(quiet.host_contended);
}

TEST(SelfMonitor, AllCoresBusyIsSaturatedAndAnIdleClientIsNot) {
  std::map<int, ThreadTime> t0;
  std::map<int, ThreadTime> t1;
  for (int i = 0; i < 4; ++i) {
    t0[i] = {"llmbench", 0};
    t1[i] = {"llmbench", 0.85};  // each thread below 90 %, together 3.4 of 4 cores
  }
  auto s = summarize_self({at(0, 0, NAN, t0), at(1, 3.4, 1, t1)}, four_cores());
  EXPECT_FALSE(s.client_saturated);
  SelfMonitorOptions three = four_cores();
  three.cores = 3;  // 3.4 cores used of 3
  s = summarize_self({at(0, 0, NAN, t0), at(1, 3.4, 1, t1)}, three);
  ASSERT_TRUE(s.client_saturated);
  EXPECT_EQ(s.reasons.back(), "the client threads used 3.40 of 3 cores");
  EXPECT_FALSE(summarize_self({}, four_cores()).client_saturated);
}

/// Spins until this thread has used `cpu_s` of CPU time (a CPU-time amount, not a wall time).
void burn_cpu(double cpu_s) {
  timespec ts{};
  for (;;) {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    if (static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9 >= cpu_s)
      return;
  }
}

TEST(SelfMonitor, LateEventLoopsAreSaturationAndPromptOnesAreNot) {
  const std::vector<SelfSample> samples = {
      at(0, 0, NAN, {{10, {"llmb-load-0", 0}}}),
      at(1, 0.1, 0.5, {{10, {"llmb-load-0", 0.1}}}),
  };
  auto prompt = summarize_self(samples, four_cores());
  ASSERT_FALSE(prompt.client_saturated);
  std::vector<float> lags(200, 0.2F);
  add_event_loop_lag(prompt, lags, four_cores());
  EXPECT_EQ(prompt.event_loop_lag_ms.count, 200U);
  EXPECT_NEAR(prompt.event_loop_lag_ms.p99, 0.2, 1e-6);
  EXPECT_FALSE(prompt.client_saturated);

  auto late = summarize_self(samples, four_cores());
  for (std::size_t i = 0; i < 5; ++i) lags[i * 40] = 25.0F;  // 5 of 200 wake-ups 25 ms late
  add_event_loop_lag(late, lags, four_cores());
  EXPECT_NEAR(late.event_loop_lag_ms.max, 25.0, 1e-6);
  EXPECT_GE(late.event_loop_lag_ms.p99, 10.0);
  EXPECT_TRUE(late.client_saturated);
  ASSERT_EQ(late.reasons.size(), 1U);
  EXPECT_NE(late.reasons[0].find("event loops ran up to"), std::string::npos) << late.reasons[0];
  const auto j = self_monitor_json(samples, late, four_cores(), 0);
  EXPECT_EQ(j["event_loop_lag_ms"]["count"], 200);
  EXPECT_EQ(j["event_loop_lag_ms"]["max"], 25.0);
  EXPECT_EQ(j["client_saturated"], true);
}

TEST(SelfMonitor, ReadsThisProcessThreadsByName) {
  SelfMonitor monitor(SelfMonitorOptions{.interval = std::chrono::milliseconds(10)});
  monitor.start();
  std::thread worker([] {
    name_this_thread("test-burner");
    burn_cpu(0.1);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // seen again after the work
  });
  worker.join();
  monitor.stop();
  monitor.stop();
  const auto& samples = monitor.samples();
  ASSERT_GE(samples.size(), 3U);
  EXPECT_TRUE(std::isnan(samples.front().lag_ms));
  EXPECT_GE(samples.back().process_cpu_s - samples.front().process_cpu_s, 0.09);
  const auto s = summarize_self(samples, monitor.options());
  bool saw_monitor = false;
  double burner_cpu = 0;
  for (const auto& t : s.threads) {
    if (t.name == "llmb-telem-self") {
      saw_monitor = true;
      EXPECT_FALSE(t.client);
    }
    if (t.name == "test-burner")
      burner_cpu = t.cpu_s;
  }
  EXPECT_TRUE(saw_monitor);
  // /proc counts in clock ticks (10 ms at USER_HZ 100), and the first interval may miss a bit.
  EXPECT_GE(burner_cpu, 0.05);
  EXPECT_LE(burner_cpu, 0.2);
}

}  // namespace
}  // namespace llmbench::telemetry
