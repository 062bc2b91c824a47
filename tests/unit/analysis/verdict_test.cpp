// The one verdict per point, the data an extension of a point needs, and the what-if bottleneck.

#include "llmbench/analysis/verdict.hpp"

#include "llmbench/analysis/what_if.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace llmbench::analysis {
namespace {

using ::testing::HasSubstr;

PointFacts facts(double duration_s, std::size_t completed, std::size_t failed, std::size_t ttft_n) {
  return PointFacts{.duration_s = duration_s,
                    .completed = completed,
                    .failed = failed,
                    .tails = {{"ttft", quantile_ci(ttft_n, 0.99, 0.95)},
                              {"itl", quantile_ci(40 * ttft_n, 0.99, 0.95)}}};
}

TEST(Verdict, OneFunctionDecidesAndTheLabelNeverSaysOkOfAnInvalidPoint) {
  Stability stable;
  stable.state = Steadiness::Stable;
  stable.stable = true;
  stable.reason = "no trend";
  const auto good = judge_point(facts(30, 500, 0, 500), ValidityRule{}, stable, false);
  EXPECT_TRUE(good.valid);
  EXPECT_TRUE(good.ok());
  EXPECT_EQ(verdict_label(good), "valid, stable");

  Stability saturated;
  saturated.state = Steadiness::Saturated;
  saturated.reason = "requests outstanding grew by 40.0";
  const auto bad = judge_point(facts(5, 60, 2, 60), ValidityRule{}, saturated, true);
  EXPECT_FALSE(bad.valid);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(verdict_label(bad), "invalid, saturated, interrupted");
  const auto reasons = verdict_reasons(bad);
  ASSERT_EQ(reasons.size(), 5U);  // duration, completed, error rate, p99 TTFT, saturation
  EXPECT_THAT(reasons[0], HasSubstr("measured for 5.00 s"));
  EXPECT_THAT(reasons[3], HasSubstr("p99 ttft is not supported"));
  EXPECT_EQ(reasons[4], "saturated: requests outstanding grew by 40.0");
  // A valid point that is not stable is not ok either.
  EXPECT_FALSE(judge_point(facts(30, 500, 0, 500), ValidityRule{}, saturated, false).ok());
}

TEST(Verdict, AnExtensionSaysHowManyRequestsAndSecondsAreNeeded) {
  EXPECT_EQ(samples_for_support(0.99, 0.95), 368U);
  EXPECT_EQ(samples_for_support(0.999, 0.95), 3688U);
  const auto short_point = needed_to_be_valid(facts(5, 60, 0, 60), ValidityRule{});
  EXPECT_FALSE(short_point.met);
  EXPECT_EQ(short_point.completed, 368U);  // the p99 TTFT's support, above the 100 minimum
  EXPECT_DOUBLE_EQ(short_point.duration_s, 10);
  EXPECT_TRUE(needed_to_be_valid(facts(12, 400, 0, 400), ValidityRule{}).met);
}

/// The KV-bound what-if of a DeepSeek run: 602k KV tokens, requests of 2.56k tokens, doubling
/// max_num_seqs from 256 to 512.
EngineFacts kv_bound(double max_num_seqs, std::int64_t preemptions, double tpot) {
  return EngineFacts{.setting = "max_num_seqs " + std::to_string(static_cast<int>(max_num_seqs)),
                     .kv_capacity_tokens = 602000,
                     .kv_usage_mean = 0.93,
                     .kv_usage_max = 0.99,
                     .preemptions = preemptions,
                     .max_num_seqs = max_num_seqs,
                     .running_mean = 228,
                     .running_max = 236,
                     .waiting_mean = 41,
                     .token_budget = 8192,
                     .step_tokens_mean = 1900,
                     .request_tokens_mean = 2560,
                     .busy_fraction = 0.98,
                     .request_throughput = 5.8,
                     .p99_tpot_ms = tpot};
}

TEST(WhatIf, NamesTheKvCacheWhenMaxNumSeqsIsNotReached) {
  const auto f = name_bottleneck(kv_bound(512, 412, 63.2));
  EXPECT_EQ(f.which, Bottleneck::KvCache);
  EXPECT_THAT(f.reason, HasSubstr("KV cache bound: 602k KV tokens hold ~235 requests of 2.56k "
                                  "tokens; max_num_seqs 512 is not reached"));
  const std::string what_if = explain_what_if(kv_bound(256, 0, 41.0), kv_bound(512, 412, 63.2));
  EXPECT_THAT(what_if, HasSubstr("max_num_seqs 256 → max_num_seqs 512: the bottleneck did not "
                                 "move (KV cache in both): 5.80 → 5.80 req/s (+0.0%), "
                                 "preemptions 0 → 412, p99 TPOT 41.0 → 63.2 ms"));
}

// Both limits reached: the batch sat at max_num_seqs 256 while the cache preempted. The cache is
// what binds (doubling the cap added preemptions and no capacity), and the reason says so.
TEST(WhatIf, APreemptingCacheBindsEvenAtTheCap) {
  EngineFacts both = kv_bound(256, 66, 41.0);
  both.running_mean = 253.9;
  both.running_max = 256;
  const auto f = name_bottleneck(both);
  EXPECT_EQ(f.which, Bottleneck::KvCache);
  EXPECT_THAT(f.reason, HasSubstr("max_num_seqs 256 is reached too, but the cache preempted"));
  both.preemptions = 0;
  EXPECT_EQ(name_bottleneck(both).which, Bottleneck::MaxNumSeqs);
}

TEST(WhatIf, EachLimitIsNamedFromItsFacts) {
  EngineFacts capped = kv_bound(32, 0, 20);
  capped.kv_usage_max = 0.4;
  capped.running_mean = 32;
  capped.running_max = 32;
  EXPECT_EQ(name_bottleneck(capped).which, Bottleneck::MaxNumSeqs);
  EngineFacts idle = capped;
  idle.waiting_mean = 0.2;
  idle.running_mean = 20;
  EXPECT_EQ(name_bottleneck(idle).which, Bottleneck::None);
  // A short queue behind a batch held at its cap is the cap's doing; a rare waiter is not.
  EngineFacts short_queue = capped;
  short_queue.waiting_mean = 0.2;
  EXPECT_EQ(name_bottleneck(short_queue).which, Bottleneck::MaxNumSeqs);
  short_queue.waiting_mean = 0.05;
  EXPECT_EQ(name_bottleneck(short_queue).which, Bottleneck::None);
  EngineFacts prefill = kv_bound(1024, 0, 20);
  prefill.kv_usage_max = 0.5;
  prefill.step_tokens_mean = 8000;
  EXPECT_EQ(name_bottleneck(prefill).which, Bottleneck::TokenBudget);
  prefill.step_tokens_mean = 3000;
  EXPECT_EQ(name_bottleneck(prefill).which, Bottleneck::Compute);
  EXPECT_THAT(explain_what_if(capped, prefill), HasSubstr("the bottleneck moved: max_num_seqs → "
                                                          "compute (step time)"));
}

}  // namespace
}  // namespace llmbench::analysis
