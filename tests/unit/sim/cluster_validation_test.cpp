// The cluster model against published deployments (docs/simulator.md "Cluster: validation"):
// per-node prefill and decode throughputs of SGLang's 96×H100 PD + large-EP deployment and of
// DeepSeek's own profile and online service (data/sim/published/disaggregated_deployments.csv),
// and MTP's TPOT speed-up against published on/off pairs (data/sim/published/mtp_pairs.csv).
// One efficiency per phase is fitted (to SGLang's 4K prefill and 2K decode: within 2% here);
// every other row is judged, within 25% (15% for MTP), as the docs state.

#include "llmbench/core/file.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/sim/cluster.hpp"
#include "llmbench/sim/cluster_spec.hpp"
#include "llmbench/sim/cluster_workload.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace llmbench::sim {
namespace {

const std::string kSource = LLMBENCH_TEST_SOURCE_DIR;
const std::string kData = kSource + "/data";

/// The published value of each row of a fixture CSV (column `value_column`), by id. Fields may
/// be quoted (the sources carry commas).
std::map<std::string, double> published(const std::string& file, const std::string& column) {
  const std::string text = read_file(kData + "/sim/published/" + file).value();
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  for (const char c : text) {
    if (quoted) {
      if (c == '"')
        quoted = false;
      else
        field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
    } else if (c == '\n') {
      row.push_back(field);
      field.clear();
      rows.push_back(row);
      row.clear();
    } else {
      field += c;
    }
  }
  std::map<std::string, double> out;
  const auto& header = rows.front();
  std::size_t col = 0;
  while (col < header.size() && header[col] != column) ++col;
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (col < rows[i].size() && !rows[i][col].empty())
      out[rows[i][0]] = std::stod(rows[i][col]);
  return out;
}

ClusterSpec spec_file(const std::string& name) {
  return load_cluster_spec(kData + "/sim/clusters/" + name + ".json");
}

/// `n` requests at once (a closed loop of `cap`), prompts of `prompt` tokens of which the first
/// `shared` are one system prefix, `output` tokens out.
std::vector<ClusterRequest> closed_batch(std::int64_t n, std::int64_t prompt, std::int64_t shared,
                                         std::int64_t output) {
  std::vector<ClusterRequest> r(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    auto& q = r[static_cast<std::size_t>(i)];
    q.prompt_len = prompt;
    q.output_len = output;
    q.input_hash = splitmix64(static_cast<std::uint64_t>(i) + 1);
    if (shared > 0)
      q.segments.push_back({.key = 7, .tokens = shared});
    q.segments.push_back({.key = q.input_hash, .tokens = prompt - shared});
  }
  return r;
}

ClusterResult run(const ClusterSpec& spec, std::vector<ClusterRequest> requests, std::int64_t cap) {
  ClusterOptions o;
  o.max_concurrency = cap;
  ClusterSimulation sim(spec, resolve_cluster(spec, kData), o);
  VectorSource source(std::move(requests));
  return sim.run(source);
}

double nodes_of(const ClusterSpec& spec) {
  double gpus = 0;
  for (const auto& g : spec.groups)
    gpus += g.count * g.engine.tp.value_or(1) * g.engine.dp.value_or(1);
  return gpus / 8;
}

/// Input tokens (cache hits included) per second per node of a prefill unit kept full.
double prefill_per_node(const ClusterSpec& spec, std::int64_t prompt, std::int64_t shared) {
  const std::int64_t ranks = spec.groups.front().engine.dp.value_or(1);
  const std::int64_t per_rank = std::max<std::int64_t>(1, 16384 / (prompt - shared));
  const std::int64_t cap = ranks * per_rank * 3 / 2;
  const auto r = run(spec, closed_batch(cap * 12, prompt, shared, 1), cap);
  return static_cast<double>(r.overall.input_tokens) / r.overall.duration_s() / nodes_of(spec);
}

/// A prefill unit under an open Poisson load of `rate` requests per second (`n` requests, seed
/// fixed): input tokens per second per node as served (first arrival to last prompt done) and
/// TTFT.
struct PrefillAtLoad {
  double per_node = 0;  ///< input tokens (cache hits included) per second per node
  double ttft_mean_ms = 0;
  double ttft_p99_ms = 0;
};

PrefillAtLoad prefill_at_load(const ClusterSpec& spec, std::int64_t prompt, std::int64_t shared,
                              double rate, std::int64_t n) {
  std::vector<ClusterRequest> requests = closed_batch(n, prompt, shared, 1);
  Rng rng(11, "prefill-arrivals");
  double t = 0;
  for (auto& q : requests) {
    t += rng.exponential(rate);
    q.arrival_ns = static_cast<TimeNs>(t * 1e9);
  }
  const auto r = run(spec, std::move(requests), 0);
  return {.per_node =
              static_cast<double>(r.overall.input_tokens) / r.overall.duration_s() / nodes_of(spec),
          .ttft_mean_ms = r.overall.ttft_ms.mean(),
          .ttft_p99_ms = r.overall.ttft_ms.percentile(99)};
}

struct Decode {
  double per_node = 0;  ///< output tokens per second per node
  double tpot_ms = 0;
};

/// A decode unit with `batch` requests per GPU, prompts of `prompt` tokens, `output` out.
Decode decode_per_node(const ClusterSpec& spec, std::int64_t batch, std::int64_t prompt,
                       std::int64_t output) {
  const std::int64_t ranks = spec.groups.front().engine.dp.value_or(1);
  const std::int64_t cap = ranks * batch;
  const auto r = run(spec, closed_batch(cap * 3, prompt, 0, output), cap);
  return {static_cast<double>(r.overall.output_tokens) / r.overall.duration_s() / nodes_of(spec),
          r.overall.tpot_ms.mean()};
}

double error(double simulated, double measured) {
  return (simulated - measured) / measured;
}

void report(const std::string& id, double simulated, double measured) {
  std::printf("%-28s simulated %10.0f  published %10.0f  error %+6.1f%%\n", id.c_str(), simulated,
              measured, 100 * error(simulated, measured));
}

TEST(Validation, SglangPrefillOnFourNodes) {
  const auto pub = published("disaggregated_deployments.csv", "value");
  const ClusterSpec spec = spec_file("sglang-prefill-ep32-h100");
  for (const auto& [id, len] : std::vector<std::pair<std::string, std::int64_t>>{
           {"sglang-prefill-1k", 1024}, {"sglang-prefill-2k", 2048}, {"sglang-prefill-4k", 4096}}) {
    const double sim = prefill_per_node(spec, len, 0);
    report(id, sim, pub.at(id));
    // 4K is the fitted row; 1K and 2K are judged.
    EXPECT_LT(std::abs(error(sim, pub.at(id))), id == "sglang-prefill-4k" ? 0.02 : 0.25) << id;
  }
}

TEST(Validation, SglangDecodeOnNineNodes) {
  const auto pub = published("disaggregated_deployments.csv", "value");
  ClusterSpec spec = spec_file("sglang-decode-ep72-h100");
  // The blog's case study: 1,800-2,000 input tokens, 100 out, 256 requests per GPU.
  const Decode tbo = decode_per_node(spec, 256, 1950, 100);
  report("sglang-decode-2k", tbo.per_node, pub.at("sglang-decode-2k"));
  EXPECT_LT(std::abs(error(tbo.per_node, pub.at("sglang-decode-2k"))), 0.02);  // fitted
  spec.groups.front().wide_ep.overlap = false;
  const Decode serial = decode_per_node(spec, 256, 1950, 100);
  report("sglang-decode-2k-no-tbo", serial.per_node, pub.at("sglang-decode-2k-no-tbo"));
  EXPECT_LT(std::abs(error(serial.per_node, pub.at("sglang-decode-2k-no-tbo"))), 0.25);
}

TEST(Validation, DeepSeekProfileData) {
  const auto pub = published("disaggregated_deployments.csv", "value");
  ClusterSpec prefill = spec_file("deepseek-prefill-ep32-h800");
  prefill.groups.front().engine.enable_prefix_caching = false;
  const double p = prefill_per_node(prefill, 4096, 0);
  report("deepseek-profile-prefill", p, pub.at("deepseek-profile-prefill"));
  EXPECT_LT(std::abs(error(p, pub.at("deepseek-profile-prefill"))), 0.25);
  const Decode d = decode_per_node(spec_file("deepseek-decode-ep128-h800"), 128, 4046, 100);
  report("deepseek-profile-decode", d.per_node, pub.at("deepseek-profile-decode"));
  EXPECT_LT(std::abs(error(d.per_node, pub.at("deepseek-profile-decode"))), 0.25);
}

TEST(Validation, DeepSeekOnlineService) {
  const auto pub = published("disaggregated_deployments.csv", "value");
  // Decode: the batch per GPU at which each user gets 21 tok/s (the overview's 20-22), prompts
  // of 4,384 and outputs of 1,211 tokens (a mean KV length of 4,989 per output token).
  const ClusterSpec decode = spec_file("deepseek-decode-ep144-h800");
  Decode at_speed;
  double best = 1e9;
  for (const std::int64_t batch : {80, 88, 96, 104}) {
    const Decode d = decode_per_node(decode, batch, 4384, 1211);
    if (std::abs(1000 / d.tpot_ms - 21) < best) {
      best = std::abs(1000 / d.tpot_ms - 21);
      at_speed = d;
    }
  }
  report("deepseek-overview-decode", at_speed.per_node, pub.at("deepseek-overview-decode"));
  EXPECT_NEAR(1000 / at_speed.tpot_ms, 21, 1.0);
  EXPECT_LT(std::abs(error(at_speed.per_node, pub.at("deepseek-overview-decode"))), 0.25);
  // Prefill capacity: 4,384-token prompts whose first 56.3% hit the cache, the unit kept full.
  // The overview's figure is a day's average under the service's load, 37% below this capacity
  // (docs/simulator.md): the check here is only that the capacity covers it; the served figure
  // below is the like-for-like one.
  const double p = prefill_per_node(spec_file("deepseek-prefill-ep32-h800"), 4384, 2468);
  report("deepseek-overview-prefill", p, pub.at("deepseek-overview-prefill"));
  EXPECT_GT(p, pub.at("deepseek-overview-prefill"));
  // The day at the published node count: 608 B input and 168 B output tokens in 24 h need this
  // many nodes at the simulated per-node figures (prefill full, decode at 21 tok/s per user);
  // DeepSeek's overview gives 226.75 nodes on average (278 at peak). A capacity model needs fewer
  // nodes than a service that keeps headroom, so the count must be below the average, within 25%.
  const double day_s = 86400;
  const double nodes = 608e9 / day_s / p + 168e9 / day_s / at_speed.per_node;
  report("deepseek-overview-nodes", nodes, pub.at("deepseek-overview-nodes"));
  EXPECT_LT(nodes, pub.at("deepseek-overview-nodes"));
  EXPECT_LT(std::abs(error(nodes, pub.at("deepseek-overview-nodes"))), 0.25);
  // Prefill as the overview measured it: the day's input over the prefill nodes in service. Of
  // the published 226.75 nodes, the decode pool takes what carries 168 B output tokens a day at
  // 21 tok/s per user (the simulated row above); the prefill pool holds the rest, and one unit of
  // 4 nodes takes its share of the day's average input rate as a Poisson stream for 600 s (its TTFT
  // settles: mean 2.0 s over 120 s, 2.8 s over 360 s, 2.9 s over 1,200 s). Its DP32 ranks step in
  // lockstep, so an open stream queues well below the closed unit's capacity.
  const double decode_nodes = 168e9 / day_s / at_speed.per_node;
  const double prefill_units = (pub.at("deepseek-overview-nodes") - decode_nodes) / 4;
  const double unit_rate = 608e9 / day_s / prefill_units / 4384;  // requests per second
  const double offered = 608e9 / day_s / (prefill_units * 4);     // input tok/s per node
  const PrefillAtLoad served =
      prefill_at_load(spec_file("deepseek-prefill-ep32-h800"), 4384, 2468, unit_rate,
                      static_cast<std::int64_t>(unit_rate * 600));
  report("deepseek-overview-prefill-served", served.per_node, pub.at("deepseek-overview-prefill"));
  std::printf(
      "  %.1f prefill units at %.1f requests/s each (%.0f tok/s per node offered): TTFT "
      "mean %.0f ms, p99 %.0f ms\n",
      prefill_units, unit_rate, offered, served.ttft_mean_ms, served.ttft_p99_ms);
  EXPECT_LT(std::abs(error(served.per_node, pub.at("deepseek-overview-prefill"))), 0.25);
  // The unit carries its share: what it served is the offered load but for the last prompts'
  // drain, and no queue grows without bound.
  EXPECT_GT(served.per_node, 0.98 * offered);
  EXPECT_LT(served.ttft_p99_ms, 10000);
}

/// TPOT with and without MTP of DeepSeek-R1 TP8 on H200 at 1 request/s (1,024 in, 256 out).
double mtp_speedup(double acceptance) {
  const auto tpot = [&](const std::string& mtp) {
    const ClusterSpec spec = parse_cluster_spec(
        R"({"groups": [{"name": "tp8", "engine": {"model_profile": "deepseek-r1", "gpu": "h200",
            "tp": 8})" +
            mtp + "}]}",
        "mtp.json");
    Rng rng(3, "mtp-arrivals");
    std::vector<ClusterRequest> r(600);
    double t = 0;
    for (std::size_t i = 0; i < r.size(); ++i) {
      t += rng.exponential(1.0);
      r[i].arrival_ns = static_cast<TimeNs>(t * 1e9);
      r[i].prompt_len = 1024;
      r[i].output_len = 256;
      r[i].input_hash = i + 1;
    }
    ClusterSimulation sim(spec, resolve_cluster(spec, kData), ClusterOptions{});
    VectorSource source(std::move(r));
    return sim.run(source).overall.tpot_ms.mean();
  };
  return tpot("") /
         tpot(R"(, "mtp": {"depth": 1, "acceptance": )" + std::to_string(acceptance) + "}");
}

TEST(Validation, MtpSpeedupMatchesPublishedPairs) {
  const auto pub = published("mtp_pairs.csv", "speedup");
  // vLLM's pair: acceptance 81-82.3% (the middle taken); DeepSeek-V3's: 85-90%.
  const double vllm = mtp_speedup(0.8165);
  const double v3 = mtp_speedup(0.875);
  std::printf(
      "MTP speed-up: vLLM pair simulated %.3f published %.2f; V3 report simulated %.3f "
      "published %.2f\n",
      vllm, pub.at("vllm-pr12755-qps1"), v3, pub.at("deepseek-v3-report"));
  EXPECT_LT(std::abs(error(vllm, pub.at("vllm-pr12755-qps1"))), 0.15);
  EXPECT_LT(std::abs(error(v3, pub.at("deepseek-v3-report"))), 0.15);
  EXPECT_GT(v3, vllm);  // more acceptance, more speed-up
}

}  // namespace
}  // namespace llmbench::sim
