// The cluster simulation (docs/simulator.md "Cluster"): the spec, the router's policies and
// version buckets, the KV handoff, steady runs against step-by-step runs, conversations, and
// determinism for a seed.

#include "llmbench/sim/cluster.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/sim/cluster_spec.hpp"
#include "llmbench/sim/cluster_workload.hpp"
#include "llmbench/sim/router.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace llmbench::sim {
namespace {

const std::string kData = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";

/// A spec of `count` DeepSeek-R1 TP8 H200 replicas under `policy`.
ClusterSpec mixed_spec(int count, const std::string& policy, const std::string& extra = "") {
  return parse_cluster_spec(
      R"({"model_id": "deepseek-ai/DeepSeek-R1", "groups": [{"name": "tp8", "count": )" +
          std::to_string(count) +
          R"(, "engine": {"model_profile": "deepseek-r1", "gpu": "h200", "tp": 8}}],
          "router": {"policy": ")" +
          policy + "\"}" + extra + "}",
      "test.json");
}

/// Runs `spec` over `requests` with `options`.
ClusterResult run_cluster(const ClusterSpec& spec, std::vector<ClusterRequest> requests,
                          ClusterOptions options = {}) {
  ClusterSimulation sim(spec, resolve_cluster(spec, kData), std::move(options));
  VectorSource source(std::move(requests));
  return sim.run(source);
}

/// `n` requests of `in` / `out` tokens, Poisson at `rate`/s, each prompt unique.
std::vector<ClusterRequest> poisson_requests(std::int64_t n, double rate, std::int64_t in,
                                             std::int64_t out, std::uint64_t seed) {
  Rng rng(seed, "test-arrivals");
  std::vector<ClusterRequest> r;
  double t = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    t += rng.exponential(rate);
    ClusterRequest q;
    q.arrival_ns = static_cast<TimeNs>(t * 1e9);
    q.prompt_len = in + rng.uniform_int(0, in / 2);
    q.output_len = out + rng.uniform_int(0, out / 2);
    q.input_hash = splitmix64(seed ^ static_cast<std::uint64_t>(i));
    q.segments.push_back({.key = q.input_hash, .tokens = q.prompt_len});
    r.push_back(std::move(q));
  }
  return r;
}

TEST(ClusterSpec, ParsesGroupsRouterVersionsAndLink) {
  const ClusterSpec s = parse_cluster_spec(R"({
    "model_id": "m",
    "groups": [
      {"name": "p", "role": "prefill", "count": 2, "engine": {"tp": 8}},
      {"name": "d", "role": "decode", "count": 3, "engine": {"tp": 8},
       "mtp": {"depth": 2, "acceptance": [0.8, 0.6], "draft_overhead_us": 50},
       "lockstep": {"expert_imbalance": 0.2, "dispatch": "low_latency", "overlap": false}}
    ],
    "router": {"policy": "prefix_aware", "load_cap": 8, "decode_policy": "least_tokens"},
    "versions": [{"name": "a", "share": 0.95}, {"name": "b", "share": 0.05}],
    "buckets": 100,
    "kv_transfer": {"link_gb_s": 25, "latency_us": 40}
  })",
                                           "x.json");
  ASSERT_EQ(s.groups.size(), 2u);
  EXPECT_EQ(s.groups[0].role, PoolRole::Prefill);
  EXPECT_EQ(s.groups[0].count, 2);
  EXPECT_EQ(s.groups[1].mtp.depth, 2);
  EXPECT_DOUBLE_EQ(s.groups[1].mtp.acceptance[1], 0.6);
  EXPECT_TRUE(s.groups[1].lockstep);
  EXPECT_EQ(s.groups[1].wide_ep.dispatch, DispatchMode::LowLatency);
  EXPECT_FALSE(s.groups[1].wide_ep.overlap);
  EXPECT_EQ(s.router.policy, RoutePolicy::PrefixAware);
  EXPECT_EQ(s.router.load_cap, 8);
  EXPECT_EQ(s.router.decode_policy, RoutePolicy::LeastTokens);
  EXPECT_EQ(s.buckets, 100);
  EXPECT_DOUBLE_EQ(s.kv_transfer.link_gb_s, 25);
}

/// The message of the `Exception` that `text` raises.
std::string spec_error(const std::string& text) {
  try {
    (void)parse_cluster_spec(text, "bad.json");
  } catch (const Exception& e) {
    return e.what();
  }
  return "";
}

TEST(ClusterSpec, RejectsBadFieldsNamingThem) {
  EXPECT_NE(spec_error(R"({"groups": [{"engine": {"tpp": 8}}]})").find("groups[0].engine.tpp"),
            std::string::npos);
  EXPECT_NE(spec_error(R"({"groups": [{"role": "both"}]})").find("groups[0].role"),
            std::string::npos);
  EXPECT_NE(spec_error(R"({"groups": [{"count": 0}]})").find("count"), std::string::npos);
  EXPECT_NE(
      spec_error(R"({"groups": [{}], "versions": [{"name": "a", "share": 0.5}]})").find("sum to 1"),
      std::string::npos);
  EXPECT_NE(spec_error(R"({"groups": [{"role": "mixed"}, {"role": "decode"}]})").find("mixed"),
            std::string::npos);
  EXPECT_NE(spec_error(R"({"groups": [{"mtp": {"depth": 2, "acceptance": [0.1, 0.2, 0.3]}}]})")
                .find("acceptance"),
            std::string::npos);
  EXPECT_NE(spec_error(R"({"groups": [{}], "router": {"policy": "random"}})").find("random"),
            std::string::npos);
  EXPECT_NE(spec_error(R"({"groups": [{"version": "z"}], "versions": [{"name": "a", "share": 1}]})")
                .find("unknown version"),
            std::string::npos);
  EXPECT_NE(spec_error("{\"groups\": [").find("malformed JSON"), std::string::npos);
  EXPECT_EQ(spec_error(R"({"groups": [{}]})"), "");
}

TEST(Router, FingerprintBucketsSendEachVersionItsShare) {
  // Seed note 004's canary split (80 / 15 / 5) over 100,000 distinct inputs.
  const ClusterSpec s = parse_cluster_spec(R"({"groups": [{}], "versions": [
      {"name": "v1.2.0", "share": 0.80}, {"name": "v1.3.0-beta", "share": 0.15},
      {"name": "v1.3.0-canary", "share": 0.05}]})",
                                           "x.json");
  const Router router(s, "deepseek-ai/DeepSeek-R1");
  std::vector<std::int64_t> count(3, 0);
  const std::int64_t n = 100000;
  for (std::int64_t i = 0; i < n; ++i)
    ++count[static_cast<std::size_t>(router.version_of(splitmix64(static_cast<std::uint64_t>(i))))];
  const std::vector<double> share{0.80, 0.15, 0.05};
  std::printf("shares over %lld inputs: %lld %lld %lld\n", static_cast<long long>(n),
              static_cast<long long>(count[0]), static_cast<long long>(count[1]),
              static_cast<long long>(count[2]));
  for (std::size_t v = 0; v < 3; ++v) {
    const double observed = static_cast<double>(count[v]) / static_cast<double>(n);
    EXPECT_NEAR(observed, share[v], 0.01) << "version " << v;
    // Binomial spread at 100,000: 3.5 standard deviations.
    EXPECT_NEAR(observed, share[v], 3.5 * std::sqrt(share[v] * (1 - share[v]) / n)) << v;
  }
  // The same input always gets the same version; another model id reshuffles the buckets.
  const Router other(s, "another-model");
  int moved = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(router.version_of(i), router.version_of(i));
    moved += router.bucket_of(i) != other.bucket_of(i) ? 1 : 0;
  }
  EXPECT_GT(moved, 900);
}

TEST(StreamingHistogram, AddLinearEqualsRepeatedAdds) {
  StreamingHistogram line;
  StreamingHistogram each;
  const double first = 11.3;
  const double step = 0.0137;
  for (int i = 0; i < 500; ++i) each.add(first + i * step, 3.0);
  line.add_linear(first, step, 500, 3.0);
  line.add_linear(0.0, 0.5, 4, 1.0);  // a zero and three more
  for (int i = 0; i < 4; ++i) each.add(i * 0.5, 1.0);
  line.add_linear(9.0, -0.25, 6, 2.0);  // descending
  for (int i = 0; i < 6; ++i) each.add(9.0 - i * 0.25, 2.0);
  const std::vector<double> qs{1, 10, 50, 90, 99, 100};
  const auto a = line.stats(qs);
  const auto b = each.stats(qs);
  EXPECT_EQ(a.count, b.count);
  EXPECT_NEAR(a.mean, b.mean, 1e-12 * b.mean);
  EXPECT_NEAR(a.stddev, b.stddev, 1e-9 * b.stddev);
  EXPECT_EQ(a.min, b.min);
  EXPECT_EQ(a.max, b.max);
  for (std::size_t i = 0; i < qs.size(); ++i)
    EXPECT_DOUBLE_EQ(a.percentiles[i].second, b.percentiles[i].second) << qs[i];
  // Percentiles are bucket middles: within 1/256 of the order statistic.
  StreamingHistogram h;
  for (int i = 1; i <= 1000; ++i) h.add(i);
  EXPECT_NEAR(h.percentile(50), 500.5, 500.5 / 256);
  EXPECT_NEAR(h.percentile(99), 990.01, 990.01 / 256);
  EXPECT_DOUBLE_EQ(h.percentile(100), 1000);
  EXPECT_DOUBLE_EQ(h.mean(), 500.5);
}

TEST(Cluster, ReproducesTheSingleEngineSimulation) {
  // One replica, requests all at once under a cap: the cluster with steady runs gives the
  // cluster stepping one step at a time (which is the engine's `Simulation`, as `simulate --dp`
  // shows), up to the ns rounding of step times priced in closed form.
  auto requests = poisson_requests(200, 1e9, 512, 64, 3);
  for (auto& r : requests) r.arrival_ns = 0;
  ClusterOptions with;
  with.max_concurrency = 32;
  ClusterOptions without = with;
  without.steady_runs = false;
  const auto a = run_cluster(mixed_spec(1, "least_requests"), requests, with);
  const auto b = run_cluster(mixed_spec(1, "least_requests"), requests, without);
  EXPECT_EQ(a.overall.completed, 200);
  EXPECT_GT(a.steady_steps, a.unit_steps / 2);
  EXPECT_EQ(b.steady_steps, 0);
  EXPECT_EQ(a.unit_steps, b.unit_steps);
  EXPECT_NEAR(static_cast<double>(a.end_ns), static_cast<double>(b.end_ns), 1000.0);
  EXPECT_NEAR(a.overall.ttft_ms.mean(), b.overall.ttft_ms.mean(), 1e-3);
  EXPECT_NEAR(a.overall.tpot_ms.mean(), b.overall.tpot_ms.mean(), 1e-5);
  EXPECT_DOUBLE_EQ(a.overall.itl_ms.count(), b.overall.itl_ms.count());
  EXPECT_NEAR(a.overall.itl_ms.mean(), b.overall.itl_ms.mean(), 1e-5);
}

TEST(Cluster, SteadyRunsGiveTheStepByStepRun) {
  // Open loop over four replicas: arrivals cut steady runs mid-way. Every record (token times
  // included) equals the step-by-step run's, up to the ns rounding of interpolated step times.
  const auto requests = poisson_requests(400, 40, 700, 120, 9);
  std::vector<metrics::RequestRecord> steady;
  std::vector<metrics::RequestRecord> stepwise;
  ClusterOptions a;
  a.records = RecordsMode::All;
  a.record_sink = [&](metrics::RequestRecord&& r) { steady.push_back(std::move(r)); };
  ClusterOptions b = a;
  b.steady_runs = false;
  b.record_sink = [&](metrics::RequestRecord&& r) { stepwise.push_back(std::move(r)); };
  const auto ra = run_cluster(mixed_spec(4, "least_requests"), requests, a);
  const auto rb = run_cluster(mixed_spec(4, "least_requests"), requests, b);
  EXPECT_GT(ra.steady_steps, ra.unit_steps / 2);
  ASSERT_EQ(steady.size(), 400u);
  ASSERT_EQ(stepwise.size(), 400u);
  std::map<std::int64_t, const metrics::RequestRecord*> by_id;
  for (const auto& r : stepwise) by_id[r.id] = &r;
  std::int64_t tokens = 0;
  for (const auto& r : steady) {
    const auto& s = *by_id.at(r.id);
    ASSERT_EQ(r.chunks.size(), s.chunks.size()) << r.id;
    ASSERT_EQ(static_cast<std::int64_t>(r.chunks.size()), r.output_tokens);
    for (std::size_t i = 0; i < r.chunks.size(); ++i) {
      EXPECT_NEAR(static_cast<double>(r.chunks[i].time_ns),
                  static_cast<double>(s.chunks[i].time_ns), 2000.0)
          << r.id << " token " << i;
      ++tokens;
    }
    EXPECT_NEAR(static_cast<double>(r.done_ns), static_cast<double>(s.done_ns), 2000.0);
  }
  EXPECT_GT(tokens, 400 * 120);
}

TEST(Cluster, DeterministicForASeedAcrossPoliciesVersionsAndMtp) {
  // 1,000 requests through versions, MTP and prefix-aware routing, twice with one seed.
  const ClusterSpec spec = parse_cluster_spec(R"({"model_id": "m", "groups": [
      {"name": "old", "count": 2, "version": "v1", "engine": {"tp": 8}},
      {"name": "new", "count": 2, "version": "v2", "engine": {"tp": 8},
       "mtp": {"depth": 2, "acceptance": [0.8, 0.6]}}],
      "router": {"policy": "prefix_aware"},
      "versions": [{"name": "v1", "share": 0.7}, {"name": "v2", "share": 0.3}]})",
                                              "x.json");
  const auto once = [&](std::uint64_t seed) {
    ClusterOptions o;
    o.seed = seed;
    o.records = RecordsMode::All;
    std::vector<metrics::RequestRecord> records;
    o.record_sink = [&](metrics::RequestRecord&& r) { records.push_back(std::move(r)); };
    const auto r = run_cluster(spec, poisson_requests(1000, 30, 600, 100, 5), o);
    return std::make_pair(r, records);
  };
  const auto [a, ra] = once(7);
  const auto [b, rb] = once(7);
  const auto [c, rc] = once(8);
  EXPECT_EQ(a.overall.completed, 1000);
  EXPECT_EQ(a.end_ns, b.end_ns);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.unit_steps, b.unit_steps);
  EXPECT_DOUBLE_EQ(a.overall.ttft_ms.mean(), b.overall.ttft_ms.mean());
  EXPECT_DOUBLE_EQ(a.overall.tpot_ms.percentile(99), b.overall.tpot_ms.percentile(99));
  ASSERT_EQ(ra.size(), rb.size());
  for (std::size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(ra[i].id, rb[i].id);
    EXPECT_EQ(ra[i].done_ns, rb[i].done_ns);
    EXPECT_EQ(ra[i].chunks, rb[i].chunks);
  }
  for (std::size_t v = 0; v < 2; ++v) EXPECT_EQ(a.versions[v].requests, b.versions[v].requests);
  // Another seed draws other MTP acceptances on v2: its run differs.
  EXPECT_NE(a.versions[1].latency.tpot_ms.mean(), c.versions[1].latency.tpot_ms.mean());
  EXPECT_DOUBLE_EQ(a.versions[0].latency.tpot_ms.mean(), c.versions[0].latency.tpot_ms.mean());
}

}  // namespace
}  // namespace llmbench::sim
