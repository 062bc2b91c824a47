#include "llmbench/report/report.hpp"

#include "llmbench/core/error.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

namespace llmbench::report {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

metrics::Stats stats(double mean, double median, std::vector<std::pair<double, double>> ps) {
  metrics::Stats s;
  s.count = 3;
  s.mean = mean;
  s.median = median;
  s.stddev = 1.25;
  s.min = 1;
  s.max = 1000;
  s.percentiles = std::move(ps);
  return s;
}

// A small fixed summary; every expected line below was produced with Python's
// "{:<40} {:<10}" / "{:<40} {:<10.2f}" (the format vLLM prints with).
metrics::Summary sample_summary() {
  metrics::Summary s;
  s.total = 5;
  s.completed = 3;
  s.failed = 2;
  s.failures_by_kind = {{"http_5xx", 1}, {"timeout", 1}};
  s.duration_s = 2.0;
  s.total_input_tokens = 240;
  s.total_output_tokens = 14;
  s.request_throughput = 1.5;
  s.output_throughput = 7.0;
  s.total_token_throughput = 127.0;
  s.good_requests = 1;
  s.request_goodput = 0.5;
  s.max_output_tokens_per_s = 9;
  s.max_concurrent_requests = 2;
  s.token_count_mismatches = 1;
  s.prompt_token_mismatches = 29;
  s.usage_missing = 1;
  s.ttft_ms = stats(400, 200, {{50, 200}, {99, 886}, {99.9, 899.3}});
  s.tpot_ms = stats(51.607142857, 51.607142857, {{50, 51.6071}, {99, 85.0}, {99.9, 85.65}});
  s.itl_ms = stats(67, 100, {{50, 100}, {99, 100}, {99.9, 100}});
  s.e2el_ms = stats(623.333333, 800, {{50, 800}, {99, 898}, {99.9, 899.8}});
  s.lateness_ms = stats(3.333, 0, {{50, 0}, {99, 9.8}, {99.9, 9.98}});
  s.lateness_ms.max = 10;
  return s;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    out.push_back(l);
  }
  return out;
}

// vLLM's lines, but for P50: the median is printed once, as "Median" (the summary holds a P50 of
// 200 ms beside it).
TEST(Console, ExactVllmLines) {
  ConsoleOptions options;
  options.show_goodput = true;
  const std::string text = console_text(sample_summary(), options);
  const std::vector<std::string> expected = {
      "============ Serving Benchmark Result ============",
      "Successful requests:                     3         ",
      "Failed requests:                         2         ",
      "Benchmark duration (s):                  2.00      ",
      "Total input tokens:                      240       ",
      "Total generated tokens:                  14        ",
      "Request throughput (req/s):              1.50      ",
      "Request goodput (req/s):                 0.50      ",
      "Output token throughput (tok/s):         7.00      ",
      "Peak output token throughput (tok/s):    9.00      ",
      "Peak concurrent requests:                2         ",
      "Total Token throughput (tok/s):          127.00    ",
      "---------------Time to First Token----------------",
      "Mean TTFT (ms):                          400.00    ",
      "Median TTFT (ms):                        200.00    ",
      "P99 TTFT (ms):                           886.00    ",
      "P99.9 TTFT (ms):                         899.30    ",
      "-----Time per Output Token (excl. 1st token)------",
      "Mean TPOT (ms):                          51.61     ",
      "Median TPOT (ms):                        51.61     ",
      "P99 TPOT (ms):                           85.00     ",
      "P99.9 TPOT (ms):                         85.65     ",
      "---------------Inter-token Latency----------------",
      "Mean ITL (ms):                           67.00     ",
      "Median ITL (ms):                         100.00    ",
      "P99 ITL (ms):                            100.00    ",
      "P99.9 ITL (ms):                          100.00    ",
      "-----------------Failures by Kind-----------------",
      "Failed (http_5xx):                       1         ",
      "Failed (timeout):                        1         ",
      "-----------------Token Accounting-----------------",
      "Output token mismatches:                 1         ",
      "Prompt token mismatches:                 29        ",
      "Usage missing:                           1         ",
      "-----------------Client Lateness------------------",
      "Median lateness (ms):                    0.00      ",
      "P99.9 lateness (ms):                     9.98      ",
      "Max lateness (ms):                       10.00     ",
      "==================================================",
  };
  const auto got = lines_of(text);
  ASSERT_EQ(got.size(), expected.size()) << text;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(got[i], expected[i]) << "line " << i;
  }
}

TEST(Console, GoodputHiddenWithoutSloAndOptionalLines) {
  ConsoleOptions options;
  options.percentile_metrics = {"e2el", "ttfat"};
  options.max_concurrency = 64;
  options.request_rate = 2.5;
  const std::string text = console_text(sample_summary(), options);
  EXPECT_THAT(text, Not(HasSubstr("goodput")));
  EXPECT_THAT(text, HasSubstr("Maximum request concurrency:             64        \n"));
  EXPECT_THAT(text, HasSubstr("Request rate configured (RPS):           2.50      \n"));
  EXPECT_THAT(text, HasSubstr("----------------End-to-end Latency----------------\n"));
  EXPECT_THAT(text, HasSubstr("P99 E2EL (ms):                           898.00    \n"));
  // No TTFAT samples: undefined, printed n/a, never 0.
  EXPECT_THAT(text, HasSubstr("Mean TTFAT (ms):                         n/a       \n"));
  EXPECT_THAT(text, Not(HasSubstr("TTFT (ms)")));

  options.request_rate = std::numeric_limits<double>::infinity();
  EXPECT_THAT(console_text(sample_summary(), options), Not(HasSubstr("Request rate configured")));
}

TEST(Console, FailuresShowTheirMostFrequentMessages) {
  metrics::Summary s = sample_summary();
  s.top_errors_by_kind["http_5xx"] = {{.message = "upstream overloaded", .count = 1}};
  s.top_errors_by_kind["timeout"] = {{.message = "", .count = 1}};
  const std::string text = console_text(s, ConsoleOptions{});
  EXPECT_THAT(text, HasSubstr("Failed (http_5xx):                       1         \n"
                              "  1x upstream overloaded\n"
                              "Failed (timeout):                        1         \n"
                              "  1x (no message)\n"));
  const json j = results_json(s, RunInfo{});
  EXPECT_EQ(j.at("top_errors_by_kind").at("http_5xx").at(0).at("message"), "upstream overloaded");
  EXPECT_EQ(j.at("top_errors_by_kind").at("http_5xx").at(0).at("count"), 1);
}

TEST(Console, RequestedOutputQueueWaitAndSingleChunkLines) {
  metrics::Summary s = sample_summary();
  EXPECT_THAT(console_text(s, ConsoleOptions{}), Not(HasSubstr("Queue Wait")));
  EXPECT_THAT(console_text(s, ConsoleOptions{}), Not(HasSubstr("max_tokens")));
  EXPECT_TRUE(summary_warnings(s).empty());
  s.requests_with_max_tokens = 3;
  s.total_requested_output_tokens = 48;
  s.finished_before_max_tokens = 2;
  s.single_chunk_outputs = 1;
  s.queue_wait_ms = stats(12.5, 10, {{50, 10}});
  const std::string text = console_text(s, ConsoleOptions{});
  EXPECT_THAT(text, HasSubstr("Requested output tokens:                 48        \n"
                              "Finished before max_tokens:              2         \n"
                              "Outputs in one chunk (no TPOT):          1         \n"));
  EXPECT_THAT(text, HasSubstr("--------------------Queue Wait--------------------\n"
                              "Mean queue wait (ms):                    12.50     \n"));
  const auto warnings = summary_warnings(s);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("not incremental"));
  const json j = results_json(s, RunInfo{});
  EXPECT_EQ(j.at("finished_before_max_tokens"), 2);
  EXPECT_EQ(j.at("total_requested_output_tokens"), 48);
  EXPECT_EQ(j.at("single_chunk_outputs"), 1);
  EXPECT_DOUBLE_EQ(j.at("mean_queue_wait_ms").get<double>(), 12.5);
}

TEST(Console, UnknownMetricThrows) {
  ConsoleOptions options;
  options.percentile_metrics = {"ttft", "bogus"};
  try {
    console_text(sample_summary(), options);
    FAIL();
  } catch (const Exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("--percentile-metrics"));
    EXPECT_THAT(e.what(), HasSubstr("'bogus'"));
  }
  EXPECT_NO_THROW(check_percentile_metrics({"ttft", "tpot", "itl", "e2el", "ttfat", "inter_chunk",
                                            "ttft_sched", "e2el_sched", "lateness", "queue_wait"}));
  EXPECT_EQ(percentile_metric_names().size(), 10u);
}

TEST(Console, PrintWritesTheSameText) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  print_console(f, sample_summary(), ConsoleOptions{});
  std::rewind(f);
  std::string got;
  char buf[256];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) {
    got.append(buf, n);
  }
  std::fclose(f);
  EXPECT_EQ(got, console_text(sample_summary(), ConsoleOptions{}));
}

TEST(Console, FromARealSummary) {
  metrics::RequestRecord a;
  a.sent_ns = 0;
  a.scheduled_ns = 0;
  a.chunks = {{100'000'000, 1, 4, metrics::Channel::Answer},
              {300'000'000, 2, 8, metrics::Channel::Answer}};
  a.done_ns = 1'000'000'000;
  a.output_tokens = 3;
  a.input_tokens = 10;
  metrics::RequestRecord b = a;
  b.chunks[0].time_ns = 200'000'000;
  b.done_ns = 500'000'000;
  metrics::SummaryOptions options;
  options.percentiles = {50, 99};
  const std::string text = console_text(metrics::summarize({a, b}, options), ConsoleOptions{});
  EXPECT_THAT(text, HasSubstr("Successful requests:                     2         \n"));
  EXPECT_THAT(text, HasSubstr("Benchmark duration (s):                  1.00      \n"));
  EXPECT_THAT(text, HasSubstr("Total Token throughput (tok/s):          26.00     \n"));
  // TTFT 100 and 200 ms → mean 150, P99 = 100 + 100·0.99 = 199.
  EXPECT_THAT(text, HasSubstr("Mean TTFT (ms):                          150.00    \n"));
  EXPECT_THAT(text, HasSubstr("P99 TTFT (ms):                           199.00    \n"));
  // TPOT (300 − 100)/2 = 100 and (300 − 200)/2 = 50.
  EXPECT_THAT(text, HasSubstr("Median TPOT (ms):                        75.00     \n"));
}

TEST(PercentileLabel, LikePythonStr) {
  EXPECT_EQ(percentile_label(99), "99");
  EXPECT_EQ(percentile_label(50.0), "50");
  EXPECT_EQ(percentile_label(99.9), "99.9");
  EXPECT_EQ(percentile_label(99.99), "99.99");
  EXPECT_EQ(percentile_label(0.5), "0.5");
}

RunInfo sample_info() {
  RunInfo info;
  info.date = "20250101-120000";
  info.backend = "openai-chat";
  info.model_id = "deepseek-ai/DeepSeek-V3";
  info.tokenizer_id = "deepseek-ai/DeepSeek-V3";
  info.base_url = "http://127.0.0.1:8000";
  info.endpoint = "/v1/chat/completions";
  info.num_prompts = 5;
  info.request_rate = 4;
  info.burstiness = 1;
  info.max_concurrency = 8;
  info.seed = 42;
  info.tool_version = "0.1.0";
  info.git_sha = "abc123";
  info.config_requested = {{"num_prompts", 5}};
  info.config_effective = {{"num_prompts", 5}, {"max_tokens", 128}};
  info.server_models = {{"data", json::array()}};
  info.run_start_steady_ns = 123456789;
  info.percentiles = {50, 99, 99.9};
  return info;
}

TEST(ResultsJson, VllmKeysAndValues) {
  RunInfo info = sample_info();
  info.slo.ttft_ms = 250;
  const json j = results_json(sample_summary(), info);
  EXPECT_EQ(j.at("date"), "20250101-120000");
  EXPECT_EQ(j.at("backend"), "openai-chat");
  EXPECT_EQ(j.at("model_id"), "deepseek-ai/DeepSeek-V3");
  EXPECT_EQ(j.at("tokenizer_id"), "deepseek-ai/DeepSeek-V3");
  EXPECT_EQ(j.at("num_prompts"), 5);
  EXPECT_EQ(j.at("request_rate"), 4.0);
  EXPECT_EQ(j.at("burstiness"), 1.0);
  EXPECT_EQ(j.at("max_concurrency"), 8);
  EXPECT_EQ(j.at("duration"), 2.0);
  EXPECT_EQ(j.at("completed"), 3);
  EXPECT_EQ(j.at("total_input_tokens"), 240);
  EXPECT_EQ(j.at("total_output_tokens"), 14);
  EXPECT_EQ(j.at("request_throughput"), 1.5);
  EXPECT_EQ(j.at("request_goodput"), 0.5);
  EXPECT_EQ(j.at("output_throughput"), 7.0);
  EXPECT_EQ(j.at("total_token_throughput"), 127.0);
  EXPECT_EQ(j.at("max_output_tokens_per_s"), 9.0);
  EXPECT_EQ(j.at("max_concurrent_requests"), 2);
  EXPECT_EQ(j.at("mean_ttft_ms"), 400.0);
  EXPECT_EQ(j.at("median_ttft_ms"), 200.0);
  EXPECT_EQ(j.at("std_ttft_ms"), 1.25);
  EXPECT_EQ(j.at("p50_ttft_ms"), 200.0);
  EXPECT_EQ(j.at("p99_ttft_ms"), 886.0);
  EXPECT_EQ(j.at("p99.9_ttft_ms"), 899.3);
  EXPECT_EQ(j.at("p99_tpot_ms"), 85.0);
  EXPECT_EQ(j.at("mean_itl_ms"), 67.0);
  EXPECT_EQ(j.at("p99.9_e2el_ms"), 899.8);
  EXPECT_EQ(j.at("min_ttft_ms"), 1.0);
  EXPECT_EQ(j.at("max_e2el_ms"), 1000.0);
  // Ours, same pattern.
  EXPECT_EQ(j.at("max_lateness_ms"), 10.0);
  EXPECT_EQ(j.at("p99_lateness_ms"), 9.8);
  EXPECT_TRUE(j.at("mean_ttfat_ms").is_null());  // no samples: undefined, null
  EXPECT_TRUE(j.at("std_ttfat_ms").is_null());
  EXPECT_TRUE(j.contains("median_inter_chunk_ms"));
  EXPECT_TRUE(j.contains("std_ttft_sched_ms"));
  // e2el_sched's Stats in this summary has no percentiles: the keys still exist, as null.
  EXPECT_TRUE(j.at("p99.9_e2el_sched_ms").is_null());
  EXPECT_TRUE(j.at("p50_inter_chunk_ms").is_null());
  EXPECT_FALSE(j.contains("p90_ttft_ms"));
  EXPECT_EQ(j.at("failed"), 2);
  EXPECT_EQ(j.at("failures_by_kind"), json({{"http_5xx", 1}, {"timeout", 1}}));
  EXPECT_EQ(j.at("token_count_mismatches"), 1);
  // The console prints this count too ("Prompt token mismatches: 29", the console test): before,
  // it printed only the output count, 0, while the file held 29 prompt mismatches.
  EXPECT_EQ(j.at("prompt_token_mismatches"), 29);
  EXPECT_EQ(j.at("usage_missing"), 1);
  EXPECT_EQ(j.at("good_requests"), 1);
  EXPECT_EQ(j.at("total_requests"), 5);
  EXPECT_EQ(j.at("goodput_slo_ms"), json({{"ttft", 250.0}}));
  EXPECT_EQ(j.at("seed"), 42);
  EXPECT_EQ(j.at("git_sha"), "abc123");
  EXPECT_EQ(j.at("config_effective").at("max_tokens"), 128);
  EXPECT_EQ(j.at("run_start_steady_ns"), 123456789);
  EXPECT_EQ(j.at("metric_percentiles"), json({50.0, 99.0, 99.9}));
}

TEST(ResultsJson, NanIsNullInfRateIsStringNoSloMeansNullGoodput) {
  metrics::Summary s = sample_summary();
  s.tpot_ms.mean = std::numeric_limits<double>::quiet_NaN();
  s.ttft_ms.percentiles[1].second = std::numeric_limits<double>::quiet_NaN();
  s.output_throughput = std::numeric_limits<double>::infinity();
  RunInfo info = sample_info();
  info.request_rate = std::numeric_limits<double>::infinity();
  info.max_concurrency = -1;
  const json j = results_json(s, info);
  EXPECT_TRUE(j.at("mean_tpot_ms").is_null());
  EXPECT_TRUE(j.at("p99_ttft_ms").is_null());
  EXPECT_TRUE(j.at("output_throughput").is_null());
  EXPECT_EQ(j.at("request_rate"), "inf");
  EXPECT_TRUE(j.at("max_concurrency").is_null());
  EXPECT_TRUE(j.at("request_goodput").is_null());
  EXPECT_TRUE(j.at("goodput_slo_ms").is_null());
  const std::string text = j.dump();
  EXPECT_THAT(text, Not(HasSubstr("nan")));
  EXPECT_THAT(text, Not(HasSubstr("NaN")));
  EXPECT_THAT(text, HasSubstr(R"("request_rate":"inf")"));
}

TEST(ResultsJson, WithoutPercentileListUsesTheStatsOwn) {
  RunInfo info = sample_info();
  info.percentiles.clear();
  const json j = results_json(sample_summary(), info);
  EXPECT_EQ(j.at("p99.9_tpot_ms"), 85.65);
  EXPECT_FALSE(j.contains("p50_e2el_sched_ms"));
  EXPECT_EQ(j.at("metric_percentiles"), json::array());
}

TEST(ResultsJson, ExtraIsMergedLastAndMustBeAnObject) {
  RunInfo info = sample_info();
  info.extra = {{"label", "canary"}, {"backend", "overridden"}};
  const json j = results_json(sample_summary(), info);
  EXPECT_EQ(j.at("label"), "canary");
  EXPECT_EQ(j.at("backend"), "overridden");
  info.extra = json::array({1});
  EXPECT_THROW(results_json(sample_summary(), info), Exception);
  info.extra = nullptr;
  EXPECT_NO_THROW(results_json(sample_summary(), info));
}

TEST(WriteJsonFile, WritesAtomicallyAndNamesPathOnFailure) {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("llmbench_report_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "result.json").string();
  write_json_file(path, json{{"a", 1}, {"b", "x\xFFy"}});
  write_json_file(path, json{{"a", 2}});  // replaces the previous file
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  EXPECT_EQ(content.str(), "{\n  \"a\": 2\n}\n");
  // Only the final file is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            1);

  const std::string bad = (dir / "missing_dir" / "r.json").string();
  try {
    write_json_file(bad, json{{"a", 1}});
    FAIL();
  } catch (const Exception& e) {
    EXPECT_THAT(e.what(), HasSubstr(bad));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace llmbench::report
