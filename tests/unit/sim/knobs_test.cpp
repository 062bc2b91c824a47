// Clear errors for bad knobs and profiles; EP/DP in memory planning and the cost model; swap
// and expert-capacity arithmetic.

#include "llmbench/core/error.hpp"
#include "llmbench/sim/cost_model.hpp"
#include "llmbench/sim/memory.hpp"
#include "llmbench/sim/profiles.hpp"
#include "llmbench/sim/scheduler.hpp"
#include "llmbench/sim/step_pricing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

namespace llmbench::sim {
namespace {

const std::string kData = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";

/// Runs `f`, expects an `Exception` whose source is `source` and whose message contains every
/// string of `parts`.
void expect_error(const std::function<void()>& f, const std::string& source,
                  const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one from " << source;
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, source) << e.what();
    for (const auto& p : parts)
      EXPECT_NE(e.error().message.find(p), std::string::npos) << e.error().message << " / " << p;
  }
}

MemoryOptions tp8() {
  MemoryOptions o;
  o.tp = 8;
  o.block_size = 64;
  return o;
}

TEST(KnobErrors, ParallelLayout) {
  const auto r1 = load_model_profile(kData, "deepseek-r1");
  const auto q15 = load_model_profile(kData, "deepseek-r1-distill-qwen-1.5b");
  const auto h200 = load_hardware_profile(kData, "h200");
  auto o = tp8();
  o.tp = 0;
  expect_error([&] { (void)plan_memory(r1, h200, o); }, "--tp", {"must be ≥ 1, got 0"});
  o = tp8();
  o.tp = 3;
  expect_error([&] { (void)plan_memory(r1, h200, o); }, "--tp",
               {"attention heads (128)", "deepseek-r1", "tensor parallel size (3)"});
  o = tp8();
  expect_error([&] { (void)plan_memory(q15, h200, o); }, "--tp", {"heads (12)", "size (8)"});
  o = tp8();
  o.ep = 3;
  expect_error([&] { (void)plan_memory(r1, h200, o); }, "--ep",
               {"expert parallel size 3 does not divide the 256 routed experts"});
  o = tp8();
  o.ep = 16;
  expect_error([&] { (void)plan_memory(r1, h200, o); }, "--ep", {"must equal tp × dp = 8 × 1 = 8"});
  MemoryOptions dense;
  dense.ep = 2;
  dense.tp = 2;
  expect_error([&] { (void)plan_memory(q15, h200, dense); }, "--ep", {"no routed experts"});
  o = tp8();
  o.dp = -1;
  expect_error([&] { (void)plan_memory(r1, h200, o); }, "--dp", {"got -1"});
}

TEST(KnobErrors, SizesAndBlockSize) {
  const auto r1 = load_model_profile(kData, "deepseek-r1");
  const auto h200 = load_hardware_profile(kData, "h200");
  auto o = tp8();
  o.block_size = 24;
  expect_error([&] { (void)plan_memory(r1, h200, o); }, "--block-size",
               {"24 is not a vLLM block size", "1, 8, 16, 32, 64, 128, 256"});
  o.block_size = 0;
  expect_error([&] { (void)plan_memory(r1, h200, o); }, "--block-size", {"0 is not"});
  for (const auto ok : kAllowedBlockSizes) EXPECT_NO_THROW(validate_block_size(ok));
  o = tp8();
  o.gpu_memory_utilization = 0;
  expect_error([&] { (void)plan_memory(r1, h200, o); }, "--gpu-memory-utilization",
               {"(0, 1], got 0"});
  o = tp8();
  o.swap_space_gib = -4;
  expect_error([&] { (void)plan_memory(r1, h200, o); }, "--swap-space", {"got -4"});
  o = tp8();
  o.activation_peak_bytes = -1;
  expect_error([&] { (void)plan_memory(r1, h200, o); }, "--activation-peak-gib", {"≥ 0"});
  o = tp8();
  o.num_gpu_blocks_override = 0;
  expect_error([&] { (void)plan_memory(r1, h200, o); }, "--num-gpu-blocks-override", {"≥ 1"});
  SchedulerConfig c;
  c.max_num_seqs = 0;
  expect_error([&] { validate_scheduler_config(c); }, "--max-num-seqs", {"got 0"});
  c = SchedulerConfig{};
  c.max_num_batched_tokens = -5;
  expect_error([&] { validate_scheduler_config(c); }, "--max-num-batched-tokens", {"got -5"});
  c = SchedulerConfig{};
  c.batch_length_beta = 0;
  expect_error([&] { validate_scheduler_config(c); }, "--batch-length-beta", {"β must be > 0"});
  c = SchedulerConfig{};
  c.batch_window_ms = -1;
  expect_error([&] { validate_scheduler_config(c); }, "--batch-window-ms", {"τ must be ≥ 0"});
}

TEST(KnobErrors, ModelThatDoesNotFitSaysByHowMuch) {
  const auto r1 = load_model_profile(kData, "deepseek-r1");
  const auto h100 = load_hardware_profile(kData, "h100-sxm");
  const auto o = tp8();
  const auto plan = plan_memory(r1, h100, o);
  EXPECT_EQ(plan.num_gpu_blocks, 0);
  // 78.33 GiB weights + 8 + 0.6 = 86.93 GiB > 80 GiB × 0.9 = 72 GiB by 14.93 GiB.
  expect_error([&] { require_fit(plan, r1, h100, o); }, "--tp",
               {"deepseek-r1 on h100-sxm (TP8, EP1, DP1) does not fit", "weights 78.33 GiB",
                "= 86.93 GiB per GPU exceed 80.00 GiB × 0.90 = 72.00 GiB by 14.93 GiB"});
  const auto h200 = load_hardware_profile(kData, "h200");
  EXPECT_NO_THROW(require_fit(plan_memory(r1, h200, o), r1, h200, o));
}

TEST(KnobErrors, UnknownProfilesListTheKnownNames) {
  expect_error([&] { (void)load_hardware_profile(kData, "b300"); }, kData + "/sim/gpus",
               {"unknown GPU profile 'b300'", "a100-40gb", "h200", "mi300x"});
  expect_error([&] { (void)load_model_profile(kData, "llama-9"); }, kData + "/sim/models",
               {"unknown model profile 'llama-9'", "deepseek-r1", "deepseek-v3"});
}

TEST(ExpertParallel, MemoryPlanShardsExpertsOverEp) {
  const auto r1 = load_model_profile(kData, "deepseek-r1");
  const auto h200 = load_hardware_profile(kData, "h200");
  // Routed experts: 58 layers × 256 × 44,040,192 params × 1 B (FP8) = 653.9 GB.
  const double experts = 58.0 * 256 * 44040192;
  MemoryOptions dp8;
  dp8.tp = 1;
  dp8.dp = 8;
  dp8.ep = 8;
  dp8.block_size = 64;
  const auto p = plan_memory(r1, h200, dp8);
  EXPECT_DOUBLE_EQ(p.expert_bytes_per_gpu, experts / 8);
  EXPECT_DOUBLE_EQ(p.experts_per_gpu, 32);
  // Non-expert weights are whole on each GPU at TP1.
  EXPECT_NEAR(p.weight_bytes_per_gpu, r1.weight_bytes_total() - experts + experts / 8, 1);
  const auto p8 = plan_memory(r1, h200, tp8());
  EXPECT_NEAR(p8.weight_bytes_per_gpu, r1.weight_bytes_total() / 8, 1);
  EXPECT_GT(p.weight_bytes_per_gpu, p8.weight_bytes_per_gpu);
  // Expert capacity: 8192 tokens × 8 / 256 = 256 tokens per expert; × 1.25.
  EXPECT_DOUBLE_EQ(expert_capacity(r1, 8192, 1.0), 256);
  EXPECT_DOUBLE_EQ(expert_capacity(r1, 8192, 1.25), 320);
  EXPECT_DOUBLE_EQ(
      expert_capacity(load_model_profile(kData, "deepseek-r1-distill-llama-8b"), 8192, 1.0), 0);
}

TEST(ExpertParallel, AllToAllCostAndMoeSharding) {
  const auto r1 = load_model_profile(kData, "deepseek-r1");
  const auto h200 = load_hardware_profile(kData, "h200");
  ExecModelParams p{r1, h200, 8, h200.efficiency};
  const RooflineModel tp_only(p);
  p.ep = 8;
  const RooflineModel ep8(p);
  const std::vector<SeqWork> batch(64, SeqWork{1, 1000, true});
  const auto a = tp_only.step_cost(batch);
  const auto b = ep8.step_cost(batch);
  // Same FLOPs and the same expected local expert bytes (32 whole experts vs 256 eighths).
  EXPECT_NEAR(a.moe_s, b.moe_s, 1e-12);
  EXPECT_EQ(a.alltoall_s, 0);
  // 58 × (2·10 µs + 64/8 tokens · 7168 · 8 · (1 + 2) B · 7/8 / 450 GB/s) = 1.31521 ms.
  EXPECT_NEAR(b.alltoall_s, 58 * (20e-6 + 8.0 * 7168 * 8 * 3 * 7 / 8 / 450e9), 1e-12);
  EXPECT_NEAR(b.alltoall_s, 1.31521e-3, 1e-8);
  EXPECT_GT(b.total_s(), a.total_s());
  // DP2 × TP8 = EP16: the MoE sees both replicas' tokens, each GPU holds 16 experts.
  p.ep = 16;
  p.dp = 2;
  const RooflineModel ep16(p);
  const auto c = ep16.step_cost(batch);
  const double flops = 58 * 2.0 * 128 * 8 * 44040192 / 16;
  const double hit = 16 * (1 - std::pow(1 - 8.0 / 256, 128));
  const double peak = 1979e12 * h200.efficiency.compute;
  const double bw = 4800e9 * h200.efficiency.memory;
  EXPECT_NEAR(c.moe_s, std::max(flops / peak, 58 * hit * 44040192 / bw), 1e-12);
}

TEST(Swap, CpuBlocksAndTransferTime) {
  const auto r1 = load_model_profile(kData, "deepseek-r1");
  const auto h200 = load_hardware_profile(kData, "h200");
  EXPECT_DOUBLE_EQ(h200.host_link_bandwidth_gb_s, 64);
  // 4 GiB / (64 tokens × 70,272 B) = 954.9 → 954 blocks.
  EXPECT_EQ(num_cpu_blocks(4, 64, 70272), 954);
  auto o = tp8();
  o.swap_space_gib = 4;
  EXPECT_EQ(plan_memory(r1, h200, o).num_cpu_blocks, 954);
  ExecModelParams p{r1, h200, 8, h200.efficiency};
  const RooflineModel m(p);
  // 10 blocks × 64 × 70,272 B = 44,974,080 B over 64 GB/s = 0.70272 ms.
  EXPECT_NEAR(m.swap_time_s(10, 64), 0.70272e-3, 1e-12);
  EXPECT_EQ(m.swap_time_s(0, 64), 0);
  // A step that swaps 4 blocks out and 6 in pays the same 0.70272 ms on top of its compute.
  RequestState r;
  r.prompt_len = 100;
  r.output_len = 10;
  r.num_output_tokens = 1;
  SchedulerOutput out;
  out.seqs.push_back(ScheduledSeq{&r, 1, 100});
  std::vector<SeqWork> work;
  ASSERT_EQ(step_work(out, work), 1);  // one decode
  ASSERT_EQ(work.size(), 1u);
  EXPECT_TRUE(work[0].samples);
  std::int64_t decodes = -1;
  const TimeNs plain = price_step(m, out, 64, work, &decodes);
  EXPECT_EQ(decodes, 1);
  EXPECT_EQ(plain, m.step_time_ns(work));
  {
    // A mixed batch: the one-pass sums give the step time of the per-sequence work list.
    RequestState chunked;
    chunked.prompt_len = 3000;
    chunked.output_len = 5;
    SchedulerOutput mixed = out;
    mixed.seqs.push_back(ScheduledSeq{&chunked, 2048, 512});  // a chunk that does not sample
    std::vector<SeqWork> list;
    ASSERT_EQ(step_work(mixed, list), 1);
    EXPECT_FALSE(list[1].samples);
    std::int64_t d = -1;
    EXPECT_EQ(price_step(m, mixed, 64, work, &d), m.step_time_ns(list));
    EXPECT_EQ(d, 1);
  }
  out.num_swap_out_blocks = 4;
  out.num_swap_in_blocks = 6;
  EXPECT_NEAR(static_cast<double>(price_step(m, out, 64, work) - plain), 702720, 1);
}

}  // namespace
}  // namespace llmbench::sim
