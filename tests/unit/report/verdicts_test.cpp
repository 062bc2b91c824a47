#include "llmbench/report/verdicts.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace llmbench::report {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

/// The badges of `v` as "text/tone" strings.
std::vector<std::string> badges(const RunVerdict& v) {
  std::vector<std::string> out;
  for (const auto& b : v.badges()) out.push_back(b.text + "/" + std::string(to_string(b.tone)));
  return out;
}

const Headline* find(const std::vector<Headline>& list, const std::string& key) {
  for (const auto& h : list) {
    if (h.key == key)
      return &h;
  }
  return nullptr;
}

TEST(RunVerdict, TodaysKeysOfAHealthyAndASickRun) {
  const json healthy = {{"completed", 300},
                        {"failed", 0},
                        {"stable", true},
                        {"stability", {{"reason", "last 3 windows within 10%"}}},
                        {"spikes", {{"list", json::array()}}},
                        {"interrupted", false},
                        {"batching", {{"evaluated", false}, {"fired", false}}}};
  const RunVerdict ok = run_verdict(healthy, nullptr);
  EXPECT_FALSE(ok.valid.has_value());  // a lone run's results do not judge validity
  EXPECT_EQ(ok.steadiness, "stable");
  EXPECT_FALSE(ok.batching_failed.has_value());  // not evaluated: no badge either way
  EXPECT_THAT(badges(ok), ::testing::ElementsAre("stable/good", "no spikes/good"));

  const json sick = {
      {"completed", 90},
      {"failed", 10},
      {"failures_by_kind", {{"http_5xx", 7}, {"timeout", 3}}},
      {"stable", false},
      {"stability", {{"reason", "p99 ITL max/min +40%"}}},
      {"interrupted", true},
      {"spikes",
       {{"list",
         {{{"metric", "itl"},
           {"value_ms", 146.3},
           {"ratio", 8.3},
           {"start_s", 4.0},
           {"end_s", 5.0}},
          {{"metric", "ttft"}, {"value_ms", 600}, {"ratio", 4.7}, {"start_s", 0}, {"end_s", 1}}}}}},
      {"batching", {{"evaluated", true}, {"fired", true}, {"reason", "3 windows shrank"}}},
      {"telemetry", {{"client_saturated", true}, {"client", {{"reasons", {"loop lag 12 ms"}}}}}}};
  const RunVerdict bad = run_verdict(sick, nullptr);
  EXPECT_THAT(badges(bad), ::testing::ElementsAre("unstable/warn", "interrupted/bad",
                                                  "10 failed/bad", "2 spikes/warn",
                                                  "batching failed/bad", "client saturated/bad"));
  EXPECT_EQ(bad.spike_summary, "2 spikes; worst p99 ITL 146 ms, 8.3 × the median window, at 4-5 s");
  EXPECT_EQ(bad.failures, "http_5xx 7, timeout 3");
  const auto h = run_headlines(sick, bad);
  ASSERT_NE(find(h, "failed"), nullptr);
  EXPECT_EQ(find(h, "failed")->text, "10 of 100 requests failed: http_5xx 7, timeout 3");
  EXPECT_EQ(find(h, "batching")->tone, Tone::Bad);
  EXPECT_EQ(find(h, "client")->text, "loop lag 12 ms");
}

TEST(RunVerdict, TheSweepRowFirstAndTheLaterVerdictObject) {
  // A sweep row judges validity; its results say stable.
  const json row = {{"valid", false},
                    {"invalid_reasons", {"p99 ttft is not supported"}},
                    {"stability", "last 3 windows within 10%"},
                    {"spikes", json::array()}};
  const RunVerdict v = run_verdict({{"stable", true}}, &row);
  ASSERT_TRUE(v.valid.has_value());
  EXPECT_FALSE(*v.valid);
  EXPECT_EQ(v.steadiness, "stable");
  EXPECT_EQ(v.steadiness_reason, "last 3 windows within 10%");
  EXPECT_THAT(badges(v), ::testing::ElementsAre("invalid/bad", "stable/good", "no spikes/good"));
  // The per-run verdict object of a later results file wins over today's keys.
  const json later = {{"stable", true},
                      {"verdict",
                       {{"valid", true},
                        {"invalid_reasons", json::array()},
                        {"steadiness", "saturated"},
                        {"steadiness_reason", "the queue grows 12 requests/s"},
                        {"interrupted", false}}}};
  const RunVerdict w = run_verdict(later, nullptr);
  EXPECT_EQ(w.steadiness, "saturated");
  EXPECT_THAT(badges(w), ::testing::ElementsAre("valid/good", "saturated/bad"));
}

/// A sweep of three request rates with an SLO search (as docs/sweep.md writes it).
json slo_sweep() {
  return {{"axes", {{{"name", "request-rate"}}}},
          {"points",
           {{{"index", 0},
             {"axes", {{"request-rate", 1.0}}},
             {"status", "ok"},
             {"p99_ttft_ms", 80.0},
             {"p99_tpot_ms", 10.0},
             {"output_throughput", 245.6},
             {"request_throughput", 0.96},
             {"valid", true}},
            {{"index", 1},
             {"axes", {{"request-rate", 9.0}}},
             {"status", "ok"},
             {"p99_ttft_ms", 101.9},
             {"p99_tpot_ms", 39.99},
             {"output_throughput", 1888.3},
             {"request_throughput", 7.38},
             {"valid", true}},
            {{"index", 2},
             {"axes", {{"request-rate", 9.3}}},
             {"status", "ok"},
             {"p99_ttft_ms", 104.9},
             {"p99_tpot_ms", 40.2},
             {"output_throughput", 1908.3},
             {"request_throughput", 7.45},
             {"valid", false},
             {"invalid_reasons", {"p99 ttft is not supported"}}}}},
          {"slo_search",
           {{"constraints", {"p99_ttft_ms<=1000", "p99_tpot_ms<=40"}},
            {"axis", "request-rate"},
            {"answer", 9.0},
            {"first_failing", 9.3},
            {"converged", true},
            {"reason", "bracket [9, 9.3] within the resolution 0.05"},
            {"points",
             {{{"load", 1.0}, {"meets", true}},
              {{"load", 9.0}, {"meets", true}},
              {{"load", 9.3}, {"meets", false}}}}}}};
}

TEST(SweepHeadlines, TheSloAnswerNamesItsBindingConstraint) {
  const json s = slo_sweep();
  std::vector<RunVerdict> verdicts;
  for (const auto& p : s["points"]) verdicts.push_back(run_verdict(json::object(), &p));
  const auto h = sweep_headlines(s, verdicts);
  const Headline* slo = find(h, "slo");
  ASSERT_NE(slo, nullptr);
  EXPECT_EQ(slo->tone, Tone::Good);
  EXPECT_THAT(slo->text, HasSubstr("p99_ttft_ms<=1000, p99_tpot_ms<=40: highest request-rate "
                                   "meeting it 9"));
  // p99 TPOT 39.99 of 40 is the constraint with the least margin (0.0%): it binds.
  EXPECT_THAT(slo->text, HasSubstr("binding: p99_tpot_ms<=40 (40 at the answer, 0.0% from its "
                                   "bound)"));
  EXPECT_THAT(slo->text, HasSubstr("there 1,888 output tok/s, 7.38 req/s"));
  const Headline* validity = find(h, "validity");
  ASSERT_NE(validity, nullptr);
  EXPECT_EQ(validity->text, "1 of 3 points invalid; most often: p99 ttft is not supported");
  EXPECT_EQ(validity->tone, Tone::Warn);
  // A later sweep JSON's own binding constraint is taken as it is.
  json later = s;
  later["slo_search"]["binding"] = "p99_tpot_ms<=40";
  later["slo_search"]["answer_rounded"] = "9.0";
  EXPECT_THAT(find(sweep_headlines(later, verdicts), "slo")->text,
              HasSubstr("meeting it 9.0; binding: p99_tpot_ms<=40; there"));
}

TEST(SweepHeadlines, KneePerConfigurationAndNoAnswer) {
  const json s = {
      {"axes", {{{"name", "max-num-seqs"}}, {{"name", "max-concurrency"}}}},
      {"points", json::array()},
      {"knee",
       {{{"group", "max-num-seqs=64"},
         {"load_axis", "max-concurrency"},
         {"saturation_output_throughput", 1715.9},
         {"throughput_knee", {{"found", true}, {"load", 64.0}, {"output_throughput", 1715.9}}},
         {"latency_knee", {{"found", false}}}},
        {{"group", "max-num-seqs=256"},
         {"load_axis", "max-concurrency"},
         {"throughput_knee", {{"found", false}, {"reason", "the curve has not bent"}}}}}}};
  const auto h = sweep_headlines(s, {});
  const Headline* knee = find(h, "knee");
  ASSERT_NE(knee, nullptr);
  EXPECT_EQ(knee->text,
            "max-num-seqs=64: throughput stops growing at max-concurrency 64 (1,716 tok/s); "
            "saturation 1,716 tok/s. max-num-seqs=256: no throughput knee: the curve has not "
            "bent");
  json none = slo_sweep();
  none["slo_search"]["answer"] = nullptr;
  none["slo_search"]["reason"] = "LO misses p99_tpot_ms<=40";
  const Headline* slo = find(sweep_headlines(none, {}), "slo");
  ASSERT_NE(slo, nullptr);
  EXPECT_EQ(slo->tone, Tone::Bad);
  EXPECT_THAT(slo->text, HasSubstr("no request-rate meets it. LO misses"));
}

TEST(PointMeetsSlo, TheSearchsOwnVerdictElseTheBounds) {
  const json s = slo_sweep();
  EXPECT_EQ(point_meets_slo(s, s["points"][2], 9.3), false);
  EXPECT_EQ(point_meets_slo(s, s["points"][1], 9.0), true);
  // A load the search did not record: read against the bounds.
  EXPECT_EQ(point_meets_slo(s, {{"p99_ttft_ms", 10.0}, {"p99_tpot_ms", 41.0}}, 5.0), false);
  EXPECT_EQ(point_meets_slo(s, {{"p99_ttft_ms", 10.0}, {"p99_tpot_ms", 39.0}}, 5.0), true);
  EXPECT_FALSE(point_meets_slo(s, {{"p99_ttft_ms", 10.0}}, 5.0).has_value());
  EXPECT_FALSE(point_meets_slo({{"points", json::array()}}, s["points"][1], 9.0).has_value());
  EXPECT_THAT(broken_constraints(s, s["points"][2]),
              ::testing::ElementsAre("p99_tpot_ms 40.2 > 40"));
}

}  // namespace
}  // namespace llmbench::report
