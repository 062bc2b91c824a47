#include "llmbench/metrics/summary.hpp"

#include "llmbench/core/error.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace llmbench::metrics {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;

constexpr TimeNs kMs = 1'000'000;

// A completed record sent at `sent_ms` (scheduled at the same time) with chunks given as
// (ms, tokens) pairs; done 5 ms after the last chunk.
RequestRecord make_record(std::int64_t id, double sent_ms,
                          std::vector<std::pair<double, int>> chunks,
                          Channel channel = Channel::Answer) {
  RequestRecord r;
  r.id = id;
  r.scheduled_ns = ms_to_ns(sent_ms);
  r.sent_ns = ms_to_ns(sent_ms);
  r.headers_ns = r.sent_ns + 10 * kMs;
  std::int64_t n = 0;
  for (const auto& [ms, tokens] : chunks) {
    r.chunks.push_back(Chunk{ms_to_ns(ms), tokens, 4 * tokens, channel});
    n += tokens;
  }
  r.done_ns = (r.chunks.empty() ? r.headers_ns : r.chunks.back().time_ns) + 5 * kMs;
  r.http_status = 200;
  r.output_tokens = n;
  r.output_tokens_local = n;
  r.input_tokens = 100;
  return r;
}

TEST(SummaryEquality, ADifferenceInAnyFieldIsSeen) {
  std::vector<RequestRecord> rs{make_record(0, 0, {{100, 1}, {150, 1}})};
  const Summary a = summarize(rs, SummaryOptions{});
  EXPECT_TRUE(a == summarize(rs, SummaryOptions{}));  // NaN stats (queue wait...) compare equal
  Summary b = a;
  b.single_chunk_outputs = 1;
  EXPECT_FALSE(a == b);
  b = a;
  b.top_errors_by_kind["timeout"].push_back(ErrorMessageCount{.message = "x", .count = 1});
  EXPECT_FALSE(a == b);
  b = a;
  b.queue_wait_ms.count = 7;
  EXPECT_FALSE(a == b);
}

// --- per-request metrics -----------------------------------------------------------------------

TEST(RequestMetrics, MultiTokenChunks) {
  const RequestRecord r = make_record(0, 0, {{100, 1}, {150, 3}, {170, 1}});
  const RequestLatency l = request_latency(r);
  EXPECT_DOUBLE_EQ(l.ttft_ms, 100.0);
  EXPECT_DOUBLE_EQ(l.ttfat_ms, 100.0);
  EXPECT_DOUBLE_EQ(l.tpot_ms, 17.5);  // (170 − 100) / (5 − 1)
  EXPECT_DOUBLE_EQ(l.e2el_ms, 170.0);
  EXPECT_DOUBLE_EQ(l.lateness_ms, 0.0);
  std::vector<double> itl;
  append_itl_ms(r, itl);
  EXPECT_THAT(
      itl, ElementsAre(DoubleEq(50.0 / 3), DoubleEq(50.0 / 3), DoubleEq(50.0 / 3), DoubleEq(20.0)));
  std::vector<double> gaps;
  append_inter_chunk_ms(r, gaps);
  EXPECT_THAT(gaps, ElementsAre(DoubleEq(50.0), DoubleEq(20.0)));
}

TEST(RequestMetrics, ZeroTokenChunkCarriesItsGap) {
  RequestRecord r = make_record(0, 0, {{100, 1}, {120, 0}, {160, 2}});
  std::vector<double> itl;
  append_itl_ms(r, itl);
  EXPECT_THAT(itl, ElementsAre(DoubleEq(30.0), DoubleEq(30.0)));  // 60 ms over 2 tokens
}

TEST(RequestMetrics, QueueInclusiveAndLateness) {
  RequestRecord r = make_record(0, 20, {{120, 1}, {160, 1}});
  r.scheduled_ns = 0;  // the plan wanted it sent 20 ms earlier
  const RequestLatency l = request_latency(r);
  EXPECT_DOUBLE_EQ(l.lateness_ms, 20.0);
  EXPECT_DOUBLE_EQ(l.ttft_ms, 100.0);
  EXPECT_DOUBLE_EQ(l.ttft_sched_ms, 120.0);
  EXPECT_DOUBLE_EQ(l.e2el_ms, 140.0);
  EXPECT_DOUBLE_EQ(l.e2el_sched_ms, 160.0);
  EXPECT_DOUBLE_EQ(l.tpot_ms, 40.0);
}

TEST(RequestMetrics, SlotSplitsQueueWaitFromLateness) {
  // Scheduled (arrival) at 0, slot at 15 ms (a request finished), sent at 20 ms.
  RequestRecord r = make_record(0, 20, {{120, 1}, {160, 1}});
  r.scheduled_ns = 0;
  r.slot_ns = 15 * kMs;
  const RequestLatency l = request_latency(r);
  EXPECT_DOUBLE_EQ(l.queue_wait_ms, 15.0);
  EXPECT_DOUBLE_EQ(l.lateness_ms, 5.0);
  EXPECT_DOUBLE_EQ(l.ttft_sched_ms, 120.0);  // from the arrival, the wait included
  const Summary s = summarize({r}, SummaryOptions{});
  EXPECT_EQ(s.queue_wait_ms.count, 1u);
  EXPECT_DOUBLE_EQ(s.queue_wait_ms.mean, 15.0);
  EXPECT_DOUBLE_EQ(s.lateness_ms.mean, 5.0);
}

TEST(RequestMetrics, AllOutputInOneChunkHasNoTpot) {
  // N = 8 tokens in one event. (last − first) / (N − 1) would be 0: TPOT is undefined.
  const RequestRecord r = make_record(0, 0, {{100, 8}});
  const RequestLatency l = request_latency(r);
  EXPECT_DOUBLE_EQ(l.ttft_ms, 100.0);
  EXPECT_TRUE(std::isnan(l.tpot_ms));
  std::vector<RequestRecord> rs{r, make_record(1, 0, {{100, 1}, {120, 1}, {140, 1}})};
  const Summary s = summarize(rs, SummaryOptions{});
  EXPECT_EQ(s.single_chunk_outputs, 1u);
  EXPECT_EQ(s.tpot_ms.count, 1u);  // only the incremental stream
  EXPECT_DOUBLE_EQ(s.tpot_ms.mean, 20.0);
  rs.pop_back();
  const Summary only = summarize(rs, SummaryOptions{});
  EXPECT_EQ(only.tpot_ms.count, 0u);
  EXPECT_TRUE(std::isnan(only.tpot_ms.mean));
  EXPECT_TRUE(std::isnan(only.itl_ms.mean));
}

TEST(Summarize, RequestedAgainstDeliveredOutputAndEarlyFinishes) {
  std::vector<RequestRecord> rs{make_record(0, 0, {{100, 1}, {150, 1}}),
                                make_record(1, 0, {{100, 2}, {150, 2}}),
                                make_record(2, 0, {{100, 1}}), make_record(3, 0, {{100, 3}})};
  rs[0].max_tokens = 2;   // delivered 2: ran to max_tokens
  rs[1].max_tokens = 16;  // delivered 4: stopped early (EOS)
  rs[2].max_tokens = -1;  // not known: counted in neither
  rs[3].max_tokens = 5;
  rs[3].error_kind = ErrorKind::Timeout;  // failed: not counted
  const Summary s = summarize(rs, SummaryOptions{});
  EXPECT_EQ(s.requests_with_max_tokens, 2u);
  EXPECT_EQ(s.total_requested_output_tokens, 18);
  EXPECT_EQ(s.finished_before_max_tokens, 1u);
  EXPECT_EQ(s.total_output_tokens, 7);
}

TEST(Summarize, MostFrequentErrorMessagesPerKind) {
  std::vector<RequestRecord> rs;
  const auto fail = [&](ErrorKind kind, std::string message) {
    RequestRecord r = make_record(static_cast<std::int64_t>(rs.size()), 0, {});
    r.error_kind = kind;
    r.error_message = std::move(message);
    rs.push_back(std::move(r));
  };
  for (int i = 0; i < 3; ++i) fail(ErrorKind::Http4xx, "maximum context length is 4096 tokens");
  fail(ErrorKind::Http4xx, "b: bad request");
  fail(ErrorKind::Http4xx, "a: bad request");
  fail(ErrorKind::Http4xx, "c: rare");
  fail(ErrorKind::Http4xx, "c: rare");
  fail(ErrorKind::Timeout, std::string(400, 'x'));
  const Summary s = summarize(rs, SummaryOptions{});
  EXPECT_EQ(s.failures_by_kind.at("http_4xx"), 7u);
  const auto& top = s.top_errors_by_kind.at("http_4xx");
  ASSERT_EQ(top.size(), kTopErrorsPerKind);
  EXPECT_EQ(top[0],
            (ErrorMessageCount{.message = "maximum context length is 4096 tokens", .count = 3}));
  EXPECT_EQ(top[1], (ErrorMessageCount{.message = "c: rare", .count = 2}));
  EXPECT_EQ(top[2], (ErrorMessageCount{.message = "a: bad request", .count = 1}));  // ties: order
  const auto& timeout = s.top_errors_by_kind.at("timeout");
  ASSERT_EQ(timeout.size(), 1u);
  EXPECT_EQ(timeout[0].message, std::string(kErrorMessageChars, 'x') + "\u2026");
}

TEST(RequestMetrics, OneTokenHasTtftButNoTpot) {
  const RequestLatency l = request_latency(make_record(0, 10, {{60, 1}}));
  EXPECT_DOUBLE_EQ(l.ttft_ms, 50.0);
  EXPECT_DOUBLE_EQ(l.e2el_ms, 50.0);
  EXPECT_TRUE(std::isnan(l.tpot_ms));
}

TEST(RequestMetrics, NoOutputUsesDone) {
  RequestRecord r = make_record(0, 0, {});
  r.output_tokens = 0;
  const RequestLatency l = request_latency(r);
  EXPECT_TRUE(std::isnan(l.ttft_ms));
  EXPECT_TRUE(std::isnan(l.ttfat_ms));
  EXPECT_TRUE(std::isnan(l.tpot_ms));
  EXPECT_DOUBLE_EQ(l.e2el_ms, 15.0);  // headers at 10 ms, done 5 ms later
}

TEST(RequestMetrics, ReasoningThenAnswer) {
  RequestRecord r = make_record(0, 0, {{80, 2}, {120, 2}}, Channel::Reasoning);
  r.chunks.push_back(Chunk{200 * kMs, 1, 3, Channel::Answer});
  r.output_tokens = 5;
  const RequestLatency l = request_latency(r);
  EXPECT_DOUBLE_EQ(l.ttft_ms, 80.0);
  EXPECT_DOUBLE_EQ(l.ttfat_ms, 200.0);
  EXPECT_DOUBLE_EQ(l.tpot_ms, 30.0);  // (200 − 80) / 4
}

TEST(RequestMetrics, OutputTokenCountFallbacks) {
  RequestRecord r = make_record(0, 0, {{10, 2}, {20, -1}});
  r.output_tokens = 7;
  r.output_tokens_local = 6;
  EXPECT_EQ(output_token_count(r), 7);
  r.output_tokens = -1;
  EXPECT_EQ(output_token_count(r), 6);
  r.output_tokens_local = -1;
  EXPECT_EQ(output_token_count(r), 3);  // 2 + unknown counted as 1
}

// --- assign_chunk_tokens -----------------------------------------------------------------------

TEST(AssignChunkTokens, SplitsByBytesWithLargestRemainder) {
  RequestRecord r;
  r.output_tokens = 10;
  r.chunks = {Chunk{1, -1, 10, Channel::Answer}, Chunk{2, -1, 20, Channel::Answer},
              Chunk{3, 2, 5, Channel::Answer}, Chunk{4, -1, 10, Channel::Answer}};
  assign_chunk_tokens(r);
  // 8 left for 3 unknown chunks: one each, then 5 by bytes 10:20:10 → 1.25, 2.5, 1.25 → floors
  // 1, 2, 1 (4 given), the last token to the largest remainder (the second chunk's 0.5).
  EXPECT_EQ(r.chunks[0].tokens, 2);
  EXPECT_EQ(r.chunks[1].tokens, 4);
  EXPECT_EQ(r.chunks[2].tokens, 2);
  EXPECT_EQ(r.chunks[3].tokens, 2);
}

TEST(AssignChunkTokens, TiesGoToEarlierChunkAndNoBytesMeansEqual) {
  RequestRecord r;
  r.output_tokens_local = 5;
  r.chunks = {Chunk{1, -1, 0, Channel::Answer}, Chunk{2, -1, 0, Channel::Answer}};
  assign_chunk_tokens(r);
  EXPECT_EQ(r.chunks[0].tokens, 3);
  EXPECT_EQ(r.chunks[1].tokens, 2);
}

TEST(AssignChunkTokens, TooFewTokensGoToLargestChunks) {
  RequestRecord r;
  r.output_tokens = 2;
  r.chunks = {Chunk{1, -1, 1, Channel::Answer}, Chunk{2, -1, 9, Channel::Answer},
              Chunk{3, -1, 5, Channel::Answer}};
  assign_chunk_tokens(r);
  EXPECT_EQ(r.chunks[0].tokens, 0);
  EXPECT_EQ(r.chunks[1].tokens, 1);
  EXPECT_EQ(r.chunks[2].tokens, 1);
}

TEST(AssignChunkTokens, NoCountMeansOnePerChunk) {
  RequestRecord r;
  r.chunks = {Chunk{1, -1, 100, Channel::Answer}, Chunk{2, 4, 9, Channel::Answer}};
  assign_chunk_tokens(r);
  EXPECT_EQ(r.chunks[0].tokens, 1);
  EXPECT_EQ(r.chunks[1].tokens, 4);
}

// --- parse_slo ---------------------------------------------------------------------------------

TEST(ParseSlo, ItemsAndSpaceSeparated) {
  const Slo slo = parse_slo({"ttft:500", "tpot:50.5 e2el:10000"});
  EXPECT_EQ(slo.ttft_ms, 500.0);
  EXPECT_EQ(slo.tpot_ms, 50.5);
  EXPECT_EQ(slo.e2el_ms, 10000.0);
  EXPECT_FALSE(parse_slo({}).ttft_ms.has_value());
}

TEST(ParseSlo, BadItemsNameTheFlag) {
  for (const char* bad : {"ttft", "itl:5", "ttft:-1", "ttft:0", "ttft:abc", "ttft:5ms"}) {
    try {
      parse_slo({bad});
      ADD_FAILURE() << bad;
    } catch (const Exception& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("--goodput")) << bad;
      EXPECT_THAT(e.what(), ::testing::HasSubstr(bad));
    }
  }
  EXPECT_THROW(parse_slo({"ttft:1", "ttft:2"}), Exception);
}

// --- summarize ---------------------------------------------------------------------------------

// Three completed requests, one failed, one warm-up; every number below is worked out by hand.
std::vector<RequestRecord> sample_run() {
  std::vector<RequestRecord> rs;
  // A warm-up: if it were counted, tokens in the first window would be 59 and completed 4.
  RequestRecord warm = make_record(0, 0, {{100, 50}});
  warm.warmup = true;
  rs.push_back(warm);
  // A: sent 0; chunks 100(1) 150(3) 170(1); done 175. N=5, TTFT 100, TPOT 17.5.
  rs.push_back(make_record(1, 0, {{100, 1}, {150, 3}, {170, 1}}));
  // B: sent 500; reasoning 700(2) answer 900(2) 1300(4); done 1305; usage missing (local 8).
  RequestRecord b = make_record(2, 500, {{700, 2}}, Channel::Reasoning);
  b.chunks.push_back(Chunk{900 * kMs, 2, 8, Channel::Answer});
  b.chunks.push_back(Chunk{1300 * kMs, 4, 16, Channel::Answer});
  b.done_ns = 1305 * kMs;
  b.output_tokens = -1;
  b.output_tokens_local = 8;
  b.input_tokens = -1;
  b.prompt_len = 40;
  rs.push_back(b);
  // C: sent 1000, 1 token at 1900; usage says 1 but local counted 2 (mismatch); done 2000.
  RequestRecord c = make_record(3, 1000, {{1900, 1}});
  c.done_ns = 2000 * kMs;
  c.output_tokens_local = 2;
  c.scheduled_ns = 990 * kMs;  // 10 ms late
  rs.push_back(c);
  // D: failed with a timeout, sent 200, gave up at 2500 (outside the completed window).
  RequestRecord d = make_record(4, 200, {{400, 3}});
  d.error_kind = ErrorKind::Timeout;
  d.done_ns = 2500 * kMs;
  rs.push_back(d);
  // E: failed with HTTP 503.
  RequestRecord e = make_record(5, 300, {});
  e.error_kind = ErrorKind::Http5xx;
  e.http_status = 503;
  rs.push_back(e);
  return rs;
}

TEST(Summarize, CountsDurationThroughput) {
  const Summary s = summarize(sample_run(), SummaryOptions{});
  EXPECT_EQ(s.total, 5u);
  EXPECT_EQ(s.completed, 3u);
  EXPECT_EQ(s.failed, 2u);
  EXPECT_EQ(s.failures_by_kind.at("timeout"), 1u);
  EXPECT_EQ(s.failures_by_kind.at("http_5xx"), 1u);
  EXPECT_EQ(s.failures_by_kind.size(), 2u);
  // First send of any non-warm-up request: 0; last done of a completed request: 2000 ms.
  EXPECT_DOUBLE_EQ(s.duration_s, 2.0);
  EXPECT_EQ(s.total_input_tokens, 100 + 40 + 100);
  EXPECT_EQ(s.total_output_tokens, 5 + 8 + 1);
  EXPECT_DOUBLE_EQ(s.request_throughput, 1.5);
  EXPECT_DOUBLE_EQ(s.output_throughput, 7.0);
  EXPECT_DOUBLE_EQ(s.total_token_throughput, 127.0);
  EXPECT_EQ(s.usage_missing, 1u);
  EXPECT_EQ(s.token_count_mismatches, 1u);
  // Tokens per 1 s window from t=0: [0,1 s): 5 (A) + 2 + 2 (B) + 0 = 9; [1,2 s): 4 + 1 = 5.
  EXPECT_DOUBLE_EQ(s.max_output_tokens_per_s, 9.0);
  // Completed intervals: A [0,175], B [500,1305], C [1000,2000] → B and C overlap.
  EXPECT_EQ(s.max_concurrent_requests, 2u);
  // No SLO: every completed request is good.
  EXPECT_EQ(s.good_requests, 3u);
  EXPECT_DOUBLE_EQ(s.request_goodput, 1.5);
}

// ITL and inter-chunk gaps share one vector while every chunk carries one token; a later record
// with a multi-token chunk splits them, and both must still hold every sample in order.
TEST(Summarize, InterChunkGapsSplitFromItlAtTheFirstMultiTokenChunk) {
  const std::vector<RequestRecord> one_token{make_record(0, 0, {{0, 1}, {10, 1}, {30, 1}})};
  const Summary same = summarize(one_token, SummaryOptions{{50, 99}, {}});
  EXPECT_EQ(same.inter_chunk_ms.count, 2u);
  EXPECT_DOUBLE_EQ(same.inter_chunk_ms.mean, 15.0);
  EXPECT_DOUBLE_EQ(same.itl_ms.mean, 15.0);

  std::vector<RequestRecord> mixed = one_token;
  mixed.push_back(make_record(1, 100, {{100, 1}, {150, 2}, {160, 1}}));
  mixed.push_back(make_record(2, 200, {{200, 1}, {240, 1}}));
  const Summary s = summarize(mixed, SummaryOptions{{50, 99}, {}});
  // ITL: 10, 20 | 25, 25, 10 | 40.  Inter-chunk: 10, 20 | 50, 10 | 40.
  EXPECT_EQ(s.itl_ms.count, 6u);
  EXPECT_DOUBLE_EQ(s.itl_ms.mean, 130.0 / 6);
  EXPECT_EQ(s.inter_chunk_ms.count, 5u);
  EXPECT_DOUBLE_EQ(s.inter_chunk_ms.mean, 26.0);
  EXPECT_DOUBLE_EQ(s.inter_chunk_ms.max, 50.0);
  EXPECT_DOUBLE_EQ(s.inter_chunk_ms.median, 20.0);
}

TEST(Summarize, LatencyStatsExcludeFailuresAndWarmups) {
  const Summary s = summarize(sample_run(), SummaryOptions{{50, 99}, {}});
  // TTFT: A 100, B 200, C 900.
  EXPECT_EQ(s.ttft_ms.count, 3u);
  EXPECT_DOUBLE_EQ(s.ttft_ms.mean, 400.0);
  EXPECT_DOUBLE_EQ(s.ttft_ms.median, 200.0);
  EXPECT_DOUBLE_EQ(s.ttft_ms.min, 100.0);
  EXPECT_DOUBLE_EQ(s.ttft_ms.max, 900.0);
  EXPECT_DOUBLE_EQ(s.ttft_ms.percentiles[1].second, 886.0);  // rank 1.98 → 200 + 700·0.98
  // TTFAT: A 100, B 400 (first answer at 900 − 500), C 900.
  EXPECT_DOUBLE_EQ(s.ttfat_ms.median, 400.0);
  // TPOT: A 17.5, B (1300 − 700)/7 = 85.714…; C has N=1 → excluded.
  EXPECT_EQ(s.tpot_ms.count, 2u);
  EXPECT_DOUBLE_EQ(s.tpot_ms.mean, (17.5 + 600.0 / 7) / 2);
  // ITL: A [50/3 ×3, 20]; B 200/2 ×2, 400/4 ×4 → 10 samples.
  EXPECT_EQ(s.itl_ms.count, 10u);
  EXPECT_DOUBLE_EQ(s.itl_ms.max, 100.0);
  EXPECT_DOUBLE_EQ(s.itl_ms.min, 50.0 / 3);
  EXPECT_DOUBLE_EQ(s.itl_ms.mean, (70.0 + 600.0) / 10);
  // Inter-chunk gaps: A 50, 20; B 200, 400.
  EXPECT_EQ(s.inter_chunk_ms.count, 4u);
  EXPECT_DOUBLE_EQ(s.inter_chunk_ms.mean, 167.5);
  // E2EL: A 170, B 800, C 900.
  EXPECT_DOUBLE_EQ(s.e2el_ms.mean, 1870.0 / 3);
  // Queue-inclusive: C was scheduled 10 ms before it was sent.
  EXPECT_DOUBLE_EQ(s.ttft_sched_ms.max, 910.0);
  EXPECT_DOUBLE_EQ(s.e2el_sched_ms.max, 910.0);
  EXPECT_DOUBLE_EQ(s.lateness_ms.max, 10.0);
  EXPECT_DOUBLE_EQ(s.lateness_ms.median, 0.0);
}

TEST(Summarize, GoodputWithSlos) {
  SummaryOptions options;
  options.slo = parse_slo({"ttft:250", "tpot:50"});
  const Summary s = summarize(sample_run(), options);
  // A: TTFT 100 ≤ 250, TPOT 17.5 ≤ 50 → good. B: TTFT 200 ok, TPOT 85.7 > 50 → bad.
  // C: TTFT 900 > 250 → bad.
  EXPECT_EQ(s.good_requests, 1u);
  EXPECT_DOUBLE_EQ(s.request_goodput, 0.5);

  options.slo = parse_slo({"e2el:900"});
  // E2EL: A 170, B 800, C 900 → all meet ≤ 900.
  EXPECT_EQ(summarize(sample_run(), options).good_requests, 3u);

  // C has one token: no TPOT, so it meets any TPOT SLO.
  options.slo = parse_slo({"tpot:20"});
  EXPECT_EQ(summarize(sample_run(), options).good_requests, 2u);  // A and C
}

TEST(Summarize, ZeroTokenCompletionCountsButHasNoTtft) {
  std::vector<RequestRecord> rs{make_record(0, 0, {{100, 2}, {200, 2}}), make_record(1, 0, {})};
  rs[1].output_tokens = 0;
  rs[1].output_tokens_local = 0;
  SummaryOptions options;
  options.slo.ttft_ms = 1000;
  const Summary s = summarize(rs, options);
  EXPECT_EQ(s.completed, 2u);
  EXPECT_EQ(s.ttft_ms.count, 1u);
  EXPECT_EQ(s.tpot_ms.count, 1u);
  EXPECT_EQ(s.e2el_ms.count, 2u);  // the empty one: done − sent = 15 ms
  EXPECT_DOUBLE_EQ(s.e2el_ms.min, 15.0);
  EXPECT_EQ(s.good_requests, 1u);  // no first token → fails a TTFT SLO
  EXPECT_EQ(s.total_output_tokens, 4);
  EXPECT_EQ(s.zero_output_completions, 1u);
}

TEST(Summarize, CancelledRequestsAreCountedApartFromFailures) {
  // Ctrl-C or the end of a --duration run cancels what is in flight: that is the client's
  // doing, not a failure of the server, so it is neither completed nor failed.
  std::vector<RequestRecord> rs{make_record(0, 0, {{100, 2}, {200, 2}}), make_record(1, 0, {}),
                                make_record(2, 0, {{100, 1}}), make_record(3, 0, {})};
  rs[1].error_kind = ErrorKind::Http5xx;
  rs[1].error_message = "HTTP 503";
  rs[2].error_kind = ErrorKind::Cancelled;
  rs[3].error_kind = ErrorKind::Cancelled;
  const Summary s = summarize(rs, SummaryOptions{});
  EXPECT_EQ(s.total, 4u);
  EXPECT_EQ(s.completed, 1u);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.cancelled, 2u);
  EXPECT_EQ(s.failures_by_kind.size(), 1u);
  EXPECT_EQ(s.failures_by_kind.at("http_5xx"), 1u);
  EXPECT_EQ(s.failures_by_kind.count("cancelled"), 0u);
}

TEST(Summarize, UnknownChunkTokensAreFilledFromUsage) {
  RequestRecord r = make_record(0, 0, {{100, -1}, {200, -1}});
  r.output_tokens = 6;
  r.output_tokens_local = -1;
  r.chunks[0].bytes = 4;
  r.chunks[1].bytes = 12;
  r.done_ns = 1000 * kMs;
  // Assigned once where the record is made (the load generator, the records-file reader); the
  // summary reads the chunks as they are.
  assign_chunk_tokens(r);
  const Summary s = summarize({r}, SummaryOptions{});
  // 6 tokens: 1 each, then 4 by bytes 4:12 → 1, 3 → chunks 2 and 4 tokens.
  EXPECT_EQ(s.itl_ms.count, 4u);
  EXPECT_DOUBLE_EQ(s.itl_ms.mean, 25.0);
  EXPECT_DOUBLE_EQ(s.tpot_ms.mean, 20.0);  // 100 / 5
  EXPECT_DOUBLE_EQ(s.max_output_tokens_per_s, 6.0);
  EXPECT_DOUBLE_EQ(s.duration_s, 1.0);
}

TEST(Summarize, NothingCompleted) {
  std::vector<RequestRecord> rs{make_record(0, 0, {})};
  rs[0].error_kind = ErrorKind::Connect;
  const Summary s = summarize(rs, SummaryOptions{});
  EXPECT_EQ(s.completed, 0u);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.duration_s, 0.0);
  EXPECT_EQ(s.request_throughput, 0.0);
  EXPECT_EQ(s.ttft_ms.count, 0u);
  EXPECT_EQ(s.max_concurrent_requests, 0u);
}

TEST(Summarize, ConcurrencyTreatsRequestsAsHalfOpen) {
  // In flight on [sent, done): [0, 100) and [100, 200) only touch (a closed loop sending the
  // next request the instant one finishes, as the simulator does), so the peak is 1; [150, 250)
  // overlaps the second, so the peak becomes 2.
  std::vector<RequestRecord> rs;
  for (const auto& [sent, last] : {std::pair{0.0, 95.0}, {100.0, 195.0}, {300.0, 395.0}}) {
    rs.push_back(make_record(static_cast<std::int64_t>(rs.size()), sent, {{last, 1}}));
  }
  EXPECT_EQ(summarize(rs, SummaryOptions{}).max_concurrent_requests, 1u);
  rs.push_back(make_record(static_cast<std::int64_t>(rs.size()), 150.0, {{245.0, 1}}));
  EXPECT_EQ(summarize(rs, SummaryOptions{}).max_concurrent_requests, 2u);
}

TEST(ErrorKindNames, RoundTrip) {
  for (ErrorKind k : {ErrorKind::None, ErrorKind::Connect, ErrorKind::Timeout, ErrorKind::Http4xx,
                      ErrorKind::Http5xx, ErrorKind::StreamError, ErrorKind::Parse,
                      ErrorKind::Cancelled, ErrorKind::Other}) {
    EXPECT_EQ(error_kind_from_string(to_string(k)), k);
  }
  EXPECT_EQ(to_string(ErrorKind::Http4xx), "http_4xx");
  EXPECT_EQ(error_kind_from_string("bogus"), ErrorKind::Other);
  EXPECT_EQ(to_string(Channel::ToolCall), "tool_call");
}

}  // namespace
}  // namespace llmbench::metrics

namespace llmbench::metrics {
namespace {

TEST(Summarize, LocalTokenCountsAndPromptMismatches) {
  // A: usage and a matching local prompt count. B: prompt usage 101 vs local 100 (mismatch),
  // output usage missing and counted by the tokenizer (7). C: usage missing, local count from
  // per-chunk usage (not the tokenizer). D: no local prompt count (chat): never a mismatch.
  RequestRecord a = make_record(1, 0, {{10, 2}});
  a.input_tokens_local = 100;
  RequestRecord b = make_record(2, 0, {{10, 3}, {20, 4}});
  b.input_tokens = 101;
  b.input_tokens_local = 100;
  b.output_tokens = -1;
  b.output_tokens_local = 7;
  b.output_tokens_local_source = LocalCount::Tokenizer;
  RequestRecord c = make_record(3, 0, {{10, 1}});
  c.output_tokens = -1;
  c.output_tokens_local_source = LocalCount::ChunkUsage;
  RequestRecord d = make_record(4, 0, {{10, 1}});
  d.input_tokens = 120;
  const Summary s = summarize({a, b, c, d}, SummaryOptions{});
  EXPECT_EQ(s.prompt_token_mismatches, 1u);
  EXPECT_EQ(s.usage_missing, 2u);
  EXPECT_EQ(s.output_tokens_counted_locally, 1u);
  EXPECT_EQ(s.token_count_mismatches, 0u);
  EXPECT_EQ(s.total_output_tokens, 2 + 7 + 1 + 1);
  // Input: usage where sent (100, 101, 100, 120).
  EXPECT_EQ(s.total_input_tokens, 421);
  // Without usage the local prompt count is the input length.
  RequestRecord e = make_record(5, 0, {{10, 1}});
  e.input_tokens = -1;
  e.input_tokens_local = 33;
  e.prompt_len = 40;
  EXPECT_EQ(summarize({e}, SummaryOptions{}).total_input_tokens, 33);
}

}  // namespace
}  // namespace llmbench::metrics
