#include "llmbench/sim/engine.hpp"

#include "llmbench/core/rng.hpp"
#include "llmbench/metrics/summary.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include <algorithm>
#include <queue>

namespace llmbench::sim {
namespace {

using testing::SimpleModel;
using testing::small_options;
using testing::SumsModel;

TEST(EventOrder, TimeThenPriorityThenSeq) {
  const Event a{10, EventKind::StepStart, 0, -1};
  const Event b{11, EventKind::StepEnd, 1, -1};
  EXPECT_TRUE(EventOrder::before(a, b));  // earlier time wins over priority
  const Event end{10, EventKind::StepEnd, 9, -1};
  const Event arrival{10, EventKind::Arrival, 3, 0};
  const Event start{10, EventKind::StepStart, 1, -1};
  EXPECT_TRUE(EventOrder::before(end, arrival));  // same time: StepEnd, Arrival, StepStart
  EXPECT_TRUE(EventOrder::before(arrival, start));
  EXPECT_FALSE(EventOrder::before(start, arrival));
  const Event arrival2{10, EventKind::Arrival, 4, 1};
  EXPECT_TRUE(EventOrder::before(arrival, arrival2));  // then insertion order
  EXPECT_FALSE(EventOrder::before(arrival, arrival));  // irreflexive
  // The queue pops in that order.
  std::priority_queue<Event, std::vector<Event>, EventOrder> q;
  for (const auto& e : {start, arrival2, b, arrival, end}) q.push(e);
  std::vector<std::uint64_t> seqs;
  while (!q.empty()) {
    seqs.push_back(q.top().seq);
    q.pop();
  }
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{9, 3, 4, 1, 1}));
}

TEST(Simulation, SingleRequestTimeline) {
  Simulation sim(small_options(100), std::make_unique<SimpleModel>());
  const auto result = sim.run({SimRequest{5'000'000, 100, 4, {}, false, {}}});
  ASSERT_EQ(result.records.size(), 1u);
  const auto& r = result.records[0];
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.sent_ns, 5'000'000);
  EXPECT_EQ(r.scheduled_ns, 5'000'000);
  // Prefill step 1 ms + 100 µs; then three decodes of 1.001 ms.
  ASSERT_EQ(r.chunks.size(), 4u);
  EXPECT_EQ(r.chunks[0].time_ns, 5'000'000 + 1'100'000);
  EXPECT_EQ(r.chunks[3].time_ns, 5'000'000 + 1'100'000 + 3 * 1'001'000);
  EXPECT_EQ(r.done_ns, r.chunks[3].time_ns);
  EXPECT_EQ(r.output_tokens, 4);
  EXPECT_EQ(r.input_tokens, 100);
  const auto lat = metrics::request_latency(r);
  EXPECT_NEAR(lat.ttft_ms, 1.1, 1e-9);
  EXPECT_NEAR(lat.tpot_ms, 1.001, 1e-9);
  EXPECT_EQ(result.stats.steps, 4);
}

TEST(Simulation, StepTraceAndChromeTrace) {
  auto o = small_options(100);
  o.record_steps = true;
  Simulation sim(o, std::make_unique<SimpleModel>());
  const auto result =
      sim.run({SimRequest{0, 100, 3, {}, false, {}}, SimRequest{0, 20, 1, {}, false, {}}});
  ASSERT_EQ(result.steps.size(), 3u);
  EXPECT_EQ(result.stats.steps, 3);
  // Step 1: both prefills (120 tokens); steps 2-3: one decode of the first request.
  EXPECT_EQ(result.steps[0].num_seqs, 2);
  EXPECT_EQ(result.steps[0].num_tokens, 120);
  EXPECT_EQ(result.steps[0].num_decode_seqs, 0);
  EXPECT_EQ(result.steps[0].end_ns, 1'120'000);
  EXPECT_EQ(result.steps[1].num_decode_seqs, 1);
  EXPECT_EQ(result.steps[1].start_ns, 1'120'000);
  EXPECT_NEAR(result.steps[0].kv_usage, 9.0 / 100, 1e-12);  // 7 + 2 blocks of 16
  const auto trace = nlohmann::json::parse(steps_to_chrome_trace(result.steps));
  const auto& events = trace.at("traceEvents");
  ASSERT_EQ(events.size(), 1u + 3 * 3);
  EXPECT_EQ(events[1].at("ph"), "X");
  EXPECT_DOUBLE_EQ(events[1].at("dur").get<double>(), 1120.0);
  EXPECT_EQ(events[1].at("args").at("tokens"), 120);
}

TEST(Simulation, ClosedLoopSchedulesEachRequestAtItsSlotAsRunDoes) {
  auto o = small_options(100);
  o.max_concurrency = 1;
  o.closed_loop = true;  // simulate without --request-rate
  Simulation sim(o, std::make_unique<SimpleModel>());
  const auto result =
      sim.run({SimRequest{0, 10, 2, {}, false, {}}, SimRequest{0, 10, 2, {}, false, {}}});
  const auto& second = result.records[1];
  EXPECT_EQ(second.slot_ns, result.records[0].done_ns);
  EXPECT_EQ(second.scheduled_ns, second.slot_ns);  // no queue wait in a closed loop
  EXPECT_EQ(metrics::request_latency(second).queue_wait_ms, 0.0);
}

TEST(Simulation, ClosedLoopReleasesTheNextRequestWhenOneFinishes) {
  auto o = small_options(100);
  o.max_concurrency = 1;
  Simulation sim(o, std::make_unique<SimpleModel>());
  const auto result =
      sim.run({SimRequest{0, 10, 2, {}, false, {}}, SimRequest{0, 10, 2, {}, false, {}}});
  const auto& first = result.records[0];
  const auto& second = result.records[1];
  EXPECT_EQ(second.sent_ns, first.done_ns);
  EXPECT_EQ(second.slot_ns, first.done_ns);
  EXPECT_EQ(second.scheduled_ns, 0);  // its arrival: it waited for the slot from 0
  EXPECT_EQ(second.chunks.front().time_ns, first.done_ns + 1'010'000);
  const auto summary = metrics::summarize(result.records, {});
  EXPECT_EQ(summary.completed, 2u);
  EXPECT_EQ(summary.total_output_tokens, 4);
}

TEST(Simulation, RejectsRequestsLargerThanTheCache) {
  Simulation sim(small_options(2), std::make_unique<SimpleModel>());
  const auto result =
      sim.run({SimRequest{0, 40, 1, {}, false, {}}, SimRequest{0, 20, 2, {}, false, {}}});
  EXPECT_EQ(result.records[0].error_kind, metrics::ErrorKind::Http4xx);
  EXPECT_TRUE(result.records[1].ok());
  EXPECT_EQ(result.stats.rejected, 1);
}

TEST(SyntheticBlockHashes, ShareExactlyTheCommonFullBlocks) {
  // 16-token blocks, a 40-token shared prefix: blocks 0 and 1 end inside it, block 2 does not.
  const auto a = synthetic_block_hashes(100, 40, 7, 16);
  const auto a_short = synthetic_block_hashes(70, 40, 7, 16);
  const auto b = synthetic_block_hashes(100, 40, 8, 16);
  ASSERT_EQ(a.size(), 6u);  // floor(100 / 16)
  ASSERT_EQ(a_short.size(), 4u);
  for (std::size_t j = 0; j < a_short.size(); ++j) EXPECT_EQ(a[j], a_short[j]) << j;
  EXPECT_EQ(a[0], b[0]);
  EXPECT_EQ(a[1], b[1]);
  for (std::size_t j = 2; j < a.size(); ++j) EXPECT_NE(a[j], b[j]) << j;
  EXPECT_TRUE(synthetic_block_hashes(15, 0, 7, 16).empty());
  // Different block sizes never collide on the first block.
  EXPECT_NE(synthetic_block_hashes(64, 64, 1, 16)[0], synthetic_block_hashes(64, 64, 1, 32)[0]);
  // In the engine: the second request with the same key hits 6 full blocks = 96 tokens.
  std::vector<SimRequest> reqs;
  for (int i = 0; i < 2; ++i)
    reqs.push_back(
        SimRequest{i * 100'000'000, 100, 2, {}, false, synthetic_block_hashes(100, 0, 3, 16)});
  Simulation sim(small_options(100), std::make_unique<SimpleModel>());
  const auto result = sim.run(reqs);
  EXPECT_EQ(result.records[0].cached_tokens, 0);
  EXPECT_EQ(result.records[1].cached_tokens, 96);
}

TEST(Simulation, SharedPromptHitsThePrefixCache) {
  const std::string text(400, 'x');
  std::vector<SimRequest> reqs(2);
  for (int i = 0; i < 2; ++i) {
    reqs[static_cast<std::size_t>(i)] =
        SimRequest{i * 100'000'000, 100, 2, pseudo_tokens(text, 100, static_cast<std::uint64_t>(i)),
                   false,           {}};
  }
  Simulation sim(small_options(100), std::make_unique<SimpleModel>());
  const auto result = sim.run(reqs);
  EXPECT_EQ(result.records[0].cached_tokens, 0);
  EXPECT_EQ(result.records[1].cached_tokens, 96);  // floor(99 / 16) full blocks
  EXPECT_EQ(result.stats.prefix_hits, 96);
  // The hit shortens the prefill: 4 tokens instead of 100.
  EXPECT_EQ(result.records[1].chunks[0].time_ns - result.records[1].sent_ns, 1'004'000);
}

TEST(PseudoTokens, EqualTextGivesEqualPrefix) {
  const auto a = pseudo_tokens("hello world, hello", 8, 1);
  const auto b = pseudo_tokens("hello world, hello", 8, 2);
  ASSERT_EQ(a.size(), 8u);
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + 5, b.begin()));  // 18 bytes → 5 text tokens
  EXPECT_NE(a[6], b[6]);                                         // past the text: salted
}

// The one prompt rule of simulate and the server: the ids, then pseudo ids of the text for the
// rest of the prompt; text alone gives exactly `pseudo_tokens`.
TEST(PromptCacheIds, IdsFirstThenPseudoTokensOfTheText) {
  const std::string text = "hello world, hello";
  EXPECT_EQ(prompt_cache_ids({}, text, 8, 3), pseudo_tokens(text, 8, 3));
  const std::vector<std::uint32_t> ids{7, 8, 9};
  const auto mixed = prompt_cache_ids(ids, text, 6, 3);
  ASSERT_EQ(mixed.size(), 6u);
  EXPECT_EQ(std::vector<std::uint32_t>(mixed.begin(), mixed.begin() + 3), ids);
  const auto rest = pseudo_tokens(text, 3, 3);
  EXPECT_EQ(std::vector<std::uint32_t>(mixed.begin() + 3, mixed.end()), rest);
  EXPECT_EQ(prompt_cache_ids(ids, text, 2, 3), ids);  // the ids cover it: nothing is added
}

// Invariants under random workloads with a tight cache (preemption and prefix hits happen).
/// `n` requests with exponential gaps (mean `mean_gap_ns`), prompts of 1 … `max_prompt` and
/// outputs of 1 … `max_out` tokens; a fraction `share` of the prompts start with one common
/// text (prefix-cache hits), the rest share nothing.
std::vector<SimRequest> random_requests(Rng& rng, int n, double mean_gap_ns,
                                        std::int64_t max_prompt, std::int64_t max_out,
                                        double share) {
  const std::string shared(4 * static_cast<std::size_t>(max_prompt), 's');
  std::vector<SimRequest> reqs;
  TimeNs t = 0;
  for (int i = 0; i < n; ++i) {
    t += static_cast<TimeNs>(rng.exponential(1.0 / mean_gap_ns));
    const auto prompt = rng.uniform_int(1, max_prompt);
    const auto out = rng.uniform_int(1, max_out);
    const bool common = rng.uniform01() < share;
    reqs.push_back(SimRequest{t,
                              prompt,
                              out,
                              common ? pseudo_tokens(shared, prompt, 0)
                                     : pseudo_tokens("", prompt, static_cast<std::uint64_t>(i) + 1),
                              false,
                              {}});
  }
  return reqs;
}

TEST(Simulation, RandomWorkloadInvariants) {
  std::int64_t total_preemptions = 0;
  std::int64_t total_hits = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    Rng rng(seed);
    const auto reqs = random_requests(rng, 60, 2e6, 300, 80, 0.5);
    auto o = small_options(static_cast<std::int64_t>(rng.uniform_int(25, 60)));
    o.engine.scheduler.max_num_batched_tokens = rng.uniform_int(32, 512);
    o.engine.scheduler.max_num_seqs = rng.uniform_int(2, 32);
    o.max_concurrency = seed % 3 == 0 ? 8 : -1;
    Simulation sim(o, std::make_unique<SimpleModel>());
    const auto result = sim.run(reqs);
    ASSERT_EQ(result.records.size(), reqs.size());
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      const auto& r = result.records[i];
      ASSERT_TRUE(r.ok()) << "seed " << seed << " request " << i;
      EXPECT_EQ(r.id, static_cast<std::int64_t>(i));
      EXPECT_GE(r.sent_ns, reqs[i].arrival_ns);
      EXPECT_EQ(static_cast<std::int64_t>(r.chunks.size()), reqs[i].output_len);
      EXPECT_EQ(r.output_tokens, reqs[i].output_len);
      EXPECT_EQ(r.done_ns, r.chunks.back().time_ns);
      EXPECT_GT(r.chunks.front().time_ns, r.sent_ns);
      for (std::size_t k = 1; k < r.chunks.size(); ++k)
        EXPECT_GT(r.chunks[k].time_ns, r.chunks[k - 1].time_ns);
    }
    EXPECT_LE(result.stats.max_running, o.engine.scheduler.max_num_seqs);
    total_preemptions += result.stats.preemptions;
    total_hits += result.stats.prefix_hits;
  }
  EXPECT_GT(total_preemptions, 0);
  EXPECT_GT(total_hits, 0);
}

// The decode lane changes how a step is formed, not which step: with it and without it (every
// sequence formed and applied one by one) a simulation gives the same token times, finishes,
// step traces and counters, bit for bit, across preemption-heavy pools, prefix hits, chunk caps,
// swap, closed loops and two data-parallel replicas.
TEST(Simulation, DecodeLaneGivesTheSameRunAsOneByOne) {
  std::int64_t lane_steps_checked = 0;
  std::int64_t preemptions = 0;
  std::int64_t swaps = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    Rng rng(seed * 7919);
    const int n = static_cast<int>(rng.uniform_int(20, 120));
    const auto reqs = random_requests(rng, n, 3e6, 400, 200, 0.4);
    auto o = small_options(rng.uniform_int(40, 400));
    o.engine.block_size = seed % 4 == 0 ? 64 : 16;
    o.engine.num_gpu_blocks =
        std::max<std::int64_t>(o.engine.num_gpu_blocks, 700 / o.engine.block_size + 1);
    o.engine.scheduler.max_num_batched_tokens = rng.uniform_int(16, 1024);
    o.engine.scheduler.max_num_seqs = rng.uniform_int(2, 96);
    o.engine.scheduler.long_prefill_token_threshold = seed % 5 == 0 ? rng.uniform_int(1, 64) : 0;
    o.engine.scheduler.enable_prefix_caching = seed % 7 != 0;
    o.engine.scheduler.num_cpu_blocks = seed % 6 == 0 ? rng.uniform_int(10, 200) : 0;
    o.max_concurrency = seed % 3 == 0 ? rng.uniform_int(2, 40) : -1;
    o.data_parallel_size = seed % 8 == 0 ? 2 : 1;
    o.record_steps = true;
    auto with = o;
    with.decode_lane = true;
    auto without = o;
    without.decode_lane = false;
    const auto a = Simulation(with, std::make_unique<SumsModel>()).run(reqs);
    const auto b = Simulation(without, std::make_unique<SumsModel>()).run(reqs);
    ASSERT_EQ(a.records.size(), b.records.size());
    for (std::size_t i = 0; i < a.records.size(); ++i) {
      const auto& x = a.records[i];
      const auto& y = b.records[i];
      ASSERT_EQ(x.chunks.size(), y.chunks.size()) << "seed " << seed << " request " << i;
      for (std::size_t k = 0; k < x.chunks.size(); ++k)
        ASSERT_EQ(x.chunks[k].time_ns, y.chunks[k].time_ns)
            << "seed " << seed << " request " << i << " token " << k;
      EXPECT_EQ(x.done_ns, y.done_ns);
      EXPECT_EQ(x.scheduled_ns, y.scheduled_ns);
      EXPECT_EQ(x.cached_tokens, y.cached_tokens);
      EXPECT_EQ(x.http_status, y.http_status);
    }
    ASSERT_EQ(a.steps.size(), b.steps.size()) << "seed " << seed;
    for (std::size_t k = 0; k < a.steps.size(); ++k) {
      const auto& x = a.steps[k];
      const auto& y = b.steps[k];
      ASSERT_EQ(x.end_ns, y.end_ns) << "seed " << seed << " step " << k;
      EXPECT_EQ(x.num_seqs, y.num_seqs);
      EXPECT_EQ(x.num_tokens, y.num_tokens);
      EXPECT_EQ(x.num_decode_seqs, y.num_decode_seqs);
      EXPECT_EQ(x.num_waiting, y.num_waiting);
      EXPECT_EQ(x.num_running, y.num_running);
      EXPECT_EQ(x.num_preempted, y.num_preempted);
      EXPECT_EQ(x.kv_usage, y.kv_usage);
      EXPECT_EQ(x.prefix_hits, y.prefix_hits);
    }
    EXPECT_EQ(a.stats.preemptions, b.stats.preemptions);
    EXPECT_EQ(a.stats.prefix_hits, b.stats.prefix_hits);
    EXPECT_EQ(a.stats.prefix_queries, b.stats.prefix_queries);
    EXPECT_EQ(a.stats.swap_outs, b.stats.swap_outs);
    EXPECT_EQ(a.stats.max_running, b.stats.max_running);
    EXPECT_EQ(a.stats.end_ns, b.stats.end_ns);
    lane_steps_checked += static_cast<std::int64_t>(a.steps.size());
    preemptions += a.stats.preemptions;
    swaps += a.stats.swap_outs;
  }
  EXPECT_GT(lane_steps_checked, 10000);
  EXPECT_GT(preemptions, 0);  // the one-by-one fallback ran
  EXPECT_GT(swaps, 0);
}

// `simulate` keeps token times as runs (expand_chunks off) and summarizes them without chunks:
// the records, the expanded chunks and the summary must be those of the run that writes chunks,
// under preemption, swap, prefix hits, closed loops and two DP replicas (two grids).
TEST(Simulation, TokenRunsGiveTheRecordsAndSummaryOfTheChunks) {
  std::int64_t runs_checked = 0;
  std::int64_t breaks = 0;  // requests with more than one run (a gap between runs)
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    Rng rng(seed * 104729);
    const int n = static_cast<int>(rng.uniform_int(20, 120));
    const auto reqs = random_requests(rng, n, 3e6, 400, 200, 0.4);
    auto o = small_options(rng.uniform_int(40, 400));
    o.engine.num_gpu_blocks =
        std::max<std::int64_t>(o.engine.num_gpu_blocks, 700 / o.engine.block_size + 1);
    o.engine.scheduler.max_num_batched_tokens = rng.uniform_int(16, 1024);
    o.engine.scheduler.max_num_seqs = rng.uniform_int(2, 96);
    o.engine.scheduler.num_cpu_blocks = seed % 6 == 0 ? rng.uniform_int(10, 200) : 0;
    o.max_concurrency = seed % 3 == 0 ? rng.uniform_int(2, 40) : -1;
    o.data_parallel_size = seed % 4 == 0 ? 2 : 1;
    auto compact = o;
    compact.expand_chunks = false;
    const auto a = Simulation(o, std::make_unique<SumsModel>()).run(reqs);
    auto b = Simulation(compact, std::make_unique<SumsModel>()).run(reqs);
    ASSERT_EQ(a.records.size(), b.records.size());
    for (const auto& rec : b.records) ASSERT_TRUE(rec.chunks.empty());
    metrics::SummaryOptions options;
    options.percentiles = {1, 50, 99};
    options.slo.tpot_ms = 2.0;
    EXPECT_TRUE(metrics::summarize(b.records, b.tokens, options) ==
                metrics::summarize(a.records, options))
        << "seed " << seed;
    std::vector<int> runs_of(b.records.size(), 0);
    for (const auto& run : b.tokens.runs) breaks += ++runs_of[run.request] == 2 ? 1 : 0;
    runs_checked += static_cast<std::int64_t>(b.tokens.runs.size());
    metrics::expand_token_runs(b.tokens, b.records);
    for (std::size_t i = 0; i < a.records.size(); ++i) {
      ASSERT_EQ(a.records[i].chunks.size(), b.records[i].chunks.size()) << "seed " << seed;
      for (std::size_t k = 0; k < a.records[i].chunks.size(); ++k)
        ASSERT_EQ(a.records[i].chunks[k].time_ns, b.records[i].chunks[k].time_ns)
            << "seed " << seed << " request " << i << " token " << k;
      EXPECT_EQ(a.records[i].done_ns, b.records[i].done_ns);
      EXPECT_EQ(a.records[i].output_tokens, b.records[i].output_tokens);
    }
  }
  EXPECT_GT(runs_checked, 1000);
  EXPECT_GT(breaks, 0);  // preemptions broke some requests' runs
}

// The lane really carries the steady decodes: after a long prefill-free stretch most running
// requests are in it, and the batch it prices still counts them.
TEST(VllmV1Scheduler, DecodeLaneHoldsSteadyDecodes) {
  VllmV1Scheduler s(testing::lane_config(8), 200, 16);
  ASSERT_TRUE(s.enable_decode_lane());
  std::vector<RequestState> reqs;
  for (std::int64_t i = 0; i < 8; ++i) reqs.push_back(testing::make(i, 8, 100));
  for (auto& r : reqs) s.add_request(&r);
  SchedulerOutput out;
  StepResult res;
  testing::run_steps(s, out, res, 5);
  // Step 0 prefilled all 8 (64 tokens); since then each samples every step. Positions 9, 10,
  // 11, 12 of 16-token blocks: all in the lane.
  EXPECT_EQ(s.num_lane(), 8U);
  EXPECT_EQ(s.num_running(), 8U);
  s.schedule_into(out);
  EXPECT_TRUE(out.seqs.empty());
  EXPECT_EQ(out.lane.seqs, 8);
  EXPECT_EQ(out.sums.decode_seqs, 8);
  EXPECT_EQ(out.sums.tokens, 8);
  // Context before step 5: 8 prompt + 5 generated tokens, so Σ (p + 1) = 8 × 13.
  EXPECT_EQ(out.lane.context, 8 * 13);
  EXPECT_EQ(out.sums.decode_context, 8 * 13);
  s.update_into(out, res);
  EXPECT_TRUE(res.emitted.empty());
  EXPECT_EQ(s.running_ids(), (testing::Ids{0, 1, 2, 3, 4, 5, 6, 7}));
}

// Aborting a lane member dequeues its wake-up: the same RequestState reused for a new request
// (as a freed and reallocated state would be) is not finished early by the old wake-up, and
// the aborted request's lane run covers the steps applied before the abort.
TEST(VllmV1Scheduler, AbortInTheDecodeLaneLeavesNoWakeUpBehind) {
  VllmV1Scheduler s(testing::lane_config(4), 100, 16);
  ASSERT_TRUE(s.enable_decode_lane());
  RequestState state = testing::make(0, 1, 10);  // enters the lane at step 1, finishes at 9
  s.add_request(&state);
  SchedulerOutput out;
  StepResult res;
  testing::run_steps(s, out, res, 3);
  ASSERT_EQ(s.num_lane(), 1U);
  ASSERT_TRUE(s.abort(0));
  EXPECT_EQ(s.num_running(), 0U);
  EXPECT_EQ(s.blocks().num_free_blocks(), 100);
  state = testing::make(1, 1, 100);  // same address, a new request
  s.add_request(&state);
  std::vector<LaneRun> runs;
  std::int64_t explicit_tokens = 0;
  std::int64_t steps = 0;
  bool finished = false;
  while (!finished) {
    s.schedule_into(out);
    ASSERT_FALSE(out.empty());
    s.update_into(out, res);
    ++steps;
    runs.insert(runs.end(), res.lane_runs.begin(), res.lane_runs.end());
    explicit_tokens += static_cast<std::int64_t>(res.emitted.size());
    finished = !res.finished.empty();
    ASSERT_LT(steps, 200);
  }
  EXPECT_EQ(res.finished.front()->id, 1);
  EXPECT_EQ(state.num_output_tokens, 100);
  EXPECT_EQ(steps, 100);
  // The aborted request emitted in steps 0-2: step 0 explicitly, steps 1-2 from the lane.
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs.front().id, 0);
  EXPECT_EQ(runs.front().first, 1);
  EXPECT_EQ(runs.front().last, 2);
  std::int64_t lane_tokens = 0;
  for (const auto& r : runs)
    if (r.id == 1)
      lane_tokens += r.last - r.first + 1;
  EXPECT_EQ(explicit_tokens + lane_tokens, 100);  // request 1: every token exactly once
}

// Without chunked prefill a request must fit one step's budget as a whole (prompt + output, for
// a recompute after preemption): longer ones are rejected on arrival instead of waiting forever.
TEST(Simulation, WithoutChunkedPrefillRequestsLongerThanTheBudgetAreRejected) {
  auto o = small_options(200);
  o.engine.scheduler.enable_chunked_prefill = false;
  o.engine.scheduler.max_num_batched_tokens = 64;
  Simulation sim(o, std::make_unique<SimpleModel>());
  const auto result = sim.run({SimRequest{0, 40, 24, {}, false, {}},  // 64: fits
                               SimRequest{0, 40, 25, {}, false, {}}});
  EXPECT_TRUE(result.records[0].ok());
  EXPECT_EQ(result.records[0].output_tokens, 24);
  EXPECT_EQ(result.records[1].http_status, 400);
  EXPECT_NE(result.records[1].error_message.find("max_num_batched_tokens"), std::string::npos);
  EXPECT_EQ(result.stats.rejected, 1);
}

/// The engine's busy share of a window is at most 1 by definition: a step that runs past the
/// window's end is busy in the next window too, and data-parallel replicas are averaged, not
/// summed (before, a 1.5-window step at the start of a window read 150%, two replicas 200%).
TEST(Timeline, BusyShareIsSplitOverWindowsAndReplicas) {
  const TimeNs ms = 1'000'000;
  const std::vector<StepTrace> steps{
      {.start_ns = 0, .end_ns = 15 * ms, .replica = 0},
      {.start_ns = 0, .end_ns = 10 * ms, .replica = 1},
      {.start_ns = 15 * ms, .end_ns = 20 * ms, .replica = 0},
  };
  const auto timeline = summarize_timeline(steps, 10 * ms);
  ASSERT_EQ(timeline.size(), 2U);
  EXPECT_DOUBLE_EQ(timeline[0].busy_fraction, 1.0);  // both replicas busy for the whole window
  EXPECT_DOUBLE_EQ(timeline[1].busy_fraction, 0.5);  // replica 0 busy 10 of 10 ms, replica 1 idle
  EXPECT_EQ(timeline[0].steps, 2);                   // steps still counted where they start
  EXPECT_EQ(timeline[1].steps, 1);
  const std::vector<StepTrace> one{{.start_ns = 2 * ms, .end_ns = 17 * ms}};
  const auto split = summarize_timeline(one, 10 * ms);
  EXPECT_DOUBLE_EQ(split[0].busy_fraction, 0.8);
  EXPECT_DOUBLE_EQ(split[1].busy_fraction, 0.7);
}

}  // namespace
}  // namespace llmbench::sim
