// The pure parts of a spread run (docs/distributed.md): the clock offset estimate, the shares,
// the schedule digest, a rank's part on the wire and the merge onto rank 0's clock.
#include "llmbench/dist/spread.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/dist/world.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace llmbench::dist {
namespace {

TEST(GatherDisplacements, RunningSumsUntilAStartNoLongerFitsAnInt) {
  const std::vector<int> small{3, 0, 5, 2};
  EXPECT_EQ(gather_displacements(small), (std::vector<int>{0, 3, 3, 8}));
  // Two parts of 1.5 GB: the second starts at 1.5e9 (fits), a third would start past 2^31 - 1.
  const std::vector<int> two{1'500'000'000, 1'500'000'000};
  EXPECT_EQ(gather_displacements(two), (std::vector<int>{0, 1'500'000'000}));
  const std::vector<int> three{1'500'000'000, 1'500'000'000, 1};
  EXPECT_FALSE(gather_displacements(three).has_value());
  EXPECT_EQ(gather_displacements(std::vector<int>{}), std::vector<int>{});
}

TEST(ClockOffset, TheRoundOfLeastRoundTripGivesTheOffsetAndHalfItAsTheBound) {
  // The peer's clock is 1,000,000 ns ahead; the second round is the fastest (100 ns).
  const std::vector<PingPong> rounds{{.sent_ns = 0, .peer_ns = 1'000'300, .received_ns = 900},
                                     {.sent_ns = 1000, .peer_ns = 1'001'050, .received_ns = 1100},
                                     {.sent_ns = 2000, .peer_ns = 1'002'100, .received_ns = 2500}};
  const ClockOffset o = estimate_offset(rounds);
  EXPECT_EQ(o.rtt_ns, 100);
  EXPECT_EQ(o.bound_ns, 50);
  EXPECT_EQ(o.offset_ns, 1'000'000);
}

TEST(Shares, QuotasAddUpAndDifferByAtMostOne) {
  for (const std::int64_t count : {0, 1, 2, 59, 60, 61, 1000}) {
    for (const int ranks : {1, 2, 3, 7}) {
      std::int64_t total = 0;
      std::int64_t lo = count;
      std::int64_t hi = 0;
      for (int r = 0; r < ranks; ++r) {
        const auto q = quota(count, r, ranks);
        std::int64_t mine = 0;
        for (std::int64_t i = 0; i < count; ++i) mine += (i % ranks == r) ? 1 : 0;
        EXPECT_EQ(q, mine) << count << " over " << ranks << ", rank " << r;
        total += q;
        lo = std::min(lo, q);
        hi = std::max(hi, q);
      }
      EXPECT_EQ(total, count);
      EXPECT_LE(hi - lo, 1);
    }
  }
}

TEST(Shares, TheCapIsSplitAndACapBelowTheRanksIsRefused) {
  EXPECT_EQ(cap_share(10, 0, 3), 4);
  EXPECT_EQ(cap_share(10, 1, 3), 3);
  EXPECT_EQ(cap_share(10, 2, 3), 3);
  EXPECT_EQ(cap_share(-1, 2, 3), -1);  // no cap stays none
  EXPECT_THROW((void)cap_share(2, 0, 3), Exception);
}

TEST(ScheduleDigest, ChangesWithTheSeedTheRateAndAPrompt) {
  std::vector<workload::Sample> samples(3);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    samples[i].prompt = "prompt " + std::to_string(i);
    samples[i].output_len = 16;
  }
  loadgen::LoadOptions load;
  load.num_prompts = 30;
  load.request_rate = 10;
  load.seed = 1;
  const auto base = schedule_digest(samples, load);
  EXPECT_EQ(schedule_digest(samples, load), base);
  auto seed = load;
  seed.seed = 2;
  EXPECT_NE(schedule_digest(samples, seed), base);
  auto rate = load;
  rate.request_rate = 11;
  EXPECT_NE(schedule_digest(samples, rate), base);
  auto other = samples;
  other[2].prompt = "prompt x";
  EXPECT_NE(schedule_digest(other, load), base);
}

metrics::RequestRecord record(std::int64_t id, TimeNs sent, TimeNs done) {
  metrics::RequestRecord r;
  r.id = id;
  r.scheduled_ns = sent;
  r.slot_ns = sent;
  r.sent_ns = sent;
  r.headers_ns = sent + 5;
  r.done_ns = done;
  r.chunks = {{.time_ns = sent + 10, .tokens = 1, .bytes = 3},
              {.time_ns = done, .tokens = 1, .bytes = 3}};
  r.output_tokens = 2;
  return r;
}

TEST(RankPart, SurvivesTheWire) {
  RankPart p{.rank = 2,
             .host = "client-b",
             .run_start_steady_ns = 123456789,
             .connections_opened = 7,
             .ports_in_use_peak = 5,
             .connect_errors = {{"ECONNREFUSED", 3}, {"EADDRNOTAVAIL", 1}},
             .loop_lag_ms = {0.5F, 1.25F},
             .records = {record(2, 100, 900), record(5, 200, 1200)}};
  const RankPart back = decode_part(encode_part(p));
  EXPECT_EQ(back.ports_in_use_peak, 5);
  EXPECT_EQ(back.connect_errors, p.connect_errors);
  EXPECT_EQ(back.rank, 2);
  EXPECT_EQ(back.host, "client-b");
  EXPECT_EQ(back.run_start_steady_ns, 123456789);
  EXPECT_EQ(back.connections_opened, 7U);
  EXPECT_EQ(back.loop_lag_ms, p.loop_lag_ms);
  EXPECT_EQ(back.records, p.records);
  EXPECT_THROW((void)decode_part("{\"rank\":1}\nnot json\n"), Exception);
}

TEST(MergeParts, InstantsMoveToRankZerosClockAndLatenciesStay) {
  // Rank 1's steady clock runs 5,000 ns ahead of rank 0's; its run started at 14,700 on its
  // clock = 9,700 on rank 0's, before rank 0's 10,000: the merged clock's zero is 9,700.
  std::vector<RankPart> parts(2);
  parts[0] = {
      .rank = 0, .host = "a", .run_start_steady_ns = 10'000, .records = {record(0, 100, 500)}};
  parts[1] = {
      .rank = 1, .host = "b", .run_start_steady_ns = 14'700, .records = {record(1, 100, 400)}};
  const std::vector<ClockOffset> before{{}, {.offset_ns = 5000, .bound_ns = 20, .rtt_ns = 40}};
  TimeNs zero = 0;
  const auto merged = merge_parts(parts, before, &zero);
  ASSERT_EQ(merged.size(), 2U);
  EXPECT_EQ(zero, 9'700);  // rank 1 started at 14,700 − 5,000 on rank 0's clock
  // Rank 1's record: its sent (run-relative 100) was at 14,800 on its clock = 9,800 on rank
  // 0's = 100 on the merged clock; rank 0's sent 100 = 10,100 = 400 merged.
  EXPECT_EQ(merged[0].rank, 1);
  EXPECT_EQ(merged[0].sent_ns, 100);
  EXPECT_EQ(merged[0].done_ns, 400);
  EXPECT_EQ(merged[1].rank, 0);
  EXPECT_EQ(merged[1].sent_ns, 400);
  EXPECT_EQ(merged[1].done_ns, 800);
  for (const auto& r : merged) {
    EXPECT_EQ(r.chunks.front().time_ns - r.sent_ns, 10);  // a latency is unchanged
    EXPECT_EQ(r.headers_ns - r.sent_ns, 5);
  }
  parts[1].ports_in_use_peak = 4;
  parts[1].connect_errors = {{"ECONNREFUSED", 2}};
  const auto facts = spread_facts(
      merged, parts, 2, before, {{}, {.offset_ns = 5010, .bound_ns = 30, .rtt_ns = 60}}, 1.0, 1.0);
  // Each rank's ports and connect errors, as it counted them, in the results' per_rank.
  const auto rank1 = to_json(facts).at("per_rank").at(1);
  EXPECT_EQ(rank1.at("ports_in_use_peak"), 4);
  EXPECT_EQ(rank1.at("connect_errors_by_cause").at("ECONNREFUSED"), 2);
  EXPECT_EQ(to_json(facts).at("per_rank").at(0).at("ports_in_use_peak"), 0);
  ASSERT_EQ(facts.per_rank.size(), 2U);
  EXPECT_EQ(facts.per_rank[1].error_bound_ns, 30 + 10);  // the larger bound + the drift
  EXPECT_EQ(facts.max_error_bound_ns, 40);
  EXPECT_EQ(facts.per_rank[0].quota, 1);
  EXPECT_EQ(facts.per_rank[1].completed, 1);
  EXPECT_TRUE(facts.warnings.empty());
  // A bound over the window length warns.
  const auto wide = spread_facts(
      merged, parts, 2, before,
      {{}, {.offset_ns = 5000 + 2'000'000'000, .bound_ns = 30, .rtt_ns = 60}}, 1.0, 1.0);
  ASSERT_EQ(wide.warnings.size(), 1U);
  EXPECT_NE(wide.warnings[0].find("window"), std::string::npos);
}

TEST(World, ALoneProcessJoinsNothing) {
  // The tests are not started by an MPI launcher: no world, and MPI is never initialised.
  if (launched_by_mpi())
    GTEST_SKIP() << "started by an MPI launcher";
  int argc = 1;
  char name[] = "spread_test";
  char* args[] = {name, nullptr};
  char** argv = args;
  EXPECT_EQ(World::join(argc, argv), nullptr);
  EXPECT_EQ(World::current(), nullptr);
}

}  // namespace
}  // namespace llmbench::dist
