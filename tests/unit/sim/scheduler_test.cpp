#include "llmbench/sim/scheduler.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"
#include <numeric>

namespace llmbench::sim {
namespace {

using testing::Ids;
using testing::make;

TEST(VllmV1Scheduler, ChunkedPrefillSplitsUnderTheTokenBudget) {
  SchedulerConfig c;
  c.max_num_batched_tokens = 8;
  c.enable_prefix_caching = false;
  VllmV1Scheduler s(c, 100, 4);
  auto a = make(0, 10, 2);
  auto b = make(1, 3, 2);
  s.add_request(&a);
  s.add_request(&b);
  // Step 1: A takes the whole budget (8 of its 10 prompt tokens); B waits.
  auto o = s.schedule();
  ASSERT_EQ(o.seqs.size(), 1u);
  EXPECT_EQ(o.seqs[0].num_new_tokens, 8);
  EXPECT_FALSE(o.seqs[0].samples());
  EXPECT_EQ(s.waiting_ids(), Ids{1});
  auto r = s.update(o);
  EXPECT_TRUE(r.emitted.empty());
  // Step 2: A's last 2 prompt tokens (running first), then B's 3: A and B sample.
  o = s.schedule();
  ASSERT_EQ(o.seqs.size(), 2u);
  EXPECT_EQ(o.seqs[0].request, &a);
  EXPECT_EQ(o.seqs[0].num_new_tokens, 2);
  EXPECT_EQ(o.seqs[0].num_computed_before, 8);
  EXPECT_EQ(o.seqs[1].num_new_tokens, 3);
  EXPECT_EQ(o.num_tokens, 5);
  r = s.update(o);
  EXPECT_EQ(r.emitted.size(), 2u);
  // Step 3: one decode token each; both reach 2 outputs and finish.
  o = s.schedule();
  ASSERT_EQ(o.seqs.size(), 2u);
  EXPECT_EQ(o.seqs[0].num_new_tokens, 1);
  EXPECT_EQ(o.seqs[1].num_new_tokens, 1);
  r = s.update(o);
  EXPECT_EQ(r.finished.size(), 2u);
  EXPECT_EQ(s.num_running(), 0u);
  EXPECT_EQ(s.blocks().num_free_blocks(), 100);
}

TEST(VllmV1Scheduler, MaxNumSeqsCapsRunning) {
  SchedulerConfig c;
  c.max_num_seqs = 2;
  VllmV1Scheduler s(c, 100, 4);
  auto a = make(0, 4, 1), b = make(1, 4, 1), d = make(2, 4, 1);
  s.add_request(&a);
  s.add_request(&b);
  s.add_request(&d);
  const auto o = s.schedule();
  EXPECT_EQ(o.seqs.size(), 2u);
  EXPECT_EQ(s.waiting_ids(), Ids{2});
}

// 4 blocks of 4 tokens; three requests of 4 prompt + 6 output tokens.
TEST(VllmV1Scheduler, PreemptsNewestRunningAndRequeuesAtHead) {
  SchedulerConfig c;
  c.enable_prefix_caching = false;
  VllmV1Scheduler s(c, 4, 4);
  auto a = make(0, 4, 6), b = make(1, 4, 6), d = make(2, 4, 6);
  s.add_request(&a);
  s.add_request(&b);
  s.add_request(&d);
  // Step 1: all three prefill (one block each) and sample their first token.
  auto o = s.schedule();
  EXPECT_EQ(o.seqs.size(), 3u);
  s.update(o);
  EXPECT_EQ(s.blocks().num_free_blocks(), 1);
  // Step 2: token 5 needs a second block each. A takes the last free block; B cannot, so the
  // newest running request (C) is preempted and B retries successfully. No admissions.
  o = s.schedule();
  EXPECT_EQ(o.preempted, Ids{2});
  ASSERT_EQ(o.seqs.size(), 2u);
  EXPECT_EQ(s.running_ids(), (Ids{0, 1}));
  EXPECT_EQ(s.waiting_ids(), Ids{2});
  EXPECT_EQ(d.num_computed_tokens, 0);
  EXPECT_EQ(d.num_output_tokens, 1);  // kept: recomputed later
  s.update(o);
  // Steps 3-5: A and B decode within two blocks; C cannot be admitted (needs 2 blocks).
  for (int step = 3; step <= 5; ++step) {
    o = s.schedule();
    EXPECT_TRUE(o.preempted.empty()) << step;
    EXPECT_EQ(o.seqs.size(), 2u) << step;
    s.update(o);
  }
  EXPECT_EQ(a.num_output_tokens, 5);
  // Step 6: A's 9th token needs a third block: B (newest running) is preempted and goes to the
  // head of WAITING, ahead of C. A emits its 6th token and finishes.
  o = s.schedule();
  EXPECT_EQ(o.preempted, Ids{1});
  EXPECT_EQ(s.waiting_ids(), (Ids{1, 2}));
  auto r = s.update(o);
  ASSERT_EQ(r.finished.size(), 1u);
  EXPECT_EQ(r.finished[0], &a);
  // Step 7: B recomputes prompt + 5 outputs (9 tokens, 3 blocks) and samples its last token;
  // C (2 blocks) does not fit beside it.
  o = s.schedule();
  ASSERT_EQ(o.seqs.size(), 1u);
  EXPECT_EQ(o.seqs[0].request, &b);
  EXPECT_EQ(o.seqs[0].num_new_tokens, 9);
  r = s.update(o);
  EXPECT_EQ(r.finished.size(), 1u);
  // C then runs alone to the end: recompute 5 tokens, then 4 decodes.
  int steps = 0;
  while (s.num_running() + s.num_waiting() > 0) {
    s.update(s.schedule());
    ++steps;
  }
  EXPECT_EQ(steps, 5);
  EXPECT_EQ(d.num_output_tokens, 6);
  EXPECT_EQ(s.stats().preemptions, 2);
  EXPECT_EQ(b.num_preemptions, 1);
  EXPECT_EQ(d.num_preemptions, 1);
  EXPECT_EQ(s.blocks().num_free_blocks(), 4);
}

std::vector<std::uint32_t> tokens(std::size_t n, std::uint32_t first) {
  std::vector<std::uint32_t> t(n);
  std::iota(t.begin(), t.end(), first);
  return t;
}

TEST(VllmV1Scheduler, PrefixHitsCountFullBlocksAndRecomputeTheLastToken) {
  SchedulerConfig c;
  VllmV1Scheduler s(c, 64, 4);
  auto run_alone = [&](RequestState& r) {
    s.add_request(&r);
    const auto o = s.schedule();
    EXPECT_EQ(o.seqs.size(), 1u);
    const ScheduledSeq first = o.seqs.front();
    s.update(o);
    while (s.num_running() + s.num_waiting() > 0) s.update(s.schedule());
    return first;
  };
  auto a = make(0, 10, 1);
  a.block_hashes = block_hashes(tokens(10, 1), 4);
  EXPECT_EQ(run_alone(a).num_computed_before, 0);
  EXPECT_EQ(a.cached_tokens, 0);
  // Same first 8 tokens, different tail: 2 full blocks hit (8 tokens), 2 computed.
  auto b = make(1, 10, 1);
  auto tb = tokens(10, 1);
  tb[8] = 500;
  tb[9] = 501;
  b.block_hashes = block_hashes(tb, 4);
  auto sb = run_alone(b);
  EXPECT_EQ(sb.num_computed_before, 8);
  EXPECT_EQ(sb.num_new_tokens, 2);
  EXPECT_EQ(b.cached_tokens, 8);
  // Exactly the first 8 tokens: a full hit would leave nothing to compute, so only
  // floor((8 − 1) / 4) = 1 block is used and the last block is recomputed.
  auto d = make(2, 8, 1);
  d.block_hashes = block_hashes(tokens(8, 1), 4);
  auto sd = run_alone(d);
  EXPECT_EQ(sd.num_computed_before, 4);
  EXPECT_EQ(sd.num_new_tokens, 4);
  // 7 tokens: one full block hashed, hit allowed up to floor(6 / 4) = 1 block.
  auto e = make(3, 7, 1);
  e.block_hashes = block_hashes(tokens(7, 1), 4);
  EXPECT_EQ(run_alone(e).num_computed_before, 4);
  // 3 tokens: no full block, no hit.
  auto f = make(4, 3, 1);
  f.block_hashes = block_hashes(tokens(3, 1), 4);
  EXPECT_EQ(run_alone(f).num_computed_before, 0);
  EXPECT_EQ(s.stats().prefix_queries, 10 + 10 + 8 + 7 + 3);
  EXPECT_EQ(s.stats().prefix_hits, 8 + 4 + 4);
  s.blocks().check_invariants();
}

}  // namespace
}  // namespace llmbench::sim
