// Server metrics (telemetry/server_metrics.hpp): the engine-name map on recorded expositions of
// vLLM, SGLang, TGI and llama.cpp (tests/unit/telemetry/data/), counters as increases, and a
// live `llmbench serve` scraped on 127.0.0.1.

#include "llmbench/telemetry/server_metrics.hpp"

#include "llmbench/core/file.hpp"
#include "llmbench/server/server.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace llmbench::telemetry {
namespace {

Exposition load(const std::string& name) {
  const std::string path =
      std::string(LLMBENCH_TEST_SOURCE_DIR) + "/tests/unit/telemetry/data/" + name;
  const std::string text = read_file(path).value();
  auto r = parse_exposition(text, path);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().what());
  return r ? *r : Exposition{};
}

double value(const ConceptValues& v, Concept c) {
  return v.values[static_cast<std::size_t>(c)];
}
std::string_view source(const ConceptValues& v, Concept c) {
  return v.sources[static_cast<std::size_t>(c)];
}

TEST(ServerMetrics, ConceptTableIsInEnumOrder) {
  for (std::size_t i = 0; i < kConceptCount; ++i)
    EXPECT_EQ(static_cast<std::size_t>(kConceptNames[i].concept_id), i) << kConceptNames[i].name;
  for (std::size_t i = 0; i < kEngineNames.size(); ++i)
    EXPECT_EQ(static_cast<std::size_t>(kEngineNames[i].engine), i);
}

TEST(ServerMetrics, MapsVllm) {
  const auto e = load("vllm_v1.prom");
  EXPECT_EQ(detect_engine(e), Engine::Vllm);
  const auto v = map_concepts(e);
  EXPECT_EQ(value(v, Concept::Running), 24);
  EXPECT_EQ(value(v, Concept::Waiting), 7);
  EXPECT_EQ(value(v, Concept::KvCacheUsage), 0.8125);
  EXPECT_EQ(source(v, Concept::KvCacheUsage), "vllm:kv_cache_usage_perc");
  EXPECT_EQ(value(v, Concept::Preemptions), 3);
  EXPECT_EQ(value(v, Concept::PrefixCacheQueries), 100000);
  EXPECT_EQ(value(v, Concept::PrefixCacheHits), 40000);
  EXPECT_EQ(value(v, Concept::SpecDraftTokens), 15000);
  EXPECT_EQ(value(v, Concept::SpecAcceptedTokens), 9000);
  EXPECT_EQ(value(v, Concept::PromptTokens), 123456);
  EXPECT_EQ(value(v, Concept::GenerationTokens), 65432);
  EXPECT_TRUE(std::isnan(value(v, Concept::BatchSize)));
  EXPECT_TRUE(std::isnan(value(v, Concept::SpecAcceptLength)));
}

TEST(ServerMetrics, MapsSglangCombiningRanks) {
  const auto e = load("sglang.prom");
  EXPECT_EQ(detect_engine(e), Engine::Sglang);
  const auto v = map_concepts(e);
  EXPECT_EQ(value(v, Concept::Running), 162 + 158);  // summed over TP ranks
  EXPECT_EQ(value(v, Concept::Waiting), 2968);
  EXPECT_DOUBLE_EQ(value(v, Concept::KvCacheUsage), (0.28 + 0.36) / 2);  // mean over ranks
  EXPECT_EQ(value(v, Concept::PrefixCacheHitRate), 0.007507552643049313);
  EXPECT_EQ(value(v, Concept::SpecAcceptLength), 2.5);
  EXPECT_EQ(value(v, Concept::PromptTokens), 8.128902e+06);
  EXPECT_EQ(value(v, Concept::GenerationTokens), 7.557572e+06);
  EXPECT_TRUE(std::isnan(value(v, Concept::Preemptions)));
}

TEST(ServerMetrics, MapsTgi) {
  const auto e = load("tgi.prom");
  EXPECT_EQ(detect_engine(e), Engine::Tgi);
  const auto v = map_concepts(e);
  EXPECT_EQ(value(v, Concept::Running), 12);
  EXPECT_EQ(value(v, Concept::BatchSize), 12);
  EXPECT_EQ(value(v, Concept::Waiting), 5);
  EXPECT_EQ(value(v, Concept::PromptTokens), 801234);
  EXPECT_EQ(value(v, Concept::GenerationTokens), 204800);
  EXPECT_TRUE(std::isnan(value(v, Concept::KvCacheUsage)));
  EXPECT_EQ(e.type_of("tgi_request_duration_sum"), MetricType::Summary);
}

TEST(ServerMetrics, MapsLlamaCpp) {
  const auto e = load("llamacpp.prom");
  EXPECT_EQ(detect_engine(e), Engine::LlamaCpp);
  const auto v = map_concepts(e);
  EXPECT_EQ(value(v, Concept::Running), 2);
  EXPECT_EQ(value(v, Concept::Waiting), 1);
  EXPECT_EQ(value(v, Concept::KvCacheUsage), 0.25);
  EXPECT_EQ(value(v, Concept::BatchSize), 1.5);
  EXPECT_EQ(value(v, Concept::PromptTokens), 6886);
  EXPECT_EQ(value(v, Concept::GenerationTokens), 3469);
}

/// A scrape of a real llama.cpp `llama-server` (build b4748, Feb 2025, `--metrics`, 4 slots) after
/// one 16-token completion, taken on 127.0.0.1: the names and types the map relies on are there.
TEST(ServerMetrics, MapsARealLlamaCppScrape) {
  const auto e = load("llamacpp_b4748_real.prom");
  EXPECT_EQ(detect_engine(e), Engine::LlamaCpp);
  const auto v = map_concepts(e);
  EXPECT_EQ(value(v, Concept::Running), 0);
  EXPECT_EQ(value(v, Concept::Waiting), 0);
  EXPECT_DOUBLE_EQ(value(v, Concept::KvCacheUsage), 0.00219727);
  EXPECT_EQ(value(v, Concept::BatchSize), 1);
  EXPECT_EQ(value(v, Concept::PromptTokens), 3);
  EXPECT_EQ(value(v, Concept::GenerationTokens), 16);
  EXPECT_EQ(e.type_of("llamacpp:tokens_predicted_total"), MetricType::Counter);
}

/// A recorded scrape series of a real llama.cpp `llama-server` (b4748, 4 slots, scraped every
/// second, data/llamacpp_b4748_series/): 16 requests at concurrency 4 ran before (132 decodes,
/// `n_busy_slots_per_decode` 3.87879 since start), then 8 requests one at a time, 32 tokens
/// each: every decode of this run held exactly one busy slot. The since-start ratio reads 3.5
/// down to 1.98 through it; differenced with `n_decode_total` it gives the run's true batch, 1.
TEST(ServerMetrics, LlamaCppBusySlotsRatioIsDifferencedIntoTheRunsMeanBatch) {
  ServerMetricsSeries series;
  series.asked_interval_ms = 1000;
  for (int i = 2; i <= 14; ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "llamacpp_b4748_series/%02d.prom", i);
    series.add(static_cast<TimeNs>(i) * 1'000'000'000, load(name), 2'000'000);
  }
  const auto s = summarize_server_metrics(series);
  const ConceptSummary* batch = nullptr;
  for (const auto& c : s.concepts) {
    if (c.info->concept_id == Concept::BatchSize)
      batch = &c;
  }
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->source,
            "llamacpp:n_busy_slots_per_decode x llamacpp:n_decode_total, differenced");
  EXPECT_NEAR(batch->run_mean, 1.0, 1e-5);  // (1.97938 x 388 − 3.87879 x 132) / (388 − 132)
  // Each interval in which the server decoded: one slot.
  EXPECT_NEAR(batch->gauge.mean, 1.0, 1e-4);
  EXPECT_NEAR(batch->gauge.max, 1.0, 1e-4);
  EXPECT_EQ(batch->gauge.count, 11U);  // 12 intervals, one without a decode
  // What the since-start ratio itself would have said.
  std::vector<double> ratio;
  for (const auto& v : series.raw.at("llamacpp:n_busy_slots_per_decode")) ratio.push_back(v);
  EXPECT_GT(describe_series(ratio).mean, 2.2);
  const auto j = server_metrics_json(series, s, 0);
  EXPECT_NEAR(j["summary"]["concepts"]["batch_size"]["mean_over_run"].get<double>(), 1.0, 1e-5);
  EXPECT_FALSE(j["timing"]["interval_late"].get<bool>());
  EXPECT_EQ(j["timing"]["late_scrapes"], 0);
}

/// Scrapes a busy server answered late (a median gap of 1,373 ms for 500 ms asked): reported,
/// and the gauges of each scrape that took over half the interval marked late.
TEST(ServerMetrics, ScrapesServedLateAreReportedAndMarked) {
  ServerMetricsSeries series;
  series.asked_interval_ms = 500;
  const auto e = load("llamacpp.prom");
  TimeNs t = 0;
  for (int i = 0; i < 6; ++i) {
    const TimeNs took = i % 2 == 0 ? 1'300'000'000 : 20'000'000;
    series.add(t, e, took);
    t += took + 73'000'000;
  }
  const ScrapeTiming timing = scrape_timing(series);
  EXPECT_EQ(timing.late_scrapes, 3);
  EXPECT_TRUE(timing.interval_late);
  EXPECT_DOUBLE_EQ(timing.median_gap_ms, 1373);
  EXPECT_NE(timing.warning.find("median gap 1373 ms for 500 ms asked"), std::string::npos)
      << timing.warning;
  EXPECT_TRUE(series.late(0));
  EXPECT_FALSE(series.late(1));
  const auto j = server_metrics_json(series, summarize_server_metrics(series), 0);
  EXPECT_EQ(j["late"], nlohmann::json::parse("[true, false, true, false, true, false]"));
  EXPECT_TRUE(j["timing"]["interval_late"].get<bool>());
}

TEST(ServerMetrics, FirstNameOfTheTableWinsForAConcept) {
  // llmbench serve (engine timing) exposes both vLLM KV-usage names with the same value.
  const auto e = parse_exposition(
                     "vllm:gpu_cache_usage_perc 0.5\nvllm:kv_cache_usage_perc 0.5\n"
                     "llmbench:engine_steps_total 10\n")
                     .value();
  const auto v = map_concepts(e);
  EXPECT_EQ(value(v, Concept::KvCacheUsage), 0.5);
  EXPECT_EQ(source(v, Concept::KvCacheUsage), "vllm:kv_cache_usage_perc");
  EXPECT_EQ(detect_engine(e), Engine::Llmbench);
  EXPECT_EQ(detect_engine(parse_exposition("other_metric 1\n").value()), Engine::Unknown);
}

TEST(ServerMetrics, CountersBecomeIncreasesAndRatios) {
  ServerMetricsSeries series;
  series.add(1'000'000'000, load("vllm_v1.prom"));
  series.add(3'000'000'000, load("vllm_v1_later.prom"));
  const auto s = summarize_server_metrics(series);
  EXPECT_EQ(s.engine, Engine::Vllm);
  EXPECT_EQ(s.scrapes, 2);
  auto find = [&](std::string_view name) -> const ConceptSummary& {
    for (const auto& c : s.concepts) {
      if (c.info->name == name)
        return c;
    }
    ADD_FAILURE() << name;
    return s.concepts.front();
  };
  EXPECT_EQ(find("preemptions").increase, 2);
  EXPECT_EQ(find("generation_tokens").increase, 5000);
  EXPECT_EQ(find("generation_tokens").rate_per_s, 2500);  // over the 2 s between scrapes
  EXPECT_EQ(find("running").gauge.max, 32);
  EXPECT_EQ(find("running").gauge.mean, 28);
  EXPECT_EQ(find("kv_cache_usage").gauge.p50, (0.8125 + 0.9375) / 2);
  EXPECT_EQ(s.prefix_cache_hit_rate, 6000.0 / 8000.0);
  EXPECT_EQ(s.spec_decode_acceptance_rate, 900.0 / 1200.0);
  const auto j = server_metrics_json(series, s, 500'000'000);
  EXPECT_EQ(j["t_ms"], nlohmann::json::array({500.0, 2500.0}));
  EXPECT_EQ(j["series"]["waiting"], nlohmann::json::array({7.0, 0.0}));
  // A series the later scrape lacks is kept, null where it was missing.
  const auto& stop = j
      ["raw"]
      [R"(vllm:request_success_total{engine="0",finished_reason="stop",model_name="Qwen/Qwen3-8B"})"];
  EXPECT_EQ(stop, nlohmann::json::parse("[310.0, null]"));
  EXPECT_EQ(j["counter_increases"]
             [R"(vllm:num_preemptions_total{engine="0",model_name="Qwen/Qwen3-8B"})"],
            2.0);
  EXPECT_DOUBLE_EQ(j["summary"]["concepts"]["running"]["p99"].get<double>(), 24 + 8 * 0.99);
}

TEST(ServerMetrics, CounterResetCountsTheNewValue) {
  const double values[] = {10, 15, std::nan(""), 3, 7};
  EXPECT_EQ(counter_increase(values), 5 + 3 + 4);
  const double one[] = {4};
  EXPECT_TRUE(std::isnan(counter_increase(one)));
}

TEST(ServerMetrics, ScrapesALiveLlmbenchServe) {
  server::ServerOptions options;
  options.model = "scrape-test";
  options.ttft_ms = 5;
  options.itl_ms = 1;
  server::Server srv(options);
  const auto port = srv.start();
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  ServerMetricsSampler sampler(ScrapeOptions{.url = http::parse_url(url).value(),
                                             .url_text = url,
                                             .interval = std::chrono::milliseconds(20)});
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  sampler.stop();
  srv.stop();
  const auto& series = sampler.series();
  EXPECT_EQ(series.failures, 0) << series.last_error;
  ASSERT_GE(series.t_ns.size(), 2U);       // the first scrape at start and the last at stop
  EXPECT_EQ(series.engine, Engine::Vllm);  // fixed timing serves vLLM's names only
  const auto& running = series.concepts[static_cast<std::size_t>(Concept::Running)];
  ASSERT_EQ(running.size(), series.t_ns.size());
  for (const double r : running) EXPECT_EQ(r, 0);  // nothing was sent
  EXPECT_EQ(series.concept_sources[static_cast<std::size_t>(Concept::Waiting)],
            "vllm:num_requests_waiting");
  EXPECT_EQ(series.raw.count(R"(vllm:num_requests_running{model_name="scrape-test"})"), 1U);
  for (std::size_t i = 1; i < series.t_ns.size(); ++i)
    EXPECT_GT(series.t_ns[i], series.t_ns[i - 1]);
}

TEST(ServerMetrics, AFailedScrapeIsCountedNotFatal) {
  // Port 1 on loopback: nothing listens there in a test sandbox, so the connect is refused.
  const std::string url = "http://127.0.0.1:1/metrics";
  ServerMetricsSampler sampler(ScrapeOptions{.url = http::parse_url(url).value(),
                                             .url_text = url,
                                             .timeout = std::chrono::milliseconds(500)});
  sampler.scrape_once();
  sampler.scrape_once();
  EXPECT_EQ(sampler.series().failures, 2);
  EXPECT_TRUE(sampler.series().t_ns.empty());
  EXPECT_NE(sampler.series().last_error.find("127.0.0.1:1"), std::string::npos)
      << sampler.series().last_error;
}

}  // namespace
}  // namespace llmbench::telemetry
