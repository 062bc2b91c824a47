// The Prometheus text-format parser (telemetry/prometheus.hpp): every rule of format 0.0.4 it
// claims, and an error naming the line for each way a body can be malformed.

#include "llmbench/telemetry/prometheus.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace llmbench::telemetry {
namespace {

Exposition parse_ok(std::string_view text) {
  auto r = parse_exposition(text);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().what());
  return r ? *r : Exposition{};
}

std::string parse_error(std::string_view text) {
  auto r = parse_exposition(text, "test.prom");
  EXPECT_FALSE(r.has_value());
  return r ? "" : r.error().what();
}

TEST(Prometheus, HelpTypeAndSamples) {
  const auto e = parse_ok(
      "# HELP http_requests_total The total number of HTTP requests.\n"
      "# TYPE http_requests_total counter\n"
      "http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
      "http_requests_total{method=\"post\",code=\"400\"}    3 1395066363000\n");
  ASSERT_EQ(e.samples.size(), 2U);
  EXPECT_EQ(e.samples[0].name, "http_requests_total");
  EXPECT_EQ(e.samples[0].value, 1027);
  EXPECT_EQ(e.samples[1].value, 3);
  EXPECT_EQ(e.samples[0].timestamp_ms, 1395066363000);
  EXPECT_EQ(e.samples[0].label("code"), "200");
  EXPECT_EQ(e.samples[0].label("method"), "post");
  EXPECT_FALSE(e.samples[0].label("absent").has_value());
  ASSERT_EQ(e.families.size(), 1U);
  EXPECT_EQ(e.families[0].help, "The total number of HTTP requests.");
  EXPECT_EQ(e.type_of("http_requests_total"), MetricType::Counter);
}

TEST(Prometheus, LabelEscapesAndSeriesKey) {
  const auto e = parse_ok(
      "msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\",error=\"Cannot find "
      "file:\\n\\\"FILE.TXT\\\"\"} 1.458255915e9\n");
  ASSERT_EQ(e.samples.size(), 1U);
  EXPECT_EQ(e.samples[0].label("path"), "C:\\DIR\\FILE.TXT");
  EXPECT_EQ(e.samples[0].label("error"), "Cannot find file:\n\"FILE.TXT\"");
  EXPECT_EQ(e.samples[0].value, 1.458255915e9);
  EXPECT_FALSE(e.samples[0].timestamp_ms.has_value());
  // Sorted by label name, re-escaped: the same key whatever order the server used.
  EXPECT_EQ(e.samples[0].series_key(),
            "msdos_file_access_time_seconds{error=\"Cannot find file:\\n\\\"FILE.TXT\\\"\","
            "path=\"C:\\\\DIR\\\\FILE.TXT\"}");
}

TEST(Prometheus, SpecialFloatsAndSigns) {
  const auto e = parse_ok(
      "a NaN\nb +Inf\nc -Inf\nd -1.5e-3\ne +2\nf 1e+06\ng inf\nh 0.5\n"
      "metric_without_timestamp_and_labels 12.47\n");
  ASSERT_EQ(e.samples.size(), 9U);
  EXPECT_TRUE(std::isnan(e.samples[0].value));
  EXPECT_EQ(e.samples[1].value, HUGE_VAL);
  EXPECT_EQ(e.samples[2].value, -HUGE_VAL);
  EXPECT_EQ(e.samples[3].value, -1.5e-3);
  EXPECT_EQ(e.samples[4].value, 2);
  EXPECT_EQ(e.samples[5].value, 1e6);
  EXPECT_EQ(e.samples[6].value, HUGE_VAL);
  EXPECT_EQ(e.samples[8].value, 12.47);
  EXPECT_FALSE(parse_prometheus_float("1.2.3").has_value());
  EXPECT_FALSE(parse_prometheus_float("").has_value());
  EXPECT_FALSE(parse_prometheus_float("--1").has_value());
  EXPECT_FALSE(parse_prometheus_float("0x10").has_value());
}

TEST(Prometheus, BlankLinesCommentsTrailingCommaAndTabs) {
  const auto e = parse_ok(
      "\n   \n# a plain comment\n#HELP-not-a-keyword x\n"
      "x{a=\"1\",} 1\n"
      "\ty\t{ b = \"2\" }\t2\t-5\n"
      "z{} 3\r\n");
  ASSERT_EQ(e.samples.size(), 3U);
  EXPECT_EQ(e.samples[0].label("a"), "1");
  EXPECT_EQ(e.samples[1].name, "y");
  EXPECT_EQ(e.samples[1].label("b"), "2");
  EXPECT_EQ(e.samples[1].timestamp_ms, -5);
  EXPECT_TRUE(e.samples[2].labels.empty());
  EXPECT_EQ(e.samples[2].value, 3);
  EXPECT_TRUE(e.families.empty());
}

TEST(Prometheus, HistogramAndSummarySamplesBelongToTheirFamily) {
  const auto e = parse_ok(
      "# HELP rpc Help with \\\\ and \\n escapes\n"
      "# TYPE rpc summary\nrpc{quantile=\"0.5\"} 4773\nrpc_sum 1.7560473e+07\nrpc_count 2693\n"
      "# TYPE lat histogram\nlat_bucket{le=\"0.05\"} 24054\nlat_bucket{le=\"+Inf\"} 144320\n"
      "lat_sum 53423\nlat_count 144320\n"
      "plain_sum 1\n");
  EXPECT_EQ(e.type_of("rpc_sum"), MetricType::Summary);
  EXPECT_EQ(e.type_of("rpc_bucket"), MetricType::Untyped);  // summaries have no buckets
  EXPECT_EQ(e.type_of("lat_bucket"), MetricType::Histogram);
  EXPECT_EQ(e.type_of("lat_count"), MetricType::Histogram);
  EXPECT_EQ(e.type_of("plain_sum"), MetricType::Untyped);
  ASSERT_NE(e.family_of("rpc"), nullptr);
  EXPECT_EQ(e.family_of("rpc")->help, "Help with \\ and \n escapes");
  EXPECT_EQ(e.samples[4].label("le"), "+Inf");
}

TEST(Prometheus, ErrorsNameTheLine) {
  EXPECT_EQ(parse_error("ok 1\nbad{a=\"x} 1\n"),
            "test.prom: line 2: label value has no closing quote (column 12) (at byte 5)");
  EXPECT_EQ(parse_error("x{a=\"\\t\"} 1\n"),
            "test.prom: line 1: label value has an unknown escape '\\t' (column 7) (at byte 0)");
  EXPECT_EQ(parse_error("x 1\ny abc\n"),
            "test.prom: line 2: 'abc' is not a float value (column 6) (at byte 4)");
  EXPECT_EQ(parse_error("x\n"),
            "test.prom: line 1: sample 'x' has no value (column 2) (at byte 0)");
  EXPECT_EQ(parse_error("x 1 12.5\n"),
            "test.prom: line 1: '12.5' is not an integer timestamp (ms) (column 9) (at byte 0)");
  EXPECT_EQ(parse_error("x 1 12 extra\n"),
            "test.prom: line 1: unexpected 'extra' after the timestamp (column 8) (at byte 0)");
  EXPECT_EQ(parse_error("# TYPE x countr\n"),
            "test.prom: line 1: unknown metric type 'countr' (valid: counter, gauge, histogram, "
            "summary, untyped) (column 16) (at byte 0)");
  EXPECT_EQ(parse_error("# TYPE x gauge\n# TYPE x gauge\n"),
            "test.prom: line 2: second # TYPE line for 'x' (column 15) (at byte 15)");
  EXPECT_EQ(parse_error("x_sum 1\n# TYPE x summary\n"),
            "test.prom: line 2: # TYPE line for 'x' after its samples (column 17) (at byte 8)");
  EXPECT_EQ(parse_error("9x 1\n"),
            "test.prom: line 1: a sample must start with a metric name, not '9' (column 1) (at "
            "byte 0)");
  EXPECT_EQ(parse_error("x{a=\"1\",a=\"2\"} 1\n"),
            "test.prom: line 1: label 'a' given twice (column 14) (at byte 0)");
  EXPECT_EQ(parse_error("x{a:b=\"1\"} 1\n"),
            "test.prom: line 1: expected '=' after label 'a' (column 4) (at byte 0)");
  EXPECT_EQ(parse_error("x{a=1} 1\n"),
            "test.prom: line 1: expected '\"' to open the value of label 'a' (column 5) (at byte "
            "0)");
  EXPECT_EQ(parse_error("x{a=\"1\" b=\"2\"} 1\n"),
            "test.prom: line 1: expected ',' or '}' after a label value (column 9) (at byte 0)");
  EXPECT_EQ(parse_error("# HELP\n"),
            "test.prom: line 1: # HELP needs a metric name (column 7) (at byte 0)");
  EXPECT_EQ(parse_error("x-y 1\n"),
            "test.prom: line 1: bad character '-' in metric name (column 2) (at byte 0)");
}

TEST(Prometheus, EmptyBodyIsEmpty) {
  const auto e = parse_ok("");
  EXPECT_TRUE(e.samples.empty());
  EXPECT_EQ(metric_type_name(MetricType::Histogram), "histogram");
}

}  // namespace
}  // namespace llmbench::telemetry
