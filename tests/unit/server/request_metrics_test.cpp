// vLLM V1's per-request histograms in /metrics (queue, prefill, decode and inference time;
// prompt, generation and max_tokens counts) with both timing models, and the real-time abort
// path: a streaming client that disconnects frees its running slot and KV blocks.

#include "llmbench/server/prometheus.hpp"
#include "llmbench/server/realtime_engine.hpp"
#include "llmbench/server/server.hpp"
#include "llmbench/sim/memory.hpp"
#include "llmbench/sim/profiles.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine_events.hpp"
#include "test_client.hpp"
#include <chrono>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace llmbench::server {
namespace {

using nlohmann::json;

/// The value of sample `key` (name with its `{labels}`) in a Prometheus text body, or nullopt.
std::optional<double> sample(const std::string& body, const std::string& key) {
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 &&
        line[key.size()] == ' ')
      return std::stod(line.substr(key.size() + 1));
  }
  return std::nullopt;
}

/// `name_bucket{model_name="m",le="le"}` of histogram `name`.
std::string bucket(const std::string& name, const std::string& le) {
  return name + "_bucket{model_name=\"m\",le=\"" + le + "\"}";
}

std::string metrics(std::uint16_t port) {
  test::TestClient client(port);
  const auto reply = client.request(test::bhttp::verb::get, "/metrics");
  EXPECT_EQ(reply.status, 200);
  return reply.body;
}

/// Engine timing with `r1_settings(1.0)`, served as model "m".
ServerOptions engine_options() {
  ServerOptions options;
  options.timing = Timing::Engine;
  options.engine = testing::r1_settings(1.0);
  options.model = "m";
  return options;
}

/// Reads /metrics until `done(body)` holds, every 20 ms for at most 5 s (the engine thread
/// updates its gauges and histograms a moment after the HTTP side). Returns the last body and
/// whether `done` held.
std::pair<std::string, bool> metrics_until(std::uint16_t port,
                                           const std::function<bool(const std::string&)>& done) {
  std::string body = metrics(port);
  for (int i = 0; i < 250 && !done(body); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    body = metrics(port);
  }
  const bool held = done(body);
  return {body, held};
}

/// Sample `name{model_name="m"}` in `body`, −1 when absent.
double gauge(const std::string& body, const std::string& name) {
  return sample(body, name + "{model_name=\"m\"}").value_or(-1);
}

/// `vllm:request_success_total` of model "m" for `reason` ("length", "abort", …), −1 when absent.
double successes(const std::string& body, const std::string& reason) {
  return sample(body,
                "vllm:request_success_total{finished_reason=\"" + reason + "\",model_name=\"m\"}")
      .value_or(-1);
}

using testing::r1_settings;

TEST(Buckets125, FollowVllmBuild125Buckets) {
  EXPECT_EQ(buckets_1_2_5(0), std::vector<double>{});
  EXPECT_EQ(buckets_1_2_5(1), std::vector<double>{1});
  EXPECT_EQ(buckets_1_2_5(10), (std::vector<double>{1, 2, 5, 10}));
  EXPECT_EQ(buckets_1_2_5(49), (std::vector<double>{1, 2, 5, 10, 20}));
  // The server default max_model_len 32768: 1 … 20000 (50000 > 32768), 14 bounds.
  const auto b = buckets_1_2_5(32768);
  ASSERT_EQ(b.size(), 14u);
  EXPECT_EQ(b.front(), 1);
  EXPECT_EQ(b[12], 10000);
  EXPECT_EQ(b.back(), 20000);
}

TEST(RequestHistograms, ObservesTheFourIntervalsAndTheTokenCounts) {
  RequestHistograms h(1000);
  // queued 0, scheduled 0.4 s, first token 0.5 s, last token 2.5 s: queue 0.4 (le 0.5),
  // prefill 0.1 (le 0.3), decode 2.0 (le 2.0), inference 2.1 (le 2.5).
  h.observe(RequestTimes{0, 400'000'000, 500'000'000, 2'500'000'000, 700, 30, 64});
  std::string out;
  h.write(out, "model_name=\"m\"");
  auto at = [&](const std::string& key) { return sample(out, key).value_or(-1); };
  EXPECT_EQ(at(bucket("vllm:request_queue_time_seconds", "0.3")), 0);
  EXPECT_EQ(at(bucket("vllm:request_queue_time_seconds", "0.5")), 1);
  EXPECT_EQ(at(bucket("vllm:request_prefill_time_seconds", "0.3")), 1);
  EXPECT_EQ(at(bucket("vllm:request_decode_time_seconds", "1.5")), 0);
  EXPECT_EQ(at(bucket("vllm:request_decode_time_seconds", "2.0")), 1);
  EXPECT_EQ(at(bucket("vllm:request_inference_time_seconds", "2.0")), 0);
  EXPECT_EQ(at(bucket("vllm:request_inference_time_seconds", "2.5")), 1);
  EXPECT_EQ(at(bucket("vllm:request_inference_time_seconds", "+Inf")), 1);
  EXPECT_NEAR(at("vllm:request_inference_time_seconds_sum{model_name=\"m\"}"), 2.1, 1e-9);
  // Tokens on 1, 2, 5, …, 1000: 700 → le 1000, 30 → le 50, 64 → le 100.
  EXPECT_EQ(at(bucket("vllm:request_prompt_tokens", "500.0")), 0);
  EXPECT_EQ(at(bucket("vllm:request_prompt_tokens", "1000.0")), 1);
  EXPECT_EQ(at(bucket("vllm:request_generation_tokens", "20.0")), 0);
  EXPECT_EQ(at(bucket("vllm:request_generation_tokens", "50.0")), 1);
  EXPECT_EQ(at(bucket("vllm:request_params_max_tokens", "50.0")), 0);
  EXPECT_EQ(at(bucket("vllm:request_params_max_tokens", "100.0")), 1);
  EXPECT_EQ(at("vllm:request_prompt_tokens_sum{model_name=\"m\"}"), 700);
  EXPECT_NE(out.find("# TYPE vllm:request_decode_time_seconds histogram\n"), std::string::npos);
  // A clock quirk (first token before scheduling) is observed as 0, not as a negative sum.
  h.observe(RequestTimes{10, 5, 0, 20, 1, 1, 1});
  out.clear();
  h.write(out, "model_name=\"m\"");
  EXPECT_NEAR(at("vllm:request_prefill_time_seconds_sum{model_name=\"m\"}"), 0.1, 1e-9);
}

/// Fixed timing, ttft 30 ms, itl 10 ms, one token per chunk: a 5-token request has prefill
/// 30 ms, decode 4 × 10 = 40 ms and inference 70 ms (all ≤ 0.3 s); a 50-token one has decode
/// 490 ms (le 0.5) and inference 520 ms (le 0.8). Phases follow the model, so the sums are exact.
TEST(FixedServer, ExposesThePhaseAndTokenHistograms) {
  ServerOptions options;
  options.model = "m";
  options.ttft_ms = 30;
  options.itl_ms = 10;
  options.max_num_seqs = 4;
  options.max_model_len = 1000;  // token buckets 1 … 1000
  Server server(options);
  const auto port = server.start();
  test::TestClient client(port);
  const json ids = json::array({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});  // 12 prompt tokens
  for (int i = 0; i < 3; ++i) {
    const auto reply = client.stream(
        "/v1/completions", json{{"prompt", ids}, {"max_tokens", 5}, {"stream", true}}.dump());
    ASSERT_EQ(reply.status, 200);
  }
  const auto whole =
      client.post("/v1/completions", json{{"prompt", ids}, {"max_tokens", 50}}.dump());
  ASSERT_EQ(whole.status, 200);
  const std::string body = metrics(port);
  auto at = [&](const std::string& key) {
    const auto v = sample(body, key);
    EXPECT_TRUE(v.has_value()) << key;
    return v.value_or(-1);
  };
  const std::string l = "{model_name=\"m\"}";
  EXPECT_EQ(at("vllm:request_success_total{finished_reason=\"length\",model_name=\"m\"}"), 4);
  EXPECT_EQ(at("vllm:request_success_total{finished_reason=\"abort\",model_name=\"m\"}"), 0);
  const std::string decode = "vllm:request_decode_time_seconds";
  EXPECT_EQ(at(bucket(decode, "0.3")), 3);
  EXPECT_EQ(at(bucket(decode, "0.5")), 4);
  EXPECT_EQ(at(decode + "_count" + l), 4);
  EXPECT_NEAR(at(decode + "_sum" + l), 3 * 0.040 + 0.490, 1e-9);
  const std::string prefill = "vllm:request_prefill_time_seconds";
  EXPECT_EQ(at(bucket(prefill, "0.3")), 4);
  EXPECT_NEAR(at(prefill + "_sum" + l), 4 * 0.030, 1e-9);
  const std::string inference = "vllm:request_inference_time_seconds";
  EXPECT_EQ(at(bucket(inference, "0.3")), 3);
  EXPECT_EQ(at(bucket(inference, "0.5")), 3);
  EXPECT_EQ(at(bucket(inference, "0.8")), 4);
  EXPECT_NEAR(at(inference + "_sum" + l), 3 * 0.070 + 0.520, 1e-9);
  // Free slots: the queue is only the handler's own latency (loose bound).
  const std::string queue = "vllm:request_queue_time_seconds";
  EXPECT_EQ(at(queue + "_count" + l), 4);
  EXPECT_LT(at(queue + "_sum" + l), 0.5);
  // Tokens: prompt 12 (le 20), generated and max_tokens 5 ×3 (le 5) and 50 (le 50).
  EXPECT_EQ(at(bucket("vllm:request_prompt_tokens", "10.0")), 0);
  EXPECT_EQ(at(bucket("vllm:request_prompt_tokens", "20.0")), 4);
  EXPECT_EQ(at("vllm:request_prompt_tokens_sum" + l), 48);
  EXPECT_EQ(at(bucket("vllm:request_generation_tokens", "2.0")), 0);
  EXPECT_EQ(at(bucket("vllm:request_generation_tokens", "5.0")), 3);
  EXPECT_EQ(at(bucket("vllm:request_generation_tokens", "50.0")), 4);
  EXPECT_EQ(at(bucket("vllm:request_generation_tokens", "1000.0")), 4);
  EXPECT_EQ(at(bucket("vllm:request_generation_tokens", "+Inf")), 4);
  EXPECT_EQ(at("vllm:request_generation_tokens_sum" + l), 65);
  EXPECT_EQ(at("vllm:request_params_max_tokens_sum" + l), 65);
  EXPECT_EQ(at("vllm:request_params_max_tokens_count" + l), 4);
  EXPECT_FALSE(sample(body, bucket("vllm:request_prompt_tokens", "2000.0")).has_value());
  server.stop();
}

/// Fixed timing with one slot: a request that arrives while the slot is held waits for it, and
/// the wait is its queue time (loose lower bound: the holder runs 30 + 29 × 10 = 320 ms).
TEST(FixedServer, QueueTimeIsTheWaitForASlot) {
  ServerOptions options;
  options.model = "m";
  options.ttft_ms = 30;
  options.itl_ms = 10;
  options.max_num_seqs = 1;
  Server server(options);
  const auto port = server.start();
  std::thread first([port] {
    test::TestClient client(port);
    const auto reply = client.stream(
        "/v1/completions", json{{"prompt", "a"}, {"max_tokens", 30}, {"stream", true}}.dump());
    EXPECT_EQ(reply.status, 200);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  {
    test::TestClient client(port);
    EXPECT_EQ(
        client.post("/v1/completions", json{{"prompt", "b"}, {"max_tokens", 1}}.dump()).status,
        200);
  }
  first.join();
  const std::string body = metrics(port);
  const auto queue = sample(body, "vllm:request_queue_time_seconds_sum{model_name=\"m\"}");
  ASSERT_TRUE(queue.has_value());
  EXPECT_GT(*queue, 0.05);
  EXPECT_EQ(sample(body, "vllm:request_queue_time_seconds_count{model_name=\"m\"}").value_or(-1),
            2);
  server.stop();
}

/// The engine's phase instants, exactly: with max_num_seqs 1, request A (700-token prompt,
/// chunked over two steps of the 512-token budget, 5 tokens) and B (100 tokens, 3) arrive
/// together. Both are queued at t0; A is scheduled at t0 (the step before its first token);
/// B waits until A's last step ends and is scheduled at the start of the next step.
TEST(RealtimeEngine, ReportsQueuedScheduledAndFirstTokenInstants) {
  EngineSettings settings = r1_settings(50.0);
  settings.spec.engine.scheduler.max_num_seqs = 1;
  RealtimeEngine engine(settings);
  engine.start();
  const TimeNs t0 = steady_now_ns();
  const std::vector<std::pair<std::int64_t, std::int64_t>> lengths = {{700, 5}, {100, 3}};
  const auto got = testing::collect_engine_events(engine, lengths, t0);
  ASSERT_EQ(testing::finished_requests(got), 2u);
  ASSERT_EQ(got[0].size(), 5u);
  ASSERT_EQ(got[1].size(), 3u);
  const StreamEvent& a = got[0].back();
  const StreamEvent& b = got[1].back();
  EXPECT_EQ(a.queued_ns, t0);
  EXPECT_EQ(b.queued_ns, t0);
  EXPECT_EQ(a.scheduled_ns, t0);
  EXPECT_EQ(a.first_token_ns, got[0].front().time_ns);
  EXPECT_GT(a.first_token_ns, t0);
  EXPECT_EQ(b.scheduled_ns, a.time_ns);  // the step after A's last one
  EXPECT_EQ(b.first_token_ns, got[1].front().time_ns);
  EXPECT_GT(b.first_token_ns, b.scheduled_ns);
  // Only the last event carries the instants.
  EXPECT_EQ(got[0].front().queued_ns, -1);
  EXPECT_EQ(got[0].front().scheduled_ns, -1);
}

/// Engine timing over HTTP: one request on an idle engine is queued and scheduled at its
/// arrival (queue 0), so prefill = TTFT, decode = Σ ITL gaps and inference = prefill + decode,
/// exactly (same ns sums).
TEST(EngineServer, PhaseHistogramsAgreeWithTheEngineLatencies) {
  Server server(engine_options());
  const auto port = server.start();
  {
    test::TestClient client(port);
    const auto reply = client.stream(
        "/v1/completions",
        json{{"prompt", std::string(1000, 'a')}, {"max_tokens", 7}, {"stream", true}}.dump());
    ASSERT_EQ(reply.status, 200);
  }
  const std::string l = "{model_name=\"m\"}";
  // The engine thread observes its e2e histogram just after it hands the last token over, so a
  // client can ask /metrics a moment before: wait (bounded) until it is there.
  const std::string body =
      metrics_until(port, [&](const std::string& b) {
        return sample(b, "vllm:e2e_request_latency_seconds_count" + l).value_or(0) == 1;
      }).first;
  auto at = [&](const std::string& key) {
    const auto v = sample(body, key);
    EXPECT_TRUE(v.has_value()) << key;
    return v.value_or(-1);
  };
  EXPECT_EQ(at("vllm:request_queue_time_seconds_count" + l), 1);
  EXPECT_EQ(at("vllm:request_queue_time_seconds_sum" + l), 0);
  const double prefill = at("vllm:request_prefill_time_seconds_sum" + l);
  const double decode = at("vllm:request_decode_time_seconds_sum" + l);
  EXPECT_GT(prefill, 0);
  EXPECT_GT(decode, 0);
  EXPECT_EQ(prefill, at("vllm:time_to_first_token_seconds_sum" + l));
  EXPECT_EQ(decode, at("vllm:inter_token_latency_seconds_sum" + l));
  EXPECT_NEAR(at("vllm:request_inference_time_seconds_sum" + l), prefill + decode, 1e-9);
  EXPECT_NEAR(at("vllm:e2e_request_latency_seconds_sum" + l), prefill + decode, 1e-9);
  // 250 estimated prompt tokens (le 500), 7 generated (le 10); default max_model_len 32768.
  EXPECT_EQ(at(bucket("vllm:request_prompt_tokens", "200.0")), 0);
  EXPECT_EQ(at(bucket("vllm:request_prompt_tokens", "500.0")), 1);
  EXPECT_EQ(at(bucket("vllm:request_generation_tokens", "5.0")), 0);
  EXPECT_EQ(at(bucket("vllm:request_generation_tokens", "10.0")), 1);
  EXPECT_EQ(at(bucket("vllm:request_generation_tokens", "20000.0")), 1);
  EXPECT_EQ(at("vllm:request_params_max_tokens_sum" + l), 7);
  server.stop();
}

/// The real-time abort path: a streaming client that disconnects mid-generation is aborted in
/// the engine, which frees its running slot and KV blocks; it is not counted as a success and
/// observes no per-request histogram.
TEST(EngineServer, ClientDisconnectAbortsAndFreesTheKvCache) {
  Server server(engine_options());
  const auto port = server.start();
  {
    test::TestClient client(port);
    const auto reply = client.stream(
        "/v1/completions",
        json{{"prompt", std::string(1000, 'a')}, {"max_tokens", 5000}, {"stream", true}}.dump(), {},
        3);
    ASSERT_EQ(reply.status, 200);
    ASSERT_GE(reply.events.size(), 3u);
    // While it generates: one running request holding ceil((250 + n) / 64) of 2000 blocks.
    const std::string during = metrics(port);
    EXPECT_EQ(gauge(during, "vllm:num_requests_running"), 1);
    EXPECT_GT(gauge(during, "vllm:kv_cache_usage_perc"), 0);
    client.close();
  }
  const auto [after, drained] = metrics_until(port, [&](const std::string& b) {
    return gauge(b, "vllm:num_requests_running") == 0 &&
           gauge(b, "vllm:num_requests_waiting") == 0 && gauge(b, "vllm:kv_cache_usage_perc") == 0;
  });
  ASSERT_TRUE(drained) << after;
  EXPECT_EQ(successes(after, "length"), 0);
  // vLLM counts the disconnected request as finished with reason "abort".
  EXPECT_EQ(successes(after, "abort"), 1);
  EXPECT_EQ(gauge(after, "vllm:e2e_request_latency_seconds_count"), 0);
  EXPECT_EQ(gauge(after, "vllm:request_decode_time_seconds_count"), 0);
  EXPECT_EQ(gauge(after, "vllm:time_to_first_token_seconds_count"), 1);
  // Far fewer than 5000 tokens were generated: the engine stopped working for it.
  const double generated = gauge(after, "vllm:generation_tokens_total");
  EXPECT_GE(generated, 3);
  EXPECT_LT(generated, 5000);
  // The engine is usable afterwards: a short request completes.
  test::TestClient client(port);
  const auto reply = client.stream(
      "/v1/completions", json{{"prompt", "hello"}, {"max_tokens", 2}, {"stream", true}}.dump());
  EXPECT_EQ(reply.status, 200);
  const std::string end = metrics(port);
  EXPECT_EQ(successes(end, "length"), 1);
  EXPECT_EQ(gauge(end, "vllm:request_decode_time_seconds_count"), 1);
  server.stop();
}

/// A non-streamed request whose client leaves while the engine generates is aborted too (the
/// server watches the socket while it has nothing to write), as vLLM aborts it.
TEST(EngineServer, NonStreamedClientDisconnectAborts) {
  Server server(engine_options());
  const auto port = server.start();
  {
    test::TestClient client(port);
    client.send_only("/v1/completions",
                     json{{"prompt", std::string(1000, 'a')}, {"max_tokens", 5000}}.dump());
    ASSERT_TRUE(metrics_until(port, [&](const std::string& b) {
                  return gauge(b, "vllm:num_requests_running") == 1;
                }).second);
    client.close();
  }
  const auto [after, drained] = metrics_until(port, [&](const std::string& b) {
    return gauge(b, "vllm:num_requests_running") == 0 && gauge(b, "vllm:kv_cache_usage_perc") == 0;
  });
  ASSERT_TRUE(drained) << after;
  EXPECT_EQ(successes(after, "abort"), 1);
  EXPECT_EQ(successes(after, "length"), 0);
  EXPECT_LT(sample(after, "vllm:generation_tokens_total{model_name=\"m\"}").value_or(5000), 5000);
  // A pipelining client is not mistaken for one that left: two requests on one connection.
  test::TestClient client(port);
  const auto reply =
      client.post("/v1/completions", json{{"prompt", "hello"}, {"max_tokens", 3}}.dump());
  EXPECT_EQ(reply.status, 200);
  const auto again =
      client.post("/v1/completions", json{{"prompt", "hello"}, {"max_tokens", 3}}.dump());
  EXPECT_EQ(again.status, 200);
  server.stop();
}

/// With fixed timing too: a non-streamed request of 30,000 tokens (5 min at 10 ms) frees its
/// slot as soon as its client leaves.
TEST(FixedServer, NonStreamedClientDisconnectFreesTheSlot) {
  ServerOptions options;
  options.ttft_ms = 0;
  options.itl_ms = 10;
  options.model = "m";
  Server server(options);
  const auto port = server.start();
  {
    test::TestClient client(port);
    client.send_only("/v1/completions", json{{"prompt", "go on"}, {"max_tokens", 30000}}.dump());
    ASSERT_TRUE(metrics_until(port, [&](const std::string& b) {
                  return gauge(b, "vllm:num_requests_running") == 1;
                }).second);
    client.close();
  }
  const auto [after, freed] = metrics_until(
      port, [&](const std::string& b) { return gauge(b, "vllm:num_requests_running") == 0; });
  ASSERT_TRUE(freed) << after;
  EXPECT_EQ(successes(after, "abort"), 1);
  server.stop();
}

}  // namespace
}  // namespace llmbench::server
