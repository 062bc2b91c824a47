// End to end: `llmbench run --scrape-metrics` against the built-in server writes the server's
// running and waiting requests as mapped series in the results (docs/telemetry.md), and
// `--gpu-telemetry` on a machine without NVML (or with a fake one) lets the run go on.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

using nlohmann::json;

class TelemetryRunTest : public ScratchDirTest {
 protected:
  TelemetryRunTest() : ScratchDirTest("telemetry") {}

  /// Runs 24 requests of 32 tokens at concurrency 4 against a built-in server with 2 slots
  /// (fixed timing, so 2 requests run and 2 wait nearly all the time); returns the results.
  json run(const std::vector<std::string>& extra) {
    std::vector<std::string> argv{binary(),
                                  "run",
                                  "--dataset-name",
                                  "random",
                                  "--num-prompts",
                                  "24",
                                  "--random-input-len",
                                  "16",
                                  "--random-output-len",
                                  "32",
                                  "--ignore-eos",
                                  "--max-concurrency",
                                  "4",
                                  "--server-timing",
                                  "fixed",
                                  "--server-ttft-ms",
                                  "20",
                                  "--server-itl-ms",
                                  "3",
                                  "--server-max-num-seqs",
                                  "2",
                                  "--save-result",
                                  "--result-dir",
                                  dir_.string(),
                                  "--result-filename",
                                  "run.json",
                                  "--quiet"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Process client(argv, (dir_ / "client.log").string());
    EXPECT_EQ(client.wait(std::chrono::seconds(120)), 0)
        << read_file((dir_ / "client.log").string());
    return json::parse(read_file((dir_ / "run.json").string()));
  }
};

TEST_F(TelemetryRunTest, ScrapeMetricsWritesMappedRunningAndWaiting) {
  const json results = run({"--scrape-metrics", "--scrape-interval-ms", "20"});
  const json& sm = results.at("telemetry").at("server_metrics");
  EXPECT_EQ(sm.at("failures"), 0) << sm.at("last_error");
  EXPECT_EQ(sm.at("engine"), "vllm");  // fixed timing serves vLLM's names only
  EXPECT_EQ(sm.at("url").get<std::string>().rfind("http://127.0.0.1:", 0), 0U);
  const auto t_ms = sm.at("t_ms").get<std::vector<double>>();
  const auto running = sm.at("series").at("running").get<std::vector<double>>();
  const auto waiting = sm.at("series").at("waiting").get<std::vector<double>>();
  ASSERT_GE(t_ms.size(), 3U);
  ASSERT_EQ(running.size(), t_ms.size());
  ASSERT_EQ(waiting.size(), t_ms.size());
  EXPECT_TRUE(std::is_sorted(t_ms.begin(), t_ms.end()));
  // Two slots and four clients: the server never runs more than 2, never queues more than 2,
  // and (over a run of ~1.5 s scraped every 20 ms) was seen full and queueing.
  EXPECT_EQ(*std::max_element(running.begin(), running.end()), 2);
  EXPECT_EQ(*std::max_element(waiting.begin(), waiting.end()), 2);
  EXPECT_EQ(running.back(), 0);  // the last scrape comes after the last request
  const json& concepts = sm.at("summary").at("concepts");
  EXPECT_EQ(concepts.at("running").at("source"), "vllm:num_requests_running");
  EXPECT_EQ(concepts.at("running").at("max"), 2.0);
  // The first scrape precedes the first request, the last follows the last: the counter's
  // increase is every output token of the run.
  EXPECT_EQ(concepts.at("generation_tokens").at("increase"), 24 * 32);
  EXPECT_TRUE(results.at("telemetry").at("client_saturated").is_boolean());
  EXPECT_TRUE(results.at("telemetry").at("gpu").is_null());
}

TEST_F(TelemetryRunTest, GpuTelemetryWithoutNvmlSaysSoOnceAndRuns) {
  const json results = run({"--gpu-telemetry", "--nvml-library", "/nonexistent/libnvidia-ml.so.1"});
  EXPECT_EQ(results.at("completed"), 24);
  const json& gpu = results.at("telemetry").at("gpu");
  EXPECT_EQ(gpu.at("available"), false);
  EXPECT_EQ(gpu.at("interval_ms"), 100);
  const std::string log = read_file((dir_ / "client.log").string());
  const std::string line = "GPU telemetry off: cannot open /nonexistent/libnvidia-ml.so.1";
  const auto first = log.find(line);
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find(line, first + 1), std::string::npos) << "said more than once:\n" << log;
}

TEST_F(TelemetryRunTest, GpuTelemetryWithTheFakeNvmlSamplesIt) {
  const std::string script = (dir_ / "nvml.txt").string();
  {
    std::ofstream(script) << "devices 1\nname 0 Fake H200\nrow 0 mem_total=1000 mem_used=400 "
                             "power_mw=300000 energy_mj=1000000 throttle=0x4\n";
  }
  ::setenv("LLMBENCH_FAKE_NVML_SCRIPT", script.c_str(), 1);  // inherited by the child
  const json results = run({"--gpu-telemetry=20", "--nvml-library", LLMBENCH_FAKE_NVML_PATH});
  ::unsetenv("LLMBENCH_FAKE_NVML_SCRIPT");
  const json& gpu = results.at("telemetry").at("gpu");
  ASSERT_EQ(gpu.at("available"), true) << gpu.at("message");
  EXPECT_EQ(gpu.at("interval_ms"), 20);
  const json& dev = gpu.at("devices").at(0);
  EXPECT_EQ(dev.at("info").at("name"), "Fake H200");
  EXPECT_EQ(dev.at("summary").at("peak_memory_used_bytes"), 400.0);
  EXPECT_EQ(dev.at("summary").at("power_w").at("max"), 300.0);
  EXPECT_EQ(dev.at("summary").at("energy_counter_j"), 0.0);  // a counter that did not move
  EXPECT_GT(dev.at("summary").at("throttled_s").at("sw_power_cap").get<double>(), 0.0);
  EXPECT_EQ(gpu.at("output_tokens"), 24 * 32);
}

}  // namespace
}  // namespace llmbench::e2e
