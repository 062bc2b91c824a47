// End to end: the rules of `llmbench sweep` against the built-in server with its timing
// perturbed at known times (docs/sweep.md "Spikes", "Extending a point"): stalls are found as
// spikes where they happened and a clean run has none; a latency drift makes the stability rule
// extend the point, a clean server does not.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sweep_fixture.hpp"
#include <set>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

using nlohmann::json;

class SweepRulesTest : public SweepTest {
 protected:
  /// One `run` point against the fixed timing: `c` requests at once, TTFT = ITL = `step_ms`,
  /// `tokens` output tokens, plus `extra`.
  json point(int c, std::int64_t prompts, int step_ms, int tokens, std::vector<std::string> extra) {
    std::vector<std::string> args{"--sweep",
                                  "max-concurrency=" + std::to_string(c),
                                  "--num-prompts",
                                  std::to_string(prompts),
                                  "--dataset-name",
                                  "random",
                                  "--random-input-len",
                                  "32",
                                  "--random-output-len",
                                  std::to_string(tokens),
                                  "--server-timing",
                                  "fixed",
                                  "--server-ttft-ms",
                                  std::to_string(step_ms),
                                  "--server-itl-ms",
                                  std::to_string(step_ms)};
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(sweep(args), 0) << read_file(log().string());
    const json doc = sweep_json();
    EXPECT_EQ(doc.at("points").size(), 1U);
    return doc.at("points").at(0);
  }
  json results_of(const json& p) const {
    return json::parse(
        read_file((dir_ / "out" / p.at("results_file").get<std::string>()).string()));
  }
};

TEST_F(SweepRulesTest, StallsAreFoundAsSpikesWhereTheyHappened) {
  // The server's clock stops for 0.6 s at 2.1 s and 5.1 s (wall) after its first request (the
  // run's first send, within a millisecond): the first chunk after each stall lands in
  // [2 s, 3 s) and [5 s, 6 s), with an ITL of about 700 ms against 100 ms: 7 x the baseline.
  // 100 ms steps keep the loopback's jitter on a loaded machine (a hiccup of 130 ms was seen in
  // CI, 4 x a 20 ms step) well under the 3 x rule; 16 streams give about 140 ITL samples a
  // window. Sixteen streams of 8 tokens 100 ms apart (0.8 s a request), 180 requests: about
  // 10 s with the stalls.
  const json p = point(16, 180, 100, 8, {"--server-stall", "2.1:0.6", "--server-stall", "5.1:0.6"});
  const json spikes = results_of(p).at("spikes");
  std::set<int> windows;
  for (const auto& s : spikes.at("list")) {
    windows.insert(static_cast<int>(s.at("start_s").get<double>() + 0.5));
    EXPECT_GT(s.at("ratio").get<double>(), 3.0) << s.dump();
    EXPECT_GE(s.at("max_in_flight").get<int>(), 1) << s.dump();
  }
  EXPECT_EQ(windows, (std::set<int>{2, 5})) << spikes.dump();
  bool itl_at_2 = false;
  for (const auto& s : spikes.at("list")) {
    if (s.at("metric") == "itl" && static_cast<int>(s.at("start_s").get<double>() + 0.5) == 2) {
      itl_at_2 = true;
      EXPECT_GT(s.at("value_ms").get<double>(), 600.0) << s.dump();
    }
  }
  EXPECT_TRUE(itl_at_2) << spikes.dump();
  // 100 ms plus the loopback's lateness on a loaded machine.
  EXPECT_GE(spikes.at("itl_baseline_ms").get<double>(), 99.0);
  EXPECT_LT(spikes.at("itl_baseline_ms").get<double>(), 150.0);
  EXPECT_EQ(p.at("spikes").size(), 1U);  // the point's one summary line
  // One summary line per point (spikes summarized, not listed line by line).
  const std::string out = read_file(log().string());
  const auto line = out.find("point 0: spikes: ");
  ASSERT_NE(line, std::string::npos) << out;
  EXPECT_NE(out.substr(line, out.find('\n', line) - line).find("(worst: p99 "), std::string::npos)
      << out;

  // The same run without stalls, as long: no spike.
  const json clean = point(16, 180, 100, 8, {});
  EXPECT_TRUE(results_of(clean).at("spikes").at("list").empty())
      << results_of(clean).at("spikes").dump();
  EXPECT_TRUE(clean.at("spikes").empty());
}

TEST_F(SweepRulesTest, ADriftingServerIsExtendedUntilStableAndACleanOneIsNot) {
  // 32 streams of 8 tokens 100 ms apart (0.8 s a request, 40 requests/s; 100 ms steps keep the
  // loopback's jitter a few percent of the p99 ITL). Latency starts at twice the set one and
  // settles over 8 s of the server's clock (12 s of wall time): the first trial (240 requests,
  // 6 s of the server's clock, about 10 s) ends inside the drift and is not stable; a later one
  // (480 requests, then 960) runs long enough past it for the trend test to call it stable.
  const json p = point(32, 240, 100, 8, {"--server-drift", "2:8", "--max-trials", "3"});
  ASSERT_GE(p.at("trials").get<int>(), 2) << p.dump();  // earlier_results[0] is read below
  EXPECT_TRUE(p.at("stable").get<bool>()) << p.dump();
  ASSERT_EQ(p.at("earlier_results").size(), p.at("trials").get<std::size_t>() - 1);
  const json first = json::parse(
      read_file((dir_ / "out" / p.at("earlier_results")[0].get<std::string>()).string()));
  EXPECT_FALSE(first.at("stable").get<bool>()) << first.at("stability").dump();
  EXPECT_EQ(first.at("completed"), 240);
  EXPECT_EQ(p.at("samples"), 240 << (p.at("trials").get<int>() - 1));

  // The clean server over 12 s (480 requests): enough windows for the trend test to judge (a
  // 6 s point, 240 requests, is too short to show a trend either way, and is extended too).
  const json clean = point(32, 480, 100, 8, {"--max-trials", "3"});
  EXPECT_EQ(clean.at("trials"), 1) << clean.dump();
  EXPECT_TRUE(clean.at("stable").get<bool>()) << clean.dump();
  EXPECT_TRUE(clean.at("earlier_results").empty());
}

TEST_F(SweepRulesTest, HeavyPreemptionMakesTheBatchingRuleFire) {
  // 64 requests of 1024 + 128 tokens at once: 300 KV blocks of 64 tokens hold about 16 of them,
  // so the batch stays near 16 while about 48 wait, and the engine preempts; with the blocks
  // the GPU has, all 64 run and none waits.
  const std::vector<std::string> base{"--simulate",
                                      "--sweep",
                                      "max-concurrency=64",
                                      "--num-prompts",
                                      "400",
                                      "--random-input-len",
                                      "1024",
                                      "--random-output-len",
                                      "128"};
  auto few = base;
  few.insert(few.end(), {"--num-gpu-blocks-override", "300"});
  ASSERT_EQ(sweep(few), 0) << read_file(log().string());
  const json p = sweep_json().at("points").at(0);
  EXPECT_TRUE(p.at("batching_failed").get<bool>()) << p.dump();
  const json b = results_of(p).at("batching");
  EXPECT_EQ(b.at("source"), "engine timeline");
  EXPECT_TRUE(b.at("fired").get<bool>()) << b.dump();
  EXPECT_GE(b.at("longest_failed_run").get<int>(), 3);
  EXPECT_GT(results_of(p).at("sim_preemptions").get<int>(), 0);
  EXPECT_NE(read_file(log().string()).find("point 0: dynamic batching failed"), std::string::npos);

  ASSERT_EQ(sweep(base), 0) << read_file(log().string());
  const json ample = sweep_json().at("points").at(0);
  EXPECT_FALSE(ample.at("batching_failed").get<bool>()) << ample.dump();
  const json ab = results_of(ample).at("batching");
  EXPECT_TRUE(ab.at("evaluated").get<bool>());
  EXPECT_EQ(ab.at("longest_failed_run"), 0) << ab.dump();
}

TEST_F(SweepRulesTest, ProfileAutoFindsTheSaturatingConcurrencyThenSpacesRates) {
  // An engine capped at 16 running requests: output tok/s grows with concurrency up to 16 and
  // not from 16 to 32, so the saturation search stops at 32 (the first doubling that gained
  // less than 10%); five rates follow, evenly between the synchronous and saturating rates.
  ASSERT_EQ(
      sweep({"--simulate", "--profile", "auto", "--max-num-seqs", "16", "--num-prompts", "200"}), 0)
      << read_file(log().string());
  const json doc = sweep_json();
  const json& prof = doc.at("profile");
  EXPECT_TRUE(prof.at("saturated").get<bool>()) << prof.dump();
  EXPECT_EQ(prof.at("saturating_concurrency"), 32) << prof.dump();
  const json& p = doc.at("points");
  ASSERT_EQ(p.size(), 6U + 5U) << doc.dump();
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(p[i].at("axes").at("max-concurrency").get<int>(), 1 << i);
    EXPECT_EQ(p[i].at("axes").at("request-rate"), "inf");
  }
  const auto tput = [&](std::size_t i) { return p[i].at("output_throughput").get<double>(); };
  for (std::size_t i = 1; i < 5; ++i) EXPECT_GE(tput(i), 1.1 * tput(i - 1)) << i;
  EXPECT_LT(tput(5), 1.1 * tput(4));
  const double r_sync = prof.at("synchronous_request_throughput").get<double>();
  const double r_max = prof.at("saturating_request_throughput").get<double>();
  EXPECT_DOUBLE_EQ(r_sync, p[0].at("request_throughput").get<double>());
  EXPECT_DOUBLE_EQ(r_max, p[5].at("request_throughput").get<double>());
  for (std::size_t k = 1; k <= 5; ++k) {
    const json& q = p[5 + k];
    EXPECT_NEAR(q.at("axes").at("request-rate").get<double>(),
                r_sync + (r_max - r_sync) * static_cast<double>(k) / 6, 1e-3 * r_max);
    EXPECT_EQ(q.at("axes").at("max-concurrency"), 32);
  }
  // With a cap below the saturation the profile says so, and still spaces its rates.
  ASSERT_EQ(sweep({"--simulate", "--profile", "auto", "--max-num-seqs", "16", "--num-prompts",
                   "200", "--profile-max-concurrency", "4", "--profile-rates", "2"}),
            0);
  const json capped = sweep_json();
  EXPECT_FALSE(capped.at("profile").at("saturated").get<bool>());
  EXPECT_EQ(capped.at("points").size(), 3U + 2U);
  EXPECT_NE(capped.at("profile").at("reason").get<std::string>().find("not saturated"),
            std::string::npos);
  EXPECT_EQ(sweep({"--simulate", "--profile", "auto", "--sweep", "max-concurrency=1"}), 2);
}

}  // namespace
}  // namespace llmbench::e2e
