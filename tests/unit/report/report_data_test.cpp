#include "llmbench/report/report_data.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace llmbench::report {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr TimeNs kMs = 1'000'000;

/// A completed request: scheduled at `at_ms`, sent 1 ms later, first token after `ttft_ms`,
/// then `tokens - 1` more one per `itl_ms`, done at the last.
metrics::RequestRecord record(std::int64_t id, double at_ms, double ttft_ms, double itl_ms,
                              int tokens, std::int64_t prompt) {
  metrics::RequestRecord r;
  r.id = id;
  r.scheduled_ns = static_cast<TimeNs>(at_ms * 1e6);
  r.slot_ns = r.scheduled_ns;
  r.sent_ns = r.scheduled_ns + kMs;
  r.headers_ns = r.sent_ns;
  TimeNs t = r.sent_ns + static_cast<TimeNs>(ttft_ms * 1e6);
  for (int i = 0; i < tokens; ++i) {
    r.chunks.push_back(
        {.time_ns = t, .tokens = 1, .bytes = 4, .channel = metrics::Channel::Answer});
    t += static_cast<TimeNs>(itl_ms * 1e6);
  }
  r.done_ns = r.chunks.back().time_ns;
  r.http_status = 200;
  r.input_tokens = prompt;
  r.output_tokens = tokens;
  return r;
}

RunData run_with(std::vector<metrics::RequestRecord> records, json results = {{"completed", 1}}) {
  return RunData{.name = "r",
                 .source = "r.json",
                 .results = std::move(results),
                 .records = std::move(records),
                 .records_loaded = true,
                 .records_note = {}};
}

TEST(EmpiricalCdf, EveryDistinctSampleWhenFewTheEndsAlwaysAndTiesTogether) {
  const Cdf small = empirical_cdf({3, 1, 2, 2, std::nan("")}, 400);
  EXPECT_THAT(small.x, ElementsAre(1, 2, 3));
  EXPECT_THAT(small.p, ElementsAre(0.25, 0.75, 1.0));  // the NaN is not a sample

  std::vector<double> many(1000);
  std::iota(many.begin(), many.end(), 1.0);  // 1..1000
  const Cdf cdf = empirical_cdf(many, 11);
  ASSERT_EQ(cdf.x.size(), 11U);
  EXPECT_EQ(cdf.x.front(), 1);
  EXPECT_DOUBLE_EQ(cdf.p.front(), 0.001);
  EXPECT_EQ(cdf.x.back(), 1000);
  EXPECT_DOUBLE_EQ(cdf.p.back(), 1.0);
  EXPECT_EQ(cdf.x[5], 501);  // rank (5·999 + 5) / 10 = 500
  EXPECT_DOUBLE_EQ(cdf.p[5], 0.501);
  EXPECT_TRUE(empirical_cdf({}, 10).x.empty());
}

TEST(SharedHistogram, BinsAreSharedAndTheTailIsCountedAbove) {
  std::vector<double> a(100);
  std::vector<double> b(100);
  std::iota(a.begin(), a.end(), 0.0);   // 0..99
  std::iota(b.begin(), b.end(), 50.0);  // 50..149
  const Histogram full = shared_histogram({&a, &b}, 10, 100);
  ASSERT_EQ(full.edges.size(), 11U);
  EXPECT_DOUBLE_EQ(full.edges.front(), 0);
  EXPECT_DOUBLE_EQ(full.edges.back(), 149);
  EXPECT_DOUBLE_EQ(full.fractions[0][0], 0.15);  // 0..14 below 14.9
  EXPECT_DOUBLE_EQ(full.fractions[1][0], 0.0);
  EXPECT_DOUBLE_EQ(std::accumulate(full.fractions[1].begin(), full.fractions[1].end(), 0.0), 1.0);
  EXPECT_THAT(full.above, ElementsAre(0, 0));
  EXPECT_THAT(full.counts, ElementsAre(100, 100));

  // Clipped at the larger p99 (148.01, numpy's linear rule): 149 lies above.
  const Histogram clipped = shared_histogram({&a, &b}, 10, 99);
  EXPECT_NEAR(clipped.edges.back(), 148.01, 1e-9);
  EXPECT_THAT(clipped.above, ElementsAre(0, 1));

  const std::vector<double> same{5, 5, 5};
  const std::vector<double> none;
  const Histogram one = shared_histogram({&same, &none}, 40, 99);
  EXPECT_THAT(one.edges, ElementsAre(4.5, 5.5));
  EXPECT_THAT(one.fractions[0], ElementsAre(1.0));
  EXPECT_THAT(one.fractions[1], ElementsAre(0.0));
  EXPECT_TRUE(shared_histogram({&none}, 40, 99).edges.empty());
}

TEST(EvenSample, AllWhenFewElseEvenlySpaced) {
  EXPECT_THAT(even_sample(3, 10), ElementsAre(0, 1, 2));
  EXPECT_THAT(even_sample(10, 4), ElementsAre(0, 2, 5, 7));
  EXPECT_TRUE(even_sample(0, 4).empty());
}

TEST(RunSamples, FromRecordsCountOnlyCompletedMeasuredRequests) {
  auto warm = record(0, 0, 50, 5, 3, 10);
  warm.warmup = true;
  auto failed = record(3, 3, 10, 1, 2, 10);
  failed.error_kind = metrics::ErrorKind::Http5xx;
  const RunSamples s = run_samples(
      run_with({warm, record(1, 1, 20, 4, 3, 100), record(2, 2, 30, 6, 1, 200), failed}));
  EXPECT_EQ(s.source, "records");
  EXPECT_THAT(s.ttft_ms, ElementsAre(20, 30));
  EXPECT_THAT(s.tpot_ms, ElementsAre(4));    // one token has no TPOT
  EXPECT_THAT(s.itl_ms, ElementsAre(4, 4));  // 3 tokens: 2 gaps
  EXPECT_THAT(s.e2el_ms, ElementsAre(28, 30));
  EXPECT_THAT(s.input_tokens, ElementsAre(100, 200));
  EXPECT_THAT(s.output_tokens, ElementsAre(3, 1));
}

TEST(RunSamples, FromDetailedArraysInSecondsSkippingFailures) {
  const json results = {{"completed", 2},
                        {"ttfts", {0.1, nullptr, 0.3}},
                        {"tpots", {0.01, nullptr, nullptr}},
                        {"e2els", {0.5, nullptr, 0.7}},
                        {"itls", {{0.01, 0.02}, json::array(), json::array()}},
                        {"input_lens", {10, 20, 30}},
                        {"output_lens", {3, 0, 1}},
                        {"errors", {"", "boom", ""}}};
  RunData run{.name = "d",
              .source = "",
              .results = results,
              .records = {},
              .records_loaded = false,
              .records_note = "records file d.records.jsonl not found"};
  const RunSamples s = run_samples(run);
  EXPECT_EQ(s.source, "detailed arrays");
  EXPECT_THAT(s.ttft_ms, ElementsAre(100, 300));
  EXPECT_THAT(s.tpot_ms, ElementsAre(10));
  EXPECT_THAT(s.itl_ms, ElementsAre(10, 20));
  EXPECT_THAT(s.input_tokens, ElementsAre(10, 30));
}

TEST(ReportData, ARunWithRecordsHasEveryPartAndSamplesItsTimeline) {
  std::vector<metrics::RequestRecord> records;
  for (int i = 0; i < 5000; ++i)
    records.push_back(record(i, i * 0.5, 20 + i % 7, 3, 4, 64 + i % 5));
  json results = {{"completed", 5000}, {"p99_ttft_ms", 26.0}, {"mean_tpot_ms", 3.0}};
  const json d = report_data(
      {.runs = {run_with(records, results)}, .sweeps = {}},
      {.title = "t", .max_timeline_requests = 3000, .max_cdf_points = 50, .histogram_bins = 8});
  ASSERT_EQ(d.at("runs").size(), 1U);
  const json& r = d.at("runs")[0];
  EXPECT_EQ(r.at("kind"), "run");
  EXPECT_EQ(r.at("summary").at("p99_ttft_ms"), 26.0);
  EXPECT_TRUE(r.at("summary").at("p99_e2el_ms").is_null());  // not in the results
  EXPECT_EQ(r.at("cdf").at("ttft").at("count"), 5000);
  EXPECT_EQ(r.at("cdf").at("ttft").at("x").size(), 7U);  // 7 distinct TTFTs (20..26 ms)
  EXPECT_EQ(r.at("cdf").at("itl").at("count"), 15000);
  const json& t = r.at("timeline");
  EXPECT_EQ(t.at("total"), 5000);
  EXPECT_EQ(t.at("shown"), 3000);
  ASSERT_EQ(t.at("sent").size(), 3000U);
  // Request 5 (even_sample's index 3 of 5000/3000): scheduled 2.5 ms, sent 3.5 ms, first token
  // 20 + 5 = 25 ms later, done 3 tokens of 3 ms after that.
  EXPECT_DOUBLE_EQ(t.at("scheduled")[3].get<double>(), 0.0025);
  EXPECT_DOUBLE_EQ(t.at("sent")[3].get<double>(), 0.0035);
  EXPECT_DOUBLE_EQ(t.at("first")[3].get<double>(), 0.0285);
  EXPECT_DOUBLE_EQ(t.at("done")[3].get<double>(), 0.0375);
  EXPECT_THAT(r.at("notes").dump(), HasSubstr("even sample of 3000 of 5000"));
  // No windows in the results: computed from the records, and said so.
  EXPECT_FALSE(r.at("windows").empty());
  EXPECT_THAT(r.at("notes").dump(), HasSubstr("computed from the records"));
  const json& h = d.at("histograms").at("input_tokens");
  EXPECT_EQ(h.at("edges").size(), 9U);
  EXPECT_EQ(h.at("edges")[0], 64);
  EXPECT_EQ(h.at("edges")[8], 68);
  EXPECT_TRUE(r.at("sim_timeline").is_null());
}

TEST(ReportData, OverlaidRunsShareHistogramBins) {
  std::vector<metrics::RequestRecord> fast;
  std::vector<metrics::RequestRecord> slow;
  for (int i = 0; i < 100; ++i) {
    fast.push_back(record(i, i, 10 + i % 10, 2, 5, 32));
    slow.push_back(record(i, i, 100 + i % 10, 8, 5, 32));
  }
  auto a = run_with(fast);
  a.name = "fast";
  auto b = run_with(slow);
  b.name = "slow";
  const json d = report_data({.runs = {a, b}, .sweeps = {}}, {});
  ASSERT_EQ(d.at("runs").size(), 2U);
  EXPECT_EQ(d.at("runs")[1].at("name"), "slow");
  const json& h = d.at("histograms").at("ttft");
  ASSERT_EQ(h.at("runs").size(), 2U);
  EXPECT_EQ(h.at("edges")[0], 10);  // the smallest TTFT of either run
  EXPECT_EQ(h.at("runs")[0].at("count"), 100);
  // The fast run fills only the lowest bins of the shared range, the slow one the top ones.
  EXPECT_GT(h.at("runs")[0].at("fractions")[0].get<double>(), 0);
  EXPECT_EQ(h.at("runs")[1].at("fractions")[0].get<double>(), 0);
}

TEST(ReportData, MissingFieldsGiveEmptyChartsWithReasonsNotErrors) {
  RunData bare{.name = "bare",
               .source = "bare.json",
               .results = {{"completed", 3}, {"simulated", true}},
               .records = {},
               .records_loaded = false,
               .records_note = "records file bare.records.jsonl not found"};
  const json d = report_data({.runs = {bare}, .sweeps = {}}, {});
  const json& r = d.at("runs")[0];
  EXPECT_EQ(r.at("kind"), "simulate");
  EXPECT_EQ(r.at("samples_from"), "none");
  EXPECT_EQ(r.at("cdf").at("ttft").at("count"), 0);
  EXPECT_TRUE(r.at("timeline").is_null());
  EXPECT_TRUE(r.at("windows").empty());
  const std::string notes = r.at("notes").dump();
  EXPECT_THAT(notes, HasSubstr("bare.records.jsonl not found"));
  EXPECT_THAT(notes, HasSubstr("no engine timeline"));
  EXPECT_THAT(notes, HasSubstr("no per-request latencies"));
  EXPECT_TRUE(d.at("histograms").at("ttft").at("edges").empty());
}

TEST(ReportData, SweepPointsKneesSloBoundsAndParetoFrontier) {
  const json sweep = {
      {"mode", "simulate"},
      {"axes", {{{"name", "max-concurrency"}, {"values", {1, 2, 4, 8}}}}},
      {"points",
       {{{"index", 0},
         {"axes", {{"max-concurrency", 1}}},
         {"status", "ok"},
         {"output_throughput", 100.0},
         {"p99_ttft_ms", 50.0},
         {"p99_tpot_ms", 10.0}},
        {{"index", 1},
         {"axes", {{"max-concurrency", 2}}},
         {"status", "ok"},
         {"output_throughput", 190.0},
         {"p99_ttft_ms", 45.0},
         {"p99_tpot_ms", 11.0}},
        {{"index", 2},
         {"axes", {{"max-concurrency", 4}}},
         {"status", "failed"},
         {"output_throughput", nullptr}},
        {{"index", 3},
         {"axes", {{"max-concurrency", 8}}},
         {"status", "ok"},
         {"output_throughput", 180.0},
         {"p99_ttft_ms", 400.0},
         {"p99_tpot_ms", 30.0}}}},
      {"knee", {{{"group", ""}, {"throughput_knee", {{"found", true}, {"load", 2}}}}}},
      {"slo_search",
       {{"constraints", {"p99_ttft_ms<=300", "mean_e2el_ms<1000"}},
        {"axis", "max-concurrency"},
        {"answer", 2}}}};
  SweepData s{
      .name = "s", .source = "s.sweep.json", .sweep = sweep, .points = {}, .point_index = {}};
  const json d = report_data({.runs = {}, .sweeps = {s}}, {});
  ASSERT_EQ(d.at("sweeps").size(), 1U);
  const json& sw = d.at("sweeps")[0];
  EXPECT_EQ(sw.at("load_axis"), "max-concurrency");
  EXPECT_EQ(sw.at("x").at("key"), "max-concurrency");
  ASSERT_EQ(sw.at("points").size(), 4U);
  EXPECT_EQ(sw.at("points")[3].at("x"), 8);
  EXPECT_EQ(sw.at("points")[3].at("label"), "p03 max-concurrency=8");
  EXPECT_EQ(sw.at("points")[3].at("name"), "max-concurrency 8");
  EXPECT_TRUE(sw.at("points")[3].at("run").is_null());  // no results file read
  EXPECT_EQ(sw.at("points")[1].at("metrics").at("p99_ttft_ms"), 45.0);
  EXPECT_THAT(sw.at("configs"), ElementsAre(""));  // one configuration: the load is the only axis
  // Against the SLO: point 3's p99 TTFT 400 > 300 misses; point 1 has no mean E2EL to judge.
  EXPECT_EQ(sw.at("points")[3].at("slo"), false);
  EXPECT_THAT(sw.at("points")[3].at("slo_broken"), ElementsAre("p99_ttft_ms 400 > 300"));
  EXPECT_TRUE(sw.at("points")[1].at("slo").is_null());
  // No results file: GPUs unknown, so the Pareto chart reads per server, not per GPU.
  EXPECT_EQ(sw.at("pareto").at("y"), "output tok/s per server");
  EXPECT_EQ(sw.at("points")[1].at("per_gpu"), 190.0);
  ASSERT_FALSE(sw.at("headlines").empty());
  EXPECT_EQ(sw.at("headlines")[0].at("key"), "slo");
  const json& c = sw.at("slo").at("constraints");
  ASSERT_EQ(c.size(), 2U);
  EXPECT_EQ(c[0].at("metric"), "p99_ttft_ms");
  EXPECT_EQ(c[0].at("op"), "<=");
  EXPECT_EQ(c[0].at("bound"), 300.0);
  EXPECT_EQ(c[1].at("op"), "<");
  EXPECT_TRUE(sw.at("points")[0].at("metrics").contains("mean_e2el_ms"));  // a constraint metric
  EXPECT_EQ(sw.at("knees")[0].at("throughput_knee").at("load"), 2);
}

TEST(ReportData, ServerAndGpuSeriesOnTheRunsClock) {
  // As docs/telemetry.md writes them: ms since run start; counters cumulative, one reset.
  const json results = {{"completed", 3},
                        {"telemetry",
                         {{"server_metrics",
                           {{"engine", "vllm"},
                            {"scrapes", 4},
                            {"failures", 1},
                            {"last_error", "HTTP 503"},
                            {"t_ms", {0.0, 500.0, 1000.0, 1500.0}},
                            {"series",
                             {{"running", {0, 4, 8, 2}},
                              {"kv_cache_usage", {0.0, 0.25, 0.5, nullptr}},
                              {"generation_tokens", {100, 300, 800, 50}}}}}},
                          {"gpu",
                           {{"available", true},
                            {"devices",
                             {{{"info", {{"index", 0}, {"name", "NVIDIA H100"}}},
                               {"series",
                                {{"t_ms", {0.0, 100.0}},
                                 {"sm_util_pct", {10, 90}},
                                 {"memory_used_bytes", {1073741824.0, 2147483648.0}}}}}}}}}}}};
  RunData run = run_with({record(0, 0, 10, 5, 3, 8)}, results);
  const json d = report_data({.runs = {run}, .sweeps = {}}, {});
  const json& t = d.at("runs")[0].at("telemetry");
  ASSERT_TRUE(t.at("server").is_object());
  EXPECT_THAT(t.at("server").at("t_s"), ElementsAre(0.0, 0.5, 1.0, 1.5));
  const json& series = t.at("server").at("series");
  ASSERT_EQ(series.size(), 3U);  // the gauges first, then the counters as rates
  EXPECT_EQ(series[0].at("key"), "running");
  EXPECT_EQ(series[1].at("key"), "kv_cache_usage");
  EXPECT_THAT(series[1].at("values"), ElementsAre(0.0, 25.0, 50.0, nullptr));  // in %
  EXPECT_EQ(series[2].at("key"), "generation_tokens");
  // 200 and 500 tokens in 0.5 s; then a reset: the new value is all rise.
  EXPECT_THAT(series[2].at("values"), ElementsAre(nullptr, 400.0, 1000.0, 100.0));
  ASSERT_EQ(t.at("gpus").size(), 1U);
  EXPECT_EQ(t.at("gpus")[0].at("name"), "gpu0 NVIDIA H100");
  EXPECT_THAT(t.at("gpus")[0].at("memory_used_gib"), ElementsAre(1.0, 2.0));
  EXPECT_THAT(t.at("gpus")[0].at("t_s"), ElementsAre(0.0, 0.1));
  EXPECT_THAT(d.at("runs")[0].at("notes").dump(), HasSubstr("1 of the server's /metrics scrapes "
                                                            "failed (HTTP 503)"));
  // The load period: the first and last send of the records (sent 1 ms after scheduling).
  EXPECT_THAT(d.at("runs")[0].at("load_span"), ElementsAre(0.001, 0.001));
}

TEST(ReportData, SweepConfigurationsAndTheAchievedRateOfAProfile) {
  // Two configurations of a concurrency ladder: one line each, not one per point.
  json ladder = {{"mode", "simulate"},
                 {"axes", {{{"name", "max-num-seqs"}}, {{"name", "max-concurrency"}}}},
                 {"points", json::array()}};
  int index = 0;
  for (const int seqs : {64, 256}) {
    for (const int c : {1, 4, 16}) {
      ladder["points"].push_back({{"index", index++},
                                  {"axes", {{"max-num-seqs", seqs}, {"max-concurrency", c}}},
                                  {"status", "ok"},
                                  {"output_throughput", 100.0 * c},
                                  {"mean_tpot_ms", 10.0 + c}});
    }
  }
  SweepData s{
      .name = "l", .source = "l.sweep.json", .sweep = ladder, .points = {}, .point_index = {}};
  json d = report_data({.runs = {}, .sweeps = {s}}, {});
  const json& sw = d.at("sweeps")[0];
  EXPECT_THAT(sw.at("configs"), ElementsAre("max_num_seqs 64", "max_num_seqs 256"));
  EXPECT_EQ(sw.at("points")[4].at("config"), 1);
  EXPECT_EQ(sw.at("points")[4].at("x"), 4);
  EXPECT_EQ(sw.at("points")[4].at("name"), "max_num_seqs 256 · max-concurrency 4");
  EXPECT_NEAR(sw.at("points")[4].at("interactivity").get<double>(), 1000.0 / 14.0, 1e-4);
  // --profile auto: a rate of inf and two load axes; x is the request throughput achieved.
  const json profile = {{"mode", "simulate"},
                        {"profile", {{"saturated", false}}},
                        {"axes", {{{"name", "request-rate"}}, {{"name", "max-concurrency"}}}},
                        {"points",
                         {{{"index", 0},
                           {"axes", {{"request-rate", "inf"}, {"max-concurrency", 1}}},
                           {"status", "ok"},
                           {"request_throughput", 0.56}},
                          {{"index", 1},
                           {"axes", {{"request-rate", 2.6}, {"max-concurrency", 256}}},
                           {"status", "ok"},
                           {"request_throughput", 2.49}}}}};
  s.sweep = profile;
  d = report_data({.runs = {}, .sweeps = {s}}, {});
  const json& pr = d.at("sweeps")[0];
  EXPECT_EQ(pr.at("x").at("key"), "request_throughput");
  // Both axes are load axes: the ladder and the rates are the two lines.
  EXPECT_THAT(pr.at("configs"), ElementsAre("concurrency ladder", "request rates"));
  EXPECT_EQ(pr.at("points")[0].at("x"), 0.56);
  EXPECT_EQ(pr.at("points")[1].at("x"), 2.49);
}

}  // namespace
}  // namespace llmbench::report
