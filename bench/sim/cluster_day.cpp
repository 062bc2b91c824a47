// A day of traffic through a simulated cluster (docs/performance.md "Cluster: a day of
// traffic"): the Azure LLM inference conversation trace (2023) tiled to REQUESTS requests over
// DAY_S seconds (copies at seeded offsets, each keeping the trace's shape), routed over
// REPLICAS DeepSeek-R1 TP8 H200 replicas, records summarised on the fly (none kept). Prints the
// wall and CPU seconds, the events and steps, and the run's latencies.
// Usage: cluster_day_bench [--trace CSV] [--requests 10000000] [--replicas 64] [--day-s 86400]
//        [--policy least_requests] [--seed 0] [--data DIR]

#include "llmbench/core/clock.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/core/heap.hpp"
#include "llmbench/sim/cluster.hpp"
#include "llmbench/workload/trace.hpp"

#include <fmt/core.h>

#include <cstdlib>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace {

using namespace llmbench;

struct Args {
  std::string trace = std::string(LLMBENCH_SOURCE_DIR) +
                      "/../shared/data/traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv";
  std::int64_t requests = 10'000'000;
  int replicas = 64;
  double day_s = 86400;
  std::string policy = "least_requests";
  std::uint64_t seed = 0;
  std::string data = std::string(LLMBENCH_SOURCE_DIR) + "/data";
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const std::string v = argv[i + 1];
    if (k == "--trace")
      a.trace = v;
    else if (k == "--requests")
      a.requests = std::stoll(v);
    else if (k == "--replicas")
      a.replicas = std::stoi(v);
    else if (k == "--day-s")
      a.day_s = std::stod(v);
    else if (k == "--policy")
      a.policy = v;
    else if (k == "--seed")
      a.seed = std::stoull(v);
    else if (k == "--data")
      a.data = v;
    else
      throw std::runtime_error("unknown flag " + k);
  }
  return a;
}

double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

int main(int argc, char** argv) {
  use_huge_page_heap(std::size_t{256} << 20);  // as `llmbench` does at start
  const Args a = parse(argc, argv);
  const TimeNs t0 = steady_now_ns();
  const std::string text = read_file(a.trace).value();
  std::vector<sim::TraceRequest> rows;
  for (const auto& r : workload::parse_trace(text, a.trace, workload::TraceFormat::Azure))
    rows.push_back({.time_ns = r.time_ns, .input_len = r.input_len, .output_len = r.output_len});
  const sim::ClusterSpec spec = sim::parse_cluster_spec(
      fmt::format(R"({{"model_id": "deepseek-ai/DeepSeek-R1", "groups": [{{"name": "tp8",
        "count": {}, "engine": {{"model_profile": "deepseek-r1", "gpu": "h200", "tp": 8}}}}],
        "router": {{"policy": "{}"}}}})",
                  a.replicas, a.policy),
      "cluster_day_bench");
  sim::ClusterOptions options;
  options.seed = a.seed;
  sim::ClusterSimulation cluster(spec, sim::resolve_cluster(spec, a.data), options);
  sim::TiledTraceSource source(std::move(rows), a.requests, a.day_s, a.seed);
  const TimeNs t1 = steady_now_ns();
  const double c1 = cpu_s();
  const sim::ClusterResult r = cluster.run(source);
  const double wall = ns_to_s(steady_now_ns() - t1);
  const double cpu = cpu_s() - c1;
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  fmt::print("requests {} on {} replicas, {:.0f} simulated s ({:.2f} h)\n", r.overall.completed,
             r.engines, ns_to_s(r.end_ns), ns_to_s(r.end_ns) / 3600);
  fmt::print("setup {:.2f} s; run {:.2f} s wall, {:.2f} s CPU; max RSS {:.0f} MB\n",
             ns_to_s(t1 - t0), wall, cpu, static_cast<double>(u.ru_maxrss) / 1024);
  fmt::print("events {}, unit steps {} ({:.1f}% in steady runs), {:.0f} simulated s per wall s\n",
             r.events, r.unit_steps,
             100.0 * static_cast<double>(r.steady_steps) /
                 static_cast<double>(std::max<std::int64_t>(r.unit_steps, 1)),
             ns_to_s(r.end_ns) / wall);
  fmt::print(
      "TTFT mean {:.1f} ms p99 {:.1f} ms; TPOT mean {:.2f} ms p99 {:.2f} ms; "
      "output {:.0f} tok/s\n",
      r.overall.ttft_ms.mean(), r.overall.ttft_ms.percentile(99), r.overall.tpot_ms.mean(),
      r.overall.tpot_ms.percentile(99),
      static_cast<double>(r.overall.output_tokens) / r.overall.duration_s());
  return r.overall.completed == a.requests ? 0 : 1;
}
