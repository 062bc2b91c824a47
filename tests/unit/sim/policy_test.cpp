// Hand-traced scenarios for the static and dynamic batching policies and for swap preemption.

#include "llmbench/core/error.hpp"
#include "llmbench/sim/batch_schedulers.hpp"
#include "llmbench/sim/scheduler.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace llmbench::sim {
namespace {

using testing::Ids;
using testing::make;
using testing::seq_ids;
using testing::seq_tokens;

TEST(StaticBatch, RunsEachBatchToCompletionBeforeAdmitting) {
  SchedulerConfig c;
  c.max_num_seqs = 2;
  c.max_num_batched_tokens = 8;
  StaticBatchScheduler s(c, 100, 4);
  auto a = make(0, 5, 2);
  auto b = make(1, 3, 3);
  auto d = make(2, 2, 1);
  s.add_request(&a);
  s.add_request(&b);
  s.add_request(&d);
  // Step 1: batch {A, B} (max_num_seqs 2), both prompts: 5 + 3 = 8 tokens, both sample.
  auto o = s.schedule();
  EXPECT_EQ(seq_ids(o), (Ids{0, 1}));
  EXPECT_EQ(seq_tokens(o), (Ids{5, 3}));
  EXPECT_EQ(o.num_tokens, 8);
  // prompt + output reserved at admission: ceil(7/4) + ceil(6/4) = 4 blocks.
  EXPECT_EQ(s.blocks().num_free_blocks(), 96);
  EXPECT_EQ(s.waiting_ids(), Ids{2});
  auto r = s.update(o);
  EXPECT_EQ(r.emitted.size(), 2u);
  // Step 2: decodes of A and B; A reaches 2 outputs and finishes.
  o = s.schedule();
  EXPECT_EQ(seq_tokens(o), (Ids{1, 1}));
  EXPECT_EQ(o.seqs[0].num_computed_before, 5);
  r = s.update(o);
  ASSERT_EQ(r.finished.size(), 1u);
  EXPECT_EQ(r.finished[0]->id, 0);
  EXPECT_EQ(s.blocks().num_free_blocks(), 98);
  // Step 3: B alone although a slot is free: C must wait for the batch to finish.
  o = s.schedule();
  EXPECT_EQ(seq_ids(o), Ids{1});
  EXPECT_EQ(s.num_waiting(), 1u);
  r = s.update(o);
  EXPECT_EQ(r.finished.size(), 1u);
  // Step 4: the next batch {C}: its prompt, one output, done.
  o = s.schedule();
  EXPECT_EQ(seq_ids(o), Ids{2});
  EXPECT_EQ(seq_tokens(o), Ids{2});
  r = s.update(o);
  EXPECT_EQ(r.finished.size(), 1u);
  EXPECT_TRUE(s.schedule().empty());
  EXPECT_EQ(s.stats().batches, 2);
  EXPECT_EQ(s.stats().max_running, 2);
  EXPECT_EQ(s.blocks().num_free_blocks(), 100);
}

TEST(StaticBatch, PrefillChunksBeforeAnyDecodeAndKvFitCapsTheBatch) {
  SchedulerConfig c;
  c.max_num_seqs = 8;
  c.max_num_batched_tokens = 6;
  StaticBatchScheduler s(c, 4, 4);
  auto a = make(0, 4, 2);  // 2 blocks
  auto b = make(1, 5, 3);  // 2 blocks
  auto d = make(2, 1, 1);  // 1 block: does not fit after A and B
  s.add_request(&a);
  s.add_request(&b);
  s.add_request(&d);
  auto o = s.schedule();
  EXPECT_EQ(s.batch_ids(), (Ids{0, 1}));
  EXPECT_EQ(seq_tokens(o), (Ids{4, 2}));  // budget 6: A's prompt, 2 of B's 5
  s.update(o);
  // Step 2: A has sampled but waits; B's last 3 prompt tokens only.
  o = s.schedule();
  EXPECT_EQ(seq_ids(o), Ids{1});
  EXPECT_EQ(seq_tokens(o), Ids{3});
  EXPECT_EQ(o.seqs[0].num_computed_before, 2);
  s.update(o);
  // Step 3: decodes of both.
  o = s.schedule();
  EXPECT_EQ(seq_ids(o), (Ids{0, 1}));
  EXPECT_EQ(seq_tokens(o), (Ids{1, 1}));
}

TEST(DynamicBatch, GroupsByArrivalWindowAndPredictedLength) {
  SchedulerConfig c;
  c.batch_window_ms = 10;     // τ
  c.batch_length_beta = 1.2;  // β
  DynamicBatchScheduler s(c, 1000, 16);
  auto a = make(0, 90, 10);   // length 100
  auto b = make(1, 100, 10);  // 110
  auto d = make(2, 190, 10);  // 200
  auto e = make(3, 90, 10);   // 100
  auto f = make(4, 90, 10);   // 100
  s.set_now(0);
  s.add_request(&a);  // opens G1
  s.set_now(ms_to_ns(2));
  EXPECT_DOUBLE_EQ(s.predicted_length(), 100);
  s.add_request(&b);  // gap 2 ≤ τ; 110 < ⌈1.2·100⌉ = 120 → G1
  s.set_now(ms_to_ns(5));
  s.add_request(&d);  // L̂ = 105: 200 ≥ ⌈126⌉ → opens G2
  s.set_now(ms_to_ns(6));
  s.add_request(&e);  // gap 1 ms from G2's first; L̂ = 136.7 → cap 165 > 100 → G2
  s.set_now(ms_to_ns(20));
  s.add_request(&f);  // 15 ms after G2's first > τ → opens G3
  EXPECT_EQ(s.group_ids(), (std::vector<Ids>{{0, 1}, {2, 3}, {4}}));
  EXPECT_EQ(s.num_waiting(), 5u);
  // Batch 1 = G1: both prompts in one step, then 9 decode steps.
  auto o = s.schedule();
  EXPECT_EQ(seq_ids(o), (Ids{0, 1}));
  EXPECT_EQ(seq_tokens(o), (Ids{90, 100}));
  s.update(o);
  int steps = 1;
  while (s.num_running() > 0) {
    o = s.schedule();
    EXPECT_EQ(seq_ids(o), (Ids{0, 1}));
    s.update(o);
    ++steps;
  }
  EXPECT_EQ(steps, 10);
  // Batch 2 = G2.
  o = s.schedule();
  EXPECT_EQ(seq_ids(o), (Ids{2, 3}));
  EXPECT_EQ(s.group_ids(), (std::vector<Ids>{{4}}));
  EXPECT_EQ(s.stats().batches, 2);
}

TEST(DynamicBatch, TakingTheOpenGroupClosesIt) {
  SchedulerConfig c;
  c.batch_window_ms = 10;
  DynamicBatchScheduler s(c, 1000, 16);
  auto a = make(0, 10, 4);
  auto b = make(1, 10, 4);
  s.set_now(0);
  s.add_request(&a);
  const auto o = s.schedule();  // the engine is idle: the open group runs now
  EXPECT_EQ(seq_ids(o), Ids{0});
  s.set_now(ms_to_ns(1));
  s.add_request(&b);  // within τ of A, but A's group is closed
  EXPECT_EQ(s.group_ids(), (std::vector<Ids>{{1}}));
  EXPECT_EQ(s.batch_ids(), Ids{0});
}

TEST(Registry, ParsesAndBuildsTheNewPolicies) {
  EXPECT_EQ(parse_scheduler_kind("static"), SchedulerKind::Static);
  EXPECT_EQ(parse_scheduler_kind("dynamic"), SchedulerKind::Dynamic);
  EXPECT_EQ(parse_scheduler_kind("continuous"), SchedulerKind::VllmV1);
  SchedulerConfig c;
  EXPECT_NE(
      dynamic_cast<StaticBatchScheduler*>(make_scheduler(SchedulerKind::Static, c, 8, 16).get()),
      nullptr);
  EXPECT_NE(
      dynamic_cast<DynamicBatchScheduler*>(make_scheduler(SchedulerKind::Dynamic, c, 8, 16).get()),
      nullptr);
  try {
    (void)parse_scheduler_kind("fifo");
    FAIL();
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, "--scheduler");
    EXPECT_NE(e.error().message.find("'fifo'"), std::string::npos);
    EXPECT_NE(e.error().message.find("vllm-v1, static, dynamic"), std::string::npos);
  }
}

// Two requests of prompt 4 / output 8 in 4 GPU blocks of 4 tokens: each needs a 3rd block at
// its 9th token, so the newest (B) is preempted at step 6.
struct SwapScenario {
  SchedulerConfig config;
  RequestState a = make(0, 4, 8);
  RequestState b = make(1, 4, 8);
  explicit SwapScenario(std::int64_t cpu_blocks) {
    config.max_num_batched_tokens = 100;
    config.enable_prefix_caching = false;
    config.num_cpu_blocks = cpu_blocks;
  }
};

TEST(SwapPreemption, SwapsOutAndBackInInsteadOfRecomputing) {
  SwapScenario sc(8);
  VllmV1Scheduler s(sc.config, 4, 4);
  s.add_request(&sc.a);
  s.add_request(&sc.b);
  for (int step = 1; step <= 5; ++step) {  // prefill, then decodes up to 8 computed tokens
    const auto o = s.schedule();
    ASSERT_EQ(o.seqs.size(), 2u) << step;
    EXPECT_TRUE(o.preempted.empty());
    s.update(o);
  }
  EXPECT_EQ(s.blocks().num_free_blocks(), 0);
  // Step 6: A needs a 3rd block; B (2 blocks) goes to CPU, keeping its 8 computed tokens.
  auto o = s.schedule();
  EXPECT_EQ(seq_ids(o), Ids{0});
  EXPECT_EQ(o.preempted, Ids{1});
  EXPECT_EQ(o.swapped_out, Ids{1});
  EXPECT_EQ(o.num_swap_out_blocks, 2);
  EXPECT_EQ(s.num_free_cpu_blocks(), 6);
  EXPECT_EQ(s.swapped_ids(), Ids{1});
  EXPECT_EQ(sc.b.num_computed_tokens, 8);
  EXPECT_EQ(sc.b.status, RequestStatus::Swapped);
  EXPECT_EQ(s.blocks().num_free_blocks(), 1);
  s.update(o);
  // Step 7: B would need 3 blocks, 1 is free: it stays swapped.
  o = s.schedule();
  EXPECT_EQ(seq_ids(o), Ids{0});
  EXPECT_TRUE(o.swapped_in.empty());
  s.update(o);
  // Step 8: A's 8th output: A finishes and frees 3 blocks.
  o = s.schedule();
  auto r = s.update(o);
  ASSERT_EQ(r.finished.size(), 1u);
  EXPECT_EQ(s.blocks().num_free_blocks(), 4);
  // Step 9: B swapped in (2 blocks copied back, 3 held), resumes at 8 computed tokens.
  o = s.schedule();
  EXPECT_EQ(seq_ids(o), Ids{1});
  EXPECT_EQ(o.swapped_in, Ids{1});
  EXPECT_EQ(o.num_swap_in_blocks, 2);
  EXPECT_EQ(o.seqs[0].num_computed_before, 8);
  EXPECT_EQ(o.seqs[0].num_new_tokens, 1);
  EXPECT_EQ(s.blocks().num_free_blocks(), 1);
  EXPECT_EQ(s.num_free_cpu_blocks(), 8);
  s.update(o);
  s.blocks().check_invariants();
  while (s.num_running() > 0) s.update(s.schedule());
  EXPECT_EQ(sc.b.num_output_tokens, 8);
  EXPECT_EQ(s.stats().preemptions, 1);
  EXPECT_EQ(s.stats().swap_outs, 1);
  EXPECT_EQ(s.stats().swap_ins, 1);
  EXPECT_EQ(s.stats().swap_out_blocks, 2);
  EXPECT_EQ(s.stats().swap_in_blocks, 2);
  EXPECT_EQ(s.stats().recompute_fallbacks, 0);
}

TEST(SwapPreemption, FullCpuPoolFallsBackToRecompute) {
  SwapScenario sc(1);  // B's 2 blocks do not fit 1 CPU block
  VllmV1Scheduler s(sc.config, 4, 4);
  s.add_request(&sc.a);
  s.add_request(&sc.b);
  for (int step = 1; step <= 5; ++step) s.update(s.schedule());
  const auto o = s.schedule();
  EXPECT_EQ(o.preempted, Ids{1});
  EXPECT_TRUE(o.swapped_out.empty());
  EXPECT_EQ(o.num_swap_out_blocks, 0);
  EXPECT_EQ(s.waiting_ids(), Ids{1});
  EXPECT_TRUE(s.swapped_ids().empty());
  EXPECT_EQ(sc.b.num_computed_tokens, 0);
  EXPECT_EQ(s.num_free_cpu_blocks(), 1);
  EXPECT_EQ(s.stats().recompute_fallbacks, 1);
}

}  // namespace
}  // namespace llmbench::sim
