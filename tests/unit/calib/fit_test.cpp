// The calibration library: points read from CSV and benchmark summaries, selection and hold-out,
// the probe plan, and a fit that must recover parameters it did not see from points simulated
// with them (and say which ones such points cannot pin).

#include "llmbench/calib/fit.hpp"

#include "llmbench/calib/points.hpp"
#include "llmbench/calib/probes.hpp"
#include "llmbench/calib/report.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/sim/calibration_file.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace llmbench::calib {
namespace {

const std::string kData = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";

TEST(Points, CsvRowsWithRangesMetricsAndTags) {
  const std::string csv =
      "config,gpu,isl,osl,input_min,input_max,output_min,output_max,concurrency,num_prompts,"
      "ttft_mean_ms,ttft_median_ms,tpot_mean_ms,output_tok_s_per_gpu,num_gpus,source_url\n"
      "a,h200,1024,1024,819,1024,819,1024,8,80,244.86,148.69,12.47,77.05,8,https://x/1\n"
      "# a comment line\n"
      "a,h200,8192,1024,6553,8192,819,1024,32,,993.7,,31.97,118.7,8,https://x/2\n";
  const auto p = read_points_csv(csv, "points.csv");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].workload.input_min, 819);
  EXPECT_EQ(p[0].workload.output_max, 1024);
  EXPECT_EQ(p[0].workload.max_concurrency, 8);
  EXPECT_EQ(p[1].workload.num_prompts, 320);  // 10 x concurrency when not given
  EXPECT_DOUBLE_EQ(p[0].measured.ttft_mean_ms, 244.86);
  EXPECT_TRUE(std::isnan(p[1].measured.ttft_median_ms));
  EXPECT_EQ(p[1].tags.at("isl"), "8192");
  EXPECT_EQ(p[0].source, "https://x/1");
  EXPECT_EQ(p[0].label, "1024/1024 c8");
  std::vector<Point> fit, held;
  split_holdout(p, {parse_filter("isl=8192", "--holdout")}, fit, held);
  ASSERT_EQ(fit.size(), 1u);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].workload.input_max, 8192);
  EXPECT_EQ(select_points(p, {parse_filter("concurrency=4,32", "--select")}).size(), 1u);
  try {
    (void)read_points_csv("isl,osl,concurrency\n1024,128,abc\n", "bad.csv");
    FAIL();
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, "bad.csv");
    EXPECT_NE(e.error().message.find("line 2, column 'concurrency'"), std::string::npos);
  }
  EXPECT_THROW((void)parse_filter("isl", "--holdout"), Exception);
}

TEST(Points, VllmAndSglangSummaries) {
  // vllm bench serve --save-result (lengths listed per request).
  const std::string vllm = R"({"backend": "vllm", "completed": 3, "max_concurrency": 2,
    "request_rate": "inf", "duration": 10.0, "total_input_tokens": 300, "total_output_tokens": 60,
    "output_throughput": 6.0, "total_token_throughput": 36.0, "mean_ttft_ms": 50.0,
    "median_ttft_ms": 40.0, "p99_ttft_ms": 90.0, "mean_tpot_ms": 20.0,
    "input_lens": [100, 120, 80], "output_lens": [20, 20, 20]})";
  const auto v = read_summary_json(vllm, "vllm.json", 2);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].workload.input_lens, (std::vector<std::int64_t>{100, 120, 80}));
  EXPECT_EQ(v[0].workload.max_concurrency, 2);
  EXPECT_DOUBLE_EQ(v[0].measured.output_tok_s_per_gpu, 3.0);
  EXPECT_FALSE(std::isfinite(v[0].workload.request_rate));
  // SGLang bench_serving JSONL: random lengths in [len·ratio, len].
  const std::string sglang =
      R"({"backend": "sglang", "completed": 80, "max_concurrency": 8, "random_input_len": 1000, "random_output_len": 500, "random_range_ratio": 0.5, "mean_ttft_ms": 300, "mean_tpot_ms": 12.5, "output_throughput": 600})"
      "\n"
      R"({"backend": "sglang", "completed": 160, "max_concurrency": 16, "random_input_len": 1000, "random_output_len": 500, "random_range_ratio": 0.5, "mean_ttft_ms": 320, "mean_tpot_ms": 17.0})"
      "\n";
  const auto s = read_summary_json(sglang, "sglang.jsonl", 8);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].workload.input_min, 500);
  EXPECT_EQ(s[0].workload.output_min, 250);
  EXPECT_DOUBLE_EQ(s[0].measured.output_tok_s_per_gpu, 75.0);
  EXPECT_EQ(s[1].workload.num_prompts, 160);
  EXPECT_EQ(s[1].source, "sglang.jsonl:2");
  EXPECT_THROW((void)read_summary_json(R"({"mean_ttft_ms": 1})", "x.json", 1), Exception);
}

TEST(Points, AFilterValueEndingInAStarIsAPrefix) {
  Point a, b;
  a.tags["file"] = "sweep-in256-c1";
  b.tags["file"] = "probe-01-prefill";
  const Filter f = parse_filter("file=sweep-*,probe-02*", "--holdout");
  EXPECT_TRUE(f.matches(a));
  EXPECT_FALSE(f.matches(b));
  EXPECT_TRUE(parse_filter("file=probe-01-prefill", "--select").matches(b));
  EXPECT_FALSE(parse_filter("file=probe-01", "--select").matches(b));  // no star: exact
}

TEST(Points, LlamaCppSlotsCarryWhatRanBeforeOnTheSameServer) {
  // Three runs on one server, given out of order, and one on another server.
  const auto point = [](std::string url, std::string date, std::int64_t in, std::int64_t n) {
    Point p;
    p.tags["base_url"] = std::move(url);
    p.tags["date"] = std::move(date);
    p.workload.input_min = p.workload.input_max = in;
    p.workload.output_min = p.workload.output_max = 10;
    p.workload.num_prompts = n;
    return p;
  };
  std::vector<Point> points{
      point("http://a", "20261206-0502", 1000, 1), point("http://a", "20261206-0501", 100, 3),
      point("http://b", "20261206-0503", 50, 1), point("http://a", "20261206-0503", 20, 2)};
  points.push_back(Point{});  // no server: starts fresh
  chain_slot_history(points, 4);
  EXPECT_TRUE(points[1].slot_cells_before.empty());  // the first run of server a
  // After three 100 + 10 − 1 = 109-cell requests in slots 0-2 (slot 3 still empty, oldest).
  EXPECT_EQ(points[0].slot_cells_before, (std::vector<std::int64_t>{0, 109, 109, 109}));
  // Then the 1000-token request took slot 3.
  EXPECT_EQ(points[3].slot_cells_before, (std::vector<std::int64_t>{109, 109, 109, 1009}));
  EXPECT_TRUE(points[2].slot_cells_before.empty());  // another server
  EXPECT_TRUE(points[4].slot_cells_before.empty());
}

TEST(Probes, AtMostTwentyAndCoverPrefillDecodeMixedAndTheWindow) {
  const auto plan =
      probe_plan(ProbeLimits{.max_concurrency = 16, .max_input_len = 1024, .output_len = 64});
  EXPECT_LE(plan.size(), kMaxProbes);
  EXPECT_EQ(plan.size(), 12u);
  int prefill = 0, decode = 0, mixed = 0;
  for (const auto& p : plan) {
    prefill += p.kind == "prefill";
    decode += p.kind == "decode";
    mixed += p.kind == "mixed";
    EXPECT_LE(p.workload.max_concurrency, 16);
    EXPECT_LE(p.workload.input_max, 1024);
  }
  EXPECT_EQ(prefill, 3);
  EXPECT_EQ(decode, 5);
  // The decode batches double from one sequence to every slot.
  std::vector<std::int64_t> ladder;
  for (const auto& p : plan) {
    if (p.kind == "decode")
      ladder.push_back(p.workload.max_concurrency);
  }
  EXPECT_EQ(ladder, (std::vector<std::int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(mixed, 3);
  // Last, right after the probe that fills every slot with the longest prompts: one sequence
  // alone, decoding over the window the other slots' cells make.
  ASSERT_EQ(plan.back().kind, "window");
  EXPECT_EQ(plan[plan.size() - 2].workload.input_max, 1024);
  EXPECT_EQ(plan[plan.size() - 2].workload.max_concurrency, 16);
  EXPECT_EQ(plan.back().workload.max_concurrency, 1);
  EXPECT_EQ(plan.back().workload.output_max, 64);
  // One slot: the decode probes at 1, 1/8, 1/4, 1/2 and all slots collapse into one, and a lone
  // slot leaves no other slot's cells to make a window.
  EXPECT_EQ(probe_plan(ProbeLimits{.max_concurrency = 1}).size(), 7u);
}

/// Points "measured" by simulating `truth` (so the fit's target is known exactly).
std::vector<Point> synthetic_points(const sim::EngineSpec& truth) {
  std::vector<Point> points;
  for (const auto& [in, out, conc] :
       {std::tuple{256, 128, 1}, std::tuple{2048, 32, 1}, std::tuple{256, 128, 16},
        std::tuple{1024, 64, 8}, std::tuple{2048, 64, 32}}) {
    Point p;
    p.workload.input_min = p.workload.input_max = in;
    p.workload.output_min = p.workload.output_max = out;
    p.workload.max_concurrency = conc;
    p.workload.num_prompts = 4 * conc;
    p.measured = predict(truth, p);
    p.label = std::to_string(in) + "/" + std::to_string(out) + " c" + std::to_string(conc);
    points.push_back(p);
  }
  return points;
}

TEST(Fit, RecoversTheParametersItWasNotShown) {
  sim::EngineOverrides o;
  o.model_profile = "deepseek-v2-lite";
  o.gpu = "h100";
  o.tp = 1;
  const sim::EngineSpec start = sim::load_engine_spec(kData, o);
  sim::EngineSpec truth = start;
  set_param(truth, Param::Memory, 0.55);
  set_param(truth, Param::Compute, 0.30);
  set_param(truth, Param::StepOverhead, 4000);
  set_param(truth, Param::ApiOverhead, 30000);
  const auto points = synthetic_points(truth);
  FitOptions opt;
  opt.params = {Param::Memory, Param::Compute, Param::StepOverhead, Param::ApiOverhead,
                Param::FirstStepOverhead};
  const FitResult r = fit(start, points, opt);
  const auto value = [&](Param p) {
    for (const auto& x : r.params)
      if (x.param == p)
        return x;
    return ParamResult{};
  };
  EXPECT_NEAR(value(Param::Memory).value, 0.55, 0.55 * 0.05);
  EXPECT_NEAR(value(Param::Compute).value, 0.30, 0.30 * 0.10);
  EXPECT_NEAR(value(Param::StepOverhead).value, 4000, 4000 * 0.10);
  EXPECT_NEAR(value(Param::ApiOverhead).value, 30000, 30000 * 0.05);
  EXPECT_TRUE(value(Param::Memory).identified);
  EXPECT_TRUE(value(Param::ApiOverhead).identified);
  // The truth has no warm-up; closed loops from an idle engine cannot tell a tiny W from none:
  // either it is left at its default (0) as not identified, or fitted to almost nothing.
  EXPECT_LT(value(Param::FirstStepOverhead).value, 2000);
  EXPECT_LT(mape(r.points, Metric::Tpot), 1.0);
  EXPECT_LT(mape(r.points, Metric::TtftMean), 2.0);
  // The file round-trips through the reader of `--calibration`.
  Calibration c;
  c.fit = r;
  c.engine_version = "test";
  const sim::Calibration back = sim::parse_calibration(calibration_json(c), "fit.json");
  EXPECT_NEAR(back.cost_model.memory, r.spec.efficiency.memory, 1e-12);
  EXPECT_NEAR(back.serving.api_overhead_us, r.spec.engine.overheads.api_overhead_us, 1e-9);
  EXPECT_EQ(back.target.model_profile, "deepseek-v2-lite");
  EXPECT_EQ(back.target.tp, 1);
}

TEST(Fit, FitsTheOneTokenScoreCostOnlyForLlamaCppOnACpu) {
  sim::EngineOverrides o;
  o.engine = "llamacpp";
  o.model_profile = "ds2-random-tiny";
  o.gpu = "cpu-host";
  EXPECT_TRUE(applies_to(sim::load_engine_spec(kData, o), Param::VecScoreOverhead));
  o.gpu = "h100";  // CUDA runs a one-token product as one kernel, no call per score
  EXPECT_FALSE(applies_to(sim::load_engine_spec(kData, o), Param::VecScoreOverhead));
  o.gpu = "cpu-host";
  o.engine = "vllm";
  o.tp = 1;
  EXPECT_FALSE(applies_to(sim::load_engine_spec(kData, o), Param::VecScoreOverhead));
  EXPECT_EQ(parse_param("vec_score_overhead_us"), Param::VecScoreOverhead);
}

TEST(Fit, SaysWhatTheDataCannotIdentify) {
  sim::EngineOverrides o;
  o.model_profile = "deepseek-v2-lite";
  o.gpu = "h100";
  o.tp = 1;
  const sim::EngineSpec start = sim::load_engine_spec(kData, o);
  // Decode-only points of short prompts: prefill compute barely moves any figure.
  std::vector<Point> points;
  for (const int conc : {1, 4, 16}) {
    Point p;
    p.workload.input_min = p.workload.input_max = 8;
    p.workload.output_min = p.workload.output_max = 256;
    p.workload.max_concurrency = conc;
    p.workload.num_prompts = conc;
    p.measured = predict(start, p);
    p.measured.ttft_mean_ms = p.measured.ttft_median_ms = kMissing;
    points.push_back(p);
  }
  FitOptions opt;
  opt.params = {Param::Memory, Param::Compute};
  const FitResult r = fit(start, points, opt);
  ASSERT_EQ(r.params.size(), 2u);
  EXPECT_TRUE(r.params[0].identified);
  EXPECT_FALSE(r.params[1].identified);
  EXPECT_DOUBLE_EQ(r.params[1].value, start.efficiency.compute);  // kept the default
}

}  // namespace
}  // namespace llmbench::calib
