// `resolve_run` (cli/run_plan.hpp): the typed plan of `llmbench run` from its parsed flags:
// defaults, conflicts, the built-in server's `--server-*` flags and the API-key precedence.

#include "llmbench/cli/run_flags.hpp"
#include "llmbench/cli/run_plan.hpp"
#include "llmbench/core/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <string>
#include <vector>

namespace llmbench::cli {
namespace {

using app::RunPlan;

ResolveEnv test_env() {
  ResolveEnv env;
  env.api_key = "";
  env.hardware_threads = 4;
  env.open_file_limit = -1;
  env.memory_bytes = 0;
  env.data_dir = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";
  return env;
}

/// Flags for a run against a given URL (no built-in server, no profile files read).
RunFlags remote(const std::string& url = "http://127.0.0.1:9000") {
  RunFlags f;
  f.base_url = url;
  return f;
}

/// The source ("--flag") of the `Exception` that `resolve_run` throws, or "" if none.
std::string error_source(const RunFlags& f, const ResolveEnv& env = test_env()) {
  try {
    (void)resolve_run(f, env);
  } catch (const Exception& e) {
    return e.error().source;
  }
  return "";
}

std::string header(const RunPlan& plan, const std::string& name) {
  for (const auto& [k, v] : plan.load.client.headers) {
    if (k == name)
      return v;
  }
  return "<none>";
}

TEST(ResolveRun, NativeBackendsNeedARemoteServerAndDefaultTheirEndpoints) {
  // The built-in server speaks only the OpenAI API.
  for (const char* backend : {"sglang", "tgi", "trt-llm"}) {
    RunFlags f;
    f.backend = backend;
    EXPECT_EQ(error_source(f), "--backend") << backend;
  }
  RunFlags f = remote();
  f.backend = "tgi";
  EXPECT_EQ(resolve_run(f, test_env()).load.endpoint, "/generate_stream");
  f.no_stream = true;
  const RunPlan whole = resolve_run(f, test_env());
  EXPECT_EQ(whole.load.endpoint, "/generate");
  EXPECT_FALSE(whole.load.request.stream);
  f = remote();
  f.backend = "tensorrt-llm";
  const RunPlan triton = resolve_run(f, test_env());
  EXPECT_EQ(triton.load.backend, protocol::Backend::TrtLlm);
  // `{model}` is filled in once the model is known (run_command.cpp, discover_model).
  EXPECT_EQ(triton.load.endpoint, "/v2/models/{model}/generate_stream");
  f.backend = "sglang";
  EXPECT_EQ(resolve_run(f, test_env()).load.endpoint, "/generate");
}

TEST(ResolveRun, DefaultsStartTheBuiltInEngineServer) {
  const RunPlan plan = resolve_run(RunFlags{}, test_env());
  ASSERT_TRUE(plan.builtin.has_value());
  EXPECT_EQ(plan.builtin->options.timing, server::Timing::Engine);
  EXPECT_EQ(plan.builtin->options.model, "deepseek-r1");
  ASSERT_TRUE(plan.builtin->options.engine.has_value());
  EXPECT_EQ(plan.builtin->options.engine->spec.memory.tp, 8);
  EXPECT_EQ(plan.builtin->options.engine->spec.plan.block_size, 64);  // MLA
  EXPECT_DOUBLE_EQ(plan.builtin->options.engine->admission_window_ms, 5.0);
  EXPECT_EQ(plan.load.backend, protocol::Backend::OpenAI);
  EXPECT_EQ(plan.load.endpoint, "/v1/completions");
  EXPECT_FALSE(plan.load.request.chat);
  EXPECT_FALSE(plan.load.request.continuous_usage);
  EXPECT_EQ(plan.load.num_prompts, 200);
  EXPECT_EQ(plan.load.max_concurrency, -1);
  EXPECT_TRUE(std::isinf(plan.load.request_rate));
  EXPECT_EQ(plan.load.client_threads, 4);  // one per core of the environment
  EXPECT_EQ(plan.load.client.connect_timeout, std::chrono::milliseconds(10'000));
  EXPECT_EQ(plan.load.client.total_timeout, std::chrono::milliseconds(3'600'000));
  EXPECT_DOUBLE_EQ(plan.load.drain_timeout_s, 3605);
  EXPECT_TRUE(plan.load.request.stream);
  EXPECT_TRUE(plan.load.prewarm_connections);
  EXPECT_TRUE(plan.load.client.headers.empty());
  EXPECT_EQ(plan.dataset.kind, workload::DatasetKind::MtBench);
  EXPECT_EQ(plan.dataset.num_prompts, 200);
  EXPECT_EQ(plan.dataset.data_dir, test_env().data_dir);
  EXPECT_FALSE(plan.output.save_result);
  EXPECT_FALSE(plan.output.save_records);
  EXPECT_EQ(plan.output.dir, ".");
  EXPECT_EQ(plan.output.stem, "");
  EXPECT_TRUE(plan.progress);
  EXPECT_TRUE(plan.warnings.empty());
  EXPECT_EQ(plan.report.percentile_metrics,
            (std::vector<std::string>{"ttft", "tpot", "itl", "e2el"}));
}

TEST(ResolveRun, GivenUrlIsParsedAndNoServerIsPlanned) {
  RunFlags f = remote("https://example.test:8443/api");
  f.backend = "openai-chat";
  const RunPlan plan = resolve_run(f, test_env());
  EXPECT_FALSE(plan.builtin.has_value());
  EXPECT_TRUE(plan.load.url.tls);
  EXPECT_EQ(plan.load.url.host, "example.test");
  EXPECT_EQ(plan.load.url.port, 8443);
  EXPECT_EQ(plan.load.url.path_prefix, "/api");
  EXPECT_EQ(plan.load.endpoint, "/v1/chat/completions");
  EXPECT_TRUE(plan.load.request.chat);
}

TEST(ResolveRun, TrailingV1OfTheUrlIsDroppedWithAWarning) {
  const RunPlan plan = resolve_run(remote("http://127.0.0.1:9000/v1"), test_env());
  EXPECT_EQ(plan.load.url.path_prefix, "");
  ASSERT_EQ(plan.warnings.size(), 1U);
  EXPECT_NE(plan.warnings[0].find("/v1"), std::string::npos);
}

TEST(ResolveRun, HostAndPortMakeTheUrl) {
  RunFlags f;
  f.host = "10.0.0.5";
  f.given = {"--host"};
  RunPlan plan = resolve_run(f, test_env());
  EXPECT_FALSE(plan.builtin.has_value());
  EXPECT_EQ(plan.load.url.host, "10.0.0.5");
  EXPECT_EQ(plan.load.url.port, 8000);  // vLLM's default port
  f.port = 9001;
  f.given = {"--host", "--port"};
  plan = resolve_run(f, test_env());
  EXPECT_EQ(plan.load.url.port, 9001);
}

TEST(ResolveRun, ChatEndpointMakesChatRequests) {
  RunFlags f = remote();
  f.endpoint = "/v1/chat/completions";
  EXPECT_TRUE(resolve_run(f, test_env()).load.request.chat);
}

/// Every request flag reaches the template the bodies are built from (`--model` was once lost
/// on the way, so `run` used the first model of /v1/models whatever was typed).
TEST(ResolveRun, RequestFlagsMakeTheRequestTemplate) {
  RunFlags f = remote();
  f.model = "my-model";
  f.no_stream = true;
  f.continuous_usage = true;
  f.ignore_eos = true;
  f.min_tokens = 3;
  f.temperature = 0.5;
  f.top_p = 0.9;
  f.extra_body = R"({"seed": 7})";
  const protocol::GenRequest& r = resolve_run(f, test_env()).load.request;
  EXPECT_EQ(r.model, "my-model");
  EXPECT_FALSE(r.chat);
  EXPECT_FALSE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_TRUE(r.continuous_usage);
  EXPECT_TRUE(r.ignore_eos);
  EXPECT_EQ(r.min_tokens, 3);
  EXPECT_EQ(r.temperature, 0.5);
  EXPECT_EQ(r.top_p, 0.9);
  EXPECT_EQ(r.extra_body_json, R"({"seed": 7})");
  EXPECT_TRUE(r.prompt.empty());  // filled per sample by run_load
  EXPECT_EQ(r.max_tokens, -1);
  EXPECT_EQ(resolve_run(remote(), test_env()).load.request.model, "");  // = read /v1/models
}

TEST(ResolveRun, TheBuiltInServerServesTheModelRunAsksFor) {
  RunFlags f;
  f.model = "my-model";
  const RunPlan plan = resolve_run(f, test_env());
  ASSERT_TRUE(plan.builtin.has_value());
  EXPECT_EQ(plan.builtin->options.model, "my-model");  // else every request would get a 404
  EXPECT_EQ(plan.load.request.model, "my-model");
}

TEST(ResolveRun, VllmBackendAsksTheBuiltInServerForUsageOnEveryChunk) {
  RunFlags f;
  f.backend = "vllm";
  f.server.timing = "fixed";
  EXPECT_TRUE(resolve_run(f, test_env()).load.request.continuous_usage);
  // A given target is asked only when --continuous-usage says so.
  RunFlags g = remote();
  g.backend = "vllm";
  EXPECT_FALSE(resolve_run(g, test_env()).load.request.continuous_usage);
}

TEST(ResolveRun, TargetConflicts) {
  RunFlags f = remote();
  f.host = "h";
  f.given = {"--host"};
  EXPECT_EQ(error_source(f), "--host");
  RunFlags g = remote();
  g.port = 9000;
  g.given = {"--port"};
  EXPECT_EQ(error_source(g), "--port");
  RunFlags h;  // --port alone is vLLM's: a server on 127.0.0.1, not the built-in one
  h.port = 9000;
  h.given = {"--port"};
  EXPECT_EQ(error_source(h), "");
  const RunPlan plan = resolve_run(h, test_env());
  EXPECT_FALSE(plan.builtin.has_value());
  EXPECT_EQ(plan.load.url.origin(), "http://127.0.0.1:9000");
}

TEST(ResolveRun, ServerFlagsWithATargetAreAConflict) {
  RunFlags f = remote();
  f.server.engine.tp = 4;
  f.given = {"--base-url", "--server-tp"};
  EXPECT_EQ(error_source(f), "--server-tp");
  RunFlags g;
  g.host = "h";
  g.server.timing = "fixed";
  g.given = {"--host", "--server-timing"};
  EXPECT_EQ(error_source(g), "--server-timing");
}

TEST(ResolveRun, ServerFlagsConfigureTheBuiltInServer) {
  RunFlags f;
  f.server.timing = "fixed";
  f.server.options.ttft_ms = 7;
  f.server.options.itl_ms = 2;
  f.server.options.tokens_per_chunk = 3;
  f.server.engine.max_num_seqs = 12;
  f.server.max_model_len = 4096;
  f.given = {"--server-timing", "--server-ttft-ms", "--server-max-model-len"};
  const RunPlan plan = resolve_run(f, test_env());
  ASSERT_TRUE(plan.builtin.has_value());
  const auto& o = plan.builtin->options;
  EXPECT_EQ(o.timing, server::Timing::Fixed);
  EXPECT_DOUBLE_EQ(o.ttft_ms, 7);
  EXPECT_DOUBLE_EQ(o.itl_ms, 2);
  EXPECT_EQ(o.tokens_per_chunk, 3);
  EXPECT_EQ(o.max_num_seqs, 12);
  EXPECT_EQ(o.max_model_len, 4096);
  EXPECT_EQ(o.model, "llmbench-sim");

  RunFlags e;
  e.server.engine.model_profile = "deepseek-r1-distill-llama-8b";
  e.server.engine.tp = 2;
  e.server.engine.gpu = "h20";
  const RunPlan engine = resolve_run(e, test_env());
  ASSERT_TRUE(engine.builtin->options.engine.has_value());
  const sim::EngineSpec& spec = engine.builtin->options.engine->spec;
  EXPECT_EQ(spec.memory.tp, 2);
  EXPECT_EQ(spec.plan.block_size, 16);  // GQA
  EXPECT_NE(spec.gpu.name.find("h20"), std::string::npos);
}

TEST(ResolveRun, ServerFlagErrorsNameThePrefixedFlag) {
  RunFlags a;
  a.server.timing = "bogus";
  EXPECT_EQ(error_source(a), "--server-timing");
  RunFlags b;
  b.server.engine.block_size = -1;
  EXPECT_EQ(error_source(b), "--server-block-size");
  RunFlags c;
  c.server.max_model_len = 0;
  EXPECT_EQ(error_source(c), "--server-max-model-len");
  RunFlags d;
  d.server.engine.step_overhead_us = -5;
  EXPECT_EQ(error_source(d), "--server-step-overhead-us");
  RunFlags e;
  e.server.engine.dp = 2;
  EXPECT_EQ(error_source(e), "--server-dp");
}

TEST(ResolveRun, ApiKeyFlagBeatsTheEnvironment) {
  ResolveEnv env = test_env();
  env.api_key = "env-key";
  RunFlags f = remote();
  f.api_key = "flag-key";
  const RunPlan plan = resolve_run(f, env);
  EXPECT_EQ(header(plan, "Authorization"), "Bearer flag-key");
  EXPECT_EQ(plan.load.secrets, (std::vector<std::string>{"flag-key"}));
}

TEST(ResolveRun, ApiKeyFromTheEnvironmentWhenNoFlag) {
  ResolveEnv env = test_env();
  env.api_key = "env-key";
  const RunPlan plan = resolve_run(remote(), env);
  EXPECT_EQ(header(plan, "Authorization"), "Bearer env-key");
  EXPECT_EQ(plan.load.secrets, (std::vector<std::string>{"env-key"}));
  EXPECT_EQ(header(resolve_run(remote(), test_env()), "Authorization"), "<none>");
}

TEST(ResolveRun, AuthorizationHeaderWinsOverTheApiKey) {
  ResolveEnv env = test_env();
  env.api_key = "env-key";
  RunFlags f = remote();
  f.api_key = "flag-key";
  f.headers = {"authorization:   Token abc", "X-Team:\tperf \t"};
  const RunPlan plan = resolve_run(f, env);
  ASSERT_EQ(plan.load.client.headers.size(), 2U);
  EXPECT_EQ(header(plan, "authorization"), "Token abc");  // leading spaces dropped
  EXPECT_EQ(header(plan, "X-Team"), "perf");  // OWS around the value dropped (RFC 9110 5.5)
  EXPECT_EQ(header(plan, "Authorization"), "<none>");
  // Header values are secrets; the unsent key is not among them (it is never sent).
  EXPECT_EQ(plan.load.secrets, (std::vector<std::string>{"Token abc", "perf"}));
  ASSERT_EQ(plan.warnings.size(), 1U);
  EXPECT_NE(plan.warnings[0].find("not sending the API key"), std::string::npos);
}

TEST(ResolveRun, BadHeaders) {
  RunFlags f = remote();
  f.headers = {"NoColon"};
  EXPECT_EQ(error_source(f), "--header");
  f.headers = {": value"};
  EXPECT_EQ(error_source(f), "--header");
  f.headers = {"X: a\r\nInjected: b"};
  EXPECT_EQ(error_source(f), "--header");
}

TEST(ResolveRun, BadValuesNameTheirFlag) {
  const auto with = [](auto set) {
    RunFlags f = remote();
    set(f);
    return error_source(f);
  };
  EXPECT_EQ(with([](RunFlags& f) { f.connect_timeout_s = 0.0004; }), "--connect-timeout");
  EXPECT_EQ(with([](RunFlags& f) { f.idle_timeout_s = 0; }), "--idle-timeout");
  EXPECT_EQ(with([](RunFlags& f) { f.timeout_s = 2e7; }), "--timeout");
  EXPECT_EQ(with([](RunFlags& f) { f.request_rate = "1e400"; }), "--request-rate");
  EXPECT_EQ(with([](RunFlags& f) { f.request_rate = "1e-9"; }), "--request-rate");
  EXPECT_EQ(with([](RunFlags& f) { f.burstiness = "1e999"; }), "--burstiness");
  EXPECT_EQ(with([](RunFlags& f) { f.percentile_metrics = ""; }), "--percentile-metrics");
  EXPECT_EQ(with([](RunFlags& f) { f.percentile_metrics = ",,"; }), "--percentile-metrics");
  EXPECT_EQ(with([](RunFlags& f) { f.goodput = {""}; }), "--goodput");
  EXPECT_EQ(with([](RunFlags& f) { f.num_prompts = 0; }), "--num-prompts");
  EXPECT_EQ(with([](RunFlags& f) { f.max_concurrency = 0; }), "--max-concurrency");
  EXPECT_EQ(with([](RunFlags& f) { f.duration_s = -1; }), "--duration");
  EXPECT_EQ(with([](RunFlags& f) { f.num_warmups = -1; }), "--num-warmups");
  EXPECT_EQ(with([](RunFlags& f) { f.output_len = 0; }), "--output-len");
  EXPECT_EQ(with([](RunFlags& f) { f.client_threads = 10'000; }), "--client-threads");
  EXPECT_EQ(with([](RunFlags& f) { f.temperature = NAN; }), "--temperature");
  EXPECT_EQ(with([](RunFlags& f) { f.backend = "tgi-typo"; }), "--backend");
  EXPECT_EQ(with([](RunFlags& f) { f.extra_body = "[1]"; }), "--extra-body");
  // A timeout of exactly 1 ms is kept (not rounded to 0).
  RunFlags ok = remote();
  ok.connect_timeout_s = 0.001;
  EXPECT_EQ(resolve_run(ok, test_env()).load.client.connect_timeout, std::chrono::milliseconds(1));
}

TEST(ResolveRun, UrlWithAQueryIsRejectedAtItsOffset) {
  try {
    (void)resolve_run(remote("http://127.0.0.1:9000/?api-version=2"), test_env());
    FAIL() << "accepted a query";
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, "--base-url");
    EXPECT_EQ(e.error().offset, 22);
  }
  EXPECT_EQ(error_source(remote("http://127.0.0.1:9000#frag")), "--base-url");
  EXPECT_EQ(error_source(remote("ftp://x")), "--base-url");
}

TEST(ResolveRun, DatasetFlagsOfAnotherDatasetAreAConflict) {
  RunFlags f = remote();  // default dataset: mtbench
  f.random_input_len = 64;
  f.given = {"--random-input-len"};
  EXPECT_EQ(error_source(f), "--random-input-len");
  f.dataset_name = "random";
  EXPECT_EQ(error_source(f), "");
  f.given = {"--sonnet-prefix-len"};
  EXPECT_EQ(error_source(f), "--sonnet-prefix-len");
  // The default values of another dataset's flags are no conflict.
  RunFlags g = remote();
  g.given = {"--dataset-name"};
  g.dataset_name = "sonnet";
  EXPECT_EQ(error_source(g), "");
}

TEST(ResolveRun, AbsurdSizesFailBeforeAnyMemoryIsTaken) {
  ResolveEnv env = test_env();
  env.memory_bytes = std::int64_t{16} << 30;
  RunFlags f = remote();
  f.num_prompts = 100'000'000;
  try {
    (void)resolve_run(f, env);
    FAIL() << "accepted 1e8 prompts with 16 GiB";
  } catch (const Exception& e) {
    EXPECT_EQ(e.error().source, "--num-prompts");
    EXPECT_NE(e.error().message.find("GB of memory"), std::string::npos) << e.error().message;
  }
  f.num_prompts = 10'000;
  EXPECT_NO_THROW((void)resolve_run(f, env));
}

TEST(ResolveRun, InFlightRequestsAreCappedBelowTheOpenFileLimit) {
  ResolveEnv env = test_env();
  env.open_file_limit = 1128;
  RunFlags f;
  f.server.timing = "fixed";
  f.num_prompts = 1000;
  const RunPlan builtin = resolve_run(f, env);
  EXPECT_EQ(builtin.load.max_concurrency, 500);  // two sockets per request in one process
  ASSERT_EQ(builtin.warnings.size(), 1U);
  RunFlags g = remote();
  g.num_prompts = 1000;  // fits under one socket per request: no cap
  EXPECT_EQ(resolve_run(g, env).load.max_concurrency, -1);
  g.num_prompts = 2000;
  EXPECT_EQ(resolve_run(g, env).load.max_concurrency, 1000);
  g.max_concurrency = 8;
  EXPECT_EQ(resolve_run(g, env).load.max_concurrency, 8);
  EXPECT_TRUE(resolve_run(g, env).warnings.empty());
}

TEST(ResolveRun, SamplesCoverWarmupsAndDurationRuns) {
  RunFlags f = remote();
  f.num_prompts = 10;
  f.num_warmups = 3;
  EXPECT_EQ(resolve_run(f, test_env()).dataset.num_prompts, 13);
  f.duration_s = 30;
  EXPECT_EQ(resolve_run(f, test_env()).dataset.num_prompts, 1003);
}

TEST(ResolveRun, OutputPaths) {
  RunFlags f = remote();
  f.result_dir = "out/runs";
  f.result_filename = "bench.json";
  RunPlan plan = resolve_run(f, test_env());
  EXPECT_FALSE(plan.output.save_result);
  EXPECT_TRUE(plan.output.save_records);  // --result-dir alone keeps the records
  EXPECT_EQ(plan.output.dir, "out/runs");
  EXPECT_EQ(plan.output.stem, "bench");
  f.save_result = true;
  f.save_detailed = true;
  f.quiet = true;
  plan = resolve_run(f, test_env());
  EXPECT_TRUE(plan.output.save_result);
  EXPECT_TRUE(plan.output.save_detailed);
  EXPECT_FALSE(plan.progress);
}

TEST(ResolveRun, DefaultResultStemIsVllmsFileName) {
  RunFlags f;
  f.backend = "vllm";
  f.max_concurrency = 16;
  std::tm tm{};
  tm.tm_year = 2025 - 1900;
  tm.tm_mon = 2;
  tm.tm_mday = 4;
  tm.tm_hour = 5;
  tm.tm_min = 6;
  tm.tm_sec = 7;
  tm.tm_isdst = -1;
  const auto t = static_cast<std::int64_t>(std::mktime(&tm));
  EXPECT_EQ(app::default_result_stem(f.label, f.backend, 2.5, f.max_concurrency,
                                     "deepseek-ai/DeepSeek R1", t),
            "vllm-2.5qps-concurrency16-deepseek-ai_DeepSeek_R1-20250304-050607");
  f.max_concurrency = -1;
  EXPECT_EQ(app::default_result_stem(f.label, f.backend, INFINITY, f.max_concurrency, "m", t),
            "vllm-infqps-m-20250304-050607");
}

// The open-file cap on requests in flight is warned about before the run only when it will bind
// (every request at once); at a finite rate it is kept, and warned about after the run only if
// the load reached it (RunPlan::open_file_cap).
TEST(ResolveRun, OpenFileCapIsWarnedAboutOnlyWhenItBinds) {
  ResolveEnv env = test_env();
  env.open_file_limit = 1128;  // a cap of 1000 against a remote server
  RunFlags f = remote();
  f.num_prompts = 5000;
  f.request_rate = "2";
  f.given = {"--num-prompts", "--request-rate"};
  const RunPlan paced = resolve_run(f, env);
  EXPECT_EQ(paced.load.max_concurrency, 1000);
  EXPECT_EQ(paced.open_file_cap, 1000);
  EXPECT_EQ(paced.open_file_limit, 1128);
  for (const auto& w : paced.warnings) EXPECT_EQ(w.find("capping"), std::string::npos) << w;

  f.request_rate = "inf";
  const RunPlan burst = resolve_run(f, env);
  EXPECT_EQ(burst.load.max_concurrency, 1000);
  EXPECT_EQ(burst.open_file_cap, 0);
  ASSERT_EQ(burst.warnings.size(), 1U);
  EXPECT_NE(burst.warnings[0].find("capping requests in flight at 1000 (open-file limit 1128"),
            std::string::npos)
      << burst.warnings[0];

  f.max_concurrency = 64;  // a cap below the limit: nothing to say
  EXPECT_TRUE(resolve_run(f, env).warnings.empty());
}

// vllm bench serve's meanings: --served-model-name is the name sent (--model then names the
// repository), --endpoint-type is --backend, --port alone is a server on 127.0.0.1, and a flag
// that would change the load is refused, naming it.
TEST(ResolveRun, VllmMeanings) {
  RunFlags f;
  f.model = "Qwen/Qwen3-Next-80B-A3B-Instruct";
  f.served_model_name = "qwen3-next";
  f.port = 9001;
  f.endpoint_type = "openai-chat";
  f.given = {"--model", "--served-model-name", "--port", "--endpoint-type", "--trust-remote-code"};
  const RunPlan plan = resolve_run(f, test_env());
  EXPECT_EQ(plan.load.request.model, "qwen3-next");
  EXPECT_TRUE(plan.load.request.chat);
  EXPECT_EQ(plan.load.endpoint, "/v1/chat/completions");
  EXPECT_FALSE(plan.builtin.has_value());
  EXPECT_EQ(plan.load.url.host, "127.0.0.1");
  EXPECT_EQ(plan.load.url.port, 9001);
  std::string all;
  for (const auto& w : plan.warnings) all += w + "\n";
  EXPECT_NE(all.find("sending model 'qwen3-next'"), std::string::npos) << all;
  EXPECT_NE(all.find("--trust-remote-code (llmbench runs no model code"), std::string::npos) << all;
  EXPECT_NE(all.find("--endpoint-type (read as --backend"), std::string::npos) << all;

  RunFlags both = remote();
  both.endpoint_type = "openai-chat";
  both.backend = "vllm";
  both.given = {"--endpoint-type", "--backend"};
  EXPECT_EQ(error_source(both), "--endpoint-type");

  RunFlags lora = remote();
  lora.given = {"--lora-modules"};
  EXPECT_EQ(error_source(lora), "--lora-modules");
}

}  // namespace
}  // namespace llmbench::cli
