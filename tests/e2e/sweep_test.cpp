// End to end: `llmbench sweep` against the built-in simulated server (started once for the
// sweep) and with `--simulate`; every point's results and records, the sweep JSON and CSV, and
// the monotone sanity of a concurrency ladder (docs/sweep.md).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sweep_fixture.hpp"
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST_F(SweepTest, ConcurrencyLadderAgainstTheBuiltInServer) {
  ASSERT_EQ(sweep({"--sweep", "max-concurrency=1,4", "--num-prompts", "24", "--dataset-name",
                   "random", "--random-input-len", "32", "--random-output-len", "16",
                   "--server-timing", "fixed", "--server-ttft-ms", "20", "--server-itl-ms", "5"}),
            0)
      << read_file(log().string());
  const json doc = sweep_json();
  EXPECT_EQ(doc.at("mode"), "run");
  ASSERT_EQ(doc.at("points").size(), 2U);
  expect_point_files(doc, 24);
  EXPECT_EQ(csv_lines().size(), 3U);  // header + 2 points
  const auto& p = doc.at("points");
  EXPECT_EQ(p[0].at("axes").at("max-concurrency"), 1);
  EXPECT_EQ(p[1].at("max_concurrent_requests"), 4);
  // Four requests at once on a server with room for 256: more than twice the throughput.
  EXPECT_GT(p[1].at("output_throughput").get<double>(),
            2 * p[0].at("output_throughput").get<double>());
  // One server for the whole sweep.
  const std::string text = read_file(log().string());
  EXPECT_EQ(text.find("started the built-in server"), text.rfind("started the built-in server"));
}

TEST_F(SweepTest, SimulateSweepsAnEngineKnobAndTheLoad) {
  ASSERT_EQ(sweep({"--simulate", "--sweep", "max-num-seqs=2,64", "--sweep",
                   "max-concurrency=1:16:x4", "--num-prompts", "100"}),
            0)
      << read_file(log().string());
  const json doc = sweep_json();
  EXPECT_EQ(doc.at("mode"), "simulate");
  ASSERT_EQ(doc.at("points").size(), 6U);
  expect_point_files(doc, 100);
  EXPECT_EQ(csv_lines().size(), 7U);
  const auto& p = doc.at("points");
  auto tput = [&](std::size_t i) { return p[i].at("output_throughput").get<double>(); };
  // max-num-seqs 2 caps the batch: concurrency 16 is no faster than 4 there, and much slower
  // than with max-num-seqs 64.
  EXPECT_GT(tput(1), tput(0));
  EXPECT_LT(tput(2), 1.1 * tput(1));
  EXPECT_GT(tput(4), tput(3));
  EXPECT_GT(tput(5), 3 * tput(2));
  EXPECT_LE(p[2].at("max_concurrent_requests").get<int>(), 16);
  // One knee entry per max-num-seqs value, each over the concurrency axis.
  ASSERT_EQ(doc.at("knee").size(), 2U);
  EXPECT_EQ(doc.at("knee")[0].at("group"), "max-num-seqs=2");
  EXPECT_EQ(doc.at("knee")[0].at("load_axis"), "max-concurrency");
  EXPECT_DOUBLE_EQ(doc.at("knee")[1].at("saturation_output_throughput").get<double>(), tput(5));
  // Both queue models are fitted to each group's three points, with their fit error.
  for (const auto& g : doc.at("knee")) {
    for (const char* model : {"mm1_latency", "knee_model"}) {
      const json& fit = g.at("fits").at(model);
      EXPECT_EQ(fit.at("points"), 3) << fit.dump();
      if (fit.at("ok").get<bool>()) {
        EXPECT_GE(fit.at("rms_relative_error").get<double>(), 0.0) << fit.dump();
      }
    }
  }
  EXPECT_TRUE(doc.at("knee")[1].at("fits").at("knee_model").at("ok").get<bool>());
  // The Pareto frontier over both configurations: no point beats a frontier point on both
  // throughput per GPU (8 GPUs here: tp 8) and interactivity, and the busiest point is on it.
  const json& front = doc.at("pareto").at("points");
  ASSERT_FALSE(front.empty());
  bool busiest = false;
  for (const auto& f : front) {
    const double x = f.at("interactivity").get<double>();
    const double y = f.at("throughput_per_gpu").get<double>();
    const auto& row = p[f.at("index").get<std::size_t>()];
    EXPECT_NEAR(x, 1000.0 / row.at("mean_tpot_ms").get<double>(), 1e-9);
    EXPECT_NEAR(y, row.at("output_throughput").get<double>() / 8, 1e-9);
    busiest = busiest || f.at("index") == 5;
    for (const auto& q : p) {
      const double qx = 1000.0 / q.at("mean_tpot_ms").get<double>();
      const double qy = q.at("output_throughput").get<double>() / 8;
      EXPECT_FALSE(qx >= x && qy >= y && (qx > x || qy > y)) << q.dump();
    }
  }
  EXPECT_TRUE(busiest) << front.dump();
}

TEST_F(SweepTest, SloSearchWithSimulate) {
  ASSERT_EQ(sweep({"--simulate", "--sweep", "request-rate=1:64", "--slo",
                   "p99_ttft_ms<=2000,p99_tpot_ms<=80", "--num-prompts", "1000"}),
            0)
      << read_file(log().string());
  const json doc = sweep_json();
  const json& s = doc.at("slo_search");
  ASSERT_TRUE(s.at("answer").is_number()) << s.dump();
  EXPECT_TRUE(s.at("converged").get<bool>()) << s.dump();
  const double answer = s.at("answer").get<double>();
  const double failing = s.at("first_failing").get<double>();
  EXPECT_LE(failing - answer, 0.05 * answer);
  EXPECT_LE(doc.at("points").size(), 10U);
  EXPECT_EQ(s.at("points").size(), doc.at("points").size());
  // The point at the answer meets both constraints; the first failing one misses one.
  for (const auto& p : doc.at("points")) {
    const double rate = p.at("axes").at("request-rate").get<double>();
    const bool meets =
        p.at("p99_ttft_ms").get<double>() <= 2000 && p.at("p99_tpot_ms").get<double>() <= 80;
    EXPECT_EQ(meets, rate <= answer) << p.dump();
    EXPECT_EQ(p.at("samples"), 1000);
  }
}

/// Acceptance: the SLO search lands within 5% of the true highest rate, found by a
/// fine simulated sweep of the same workload, in at most 10 points, on two different SLOs.
TEST_F(SweepTest, SloSearchLandsWithinFivePercentOfAFineSweepOnTwoSlos) {
  ASSERT_EQ(sweep({"--simulate", "--sweep", "request-rate=32:42:+0.25", "--num-prompts", "1000"}),
            0)
      << read_file(log().string());
  const json fine = sweep_json().at("points");
  const std::vector<std::string> slos{"p99_ttft_ms<=500", "p99_ttft_ms<=2000,p99_tpot_ms<=80"};
  const auto meets = [](const json& p, std::size_t slo) {
    const double ttft = p.at("p99_ttft_ms").get<double>();
    return slo == 0 ? ttft <= 500 : ttft <= 2000 && p.at("p99_tpot_ms").get<double>() <= 80;
  };
  for (std::size_t slo = 0; slo < slos.size(); ++slo) {
    // The truth: the highest rate of the fine grid before the first one that misses.
    double truth = std::nan("");
    for (const auto& p : fine) {
      if (!meets(p, slo))
        break;
      truth = p.at("axes").at("request-rate").get<double>();
    }
    ASSERT_TRUE(std::isfinite(truth)) << slos[slo];
    ASSERT_LT(truth, 42.0) << slos[slo] << ": the grid must bracket the answer";
    ASSERT_EQ(sweep({"--simulate", "--sweep", "request-rate=1:64", "--slo", slos[slo],
                     "--num-prompts", "1000"}),
              0)
        << read_file(log().string());
    const json doc = sweep_json();
    const double answer = doc.at("slo_search").at("answer").get<double>();
    std::printf("SLO %s: search answer %.3f req/s in %zu points; fine sweep (step 0.25) %.2f\n",
                slos[slo].c_str(), answer, doc.at("points").size(), truth);
    EXPECT_LE(std::abs(answer - truth), 0.05 * truth) << slos[slo];
    EXPECT_LE(doc.at("points").size(), 10U);
    for (const auto& p : doc.at("slo_search").at("points")) {
      EXPECT_TRUE(p.at("p99_ci").at("ttft").at("supported").get<bool>()) << p.dump();
    }
  }
}

TEST_F(SweepTest, AFailedPointIsReportedAndTheSweepGoesOn) {
  EXPECT_EQ(sweep({"--simulate", "--sweep", "gpu=h200,no-such-gpu,mi300x", "--num-prompts", "20"}),
            1);
  const json doc = sweep_json();
  ASSERT_EQ(doc.at("points").size(), 3U);
  EXPECT_EQ(doc.at("points")[0].at("status"), "ok");
  EXPECT_EQ(doc.at("points")[1].at("status"), "failed");
  EXPECT_NE(doc.at("points")[1].at("error").get<std::string>().find("no-such-gpu"),
            std::string::npos);
  EXPECT_EQ(doc.at("points")[2].at("status"), "ok");
}

TEST_F(SweepTest, BadAxisIsAUsageError) {
  EXPECT_EQ(sweep({"--simulate", "--sweep", "max-concurrency=1,x"}), 2);
  EXPECT_NE(read_file(log().string()).find("--sweep: 'x' is not a whole number"), std::string::npos)
      << read_file(log().string());
  EXPECT_EQ(sweep({"--sweep", "max-num-seqs=1,2"}), 2);  // an engine knob without --simulate
  EXPECT_EQ(
      sweep({"--simulate", "--base-url", "http://127.0.0.1:1", "--sweep", "max-concurrency=1"}), 2);
}

}  // namespace
}  // namespace llmbench::e2e
