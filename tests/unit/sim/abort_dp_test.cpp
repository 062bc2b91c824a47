// Abort (scheduler and engine core) and data-parallel replicas in the virtual-time simulation,
// hand-traced.

#include "llmbench/sim/batch_schedulers.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/sim/scheduler.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"
#include <memory>

namespace llmbench::sim {
namespace {

using testing::Ids;
using testing::make;
using testing::seq_ids;
using testing::SimpleModel;
using testing::small_options;

SchedulerConfig plain_config() {
  SchedulerConfig c;
  c.max_num_batched_tokens = 100;
  c.enable_prefix_caching = false;
  return c;
}

TEST(Abort, RunningAndWaitingRequestsReleaseTheirBlocks) {
  // 10 blocks of 4 tokens; A and B (prompt 8) run, C waits behind max_num_seqs 2.
  SchedulerConfig c = plain_config();
  c.max_num_seqs = 2;
  VllmV1Scheduler s(c, 10, 4);
  RequestState a = make(0, 8, 4), b = make(1, 8, 4), cc = make(2, 8, 4);
  s.add_request(&a);
  s.add_request(&b);
  s.add_request(&cc);
  s.update(s.schedule());  // prefill A, B: 2 blocks each
  EXPECT_EQ(s.blocks().num_free_blocks(), 6);
  EXPECT_EQ(s.waiting_ids(), Ids{2});

  EXPECT_TRUE(s.abort(0));  // running A: its 2 blocks come back
  EXPECT_EQ(a.status, RequestStatus::Finished);
  EXPECT_EQ(s.blocks().num_free_blocks(), 8);
  EXPECT_EQ(s.running_ids(), Ids{1});
  EXPECT_FALSE(s.abort(0));   // already gone
  EXPECT_FALSE(s.abort(42));  // unknown
  s.blocks().check_invariants();

  // B continues undisturbed and C is admitted in A's place.
  const auto o = s.schedule();
  EXPECT_EQ(seq_ids(o), (Ids{1, 2}));
  EXPECT_EQ(o.seqs[0].num_computed_before, 8);  // B decodes its 2nd token
  EXPECT_EQ(o.seqs[0].num_new_tokens, 1);
  s.update(o);
  EXPECT_EQ(b.num_output_tokens, 2);

  EXPECT_TRUE(s.abort(2));  // C's 2 prefill blocks are released too
  EXPECT_EQ(s.blocks().num_free_blocks(), 10 - s.blocks().blocks_of(1));
  while (s.num_running() > 0) s.update(s.schedule());
  EXPECT_EQ(b.num_output_tokens, 4);
  EXPECT_EQ(s.blocks().num_free_blocks(), 10);
  s.blocks().check_invariants();
}

TEST(Abort, WaitingAndSwappedRequests) {
  // Same scenario as SwapPreemption: 4 GPU blocks of 4 tokens, 8 CPU blocks; B is swapped out
  // at step 6 (2 CPU blocks), then aborted: the CPU blocks come back.
  SchedulerConfig c = plain_config();
  c.num_cpu_blocks = 8;
  VllmV1Scheduler s(c, 4, 4);
  RequestState a = make(0, 4, 8), b = make(1, 4, 8), w = make(2, 4, 2);
  s.add_request(&a);
  s.add_request(&b);
  for (int step = 1; step <= 6; ++step) s.update(s.schedule());
  ASSERT_EQ(s.swapped_ids(), Ids{1});
  EXPECT_EQ(s.num_free_cpu_blocks(), 6);
  s.add_request(&w);
  EXPECT_EQ(s.num_waiting(), 2u);  // swapped B + waiting W
  EXPECT_TRUE(s.abort(1));
  EXPECT_EQ(s.num_free_cpu_blocks(), 8);
  EXPECT_TRUE(s.swapped_ids().empty());
  EXPECT_TRUE(s.abort(2));  // waiting, holds nothing
  EXPECT_EQ(s.num_waiting(), 0u);
  EXPECT_EQ(s.blocks().num_free_blocks(), 4 - s.blocks().blocks_of(0));
  while (s.num_running() > 0) s.update(s.schedule());
  EXPECT_EQ(a.num_output_tokens, 8);
  EXPECT_EQ(s.blocks().num_free_blocks(), 4);
}

TEST(Abort, BatchPoliciesFreeTheReservation) {
  SchedulerConfig c = plain_config();
  StaticBatchScheduler s(c, 10, 4);
  RequestState a = make(0, 4, 4), b = make(1, 4, 4), late = make(2, 4, 4);
  s.add_request(&a);
  s.add_request(&b);
  s.update(s.schedule());  // batch {A, B}: 2 blocks reserved each (8 tokens)
  s.add_request(&late);
  EXPECT_EQ(s.blocks().num_free_blocks(), 6);
  EXPECT_TRUE(s.abort(0));
  EXPECT_EQ(s.blocks().num_free_blocks(), 8);
  EXPECT_EQ(s.batch_ids(), Ids{1});
  EXPECT_TRUE(s.abort(2));
  EXPECT_TRUE(s.waiting_ids().empty());
  EXPECT_FALSE(s.abort(2));

  DynamicBatchScheduler d(c, 10, 4);
  RequestState x = make(0, 4, 4), y = make(1, 4, 4);
  d.add_request(&x);
  d.add_request(&y);
  EXPECT_EQ(d.group_ids(), (std::vector<Ids>{{0, 1}}));
  EXPECT_TRUE(d.abort(0));
  EXPECT_EQ(d.group_ids(), (std::vector<Ids>{{1}}));
  EXPECT_EQ(d.num_waiting(), 1u);
}

EngineConfig core_config(std::int64_t blocks) {
  EngineConfig c;
  c.scheduler = plain_config();
  c.num_gpu_blocks = blocks;
  c.block_size = 4;
  c.check_invariants = true;
  return c;
}

TEST(Abort, EngineCoreDefersAnAbortDuringAStep) {
  EngineCore core(core_config(10), std::make_unique<SimpleModel>());
  core.add_request(0, 7, 8, 3, {});
  core.add_request(0, 9, 8, 3, {});
  ASSERT_TRUE(core.begin_step(0).has_value());  // prefill both: 2 blocks each
  EXPECT_TRUE(core.abort(7));                   // in flight: applied at end_step
  EXPECT_EQ(core.num_live(), 2u);
  const StepOutcome& out = core.end_step();
  EXPECT_EQ(out.emitted, Ids{9});  // 7's token of this step is dropped
  EXPECT_TRUE(out.finished.empty());
  EXPECT_EQ(core.num_live(), 1u);
  EXPECT_EQ(core.num_running(), 1u);
  EXPECT_FALSE(core.abort(7));
  // 9 holds ceil(9 / 4) = 3 blocks after its next step; 7's blocks are free.
  ASSERT_TRUE(core.begin_step(1'000'000).has_value());
  EXPECT_EQ(core.last_step().num_seqs, 1);
  const StepOutcome& out2 = core.end_step();
  EXPECT_EQ(out2.emitted, Ids{9});
  EXPECT_DOUBLE_EQ(core.kv_usage(), 0.3);
  // Between steps the abort is immediate.
  EXPECT_TRUE(core.abort(9));
  EXPECT_EQ(core.num_live(), 0u);
  EXPECT_EQ(core.num_running(), 0u);
  EXPECT_DOUBLE_EQ(core.kv_usage(), 0.0);
  EXPECT_FALSE(core.begin_step(2'000'000).has_value());
}

/// Runs `core` until idle from t = 0 (1 ms steps), returning the ids `first_scheduled` listed
/// at each step.
std::vector<Ids> first_scheduled_per_step(EngineCore& core) {
  std::vector<Ids> out;
  for (TimeNs t = 0; core.begin_step(t).has_value(); t += 1'000'000) {
    out.push_back(core.first_scheduled());
    core.end_step();
  }
  return out;
}

TEST(FirstScheduled, StaticBatchingListsEachRequestAtItsFirstBatch) {
  // Static batching, 2 per batch: 0 and 1 run to completion (prefill + 2 more steps), then 2.
  EngineConfig c = core_config(100);
  c.scheduler.max_num_seqs = 2;
  c.scheduler_kind = SchedulerKind::Static;
  EngineCore core(c, std::make_unique<SimpleModel>());
  for (std::int64_t id = 0; id < 3; ++id) core.add_request(0, id, 8, 3, {});
  EXPECT_EQ(first_scheduled_per_step(core), (std::vector<Ids>{{0, 1}, {}, {}, {2}, {}, {}}));
}

TEST(FirstScheduled, APreemptedRequestIsNotListedAgain) {
  // 4 blocks of 4 tokens; two requests of prompt 6 + 8 output need 4 blocks each, so the
  // newest is preempted (recompute) and later scheduled again: each id is listed once.
  EngineConfig c = core_config(4);
  EngineCore core(c, std::make_unique<SimpleModel>());
  core.add_request(0, 0, 6, 8, {});
  core.add_request(0, 1, 6, 8, {});
  const auto per_step = first_scheduled_per_step(core);
  ASSERT_FALSE(per_step.empty());
  EXPECT_EQ(per_step.front(), (Ids{0, 1}));
  for (std::size_t i = 1; i < per_step.size(); ++i) EXPECT_TRUE(per_step[i].empty()) << i;
  EXPECT_GT(core.scheduler_stats().preemptions, 0);
}

SimOptions dp_options(int dp) {
  SimOptions o = small_options(100);
  o.engine.scheduler = plain_config();
  o.engine.scheduler.max_num_batched_tokens = 1000;
  o.record_steps = true;
  o.data_parallel_size = dp;
  return o;
}

TEST(DataParallel, LeastLoadedReplicasStepIndependently) {
  // Four requests at t = 0 (prompt 100, output 3). DP2: least loaded, ties to the lowest index,
  // so 0 → r0, 1 → r1, 2 → r0, 3 → r1. Each replica: prefill 200 tokens (1.2 ms), then two
  // decode steps of 2 tokens (1.002 ms).
  std::vector<SimRequest> reqs(4, SimRequest{0, 100, 3, {}, false, {}});
  Simulation dp2(dp_options(2), std::make_unique<SimpleModel>());
  const auto r2 = dp2.run(reqs);
  EXPECT_EQ(r2.stats.replicas, 2);
  EXPECT_EQ(r2.stats.steps, 6);
  EXPECT_EQ(r2.stats.max_running, 4);
  EXPECT_EQ(r2.stats.end_ns, 1'200'000 + 2 * 1'002'000);
  for (const auto& rec : r2.records) {
    ASSERT_EQ(rec.chunks.size(), 3u);
    EXPECT_EQ(rec.chunks[0].time_ns, 1'200'000);
    EXPECT_EQ(rec.chunks[2].time_ns, 3'204'000);
  }
  ASSERT_EQ(r2.steps.size(), 6u);
  int per_replica[2] = {0, 0};
  for (const auto& st : r2.steps) {
    ++per_replica[st.replica];
    EXPECT_EQ(st.num_seqs, 2);
  }
  EXPECT_EQ(per_replica[0], 3);
  EXPECT_EQ(per_replica[1], 3);
  EXPECT_NE(steps_to_chrome_trace(r2.steps).find("\"tid\":2"), std::string::npos);

  // One replica with the same load: prefill 400 tokens (1.4 ms), decodes of 4 (1.004 ms).
  Simulation dp1(dp_options(1), std::make_unique<SimpleModel>());
  const auto r1 = dp1.run(reqs);
  EXPECT_EQ(r1.stats.steps, 3);
  EXPECT_EQ(r1.stats.end_ns, 1'400'000 + 2 * 1'004'000);
}

TEST(DataParallel, ClosedLoopFillsTheReplicaThatFreedASlot) {
  // Concurrency 2 over DP2: requests 0 (output 1) and 1 (output 4) start on r0 and r1; when 0
  // finishes at 1.1 ms, request 2 goes to r0 (empty) rather than r1.
  std::vector<SimRequest> reqs{SimRequest{0, 100, 1, {}, false, {}},
                               SimRequest{0, 100, 4, {}, false, {}},
                               SimRequest{0, 100, 1, {}, false, {}}};
  auto o = dp_options(2);
  o.max_concurrency = 2;
  Simulation sim(o, std::make_unique<SimpleModel>());
  const auto r = sim.run(reqs);
  EXPECT_EQ(r.records[0].done_ns, 1'100'000);
  EXPECT_EQ(r.records[2].scheduled_ns, 1'100'000);
  EXPECT_EQ(r.records[2].done_ns, 2 * 1'100'000);  // alone on r0: prefill 1.1 ms
  ASSERT_EQ(r.records[1].chunks.size(), 4u);
  EXPECT_EQ(r.records[1].chunks[3].time_ns, 1'100'000 + 3 * 1'001'000);  // r1 undisturbed
}

}  // namespace
}  // namespace llmbench::sim
