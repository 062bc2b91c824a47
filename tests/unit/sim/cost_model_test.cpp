#include "llmbench/sim/cost_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace llmbench::sim {
namespace {

const std::string kData = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";

/// A tiny dense model: 2 layers, h 1024, 8 heads of 128 (MHA), FFN 4096, vocab 1000, BF16.
ModelProfile tiny_model() {
  ModelProfile m;
  m.name = "tiny";
  m.attention = AttentionKind::Gqa;
  m.num_layers = 2;
  m.hidden_size = 1024;
  m.num_heads = 8;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.intermediate_size = 4096;
  m.vocab_size = 1000;
  m.max_position_embeddings = 4096;
  return m;
}

/// 100 TFLOP/s, 1000 GB/s, 100 GB/s links; efficiencies 1 and no fixed costs.
ExecModelParams ideal(const ModelProfile& m, int tp) {
  ExecModelParams p;
  p.model = m;
  p.gpu.name = "ideal";
  p.gpu.bf16_tflops = 100;
  p.gpu.memory_bandwidth_gb_s = 1000;
  p.gpu.link_bandwidth_gb_s = 100;
  p.tp = tp;
  p.efficiency = Efficiency{1.0, 1.0, 0, 0, 0, 10};
  return p;
}

TEST(ExpectedExperts, Formula) {
  EXPECT_DOUBLE_EQ(expected_distinct_experts(256, 8, 1), 8.0);
  EXPECT_NEAR(expected_distinct_experts(256, 8, 8), 256.0 * (1 - std::pow(31.0 / 32.0, 8)), 1e-9);
  EXPECT_NEAR(expected_distinct_experts(256, 8, 8), 57.42, 0.01);
  EXPECT_NEAR(expected_distinct_experts(256, 8, 10000), 256.0, 1e-6);
  EXPECT_DOUBLE_EQ(expected_distinct_experts(256, 8, 0), 0.0);
}

TEST(Roofline, DecodeOfADenseModelIsBandwidthBound) {
  const auto m = tiny_model();
  // Per layer: attention 4·1024² = 4,194,304, FFN 3·1024·4096 = 12,582,912 → 33,554,432 total.
  ASSERT_EQ(m.dense_params(), 33'554'432);
  const RooflineModel model(ideal(m, 1));
  // One decode with 99 cached tokens.
  const auto c = model.step_cost({SeqWork{1, 99, true}});
  // Weights 67,108,864 B at 1e12 B/s; FLOPs 2·33.5M at 1e14 would take only 0.67 µs.
  EXPECT_NEAR(c.dense_linear_s, 67.108864e-6, 1e-15);
  // KV read: 100 tokens × (2·8·128·2 B) × 2 layers = 819,200 B.
  EXPECT_NEAR(c.attention_decode_s, 0.8192e-6, 1e-15);
  EXPECT_DOUBLE_EQ(c.attention_prefill_s, 0.0);
  // lm_head BF16: 1000·1024·2 B.
  EXPECT_NEAR(c.lm_head_s, 2.048e-6, 1e-15);
  EXPECT_DOUBLE_EQ(c.moe_s, 0.0);
  EXPECT_DOUBLE_EQ(c.allreduce_s, 0.0);
  EXPECT_EQ(model.step_time_ns({SeqWork{1, 99, true}}),
            std::llround((67.108864 + 0.8192 + 2.048) * 1e3));
}

TEST(Roofline, PrefillIsComputeBound) {
  const auto m = tiny_model();
  const RooflineModel model(ideal(m, 1));
  const auto c = model.step_cost({SeqWork{4096, 0, true}});
  // 2 · 4096 · 33,554,432 FLOPs at 1e14 FLOP/s.
  EXPECT_NEAR(c.dense_linear_s, 2.0 * 4096 * 33'554'432 / 1e14, 1e-12);
  // Causal attention: 4 · 8 · 128 · q · q/2 per layer, 2 layers.
  EXPECT_NEAR(c.attention_prefill_s, 2 * 4.0 * 8 * 128 * 4096 * 2048.0 / 1e14, 1e-12);
}

TEST(Roofline, TensorParallelAllReduce) {
  const auto m = tiny_model();
  const RooflineModel model(ideal(m, 4));
  const auto c = model.step_cost({SeqWork{1, 0, true}, SeqWork{1, 10, true}});
  // 2 per layer × 2 layers × (10 µs + 2·3/4 · 2 tokens · 1024 · 2 B / 100 GB/s).
  EXPECT_NEAR(c.allreduce_s, 4 * (10e-6 + 1.5 * 4096.0 / 100e9), 1e-15);
  // Weights split 4 ways.
  EXPECT_NEAR(c.dense_linear_s, 67.108864e-6 / 4, 1e-15);
}

TEST(Roofline, DeepSeekMlaDecodeAndMoe) {
  const auto m = load_model_profile(kData, "deepseek-r1");
  auto p = ideal(m, 8);
  p.gpu.fp8_tflops = 2000;
  p.gpu.memory_bandwidth_gb_s = 4000;
  const RooflineModel model(p);
  const auto one = model.step_cost({SeqWork{1, 1023, true}});
  // Latent cache replicated on every rank: 1024 tokens × 576 × 2 B × 61 layers.
  EXPECT_NEAR(one.attention_decode_s, 1024.0 * 576 * 2 * 61 / 4e12, 1e-15);
  // 8 distinct experts × 44,040,192 FP8 params × 58 layers / 8 ranks.
  EXPECT_NEAR(one.moe_s, 8.0 * 44'040'192 * 58 / 8 / 4e12, 1e-12);
  std::vector<SeqWork> batch(64, SeqWork{1, 1023, true});
  const auto many = model.step_cost(batch);
  EXPECT_NEAR(many.moe_s, expected_distinct_experts(256, 8, 64) * 44'040'192.0 * 58 / 8 / 4e12,
              1e-12);
  EXPECT_GT(many.moe_s, 20 * one.moe_s);
}

TEST(Roofline, LlamaCppMoeBatchesOnAGpuCostEveryExpertOnStepsOfMoreThanOneToken) {
  // ds2-random-big: 5 MoE layers of 16 routed experts, 6 per token. On a GPU, τ_exp = 50 µs per
  // MoE layer and expert falls on every micro-batch of more than one token for all 16 experts
  // (llama-batched-bench on an H100: 2 to 16 sequences decode in the same step time), never on a
  // one-token step (llama.cpp's vector path).
  auto p = ideal(load_model_profile(kData, "ds2-random-big"), 1);
  const RooflineModel none(p);
  p.efficiency.moe_expert_overhead_us = 50;
  const RooflineModel with(p);
  const std::vector<SeqWork> one{SeqWork{1, 255, true}};
  const std::vector<SeqWork> two{SeqWork{1, 255, true}, SeqWork{1, 300, true}};
  const std::vector<SeqWork> sixteen(16, SeqWork{1, 255, true});
  EXPECT_EQ(with.step_cost(one).moe_s, none.step_cost(one).moe_s);
  EXPECT_EQ(with.step_cost(one).total_s(), none.step_cost(one).total_s());
  EXPECT_NEAR(with.step_cost(two).moe_s - none.step_cost(two).moe_s, 5 * 50e-6 * 16, 1e-12);
  EXPECT_NEAR(with.step_cost(two).total_s() - none.step_cost(two).total_s(), 5 * 50e-6 * 16, 1e-12);
  EXPECT_NEAR(with.step_cost(sixteen).moe_s - none.step_cost(sixteen).moe_s, 5 * 50e-6 * 16, 1e-12);
  // 1025 tokens run as micro-batches of 512, 512 and 1 (`--ubatch-size` 512): the last is a
  // one-token batch on the vector path; 1026 ends with a micro-batch of two.
  const std::vector<SeqWork> long_prompt{SeqWork{1025, 0, true}};
  EXPECT_NEAR(with.step_cost(long_prompt).moe_s - none.step_cost(long_prompt).moe_s,
              2 * 5 * 50e-6 * 16, 1e-12);
  const std::vector<SeqWork> longer{SeqWork{1026, 0, true}};
  EXPECT_NEAR(with.step_cost(longer).moe_s - none.step_cost(longer).moe_s, 3 * 5 * 50e-6 * 16,
              1e-12);
  // With micro-batches of one token (`--ubatch-size 1`) no step pays.
  p.ubatch_tokens = 1;
  EXPECT_EQ(RooflineModel(p).step_cost(sixteen).moe_s, none.step_cost(sixteen).moe_s);
}

TEST(Roofline, LlamaCppMoeBatchesOnACpuCostOnlyTheExpertsHit) {
  // On a CPU host τ_exp falls per distinct expert a multi-token micro-batch hits: a step of two
  // tokens hits 16·(1 − (10/16)²) = 9.75 experts expected.
  auto p = ideal(load_model_profile(kData, "ds2-random-big"), 1);
  p.gpu.cpu = true;
  const RooflineModel none(p);
  p.efficiency.moe_expert_overhead_us = 50;
  const RooflineModel with(p);
  const std::vector<SeqWork> one{SeqWork{1, 255, true}};
  const std::vector<SeqWork> two{SeqWork{1, 255, true}, SeqWork{1, 300, true}};
  EXPECT_EQ(with.step_cost(one).moe_s, none.step_cost(one).moe_s);
  const double hit = 16.0 * (1 - std::pow(10.0 / 16.0, 2));
  EXPECT_NEAR(hit, 9.75, 1e-12);
  EXPECT_NEAR(with.step_cost(two).moe_s - none.step_cost(two).moe_s, 5 * 50e-6 * hit, 1e-12);
  // A prompt chunk is a multi-token batch too.
  const std::vector<SeqWork> prompt{SeqWork{256, 0, true}};
  EXPECT_NEAR(with.step_cost(prompt).moe_s - none.step_cost(prompt).moe_s,
              5 * 50e-6 * expected_distinct_experts(16, 6, 256), 1e-12);
  const std::vector<SeqWork> long_prompt{SeqWork{1025, 0, true}};
  EXPECT_NEAR(with.step_cost(long_prompt).moe_s - none.step_cost(long_prompt).moe_s,
              2 * 5 * 50e-6 * expected_distinct_experts(16, 6, 512), 1e-12);
}

TEST(Registry, BuildsRoofline) {
  const auto model = make_exec_model(ExecModelKind::Roofline, ideal(tiny_model(), 1));
  ASSERT_NE(model, nullptr);
  EXPECT_GT(model->step_time_ns({SeqWork{1, 0, true}}), 0);
  EXPECT_EQ(parse_exec_model_kind("roofline"), ExecModelKind::Roofline);
}

}  // namespace
}  // namespace llmbench::sim
