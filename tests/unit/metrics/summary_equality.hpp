#pragma once
// Field-by-field equality of two `metrics::Summary`s (doubles compared exactly), for tests that
// compute one summary two ways.

#include "llmbench/metrics/summary.hpp"

#include <gtest/gtest.h>

#include <string>

namespace llmbench::metrics::testing {

inline void expect_same_stats(const Stats& a, const Stats& b, const std::string& what) {
  EXPECT_EQ(a.count, b.count) << what;
  EXPECT_EQ(a.mean, b.mean) << what;
  EXPECT_EQ(a.median, b.median) << what;
  EXPECT_EQ(a.std, b.std) << what;
  EXPECT_EQ(a.min, b.min) << what;
  EXPECT_EQ(a.max, b.max) << what;
  EXPECT_EQ(a.percentiles, b.percentiles) << what;
}

/// Every field of `a` equals that of `b`; `context` names the case in failure messages.
inline void expect_same_summary(const Summary& a, const Summary& b, const std::string& context) {
  EXPECT_EQ(a.total, b.total) << context;
  EXPECT_EQ(a.completed, b.completed) << context;
  EXPECT_EQ(a.failed, b.failed) << context;
  EXPECT_EQ(a.failures_by_kind, b.failures_by_kind) << context;
  EXPECT_EQ(a.duration_s, b.duration_s) << context;
  EXPECT_EQ(a.total_input_tokens, b.total_input_tokens) << context;
  EXPECT_EQ(a.total_output_tokens, b.total_output_tokens) << context;
  EXPECT_EQ(a.request_throughput, b.request_throughput) << context;
  EXPECT_EQ(a.output_throughput, b.output_throughput) << context;
  EXPECT_EQ(a.total_token_throughput, b.total_token_throughput) << context;
  EXPECT_EQ(a.good_requests, b.good_requests) << context;
  EXPECT_EQ(a.request_goodput, b.request_goodput) << context;
  EXPECT_EQ(a.max_output_tokens_per_s, b.max_output_tokens_per_s) << context;
  EXPECT_EQ(a.max_concurrent_requests, b.max_concurrent_requests) << context;
  EXPECT_EQ(a.token_count_mismatches, b.token_count_mismatches) << context;
  EXPECT_EQ(a.usage_missing, b.usage_missing) << context;
  EXPECT_EQ(a.output_tokens_counted_locally, b.output_tokens_counted_locally) << context;
  EXPECT_EQ(a.prompt_token_mismatches, b.prompt_token_mismatches) << context;
  expect_same_stats(a.ttft_ms, b.ttft_ms, context + " ttft");
  expect_same_stats(a.ttfat_ms, b.ttfat_ms, context + " ttfat");
  expect_same_stats(a.ttft_sched_ms, b.ttft_sched_ms, context + " ttft_sched");
  expect_same_stats(a.tpot_ms, b.tpot_ms, context + " tpot");
  expect_same_stats(a.itl_ms, b.itl_ms, context + " itl");
  expect_same_stats(a.inter_chunk_ms, b.inter_chunk_ms, context + " inter_chunk");
  expect_same_stats(a.e2el_ms, b.e2el_ms, context + " e2el");
  expect_same_stats(a.e2el_sched_ms, b.e2el_sched_ms, context + " e2el_sched");
  expect_same_stats(a.lateness_ms, b.lateness_ms, context + " lateness");
}

}  // namespace llmbench::metrics::testing
