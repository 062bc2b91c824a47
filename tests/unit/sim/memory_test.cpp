#include "llmbench/sim/memory.hpp"

#include "llmbench/core/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace llmbench::sim {
namespace {

const std::string kData = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";

// vLLM issue #10927 start-up log (DeepSeek-V2-Lite-Chat, 1×H100):
// total 79.10 GiB × 0.9 − peak_torch 30.56 − non_torch 5.21 = kv_cache_size 35.42 GiB.
TEST(Memory, VllmStartupLogExample) {
  const double kv = available_kv_bytes(79.10 * kGiB, 0.9, 30.56 * kGiB, 5.21 * kGiB);
  EXPECT_NEAR(kv / kGiB, 35.42, 1e-9);
  // That V0 run's pre-MLA layout: K and V of 16 heads padded to 256, 27 layers, BF16 =
  // 442,368 B/token; its log prints "# GPU blocks: 5373" for block_size 16.
  const double per_token = 2.0 * 16 * 256 * 27 * 2;
  EXPECT_EQ(num_gpu_blocks(35.42 * kGiB, 16, per_token), 5373);
  // "Maximum concurrency for 4096 tokens per request": 5373 / 256.
  EXPECT_NEAR(max_concurrency(5373, 16, 4096), 5373.0 / 256.0, 1e-12);
  EXPECT_NEAR(max_concurrency(5373, 16, 4097), 5373.0 / 257.0, 1e-12);
}

TEST(Memory, ClampsAtZero) {
  EXPECT_DOUBLE_EQ(available_kv_bytes(10, 0.5, 6, 0), 0.0);
  EXPECT_EQ(num_gpu_blocks(0, 16, 100), 0);
}

TEST(Memory, DeepSeekR1OnEightH200) {
  const auto m = load_model_profile(kData, "deepseek-r1");
  const auto g = load_hardware_profile(kData, "h200");
  MemoryOptions o;
  o.tp = 8;
  o.block_size = 64;
  const auto p = plan_memory(m, g, o);
  EXPECT_DOUBLE_EQ(p.weight_bytes_per_gpu, 672'878'755'840.0 / 8);
  // 143,771 MiB × 0.9 − 84.11 GB − 8 GiB − 0.6 GiB = 39.43 GiB.
  EXPECT_NEAR(p.kv_bytes / kGiB, 39.4278, 1e-3);
  EXPECT_EQ(p.num_gpu_blocks, 9413);  // floor(kv / (64 × 70,272))
  EXPECT_EQ(p.kv_tokens(), 602'432);
  o.num_gpu_blocks_override = 100;
  EXPECT_EQ(plan_memory(m, g, o).num_gpu_blocks, 100);
}

TEST(Memory, DoesNotFitGivesZeroBlocks) {
  const auto m = load_model_profile(kData, "deepseek-r1");
  const auto g = load_hardware_profile(kData, "h100-sxm");
  MemoryOptions o;
  o.tp = 8;
  EXPECT_EQ(plan_memory(m, g, o).num_gpu_blocks, 0);  // 8 × 80 GiB × 0.9 < 673 GB
  o.tp = 0;
  EXPECT_THROW((void)plan_memory(m, g, o), Exception);
}

}  // namespace
}  // namespace llmbench::sim
