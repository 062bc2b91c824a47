#include "llmbench/report/run_config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace llmbench::report {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// The text of the header line `key` of `c` ("" when absent).
std::string line(const RunConfig& c, const std::string& key) {
  for (const auto& l : c.lines) {
    if (l.key == key)
      return l.text;
  }
  return "";
}

/// A `simulate` results document as llmbench writes it (the keys the header reads).
json simulated(int max_num_seqs, const std::string& gpu) {
  return {{"backend", "simulate"},
          {"simulated", true},
          {"model_id", "deepseek-r1"},
          {"tokenizer_id", "deepseek-r1"},
          {"date", "20261206-021149"},
          {"host", "bench-7"},
          {"tool_version", "0.1.0"},
          {"git_sha", "a6f64a7fad6f8751c89e7749c2708bd34420051c"},
          {"num_prompts", 300},
          {"request_rate", "inf"},
          {"burstiness", 1.0},
          {"max_concurrency", 32},
          {"completed", 300},
          {"total_input_tokens", 307200},
          {"total_output_tokens", 76800},
          {"config_effective",
           {{"dataset_name", "random"},
            {"random_input_len", 1024},
            {"random_output_len", 256},
            {"random_range_ratio", 0.0},
            {"sonnet_input_len", 550},
            {"seed", 3},
            {"samples", 300},
            {"gpu", gpu},
            {"model_profile", "deepseek-r1"},
            {"tp", 8},
            {"data_parallel_size", 2},
            {"expert_parallel_size", 1},
            {"max_num_seqs", max_num_seqs},
            {"max_num_batched_tokens", 8192},
            {"block_size", 64},
            {"enable_prefix_caching", true},
            {"scheduler", "vllm-v1"},
            {"num_gpu_blocks", 9413},
            {"efficiency", {{"compute", 0.45}}}}}};
}

TEST(RunConfig, TheHeaderOfASimulatedRun) {
  const RunConfig c = run_config(simulated(256, "h200"));
  EXPECT_EQ(line(c, "model"), "deepseek-r1");
  EXPECT_EQ(line(c, "target"), "simulate (virtual time, no HTTP)");
  EXPECT_EQ(line(c, "dataset"),
            "random: 1024 in / 256 out tokens (range ratio 0); measured mean 1024 in / 256 out "
            "per request");
  EXPECT_EQ(line(c, "load"), "300 prompts, all sent at once, max concurrency 32");
  EXPECT_THAT(line(c, "engine"), HasSubstr("deepseek-r1 on 16 × h200 (TP8 DP2 EP1)"));
  EXPECT_THAT(line(c, "engine"), HasSubstr("max_num_seqs 256, max_num_batched_tokens 8192"));
  EXPECT_THAT(line(c, "engine"), HasSubstr("prefix caching on, vllm-v1 scheduler"));
  EXPECT_EQ(c.gpus, 16);
  EXPECT_EQ(line(c, "gpus"), "16 (tp × dp)");
  EXPECT_EQ(line(c, "date"), "2026-12-06 02:11:49");
  EXPECT_EQ(line(c, "host"), "bench-7");
  EXPECT_EQ(line(c, "tool"), "0.1.0 (a6f64a7fad6f)");
  // Knobs: the settings, not seeds, sample counts, derived sizes or other datasets' lengths.
  EXPECT_EQ(c.knobs.at("max_num_seqs"), "256");
  EXPECT_EQ(c.knobs.at("efficiency.compute"), "0.45");
  EXPECT_EQ(c.knobs.at("random_range_ratio"), "0");
  EXPECT_EQ(c.knobs.count("seed"), 0U);
  EXPECT_EQ(c.knobs.count("samples"), 0U);
  EXPECT_EQ(c.knobs.count("num_gpu_blocks"), 0U);
  EXPECT_EQ(c.knobs.count("sonnet_input_len"), 0U);
}

TEST(RunConfig, ARemoteServerAndAnOldFile) {
  const json remote = {
      {"backend", "openai-chat"},
      {"base_url", "http://10.0.0.5:8000"},
      {"endpoint", "/v1/chat/completions"},
      {"model_id", "deepseek-ai/DeepSeek-R1"},
      {"request_rate", 4.0},
      {"burstiness", 1.0},
      {"max_concurrency", nullptr},
      {"num_prompts", 200},
      {"server_models",
       {{"data",
         {{{"id", "deepseek-ai/DeepSeek-R1"}, {"owned_by", "vllm"}, {"max_model_len", 163840}}}}}},
      {"telemetry", {{"server_metrics", {{"engine", "vllm"}}}, {"gpu", nullptr}}}};
  const RunConfig c = run_config(remote);
  EXPECT_EQ(line(c, "target"), "openai-chat at http://10.0.0.5:8000/v1/chat/completions");
  EXPECT_EQ(line(c, "load"), "200 prompts, 4 req/s (Poisson), no concurrency cap");
  EXPECT_EQ(line(c, "engine"),
            "vllm (read from its /metrics), served by vllm, max_model_len 163840");
  EXPECT_TRUE(std::isnan(c.gpus));
  EXPECT_EQ(line(c, "gpus"), "not known to the client");
  EXPECT_EQ(line(c, "host"), "not recorded");
  // A results file of an older llmbench (or any object): no line throws, missing ones say so.
  const RunConfig old = run_config({{"completed", 3}});
  EXPECT_EQ(line(old, "model"), "not recorded");
  EXPECT_EQ(line(old, "engine"), "not recorded (run with --scrape-metrics to read it)");
}

TEST(KnobDifferences, NameWhatDiffersAndOnlyThat) {
  const RunConfig a = run_config(simulated(256, "h200"));
  const RunConfig b = run_config(simulated(512, "h200"));
  const RunConfig c = run_config(simulated(512, "h100"));
  const auto two = knob_differences({&a, &b});
  ASSERT_EQ(two.size(), 1U);
  EXPECT_EQ(two[0].knob, "max_num_seqs");
  EXPECT_THAT(two[0].values, ElementsAre("256", "512"));
  EXPECT_EQ(describe_differences(two), "max_num_seqs 256 vs 512");
  EXPECT_EQ(describe_config(two, 1), "max_num_seqs 512");
  // gpu is listed before max_num_seqs (the knobs users change most come first).
  const auto three = knob_differences({&a, &b, &c});
  ASSERT_EQ(three.size(), 2U);
  EXPECT_EQ(describe_differences(three), "gpu h200 vs h100; max_num_seqs 256 vs 512");
  EXPECT_EQ(describe_config(three, 2), "gpu h100, max_num_seqs 512");
  EXPECT_TRUE(knob_differences({&a, &a}).empty());
  EXPECT_TRUE(knob_differences({&a}).empty());
  EXPECT_EQ(describe_differences({}), "");
}

TEST(ValueText, NumbersAsWrittenAndNullAsUnset) {
  EXPECT_EQ(value_text(json(4.0)), "4");
  EXPECT_EQ(value_text(json(0.9)), "0.9");
  EXPECT_EQ(value_text(json(-1)), "-1");
  EXPECT_EQ(value_text(json(nullptr)), "unset");
  EXPECT_EQ(value_text(json::array({1, "a"})), "1,a");
  EXPECT_EQ(value_text(json(true)), "true");
}

}  // namespace
}  // namespace llmbench::report
