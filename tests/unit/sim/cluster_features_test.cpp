// The cluster's serving features (docs/simulator.md "Cluster"): prefix-aware and session
// routing on conversations, the PD KV handoff, MTP's tokens per step and cost, DP attention in
// lockstep with wide EP.

#include "llmbench/core/rng.hpp"
#include "llmbench/sim/cluster.hpp"
#include "llmbench/sim/cluster_spec.hpp"
#include "llmbench/sim/cluster_workload.hpp"
#include "llmbench/sim/lockstep.hpp"
#include "llmbench/sim/speculative.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace llmbench::sim {
namespace {

const std::string kData = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";

ClusterResult run_spec(const std::string& json, RequestSource& source,
                       ClusterOptions options = {}) {
  const ClusterSpec spec = parse_cluster_spec(json, "test.json");
  ClusterSimulation sim(spec, resolve_cluster(spec, kData), std::move(options));
  return sim.run(source);
}

double hit_rate(const ClusterResult& r) {
  std::int64_t q = 0;
  std::int64_t h = 0;
  for (const auto& x : r.replicas) {
    q += x.prefix_queries;
    h += x.prefix_hits;
  }
  return q > 0 ? static_cast<double>(h) / static_cast<double>(q) : 0.0;
}

std::string routed(const std::string& policy) {
  return R"({"groups": [{"name": "r", "count": 8, "engine": {"model_profile": "deepseek-r1",
      "gpu": "h200", "tp": 8}}], "router": {"policy": ")" +
         policy + R"(", "load_cap": 16}})";
}

TEST(ClusterRouting, PrefixAwareBeatsRoundRobinOnConversations) {
  // 600 conversations of 6 turns (a 2k-token shared system prompt, ~1k new tokens a turn)
  // over 8 replicas at 8 conversations/s, 2 s think time: a turn finds its history cached only
  // on the replica that served the turn before.
  ConversationShape shape{.count = 600,
                          .turns = 6,
                          .system_tokens = 2048,
                          .user_tokens = 1000,
                          .output_tokens = 200,
                          .range = 0.5,
                          .rate_per_s = 8,
                          .seed = 11};
  const ThinkTime think{.mean_ms = 2000, .exponential = true, .seed = 11};
  ConversationSource rr_source(make_conversations(shape), think);
  ConversationSource px_source(make_conversations(shape), think);
  ConversationSource sa_source(make_conversations(shape), think);
  const auto rr = run_spec(routed("round_robin"), rr_source);
  const auto px = run_spec(routed("prefix_aware"), px_source);
  const auto sa = run_spec(routed("session_affinity"), sa_source);
  ASSERT_EQ(rr.overall.completed, 3600);
  ASSERT_EQ(px.overall.completed, 3600);
  ASSERT_EQ(sa.overall.completed, 3600);
  const double rr_hit = hit_rate(rr);
  const double px_hit = hit_rate(px);
  std::printf("hit rate: round robin %.3f, prefix-aware %.3f, session %.3f\n", rr_hit, px_hit,
              hit_rate(sa));
  std::printf("mean TTFT ms: round robin %.1f, prefix-aware %.1f, session %.1f\n",
              rr.overall.ttft_ms.mean(), px.overall.ttft_ms.mean(), sa.overall.ttft_ms.mean());
  EXPECT_GT(px_hit, rr_hit + 0.2);
  EXPECT_LT(px.overall.ttft_ms.mean(), 0.9 * rr.overall.ttft_ms.mean());
  EXPECT_GT(hit_rate(sa), rr_hit + 0.2);
  // Every replica served: the load cap keeps prefix routing from piling onto one replica.
  for (const auto& x : px.replicas) EXPECT_GT(x.requests, 3600 / 8 / 4);
}

TEST(ClusterRouting, ConversationTurnsArriveAfterThePreviousTurnEnds) {
  ConversationShape shape{.count = 20, .turns = 3, .rate_per_s = 2, .seed = 4};
  const ThinkTime think{.mean_ms = 500, .exponential = false, .seed = 0};
  ConversationSource source(make_conversations(shape), think);
  std::vector<metrics::RequestRecord> records;
  ClusterOptions o;
  o.records = RecordsMode::All;
  o.record_sink = [&](metrics::RequestRecord&& r) { records.push_back(std::move(r)); };
  const auto r = run_spec(routed("session_affinity"), source, o);
  ASSERT_EQ(r.overall.completed, 60);
  std::map<std::pair<std::int64_t, std::int64_t>, const metrics::RequestRecord*> turn;
  for (const auto& x : records) turn[{x.conversation_id, x.turn}] = &x;
  for (std::int64_t c = 0; c < 20; ++c) {
    for (std::int64_t t = 2; t <= 3; ++t) {
      const auto* prev = turn.at({c, t - 1});
      const auto* now = turn.at({c, t});
      EXPECT_EQ(now->scheduled_ns, prev->done_ns + 500'000'000) << c << " turn " << t;
      EXPECT_GT(now->prompt_len, prev->prompt_len + prev->output_tokens);
      EXPECT_GT(now->cached_tokens, prev->prompt_len / 2);  // its history was cached
    }
  }
}

TEST(ClusterPd, KvMovesOverTheLinkBeforeTheDecodeReplicaTakesIt) {
  // One request through a prefill and a decode replica: its first token leaves once the
  // 4,000-token prompt's MLA latents (70,272 B per token in BF16) crossed a 10 GB/s link.
  const std::string spec = R"({"groups": [
      {"name": "p", "role": "prefill", "engine": {"model_profile": "deepseek-r1", "gpu": "h200", "tp": 8}},
      {"name": "d", "role": "decode", "engine": {"model_profile": "deepseek-r1", "gpu": "h200", "tp": 8}}],
      "kv_transfer": {"link_gb_s": 10, "latency_us": 100}})";
  ClusterRequest q;
  q.prompt_len = 4000;
  q.output_len = 50;
  q.input_hash = 1;
  VectorSource source({q});
  std::vector<metrics::RequestRecord> records;
  ClusterOptions o;
  o.records = RecordsMode::All;
  o.record_sink = [&](metrics::RequestRecord&& r) { records.push_back(std::move(r)); };
  const auto r = run_spec(spec, source, o);
  ASSERT_EQ(records.size(), 1u);
  const double transfer_ms = 4000.0 * 70272.0 / 10e9 * 1e3 + 0.1;
  EXPECT_NEAR(r.pools.transfer_ms.mean(), transfer_ms, 1e-3);
  EXPECT_EQ(r.kv_transfers, 1);
  EXPECT_DOUBLE_EQ(r.kv_bytes, 4000.0 * 70272.0);
  // TTFT = prefill + transfer + admission (an idle decode replica takes it at once).
  EXPECT_NEAR(r.overall.ttft_ms.mean(),
              r.pools.prefill_ms.mean() + transfer_ms + r.pools.admit_ms.mean(), 1e-3);
  EXPECT_NEAR(r.pools.admit_ms.mean(), 0.0, 1e-9);
  ASSERT_EQ(records[0].chunks.size(), 50u);
  // The decode replica computed no prompt: its steps only decode.
  EXPECT_EQ(r.replicas[1].prefix_queries, 0);
  EXPECT_EQ(r.replicas[1].output_tokens, 49);
  EXPECT_EQ(r.replicas[0].input_tokens, 4000);
}

TEST(ClusterPd, DecodePoolAdmitsArrivingKvWhenBlocksFree) {
  // A decode replica whose cache holds two requests: the third waits for a finish.
  const std::string spec = R"({"groups": [
      {"name": "p", "role": "prefill", "engine": {"model_profile": "deepseek-r1", "gpu": "h200", "tp": 8}},
      {"name": "d", "role": "decode", "engine": {"model_profile": "deepseek-r1", "gpu": "h200",
       "tp": 8, "num_gpu_blocks_override": 40}}]})";
  std::vector<ClusterRequest> qs(3);
  for (std::size_t i = 0; i < 3; ++i) {
    qs[i].prompt_len = 1200;
    qs[i].output_len = 20;
    qs[i].input_hash = i + 1;
  }
  VectorSource source(std::move(qs));
  const auto r = run_spec(spec, source);
  EXPECT_EQ(r.overall.completed, 3);
  // One of them waited for blocks on the decode replica well past its KV's arrival.
  EXPECT_GT(r.pools.admit_ms.percentile(100), 100.0);
  EXPECT_NEAR(r.pools.admit_ms.percentile(0), 0.0, 1e-9);
}

TEST(Mtp, TokensPerStepFollowTheAcceptance) {
  MtpConfig one{.depth = 1, .acceptance = {0.8}, .draft_overhead_us = 0};
  EXPECT_DOUBLE_EQ(expected_tokens_per_step(one), 1.8);
  MtpConfig three{.depth = 3, .acceptance = {0.8, 0.7, 0.6}, .draft_overhead_us = 0};
  EXPECT_DOUBLE_EQ(expected_tokens_per_step(three), 1 + 0.8 + 0.8 * 0.7 + 0.8 * 0.7 * 0.6);
  // Drawn steps average tokens / τ (±2 % over 2,000 requests of 500 tokens).
  double steps = 0;
  for (std::uint64_t s = 0; s < 2000; ++s)
    steps += static_cast<double>(decode_steps_for(three, 500, s));
  EXPECT_NEAR(steps / 2000, 500 / expected_tokens_per_step(three), 0.02 * 500 / 2.696);
  EXPECT_EQ(decode_steps_for(MtpConfig{}, 500, 1), 500);
  EXPECT_EQ(
      decode_steps_for(MtpConfig{.depth = 2, .acceptance = {1.0}, .draft_overhead_us = 0}, 9, 3),
      3);
}

TEST(Mtp, VerificationAndDraftsCostTheStep) {
  const auto model = load_model_profile(kData, "deepseek-r1");
  const auto gpu = load_hardware_profile(kData, "h200");
  const ExecModelParams p{.model = model, .gpu = gpu, .tp = 8, .efficiency = gpu.efficiency};
  const auto base = make_exec_model(ExecModelKind::Roofline, p);
  BatchSums decodes;
  decodes.add_decodes(32, 32 * 2000);
  const double off = base->step_cost_of_sums(decodes).total_s();
  const MtpConfig k1{.depth = 1, .acceptance = {0.8}, .draft_overhead_us = 100};
  const MtpConfig k3{.depth = 3, .acceptance = {0.8}, .draft_overhead_us = 100};
  const double on1 = mtp_step_cost(*base, p, k1, decodes).total_s();
  const double on3 = mtp_step_cost(*base, p, k3, decodes).total_s();
  EXPECT_GT(on1, off);
  EXPECT_GT(on3, on1);
  // A memory-bound decode step costs little more for one draft: well under 1.8× (MTP pays).
  EXPECT_LT(on1 / off, 1.3);
  // Prefill-only steps are not touched.
  BatchSums prefill;
  prefill.add(1000, 0, true);
  EXPECT_DOUBLE_EQ(mtp_step_cost(*base, p, k1, prefill).total_s(),
                   base->step_cost_of_sums(prefill).total_s());
}

TEST(Lockstep, TheSlowestRankSetsTheStepAndImbalanceSlowsTheExperts) {
  const auto model = load_model_profile(kData, "deepseek-v3");
  const auto gpu = load_hardware_profile(kData, "h800");
  const ExecModelParams p{
      .model = model, .gpu = gpu, .tp = 1, .efficiency = gpu.efficiency, .ep = 32, .dp = 32};
  const std::shared_ptr<const ExecTimeModel> rank = make_exec_model(ExecModelKind::Roofline, p);
  WideEpConfig w;
  const LockstepPricer balanced(rank, p, w, MtpConfig{});
  std::vector<BatchSums> ranks(32);
  for (auto& r : ranks) r.add(4096, 0, true);  // a 4k prompt each: the experts compute-bound
  const LockstepCost even = balanced.cost(ranks);
  std::vector<BatchSums> skewed = ranks;
  skewed[5] = BatchSums{};
  skewed[5].add(4096, 8192, true);  // one rank's prompt continues a longer one
  const LockstepCost slow = balanced.cost(skewed);
  EXPECT_GT(slow.step_s, even.step_s);
  EXPECT_NEAR(slow.moe_s, even.moe_s, 1e-12);  // same tokens: the experts do the same work
  w.expert_imbalance = 0.5;
  const LockstepCost hot = LockstepPricer(rank, p, w, MtpConfig{}).cost(ranks);
  EXPECT_GT(hot.moe_s, even.moe_s);
  EXPECT_GT(hot.comm_s, even.comm_s);
  // Overlap takes the longer of compute and communication, no overlap their sum.
  w.expert_imbalance = 0;
  w.overlap = false;
  const LockstepCost serial = LockstepPricer(rank, p, w, MtpConfig{}).cost(ranks);
  EXPECT_NEAR(serial.step_s, even.fixed_s + even.compute_s + even.comm_s, 1e-12);
  EXPECT_NEAR(even.step_s, even.fixed_s + std::max(even.compute_s, even.comm_s), 1e-12);
  // DeepEP normal mode sends a token once per remote node, low latency once per remote expert.
  WideEpConfig ll;
  ll.dispatch = DispatchMode::LowLatency;
  EXPECT_GT(internode_bytes_per_token(model, ll, 4), internode_bytes_per_token(model, w, 4));
  EXPECT_DOUBLE_EQ(internode_bytes_per_token(model, w, 1), 0.0);
  // 8 experts on 4 nodes: 4·(1 − (3/4)^8) = 3.6 nodes, 3/4 of them remote; FP8 out, BF16 back.
  EXPECT_NEAR(internode_bytes_per_token(model, w, 4),
              4 * (1 - std::pow(0.75, 8)) * 0.75 * (7168 + 2 * 7168), 1e-6);
}

}  // namespace
}  // namespace llmbench::sim
