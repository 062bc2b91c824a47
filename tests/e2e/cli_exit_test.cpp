// End to end through the `llmbench` binary: the exit codes (STYLE.md: 0 ok, 1 the run finished
// with failed requests, 2 usage or configuration error; 3, an internal error, is reached by no
// input and is covered by cli_test's `ExitCodes`), the message for each kind of bad flag, and
// the configuration keys that `run` and `simulate` share in their results JSON.

#include <fmt/core.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class CliExitTest : public ScratchDirTest {
 protected:
  CliExitTest() : ScratchDirTest("cli") {}
};

/// A short run against the built-in server with fixed timing.
const std::vector<std::string> kFixedRun = {"run", "--server-timing", "fixed", "--server-ttft-ms",
                                            "1",   "--server-itl-ms", "0.1",   "--num-prompts",
                                            "8",   "--output-len",    "4",     "--quiet"};

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_F(CliExitTest, SuccessfulRunExitsZero) {
  std::string log;
  EXPECT_EQ(llmbench(kFixedRun, log), 0) << log;
  EXPECT_NE(log.find("Successful requests:"), std::string::npos) << log;
}

TEST_F(CliExitTest, RunWithFailedRequestsExitsOne) {
  // Every prompt (64 tokens) is longer than the server's context: each request gets a 400.
  std::string log;
  EXPECT_EQ(llmbench(concat(kFixedRun, {"--server-max-model-len", "10", "--dataset-name", "random",
                                        "--random-input-len", "64"}),
                     log),
            1)
      << log;
  EXPECT_NE(log.find("Failed requests:"), std::string::npos) << log;
}

/// One bad command line: its arguments and what its message must say.
struct BadFlag {
  std::vector<std::string> args;
  std::vector<std::string> says;
};

TEST_F(CliExitTest, EveryKindOfBadFlagExitsTwoWithAMessageNamingIt) {
  const std::vector<BadFlag> cases = {
      // parse errors (CLI11)
      {{}, {"subcommand"}},
      {{"run", "--no-such-flag"}, {"--no-such-flag"}},
      {{"run", "--num-prompts", "many"}, {"--num-prompts", "many"}},
      {{"run", "--seed", "-1"}, {"--seed", "non-negative integer"}},
      {{"tokdiff", "a", "b", "--top", "-1"}, {"--top", "non-negative integer"}},
      // bad values
      {{"run", "--request-rate", "1e400"}, {"--request-rate", "too large"}},
      {{"run", "--connect-timeout", "0.0004"}, {"--connect-timeout", "0.001"}},
      {{"run", "--percentile-metrics", ""}, {"--percentile-metrics", "at least one"}},
      {{"run", "--goodput", ""}, {"--goodput", "empty SLO"}},
      {{"run", "--base-url", "http://127.0.0.1:1/?key=v"}, {"--base-url", "query", "at byte 19"}},
      {{"run", "--backend", "tgi-typo"}, {"--backend", "valid names"}},
      {{"run", "--server-timing", "bogus"}, {"--server-timing"}},
      {{"run", "--server-block-size", "-1"}, {"--server-block-size", "positive"}},
      {{"simulate", "--block-size", "-1"}, {"--block-size", "positive"}},
      {{"simulate", "--step-overhead-us", "-1"}, {"--step-overhead-us", ">= 0"}},
      {{"simulate", "--timeline-interval", "-1"}, {"--timeline-interval", ">= 0"}},
      {{"serve", "--max-model-len", "0"}, {"--max-model-len", "positive"}},
      {{"plan", "--activation-peak-gib", "-1"}, {"--activation-peak-gib", ">= 0"}},
      {{"plan", "--block-size", "-8"}, {"--block-size", "positive"}},
      // conflicts
      {{"run", "--random-input-len", "64"}, {"--random-input-len", "--dataset-name random"}},
      {{"run", "--base-url", "http://127.0.0.1:1", "--server-tp", "4"},
       {"--server-tp", "built-in server"}},
      {{"run", "--base-url", "http://127.0.0.1:1", "--host", "h"}, {"--host", "--base-url"}},
      // --port alone is vLLM's: a server on 127.0.0.1 (here nothing listens on port 1)
      {{"run", "--port", "1"}, {"cannot reach the server", "127.0.0.1:1"}},
      // vllm bench serve's flags: a typo gets a suggestion; one that would change the load is
      // refused, naming it
      {{"run", "--max-concurency", "4"},
       {"unknown flag --max-concurency", "did you mean '--max-concurrency'"}},
      {{"run", "--lora-modules", "a", "b"}, {"--lora-modules", "LoRA"}},
      {{"run", "--endpoint-type", "openai-chat", "--backend", "vllm"},
       {"--endpoint-type", "give one"}},
      // sizes and files
      {{"run", "--num-prompts", "100000000", "--dataset-name", "random"},
       {"--num-prompts", "GB of memory"}},
      {{"simulate", "--num-prompts", "100000000"}, {"--num-prompts", "GB of memory"}},
      {{"run", "--tokenizer", "/nonexistent/tokenizer.json"}, {"--tokenizer"}},
  };
  for (const auto& c : cases) {
    std::string log;
    const std::string cmd = fmt::format("llmbench {}", fmt::join(c.args, " "));
    EXPECT_EQ(llmbench(c.args, log), 2) << cmd << "\n" << log;
    for (const auto& s : c.says) {
      EXPECT_NE(log.find(s), std::string::npos) << cmd << ": no '" << s << "' in\n" << log;
    }
  }
}

std::set<std::string> keys(const json& j, const std::set<std::string>& drop) {
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) {
    if (drop.count(k) == 0)
      out.insert(k);
  }
  return out;
}

std::set<std::string> unite(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

TEST_F(CliExitTest, RunAndSimulateWriteTheSameConfigurationKeys) {
  const std::vector<std::string> workload = {"--dataset-name",
                                             "random",
                                             "--random-input-len",
                                             "32",
                                             "--random-output-len",
                                             "4",
                                             "--num-prompts",
                                             "4",
                                             "--save-result",
                                             "--result-filename",
                                             "r.json"};
  std::string log;
  ASSERT_EQ(
      llmbench(
          concat(concat({"run", "--quiet", "--result-dir", (dir_ / "run").string()}, workload), {}),
          log),
      0)
      << log;
  ASSERT_EQ(llmbench(concat({"simulate", "--result-dir", (dir_ / "sim").string()}, workload), log),
            0)
      << log;
  const auto run = json::parse(read_file((dir_ / "run" / "r.json").string()));
  const auto sim = json::parse(read_file((dir_ / "sim" / "r.json").string()));

  // Requested: the built-in server's flags are under "server" in run, at the top in simulate.
  const std::set<std::string> run_only = {
      "base_url", "host", "port", "endpoint", "backend", "model", "served_model_name", "duration",
      "num_warmups", "min_tokens", "temperature", "top_p", "extra_body", "save_detailed",
      "header_names", "top_k", "min_p", "presence_penalty", "frequency_penalty",
      "repetition_penalty", "metadata", "append_result", "ready_check_timeout_sec",
      "ramp_up_strategy", "ramp_up_start_rps", "ramp_up_end_rps", "disable_stream", "api_key_given",
      "insecure", "ca_cert", "client_threads", "connect_timeout", "first_byte_timeout",
      "idle_timeout", "timeout", "stream", "continuous_usage", "prewarm", "server", "history",
      "report", "stall", "drift",
      // a real server's client side: GPUs behind it (per-GPU figures), local source addresses
      "num_gpus", "source_address",
      // the built-in server's own knobs (no engine concept)
      "timing", "ttft_ms", "itl_ms", "tokens_per_chunk", "default_output_len", "max_model_len",
      "admission_window_ms",
      // telemetry of a real run (docs/telemetry.md)
      "gpu_telemetry", "gpu_devices", "nvml_library", "scrape_metrics", "scrape_interval_ms"};
  const std::set<std::string> sim_only = {"timeline_interval", "trace", "cluster", "records",
                                          "trace_tile_s"};
  const auto& run_req = run.at("config_requested");
  EXPECT_EQ(
      keys(sim.at("config_requested"), sim_only),
      unite(keys(run_req, run_only), keys(run_req.value("server", json::object()), run_only)));

  // Effective: the engine that ran is "builtin_server" in run, at the top in simulate.
  const std::set<std::string> run_only_effective = {"base_url",
                                                    "endpoint",
                                                    "backend",
                                                    "model",
                                                    "chat",
                                                    "num_warmups",
                                                    "duration",
                                                    "drain_timeout",
                                                    "client_threads",
                                                    "stream",
                                                    "continuous_usage",
                                                    "min_tokens",
                                                    "temperature",
                                                    "top_p",
                                                    "top_k",
                                                    "min_p",
                                                    "presence_penalty",
                                                    "frequency_penalty",
                                                    "repetition_penalty",
                                                    "extra_body",
                                                    "prewarm",
                                                    "insecure",
                                                    "ca_cert",
                                                    "header_names",
                                                    "connect_timeout",
                                                    "first_byte_timeout",
                                                    "idle_timeout",
                                                    "timeout",
                                                    "builtin_server",
                                                    "timing",
                                                    "admission_window_ms",
                                                    "default_output_len",
                                                    "max_model_len"};
  const auto& run_eff = run.at("config_effective");
  EXPECT_EQ(keys(sim.at("config_effective"), {"timeline_interval"}),
            unite(keys(run_eff, run_only_effective),
                  keys(run_eff.value("builtin_server", json::object()), run_only_effective)));
  EXPECT_EQ(run_eff.at("builtin_server").at("model_profile"),
            sim.at("config_effective").at("model_profile"));
  EXPECT_EQ(run_eff.at("samples"), 4);
  // Every key simulate wrote before the configuration had one serializer is still there.
  for (const auto* k : {"dataset_name",
                        "dataset_path",
                        "num_prompts",
                        "random_input_len",
                        "random_output_len",
                        "random_range_ratio",
                        "output_len",
                        "max_concurrency",
                        "request_rate",
                        "burstiness",
                        "model_profile",
                        "gpu",
                        "tp",
                        "max_num_seqs",
                        "max_num_batched_tokens",
                        "block_size",
                        "gpu_memory_utilization",
                        "scheduler",
                        "swap_space",
                        "enable_expert_parallel",
                        "expert_parallel_size",
                        "data_parallel_size"}) {
    EXPECT_TRUE(sim.at("config_requested").contains(k)) << k;
  }
  for (const auto* k : {"model_profile", "gpu", "tp", "max_num_seqs", "max_num_batched_tokens",
                        "block_size", "num_gpu_blocks", "num_cpu_blocks", "expert_parallel_size",
                        "data_parallel_size", "scheduler", "kv_bytes_per_gpu",
                        "weight_bytes_per_gpu", "enable_prefix_caching", "efficiency"}) {
    EXPECT_TRUE(sim.at("config_effective").contains(k)) << k;
  }
  for (const auto* k :
       {"timing", "model", "model_profile", "gpu", "tp", "num_gpu_blocks", "block_size",
        "max_num_seqs", "max_num_batched_tokens", "enable_prefix_caching", "admission_window_ms"}) {
    EXPECT_TRUE(run_eff.at("builtin_server").contains(k)) << k;
  }
  EXPECT_EQ(sim.at("config_effective").at("samples"), 4);
}

// `simulate` takes run's output flags with run's meaning: --label names the results and starts
// the default file name, --quiet is accepted.
TEST_F(CliExitTest, SimulateTakesRunsLabelAndQuiet) {
  std::string log;
  ASSERT_EQ(llmbench({"simulate", "--dataset-name", "random", "--random-input-len", "32",
                      "--random-output-len", "4", "--num-prompts", "4", "--label", "nightly",
                      "--quiet", "--save-result", "--result-dir", (dir_ / "sim").string()},
                     log),
            0)
      << log;
  std::vector<fs::path> results;
  for (const auto& e : fs::directory_iterator(dir_ / "sim")) {
    if (e.path().extension() == ".json")
      results.push_back(e.path());
  }
  ASSERT_EQ(results.size(), 1U) << log;
  EXPECT_EQ(results[0].filename().string().rfind("nightly-", 0), 0U) << results[0];
  EXPECT_EQ(json::parse(read_file(results[0].string())).at("label"), "nightly");
}

}  // namespace
}  // namespace llmbench::e2e
