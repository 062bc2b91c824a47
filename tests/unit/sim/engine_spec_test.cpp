// The one engine spec: vLLM V1's defaults per GPU and model, EP = TP x DP, block size by attention
// kind, overrides winning, and the errors naming their flag.

#include "llmbench/sim/engine_spec.hpp"

#include "llmbench/core/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace llmbench::sim {
namespace {

const std::string kData = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";

EngineSpec spec_for(const std::string& model, const std::string& gpu, EngineOverrides o = {}) {
  o.model_profile = model;
  o.gpu = gpu;
  return load_engine_spec(kData, o);
}

TEST(EngineSpec, DefaultsAreDeepSeekR1OnH200WithVllmV1Knobs) {
  const EngineSpec s = load_engine_spec(kData, {});
  EXPECT_EQ(s.model.name, "deepseek-r1");
  EXPECT_EQ(s.gpu.name, "h200");
  EXPECT_EQ(s.memory.tp, 8);
  EXPECT_EQ(s.memory.ep, 1);
  EXPECT_EQ(s.data_parallel_size(), 1);
  EXPECT_DOUBLE_EQ(s.memory.gpu_memory_utilization, 0.9);
  // H200 (140 GiB, not an A100): vLLM V1's large-GPU API-server defaults.
  EXPECT_EQ(s.engine.scheduler.max_num_seqs, 1024);
  EXPECT_EQ(s.engine.scheduler.max_num_batched_tokens, 8192);
  EXPECT_TRUE(s.engine.scheduler.enable_prefix_caching);
  EXPECT_EQ(s.engine.scheduler.long_prefill_token_threshold, 0);
  EXPECT_EQ(s.engine.scheduler_kind, SchedulerKind::VllmV1);
  EXPECT_EQ(s.exec_kind, ExecModelKind::Roofline);
  // MLA: block 64; docs/simulator.md: 9,413 blocks of 64 per replica for R1 FP8 on 8 x H200.
  EXPECT_EQ(s.engine.block_size, 64);
  EXPECT_EQ(s.plan.block_size, 64);
  EXPECT_EQ(s.engine.num_gpu_blocks, 9413);
  EXPECT_EQ(s.plan.num_gpu_blocks, 9413);
  EXPECT_EQ(s.engine.scheduler.num_cpu_blocks, 0);
  EXPECT_DOUBLE_EQ(s.efficiency.memory, s.gpu.efficiency.memory);
  const ExecModelParams p = s.exec_params();
  EXPECT_EQ(p.tp, 8);
  EXPECT_EQ(p.ep, 1);
  EXPECT_EQ(p.dp, 1);
  EXPECT_EQ(s.describe().rfind("deepseek-r1 on 8 x h200 (TP8 EP1 DP1), engine vllm: # GPU "
                               "blocks: 9413 per replica (block size 64, 602432 KV tokens",
                               0),
            0u)
      << s.describe();
  EXPECT_NE(s.describe().find("cost model calibrated on "), std::string::npos) << s.describe();
}

TEST(EngineSpec, SchedulerDefaultsFollowTheGpu) {
  struct Case {
    const char* gpu;
    std::int64_t seqs;
    std::int64_t tokens;
  };
  // >= 70 GiB and not an A100: 1024 / 8192; A100s (even 80 GB) and smaller GPUs: 256 / 2048.
  for (const Case c :
       {Case{"h200", 1024, 8192}, Case{"h100-sxm", 1024, 8192}, Case{"h20", 1024, 8192},
        Case{"mi300x", 1024, 8192}, Case{"a100-80gb", 256, 2048}, Case{"a100-40gb", 256, 2048},
        Case{"l40s", 256, 2048}}) {
    EngineOverrides o;
    o.tp = 1;
    const EngineSpec s = spec_for("deepseek-r1-distill-llama-8b", c.gpu, o);
    EXPECT_EQ(s.engine.scheduler.max_num_seqs, c.seqs) << c.gpu;
    EXPECT_EQ(s.engine.scheduler.max_num_batched_tokens, c.tokens) << c.gpu;
    const auto d = v1_scheduler_defaults(s.gpu);
    EXPECT_EQ(d.max_num_seqs, c.seqs) << c.gpu;
  }
}

TEST(EngineSpec, BlockSizeFollowsTheAttentionKind) {
  EngineOverrides o;
  o.tp = 1;
  EXPECT_EQ(spec_for("deepseek-r1-distill-llama-8b", "h200", o).engine.block_size, 16);  // GQA
  EXPECT_EQ(spec_for("deepseek-v2-lite", "h200", o).engine.block_size, 64);              // MLA
  EXPECT_EQ(spec_for("deepseek-v3", "h200").engine.block_size, 64);
}

TEST(EngineSpec, ExpertParallelSpansTpTimesDp) {
  EngineOverrides o;
  o.enable_expert_parallel = true;
  EXPECT_EQ(spec_for("deepseek-r1", "h200", o).memory.ep, 8);  // TP8 x DP1
  o.tp = 4;
  o.dp = 2;
  const EngineSpec s = spec_for("deepseek-r1", "h200", o);
  EXPECT_EQ(s.memory.ep, 8);  // TP4 x DP2
  EXPECT_EQ(s.data_parallel_size(), 2);
  EXPECT_EQ(s.exec_params().ep, 8);
  EXPECT_EQ(s.exec_params().dp, 2);
  EXPECT_DOUBLE_EQ(s.plan.experts_per_gpu, 256.0 / 8);
  // Without the flag experts stay TP-sharded; a given --ep wins over the rule.
  EXPECT_EQ(resolve_expert_parallel_size(std::nullopt, 4, 2, false), 1);
  EXPECT_EQ(resolve_expert_parallel_size(0, 4, 2, true), 8);
  EXPECT_EQ(resolve_expert_parallel_size(16, 4, 2, true), 16);
}

TEST(EngineSpec, OverridesWin) {
  EngineOverrides o;
  o.max_num_seqs = 7;
  o.max_num_batched_tokens = 300;
  o.block_size = 16;
  o.gpu_memory_utilization = 0.8;
  o.enable_prefix_caching = false;
  o.long_prefill_token_threshold = 128;
  o.num_gpu_blocks_override = 123;
  o.scheduler = "dynamic";
  o.batch_window_ms = 20;
  o.batch_length_beta = 2;
  o.compute_efficiency = 0.3;
  o.memory_efficiency = 0.5;
  o.step_overhead_us = 100;
  const EngineSpec s = spec_for("deepseek-r1", "h200", o);
  EXPECT_EQ(s.engine.scheduler.max_num_seqs, 7);
  EXPECT_EQ(s.engine.scheduler.max_num_batched_tokens, 300);
  EXPECT_EQ(s.engine.block_size, 16);  // MLA would default to 64
  EXPECT_DOUBLE_EQ(s.memory.gpu_memory_utilization, 0.8);
  EXPECT_FALSE(s.engine.scheduler.enable_prefix_caching);
  EXPECT_EQ(s.engine.scheduler.long_prefill_token_threshold, 128);
  EXPECT_EQ(s.engine.num_gpu_blocks, 123);
  EXPECT_EQ(s.engine.scheduler_kind, SchedulerKind::Dynamic);
  EXPECT_DOUBLE_EQ(s.engine.scheduler.batch_window_ms, 20);
  EXPECT_DOUBLE_EQ(s.engine.scheduler.batch_length_beta, 2);
  EXPECT_DOUBLE_EQ(s.efficiency.compute, 0.3);
  EXPECT_DOUBLE_EQ(s.efficiency.memory, 0.5);
  EXPECT_DOUBLE_EQ(s.efficiency.step_overhead_us, 100);
  EXPECT_DOUBLE_EQ(s.exec_params().efficiency.compute, 0.3);
  // 0 keeps vLLM's "automatic" meaning for the counts.
  EngineOverrides zero;
  zero.max_num_seqs = 0;
  zero.block_size = 0;
  const EngineSpec z = spec_for("deepseek-r1", "h200", zero);
  EXPECT_EQ(z.engine.scheduler.max_num_seqs, 1024);
  EXPECT_EQ(z.engine.block_size, 64);
}

TEST(EngineSpec, SwapSpaceGivesCpuBlocksToTheScheduler) {
  EngineOverrides o;
  o.swap_space_gib = 4;
  const EngineSpec s = spec_for("deepseek-r1", "h200", o);
  // 4 GiB / (64 tokens x 70,272 B per token) = 954 blocks.
  EXPECT_EQ(s.plan.num_cpu_blocks, 954);
  EXPECT_EQ(s.engine.scheduler.num_cpu_blocks, 954);
}

TEST(EngineSpec, MemoryOptionsTakeThePlanOnlyOverrides) {
  const ModelProfile m = load_model_profile(kData, "deepseek-r1");
  EngineOverrides o;
  o.activation_peak_gib = 2;
  o.non_torch_gib = 0.5;
  const MemoryOptions mem = resolve_memory_options(m, o);
  EXPECT_EQ(mem.tp, 8);
  EXPECT_EQ(mem.block_size, 64);
  ASSERT_TRUE(mem.activation_peak_bytes.has_value());
  EXPECT_DOUBLE_EQ(*mem.activation_peak_bytes, 2 * kGiB);
  EXPECT_DOUBLE_EQ(*mem.non_torch_bytes, 0.5 * kGiB);
}

/// The error of `f` names `source`.
void expect_source(const std::function<void()>& f, const std::string& source) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one from " << source;
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, source) << e.what();
  }
}

TEST(EngineSpec, BadValuesNameTheirFlag) {
  const auto with = [](auto set) {
    return [set] {
      EngineOverrides o;
      set(o);
      (void)load_engine_spec(kData, o);
    };
  };
  expect_source(with([](EngineOverrides& o) { o.max_num_seqs = -1; }),
                "--max-num-seqs / max-num-batched-tokens / long-prefill-token-threshold");
  expect_source(with([](EngineOverrides& o) { o.scheduler = "fifo"; }), "--scheduler");
  expect_source(with([](EngineOverrides& o) { o.exec_model = "table"; }), "--exec-model");
  expect_source(with([](EngineOverrides& o) { o.compute_efficiency = 1.5; }),
                "--compute/memory-efficiency");
  expect_source(with([](EngineOverrides& o) { o.block_size = 24; }), "--block-size");
  expect_source(with([](EngineOverrides& o) { o.batch_length_beta = 0; }), "--batch-length-beta");
  expect_source(with([](EngineOverrides& o) { o.gpu = "h100-sxm"; }), "--tp");  // does not fit
}

}  // namespace
}  // namespace llmbench::sim
