#include "llmbench/sim/profiles.hpp"

#include "llmbench/core/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace llmbench::sim {
namespace {

const std::string kData = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";

TEST(ModelProfile, DeepSeekR1ShapesAndCounts) {
  const auto m = load_model_profile(kData, "deepseek-ai/DeepSeek-R1");  // by alias
  EXPECT_EQ(m.name, "deepseek-r1");
  EXPECT_EQ(m.attention, AttentionKind::Mla);
  EXPECT_EQ(m.num_moe_layers(), 58);
  // 7168·1536 + 1536·128·192 + 7168·576 + 512·128·256 + 128·128·7168
  EXPECT_EQ(m.attention_params_per_layer(), 187'105'280);
  EXPECT_EQ(m.params_per_expert(), 44'040'192);  // 3·7168·2048
  EXPECT_EQ(m.total_params(), 671'025'397'760);  // the published 671B
  EXPECT_EQ(m.kv_elements_per_token_per_layer(8), 576);
  // 576 × 61 × 2 B, replicated on every TP rank.
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token(1), 70'272.0);
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token(8), 70'272.0);
  // FP8 linears + BF16 embedding and lm_head (2·129280·7168 params).
  EXPECT_DOUBLE_EQ(m.weight_bytes_total(), 672'878'755'840.0);
}

TEST(ModelProfile, V2FamilyKvBytes) {
  EXPECT_DOUBLE_EQ(load_model_profile(kData, "deepseek-v2").kv_bytes_per_token(), 69'120.0);
  EXPECT_DOUBLE_EQ(load_model_profile(kData, "deepseek-v2-lite").kv_bytes_per_token(), 31'104.0);
}

TEST(ModelProfile, GqaKvBytesShardAndReplicate) {
  const auto llama70 = load_model_profile(kData, "deepseek-r1-distill-llama-70b");
  EXPECT_DOUBLE_EQ(llama70.kv_bytes_per_token(1), 327'680.0);  // 2·80·8·128·2
  EXPECT_DOUBLE_EQ(llama70.kv_bytes_per_token(8), 40'960.0);   // one KV head per rank
  EXPECT_EQ(llama70.total_params(), 70'552'387'584);
  const auto qwen15 = load_model_profile(kData, "DeepSeek-R1-Distill-Qwen-1.5B");
  EXPECT_DOUBLE_EQ(qwen15.kv_bytes_per_token(1), 28'672.0);  // 2·28·2·128·2
  // 2 KV heads over 4 ranks: each rank keeps one (replicated) head.
  EXPECT_DOUBLE_EQ(qwen15.kv_bytes_per_token(4), 14'336.0);
}

TEST(ModelProfile, EveryBundledProfileLoads) {
  const auto models = list_profiles(kData, "models");
  EXPECT_GE(models.size(), 10u);
  for (const auto& name : models) {
    const auto m = load_model_profile(kData, name);
    EXPECT_EQ(m.name, name);
    EXPECT_FALSE(m.source.empty());
  }
  const auto gpus = list_profiles(kData, "gpus");
  EXPECT_GE(gpus.size(), 8u);
  for (const auto& name : gpus) {
    const auto g = load_hardware_profile(kData, name);
    EXPECT_EQ(g.name, name);
    EXPECT_FALSE(g.source.empty());
  }
}

TEST(HardwareProfile, H200) {
  const auto g = load_hardware_profile(kData, "H200");
  EXPECT_DOUBLE_EQ(g.memory_bytes, 143771.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(g.peak_flops(1), 1979e12);
  EXPECT_DOUBLE_EQ(g.peak_flops(2), 989e12);
  const auto a100 = load_hardware_profile(kData, "a100");
  EXPECT_DOUBLE_EQ(a100.peak_flops(1), 312e12);  // no FP8: BF16 rate
}

TEST(HardwareProfile, CpuHostIsACpuAtOneCoresFmaPeak) {
  const auto cpu = load_hardware_profile(kData, "cpu-host");
  EXPECT_TRUE(cpu.cpu);
  EXPECT_DOUBLE_EQ(cpu.peak_flops(2), 0.1e12);  // 2 FMA pipes × 8 FP32 lanes × 2 × ~3 GHz
  EXPECT_FALSE(load_hardware_profile(kData, "h100").cpu);
  try {
    (void)parse_hardware_profile(R"({"name":"g","source":"s","memory_bytes":1,
      "memory_bandwidth_gb_s":1,"bf16_tflops":1,"link_bandwidth_gb_s":1,"device":"tpu"})",
                                 "gpus/g.json");
    FAIL() << "expected an exception";
  } catch (const Exception& e) {
    EXPECT_NE(std::string(e.what()).find("device"), std::string::npos) << e.what();
  }
}

TEST(ProfileErrors, NameFileAndField) {
  const std::string bad_model = R"({"name":"x","source":"s","attention":"gqa",
    "num_hidden_layers":2,"hidden_size":-5})";
  try {
    (void)parse_model_profile(bad_model, "models/x.json");
    FAIL() << "expected an exception";
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, "models/x.json");
    EXPECT_NE(std::string(e.what()).find("hidden_size"), std::string::npos) << e.what();
  }
  try {
    (void)parse_model_profile(R"({"name":"x","source":"s","attention":"sparse"})", "m.json");
    FAIL();
  } catch (const Exception& e) {
    EXPECT_NE(std::string(e.what()).find("attention"), std::string::npos) << e.what();
  }
  try {
    (void)parse_hardware_profile(R"({"name":"g","source":"s","memory_bytes":1,
      "memory_bandwidth_gb_s":1,"bf16_tflops":1,"link_bandwidth_gb_s":1,
      "efficiency":{"memory":1.5}})",
                                 "gpus/g.json");
    FAIL();
  } catch (const Exception& e) {
    EXPECT_NE(std::string(e.what()).find("efficiency.memory"), std::string::npos) << e.what();
  }
  try {
    (void)parse_hardware_profile("{\"name\": ", "gpus/broken.json");
    FAIL();
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, "gpus/broken.json");
    EXPECT_GE(e.error().offset, 0);
  }
  EXPECT_THROW((void)load_model_profile(kData, "no-such-model"), Exception);
}

}  // namespace
}  // namespace llmbench::sim
