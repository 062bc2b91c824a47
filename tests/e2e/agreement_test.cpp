// Acceptance: `llmbench run` against `llmbench serve` (the simulated engine in real
// time) and `llmbench simulate` (the same engine in virtual time) on the same workload and
// profile agree within 5 % on mean TTFT, mean TPOT and output throughput. Also checks that the
// server's /metrics counters match the workload after the run. On an open loop with a
// concurrency cap they agree on the queue-inclusive TTFT and the queue wait.

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// The shared workload and engine: 64 random prompts of 256 tokens, 64 output tokens, closed
/// loop at concurrency 8, DeepSeek-R1 (V3 shape) TP8 on H200.
const std::vector<std::string> kWorkload = {"--dataset-name",
                                            "random",
                                            "--random-input-len",
                                            "256",
                                            "--random-output-len",
                                            "64",
                                            "--random-range-ratio",
                                            "0.25",
                                            "--num-prompts",
                                            "64",
                                            "--max-concurrency",
                                            "8",
                                            "--seed",
                                            "3"};
const std::vector<std::string> kEngine = {
    "--model-profile", "deepseek-r1", "--gpu", "h200", "--tp", "8"};

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class AgreementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("llmbench-agree-{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure())
      fs::remove_all(dir_);
  }
  fs::path dir_;
};

double rel_diff(double a, double b) {
  return std::fabs(a - b) / std::fabs(b);
}

/// What one comparison produced: simulate's and run's results JSON, the server's /metrics
/// after the run, and a table of the compared keys per attempt.
struct Comparison {
  json sim;
  json run;
  std::string metrics;
  std::string tables;
};

/// Runs `simulate` and then `run` against `serve` on `workload` and compares `keys`. The
/// comparison holds when the server keeps the simulated clock, which a machine loaded by other
/// work can break (the server then reports late steps in /metrics): up to three attempts, each
/// with a fresh server, until every key agrees within 5 %.
void compare(const fs::path& dir, const std::vector<std::string>& workload,
             const std::vector<const char*>& keys, Comparison& out) {
  // (a) virtual time
  {
    Process sim(concat(concat({binary(), "simulate"}, workload),
                       concat(kEngine, {"--result-dir", (dir / "sim").string(), "--result-filename",
                                        "sim.json"})),
                (dir / "simulate.log").string());
    ASSERT_EQ(sim.wait(std::chrono::seconds(60)), 0) << read_file((dir / "simulate.log").string());
  }
  // (b) real time: the engine behind HTTP, benchmarked by `run`.
  out.sim = json::parse(read_file((dir / "sim" / "sim.json").string()));
  for (int attempt = 1; attempt <= 3; ++attempt) {
    const fs::path at = dir / fmt::format("attempt{}", attempt);
    fs::create_directories(at);
    ServeProcess server(at, kEngine);
    const int port = server.port();
    ASSERT_GT(port, 0) << server.log();
    {
      Process client(
          concat(concat({binary(), "run", "--base-url", server.base_url(), "--backend", "vllm",
                         "--continuous-usage", "--quiet", "--save-result", "--result-dir",
                         (at / "run").string(), "--result-filename", "run.json"},
                        workload),
                 {}),
          (at / "run.log").string());
      ASSERT_EQ(client.wait(std::chrono::seconds(120)), 0) << read_file((at / "run.log").string());
    }
    out.metrics = fetch_text(port, "/metrics");  // counters after the run, before stopping
    server.process().signal(SIGTERM);
    ASSERT_EQ(server.process().wait(std::chrono::seconds(10)), 0) << server.log();
    out.run = json::parse(read_file((at / "run" / "run.json").string()));
    bool agree = true;
    out.tables += fmt::format("attempt {}: metric | simulate | run vs serve | diff\n", attempt);
    for (const char* key : keys) {
      const double s = out.sim.at(key).get<double>();
      const double r = out.run.at(key).get<double>();
      out.tables += fmt::format("{} | {:.3f} | {:.3f} | {:+.2f}%\n", key, s, r, 100 * (r - s) / s);
      agree = agree && rel_diff(r, s) < 0.05;
    }
    const std::string late_key = "llmbench:engine_late_steps_total{model_name=\"deepseek-r1\"} ";
    const auto late_at = out.metrics.find(late_key);
    out.tables += fmt::format(
        "server steps > 5 ms late: {}\n",
        late_at == std::string::npos
            ? std::string("?")
            : out.metrics.substr(late_at + late_key.size(),
                                 out.metrics.find('\n', late_at) - late_at - late_key.size()));
    if (agree)
      break;
  }
}

TEST_F(AgreementTest, RunAgainstServeMatchesSimulate) {
  Comparison c;
  compare(dir_, kWorkload, {"mean_ttft_ms", "mean_tpot_ms", "output_throughput"}, c);
  if (HasFatalFailure())
    return;
  const json& sim = c.sim;
  const json& run = c.run;
  const std::string& metrics = c.metrics;
  const std::string& tables = c.tables;
  std::printf("%s", tables.c_str());
  ASSERT_EQ(sim.at("completed").get<int>(), 64);
  ASSERT_EQ(run.at("completed").get<int>(), 64);
  EXPECT_EQ(sim.at("total_output_tokens").get<std::int64_t>(),
            run.at("total_output_tokens").get<std::int64_t>());
  // simulate writes run's per-request records too: one line per request, one chunk per token.
  {
    EXPECT_EQ(sim.at("records_file").get<std::string>(), "sim.records.jsonl");
    std::ifstream lines(dir_ / "sim" / "sim.records.jsonl");
    std::string line;
    std::int64_t count = 0, chunks = 0;
    while (std::getline(lines, line)) {
      const auto record = json::parse(line);
      ++count;
      chunks += static_cast<std::int64_t>(record.at("chunks").size());
    }
    EXPECT_EQ(count, 64);
    EXPECT_EQ(chunks, sim.at("total_output_tokens").get<std::int64_t>());
  }
  for (const char* key : {"mean_ttft_ms", "mean_tpot_ms", "output_throughput"}) {
    const double s = sim.at(key).get<double>();
    const double r = run.at(key).get<double>();
    EXPECT_LT(rel_diff(r, s), 0.05) << key << ": simulate " << s << ", run " << r << "\n" << tables;
  }
  // The server counted the same workload.
  EXPECT_NE(
      metrics.find(fmt::format("vllm:generation_tokens_total{{model_name=\"deepseek-r1\"}} {}",
                               run.at("total_output_tokens").get<std::int64_t>())),
      std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("vllm:time_to_first_token_seconds_count{model_name=\"deepseek-r1\"} 64"),
            std::string::npos)
      << metrics;
}

// An open loop faster than the engine, with a concurrency cap. `run` stamps each
// request's arrival as `scheduled` and its slot as `slot`; `simulate` keeps the arrival as
// `scheduled` and its admission as `slot`; so the queue-inclusive TTFT and the wait behind the
// cap agree (before the fix `simulate` stamped the admission as `scheduled`, and its
// queue-inclusive TTFT left out the whole wait).
TEST_F(AgreementTest, OpenLoopWithACapAgreesOnQueueWait) {
  std::vector<std::string> workload = kWorkload;
  const auto cap = std::find(workload.begin(), workload.end(), "--max-concurrency");
  ASSERT_NE(cap, workload.end());
  *(cap + 1) = "4";
  workload.insert(workload.end(), {"--request-rate", "40"});
  Comparison c;
  compare(dir_, workload, {"mean_ttft_sched_ms", "mean_queue_wait_ms"}, c);
  if (HasFatalFailure())
    return;
  std::printf("%s", c.tables.c_str());
  ASSERT_EQ(c.sim.at("completed").get<int>(), 64);
  ASSERT_EQ(c.run.at("completed").get<int>(), 64);
  // The cap is what the requests waited for: a real wait, most of the queue-inclusive TTFT.
  EXPECT_GT(c.sim.at("mean_queue_wait_ms").get<double>(), 100.0);
  EXPECT_GT(c.sim.at("mean_ttft_sched_ms").get<double>(),
            c.sim.at("mean_ttft_ms").get<double>() + 100.0);
  for (const char* key : {"mean_ttft_sched_ms", "mean_queue_wait_ms"}) {
    const double s = c.sim.at(key).get<double>();
    const double r = c.run.at(key).get<double>();
    EXPECT_LT(rel_diff(r, s), 0.05) << key << ": simulate " << s << ", run " << r << "\n"
                                    << c.tables;
  }
}

}  // namespace
}  // namespace llmbench::e2e
