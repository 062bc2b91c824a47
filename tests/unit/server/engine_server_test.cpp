// The built-in server with engine timing: the real-time engine emits exactly the token times of
// the virtual-time simulation, the HTTP stream carries one token per engine step, and /metrics
// is valid Prometheus text with vLLM's names, types and buckets.

#include "llmbench/core/error.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/server/openai_request.hpp"
#include "llmbench/server/prometheus.hpp"
#include "llmbench/server/realtime_engine.hpp"
#include "llmbench/server/server.hpp"
#include "llmbench/sim/memory.hpp"
#include "llmbench/sim/profiles.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine_events.hpp"
#include "test_client.hpp"
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <thread>

namespace llmbench::server {
namespace {

using nlohmann::json;

using testing::r1_settings;

TEST(Histogram, CumulativeBucketsSumAndCount) {
  Histogram h(kItlBuckets, 1e-9);
  h.observe(5'000'000);        // 5 ms  → le 0.01
  h.observe(10'000'000);       // 10 ms → le 0.01 (bounds are inclusive)
  h.observe(30'000'000);       // 30 ms → le 0.05
  h.observe(100'000'000'000);  // 100 s → +Inf only
  std::string out;
  h.write(out, "x", "m=\"a\"");
  EXPECT_NE(out.find("x_bucket{m=\"a\",le=\"0.01\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_bucket{m=\"a\",le=\"0.025\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("x_bucket{m=\"a\",le=\"0.05\"} 3\n"), std::string::npos);
  EXPECT_NE(out.find("x_bucket{m=\"a\",le=\"80.0\"} 3\n"), std::string::npos);
  EXPECT_NE(out.find("x_bucket{m=\"a\",le=\"+Inf\"} 4\n"), std::string::npos);
  EXPECT_NE(out.find("x_sum{m=\"a\"} 100.045\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_count{m=\"a\"} 4\n"), std::string::npos);
  EXPECT_EQ(h.count(), 4u);
}

/// Every token the real-time engine emits carries the nominal time the virtual-time
/// simulation gives it (same requests arriving together, same engine): exact equality.
TEST(RealtimeEngine, TokenTimesEqualTheSimulation) {
  const EngineSettings settings = r1_settings(50.0);  // wide window: all 4 join the first batch
  const std::vector<std::pair<std::int64_t, std::int64_t>> lengths = {
      {700, 5}, {100, 9}, {300, 3}, {64, 12}};
  // Virtual time.
  sim::SimOptions so;
  so.engine = settings.spec.engine;
  std::vector<sim::SimRequest> requests;
  for (const auto& [p, o] : lengths) requests.push_back(sim::SimRequest{0, p, o, {}, false, {}});
  sim::Simulation simulation(so, settings.spec.make_exec_model());
  const auto expected = simulation.run(requests);

  // Real time.
  RealtimeEngine engine(settings);
  engine.start();
  const TimeNs t0 = steady_now_ns();
  const auto got = testing::collect_engine_events(engine, lengths, t0);
  ASSERT_EQ(testing::finished_requests(got), 4u);
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const auto& rec = expected.records[i];
    ASSERT_EQ(got[i].size(), rec.chunks.size()) << "request " << i;
    for (std::size_t k = 0; k < got[i].size(); ++k) {
      EXPECT_EQ(got[i][k].time_ns - t0, rec.chunks[k].time_ns) << "request " << i << " token " << k;
      EXPECT_EQ(got[i][k].tokens, 1);
      EXPECT_EQ(got[i][k].finished, k + 1 == got[i].size());
    }
  }
  const auto& m = engine.metrics();
  EXPECT_EQ(m.generation_tokens.load(), 5 + 9 + 3 + 12);
  EXPECT_EQ(m.prompt_tokens.load(), 700 + 100 + 300 + 64);
  EXPECT_EQ(m.ttft.count(), 4u);
  EXPECT_EQ(m.itl.count(), static_cast<std::uint64_t>(4 + 8 + 2 + 11));
  EXPECT_EQ(m.e2e.count(), 4u);
  EXPECT_EQ(m.steps.load(), expected.stats.steps);
  EXPECT_EQ(m.running.load(), 0);
  EXPECT_EQ(m.waiting.load(), 0);
}

/// A parsed Prometheus text exposition: sample name+labels → value, and family → type.
struct Exposition {
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;
};

Exposition parse_exposition(const std::string& text) {
  Exposition out;
  std::istringstream in(text);
  std::string line;
  std::string help_for;
  while (std::getline(in, line)) {
    EXPECT_FALSE(line.empty());
    if (line.rfind("# HELP ", 0) == 0) {
      help_for = line.substr(7, line.find(' ', 7) - 7);
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      const auto name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_EQ(name, help_for) << "TYPE without HELP: " << line;
      out.types[name] = line.substr(line.find(' ', 7) + 1);
      continue;
    }
    const auto space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    const std::string key = line.substr(0, space);
    EXPECT_EQ(out.samples.count(key), 0u) << "duplicate sample " << key;
    EXPECT_NE(key.find('{'), std::string::npos) << line;
    out.samples[key] = std::stod(line.substr(space + 1));
  }
  return out;
}

TEST(EngineServer, StreamsOneTokenPerStepAndExposesVllmMetrics) {
  ServerOptions options;
  options.timing = Timing::Engine;
  options.engine = r1_settings(1.0);
  options.model = "deepseek-r1";
  Server server(options);
  const auto port = server.start();
  // The same 1000-byte prompt twice (250 estimated tokens): the second hits 3 cached blocks.
  const std::string prompt(1000, 'a');
  for (int round = 0; round < 2; ++round) {
    test::TestClient client(port);
    const auto reply =
        client.stream("/v1/completions", json{{"prompt", prompt},
                                              {"max_tokens", 7},
                                              {"stream", true},
                                              {"stream_options", {{"include_usage", true}}}}
                                             .dump());
    ASSERT_EQ(reply.status, 200);
    int content = 0;
    for (const auto& e : reply.events) {
      if (e.data == "[DONE]")
        continue;
      const auto j = json::parse(e.data);
      if (!j["choices"].empty() && !j["choices"][0]["text"].get<std::string>().empty())
        ++content;
      if (j["choices"].empty()) {
        EXPECT_EQ(j["usage"]["prompt_tokens"], 250);
        EXPECT_EQ(j["usage"]["completion_tokens"], 7);
      }
    }
    EXPECT_EQ(content, 7);  // one event per engine step, one token each
  }
  // A prompt + output that can never fit the 2000 × 64-token cache is refused up front.
  {
    test::TestClient client(port);
    const auto reply =
        client.post("/v1/completions", json{{"prompt", "x"}, {"max_tokens", 2000 * 64}}.dump());
    EXPECT_EQ(reply.status, 400);
  }
  test::TestClient client(port);
  const auto reply = client.request(test::bhttp::verb::get, "/metrics");
  ASSERT_EQ(reply.status, 200);
  const Exposition m = parse_exposition(reply.body);
  const std::string l = "{model_name=\"deepseek-r1\"}";
  EXPECT_EQ(m.types.at("vllm:num_requests_running"), "gauge");
  EXPECT_EQ(m.types.at("vllm:kv_cache_usage_perc"), "gauge");
  EXPECT_EQ(m.types.at("vllm:prefix_cache_hits_total"), "counter");
  EXPECT_EQ(m.types.at("vllm:num_preemptions_total"), "counter");
  EXPECT_EQ(m.types.at("vllm:time_to_first_token_seconds"), "histogram");
  EXPECT_EQ(m.types.at("vllm:inter_token_latency_seconds"), "histogram");
  EXPECT_EQ(m.types.at("vllm:e2e_request_latency_seconds"), "histogram");
  EXPECT_EQ(m.samples.at("vllm:num_requests_running" + l), 0);
  EXPECT_EQ(m.samples.at("vllm:num_requests_waiting" + l), 0);
  EXPECT_EQ(m.samples.at("vllm:kv_cache_usage_perc" + l), 0);  // cached blocks are evictable
  EXPECT_EQ(m.samples.at("vllm:prompt_tokens_total" + l), 500);
  EXPECT_EQ(m.samples.at("vllm:generation_tokens_total" + l), 14);
  EXPECT_EQ(m.samples.at("vllm:prefix_cache_queries_total" + l), 500);
  EXPECT_EQ(m.samples.at("vllm:prefix_cache_hits_total" + l), 192);  // floor(249 / 64) blocks
  EXPECT_EQ(m.samples.at("vllm:num_preemptions_total" + l), 0);
  EXPECT_EQ(m.samples.at("vllm:request_success_total{finished_reason=\"length\",model_name="
                         "\"deepseek-r1\"}"),
            2);
  // Histograms: vLLM's bounds, cumulative, +Inf = count.
  const std::string ttft = "vllm:time_to_first_token_seconds";
  double previous = 0;
  for (const double le : kTtftBuckets) {
    const std::string bound =
        std::floor(le) == le ? fmt::format("{:.1f}", le) : fmt::format("{}", le);
    const double v =
        m.samples.at(ttft + "_bucket{model_name=\"deepseek-r1\",le=\"" + bound + "\"}");
    EXPECT_GE(v, previous);
    previous = v;
  }
  EXPECT_EQ(m.samples.at(ttft + "_bucket{model_name=\"deepseek-r1\",le=\"+Inf\"}"), 2);
  EXPECT_EQ(m.samples.at(ttft + "_count" + l), 2);
  EXPECT_GT(m.samples.at(ttft + "_sum" + l), 0);
  EXPECT_EQ(m.samples.at("vllm:inter_token_latency_seconds_count" + l), 12);
  EXPECT_EQ(m.samples.at("vllm:e2e_request_latency_seconds_count" + l), 2);
  EXPECT_EQ(m.samples.at("vllm:e2e_request_latency_seconds_bucket{model_name=\"deepseek-r1\","
                         "le=\"7680.0\"}"),
            2);
  EXPECT_EQ(m.samples.at("vllm:cache_config_info{block_size=\"64\",enable_prefix_caching="
                         "\"True\",num_gpu_blocks=\"2000\",model_name=\"deepseek-r1\"}"),
            1);
  // Every step run observes its lateness once; a single request's steps stay well under 2.5 s
  // late on any machine that runs the suite, so all fall in the finite buckets.
  EXPECT_EQ(m.types.at("llmbench:engine_step_lateness_seconds"), "histogram");
  EXPECT_EQ(m.types.at("llmbench:engine_late_steps_total"), "counter");
  const double steps = m.samples.at("llmbench:engine_steps_total" + l);
  EXPECT_GE(steps, 14);  // ≥ one step per generated token (two prompts, 7 tokens each)
  EXPECT_EQ(m.samples.at("llmbench:engine_step_lateness_seconds_count" + l), steps);
  EXPECT_EQ(m.samples.at("llmbench:engine_step_lateness_seconds_bucket{model_name=\"deepseek-r1\","
                         "le=\"2.5\"}"),
            steps);
  EXPECT_LE(m.samples.at("llmbench:engine_late_steps_total" + l), steps);
  server.stop();
}

/// The usage.prompt_tokens a server answers for `body` at `target` (a non-streamed request).
std::int64_t answered_prompt_tokens(std::uint16_t port, const std::string& target,
                                    const json& body) {
  test::TestClient client(port);
  const auto reply = client.post(target, body.dump());
  EXPECT_EQ(reply.status, 200) << reply.body;
  return json::parse(reply.body)["usage"]["prompt_tokens"].get<std::int64_t>();
}

/// Without a tokenizer, fixed and engine timing count a prompt by the same rule (the text-token
/// estimate of core/text.hpp that `simulate` uses), so `usage.prompt_tokens` agrees between them.
/// Mixed-script text, where the old bytes/4 rule of the fixed timing gave other counts.
TEST(EngineServer, FixedAndEngineTimingAnswerTheSamePromptTokens) {
  ServerOptions fixed_options;
  fixed_options.model = "deepseek-r1";
  fixed_options.ttft_ms = 1;
  fixed_options.itl_ms = 1;
  ServerOptions engine_options = fixed_options;
  engine_options.timing = Timing::Engine;
  engine_options.engine = r1_settings(1.0);
  Server fixed(fixed_options);
  Server engine(engine_options);
  const auto fixed_port = fixed.start();
  const auto engine_port = engine.start();
  const std::string mixed = "Hello, \xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C";
  const std::vector<std::pair<std::string, json>> requests = {
      {"/v1/completions", json{{"prompt", mixed}, {"max_tokens", 2}}},
      {"/v1/completions", json{{"prompt", json::array({mixed, "abc"})}, {"max_tokens", 2}}},
      {"/v1/completions", json{{"prompt", json::array({1, 2, 3})}, {"max_tokens", 2}}},
      {"/v1/chat/completions",
       json{{"messages", json::array({json{{"role", "system"}, {"content", "be brief"}},
                                      json{{"role", "user"}, {"content", mixed}}})},
            {"max_tokens", 2}}}};
  const std::vector<std::int64_t> expected = {estimate_text_tokens(mixed),
                                              estimate_text_tokens(mixed + "abc"), 3,
                                              estimate_text_tokens("be brief" + mixed)};
  EXPECT_EQ(expected[0], 2 + 5);  // ceil(7 ASCII bytes / 4) + 5 code points; bytes/4 gave 6
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const auto& [target, body] = requests[i];
    EXPECT_EQ(answered_prompt_tokens(fixed_port, target, body), expected[i]) << "fixed, " << i;
    EXPECT_EQ(answered_prompt_tokens(engine_port, target, body), expected[i]) << "engine, " << i;
  }
  fixed.stop();
  engine.stop();
}

TEST(EngineServer, ValidateNeedsEngineSettings) {
  ServerOptions options;
  options.timing = Timing::Engine;
  EXPECT_THROW(validate(options), llmbench::Exception);
  EXPECT_EQ(parse_timing("fixed", "--timing"), Timing::Fixed);
  EXPECT_EQ(parse_timing("engine", "--timing"), Timing::Engine);
  EXPECT_THROW(parse_timing("fast", "--timing"), llmbench::Exception);
}

}  // namespace
}  // namespace llmbench::server
