// The requested and effective configuration sections (cli/config_json.hpp): every flag is
// serialized, typed, under its own name, and `run` and `simulate` use the same keys for the
// same concepts.

#include "llmbench/cli/config_json.hpp"

#include "llmbench/app/config_json.hpp"
#include "llmbench/cli/run_flags.hpp"
#include "llmbench/cli/run_plan.hpp"
#include "llmbench/cli/simulate_flags.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace llmbench::cli {
namespace {

using app::RunPlan;

using nlohmann::json;

/// The flags whose key is not their long name with '_' for '-' (config_json.hpp).
const std::map<std::string, std::string> kRenamed = {
    {"no-stream", "stream"},      {"no-prewarm", "prewarm"},      {"header", "header_names"},
    {"api-key", "api_key_given"}, {"ep", "expert_parallel_size"}, {"dp", "data_parallel_size"}};

std::string key_of(std::string name) {
  if (const auto it = kRenamed.find(name); it != kRenamed.end()) {
    return it->second;
  }
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

std::set<std::string> keys(const json& j) {
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) out.insert(k);
  return out;
}

/// Long names of the options registered on `app` (help excluded).
std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : app.get_options()) {
    if (!opt->get_lnames().empty() && opt->get_lnames().front() != "help") {
      out.push_back(opt->get_lnames().front());
    }
  }
  return out;
}

TEST(ConfigJson, EveryRunFlagIsInTheRequestedConfig) {
  CLI::App app;
  RunFlags f;
  add_run_flags(app, f);
  const json j = run_flags_json(f);
  const std::string prefix = kServerFlagPrefix;
  int checked = 0;
  for (const auto& name : option_names(app)) {
    if (name.rfind(prefix, 0) == 0) {
      EXPECT_TRUE(j.at("server").contains(key_of(name.substr(prefix.size())))) << "--" << name;
    } else {
      EXPECT_TRUE(j.contains(key_of(name))) << "--" << name;
    }
    ++checked;
  }
  EXPECT_GT(checked, 70);
}

TEST(ConfigJson, EverySimulateFlagIsInTheRequestedConfig) {
  CLI::App app;
  SimulateFlags f;
  add_simulate_flags(app, f);
  const json j = simulate_flags_json(f);
  int checked = 0;
  for (const auto& name : option_names(app)) {
    EXPECT_TRUE(j.contains(key_of(name))) << "--" << name;
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

TEST(ConfigJson, RunAndSimulateShareTheWorkloadAndEngineKeys) {
  const json run = run_flags_json(RunFlags{});
  const json sim = simulate_flags_json(SimulateFlags{});
  for (const auto& k : keys(workload_flags_json(WorkloadFlags{}))) {
    EXPECT_TRUE(run.contains(k)) << k;
    EXPECT_TRUE(sim.contains(k)) << k;
  }
  for (const auto& k : keys(engine_flags_json(EngineFlags{}))) {
    EXPECT_TRUE(run.at("server").contains(k)) << k;
    EXPECT_TRUE(sim.contains(k)) << k;
  }
  for (const auto* k : {"ignore_eos", "save_result", "result_dir", "result_filename"}) {
    EXPECT_TRUE(run.contains(k)) << k;
    EXPECT_TRUE(sim.contains(k)) << k;
  }
}

TEST(ConfigJson, RequestedValuesAreTypedAndSecretsStayOut) {
  CLI::App app;
  RunFlags f;
  add_run_flags(app, f);
  std::vector<std::string> args{
      "--header", "X-Key: s3cret-header", "--api-key", "s3cret-key",    "--temperature",
      "0.5",      "--server-tp",          "4",         "--num-prompts", "7"};
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  app.parse(args);
  const json j = run_flags_json(f);
  EXPECT_EQ(j.at("num_prompts"), 7);
  EXPECT_EQ(j.at("server").at("tp"), 4);
  EXPECT_DOUBLE_EQ(j.at("temperature").get<double>(), 0.5);
  EXPECT_TRUE(j.at("top_p").is_null());
  EXPECT_TRUE(j.at("min_tokens").is_null());
  EXPECT_EQ(j.at("api_key_given"), true);
  EXPECT_EQ(j.at("header_names"), json::array({"X-Key"}));
  const std::string text = j.dump();
  EXPECT_EQ(text.find("s3cret"), std::string::npos) << text;
}

ResolveEnv env_with_data() {
  ResolveEnv env;
  env.hardware_threads = 2;
  env.data_dir = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";
  return env;
}

TEST(ConfigJson, EffectiveConfigIsThePlanThatRan) {
  RunFlags f;
  f.request_rate = "4";
  f.metric_percentiles = "50,99.9";
  f.goodput = {"ttft:500"};
  f.server.engine.model_profile = "deepseek-r1-distill-llama-8b";
  f.server.engine.tp = 2;
  RunPlan plan = resolve_run(f, env_with_data());
  plan.load.request.model = "deepseek-r1";  // as discovered from /v1/models
  const json j = app::run_effective_config(plan, plan.load, 200);
  EXPECT_EQ(j.at("model"), "deepseek-r1");
  EXPECT_EQ(j.at("backend"), "openai");
  EXPECT_EQ(j.at("client_threads"), 2);
  EXPECT_EQ(j.at("samples"), 200);
  EXPECT_DOUBLE_EQ(j.at("request_rate").get<double>(), 4.0);
  EXPECT_EQ(j.at("metric_percentiles"), json::array({50.0, 99.9}));
  EXPECT_DOUBLE_EQ(j.at("goodput").at("ttft_ms").get<double>(), 500.0);
  EXPECT_TRUE(j.at("goodput").at("tpot_ms").is_null());
  EXPECT_DOUBLE_EQ(j.at("timeout").get<double>(), 3600.0);
  const json& server = j.at("builtin_server");
  EXPECT_EQ(server.at("timing"), "engine");
  EXPECT_EQ(server.at("tp"), 2);
  EXPECT_EQ(server.at("block_size"), 16);  // GQA
  EXPECT_GT(server.at("num_gpu_blocks").get<std::int64_t>(), 0);
  // The same keys as simulate's engine section: one serializer for both.
  for (const auto& k :
       keys(app::engine_spec_json(plan.builtin->options.engine->spec, f.server.engine))) {
    EXPECT_TRUE(server.contains(k)) << k;
  }
  // Every key of the requested workload is there too (the same concept, effective value).
  for (const auto& k : keys(workload_flags_json(f))) {
    if (k != "max_concurrency" && k != "num_prompts") {
      EXPECT_TRUE(j.contains(k)) << k;
    }
  }
  EXPECT_TRUE(j.contains("max_concurrency"));
  EXPECT_TRUE(j.contains("num_prompts"));
}

TEST(ConfigJson, RunKeepsEveryKeyItWroteBefore) {
  RunFlags f;
  f.server.timing = "fixed";
  const RunPlan plan = resolve_run(f, env_with_data());
  const json requested = run_flags_json(f);
  const json effective = app::run_effective_config(plan, plan.load, 200);
  for (const auto* k : {"base_url",
                        "endpoint",
                        "backend",
                        "model",
                        "tokenizer",
                        "dataset_name",
                        "dataset_path",
                        "num_prompts",
                        "seed",
                        "random_input_len",
                        "random_output_len",
                        "random_range_ratio",
                        "random_prefix_len",
                        "random_prompt_kind",
                        "output_len",
                        "max_concurrency",
                        "request_rate",
                        "burstiness",
                        "duration",
                        "num_warmups",
                        "ignore_eos",
                        "extra_body",
                        "goodput",
                        "percentile_metrics",
                        "metric_percentiles",
                        "client_threads",
                        "stream",
                        "continuous_usage",
                        "insecure",
                        "ca_cert",
                        "header_names"}) {
    EXPECT_TRUE(requested.contains(k)) << k;
    EXPECT_TRUE(effective.contains(k)) << k;
  }
  for (const auto* k : {"chat", "builtin_server", "samples"}) {
    EXPECT_TRUE(effective.contains(k)) << k;
  }
  for (const auto* k :
       {"timing", "ttft_ms", "itl_ms", "tokens_per_chunk", "max_num_seqs", "model"}) {
    EXPECT_TRUE(effective.at("builtin_server").contains(k)) << k;
  }
}

TEST(ConfigJson, InfiniteRateIsWrittenAsInf) {
  RunFlags f;
  f.base_url = "http://127.0.0.1:1";
  const RunPlan plan = resolve_run(f, env_with_data());
  const json j = app::run_effective_config(plan, plan.load, 1);
  EXPECT_EQ(j.at("request_rate"), "inf");
  EXPECT_TRUE(j.at("builtin_server").is_null());
  EXPECT_EQ(j.at("base_url"), "http://127.0.0.1:1");
}

}  // namespace
}  // namespace llmbench::cli
