// Acceptance: a concurrency sweep 1 to 256 against `llmbench serve` (the simulated
// engine in real time, behind HTTP) finds the throughput knee where a fine `simulate` sweep of
// the same workload and engine (virtual time) puts it, and the same saturation throughput
// (docs/sweep.md, "Knee").

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sweep_fixture.hpp"
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

using nlohmann::json;

/// The shared workload: 128 random prompts of 128 tokens, 16 output tokens, a closed loop.
const std::vector<std::string> kWorkload = {"--dataset-name",
                                            "random",
                                            "--random-input-len",
                                            "128",
                                            "--random-output-len",
                                            "16",
                                            "--random-range-ratio",
                                            "0",
                                            "--num-prompts",
                                            "128",
                                            "--seed",
                                            "5"};

/// The engine: DeepSeek-R1-Distill-Qwen-7B on one H200, its batch capped at 32 sequences, so
/// the throughput of a closed loop stops growing at concurrency 32.
const std::vector<std::string> kEngine = {
    "model-profile", "deepseek-r1-distill-qwen-7b", "gpu", "h200", "tp", "1", "max-num-seqs", "32"};

std::vector<std::string> engine_flags(const std::string& prefix) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < kEngine.size(); i += 2) {
    out.push_back("--" + prefix + kEngine[i]);
    out.push_back(kEngine[i + 1]);
  }
  return out;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// The throughput knee of the sweep's only group, and a table of its points for the log.
struct Knee {
  bool found = false;
  double load = 0;
  std::string table;
};

Knee knee_of(const json& doc) {
  Knee k;
  for (const auto& p : doc.at("points")) {
    k.table +=
        fmt::format("  c={:<4} {:9.1f} tok/s  p99 TTFT {:8.1f} ms\n",
                    p.at("axes").at("max-concurrency").get<int>(),
                    p.at("output_throughput").get<double>(), p.at("p99_ttft_ms").get<double>());
  }
  const json& knees = doc.at("knee");
  if (knees.size() != 1)
    return k;
  const json& t = knees[0].at("throughput_knee");
  k.found = t.at("found").get<bool>();
  if (k.found)
    k.load = t.at("load").get<double>();
  return k;
}

class SweepKneeTest : public SweepTest {};

TEST_F(SweepKneeTest, ServeSweepFindsTheKneeOfAFineSimulateSweep) {
  // (a) virtual time, a fine geometric ladder (about 2^(1/4) apart): 1, 2, 3, 4, 5, 6, 7, 8, ...
  ASSERT_EQ(
      sweep(concat(concat({"--simulate", "--sweep", "max-concurrency=1:256:x1.19"}, kWorkload),
                   engine_flags(""))),
      0)
      << read_file(log().string());
  const json sim = sweep_json();
  const Knee fine = knee_of(sim);
  std::printf("simulate, fine ladder (%zu points):\n%s  knee: %s %g\n", sim.at("points").size(),
              fine.table.c_str(), fine.found ? "found at" : "none", fine.load);
  ASSERT_TRUE(fine.found) << sim.at("knee").dump();

  // (b) real time: the same engine behind HTTP (`serve --timing engine`), a doubling ladder.
  std::filesystem::remove_all(dir_ / "out");
  ASSERT_EQ(sweep(concat(concat({"--sweep", "max-concurrency=1:256:x2", "--server-timing", "engine",
                                 "--backend", "vllm"},
                                kWorkload),
                         engine_flags("server-"))),
            0)
      << read_file(log().string());
  const json run = sweep_json();
  const Knee coarse = knee_of(run);
  std::printf("run against serve, doubling ladder:\n%s  knee: %s %g\n", coarse.table.c_str(),
              coarse.found ? "found at" : "none", coarse.load);
  ASSERT_TRUE(coarse.found) << run.at("knee").dump();
  // The doubling ladder's knee is the rung nearest the fine knee: within a factor of sqrt(2).
  EXPECT_LE(std::fabs(std::log2(coarse.load / fine.load)), 0.5)
      << "serve knee " << coarse.load << ", simulate knee " << fine.load;
  // And the server saturates where the simulator does. Each point draws its own prompts
  // (docs/sweep.md, "Running points"); when every point sent the same ones, the server's prefix
  // cache served later points from earlier ones and this ratio was 1.7. The margin leaves room
  // for a loaded host, which makes a real-time server slower, never faster.
  const double sim_saturation = sim.at("knee")[0].at("saturation_output_throughput").get<double>();
  const double run_saturation = run.at("knee")[0].at("saturation_output_throughput").get<double>();
  EXPECT_LT(run_saturation, 1.2 * sim_saturation);
  EXPECT_GT(run_saturation, 0.8 * sim_saturation);
}

}  // namespace
}  // namespace llmbench::e2e
