#include "llmbench/server/server.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_client.hpp"
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <pthread.h>
#include <string>
#include <thread>

namespace llmbench::server {
namespace {

using nlohmann::json;
using test::Event;
using test::TestClient;

constexpr TimeNs kMs = 1'000'000;
/// Timing tolerance: timers never fire early, but a busy machine may run them late.
constexpr TimeNs kLate = 15 * kMs;

ServerOptions fast_options() {
  ServerOptions options;
  options.ttft_ms = 30;
  options.itl_ms = 5;
  options.tokens_per_chunk = 2;
  options.max_num_seqs = 8;
  options.default_output_len = 6;
  return options;
}

/// Server counters move right after the response bytes leave, so a client can observe the reply
/// slightly before the count: poll for up to a second.
template <class Predicate>
bool eventually(Predicate predicate) {
  for (int i = 0; i < 200; ++i) {
    if (predicate())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return predicate();
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "-" + std::to_string(::getpid()) + "-" + std::to_string(steady_now_ns())))
      .string();
}

std::vector<json> read_json_lines(const std::string& path) {
  std::vector<json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  return lines;
}

/// Events that carry output text (completions `text` or chat `delta.content`, non-empty).
std::vector<std::pair<Event, json>> content_events(const std::vector<Event>& events) {
  std::vector<std::pair<Event, json>> out;
  for (const auto& e : events) {
    if (e.data == "[DONE]")
      continue;
    json j = json::parse(e.data);
    if (j["choices"].empty())
      continue;
    const auto& choice = j["choices"][0];
    std::string text =
        choice.contains("text") ? choice["text"].get<std::string>()
        : choice["delta"].contains("content") && choice["delta"]["content"].is_string()
            ? choice["delta"]["content"].get<std::string>()
            : std::string();
    if (!text.empty())
      out.emplace_back(e, std::move(j));
  }
  return out;
}

TEST(Server, HealthModelsAndMetrics) {
  Server server(fast_options());
  const auto port = server.start();
  ASSERT_NE(port, 0);
  TestClient client(port);  // one keep-alive connection for all three
  auto health = client.request(test::bhttp::verb::get, "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(json::parse(health.body)["status"], "ok");

  auto models = client.request(test::bhttp::verb::get, "/v1/models");
  ASSERT_EQ(models.status, 200);
  json m = json::parse(models.body);
  EXPECT_EQ(m["object"], "list");
  ASSERT_EQ(m["data"].size(), 1u);
  EXPECT_EQ(m["data"][0]["id"], "llmbench-sim");
  EXPECT_EQ(m["data"][0]["object"], "model");
  EXPECT_EQ(m["data"][0]["owned_by"], "llmbench");
  EXPECT_EQ(m["data"][0]["max_model_len"], 32768);
  EXPECT_GT(m["data"][0]["created"].get<std::int64_t>(), 1600000000);

  auto done = client.post("/v1/completions", R"({"prompt":"abcdefgh","max_tokens":3})");
  ASSERT_EQ(done.status, 200);
  auto metrics = client.request(test::bhttp::verb::get, "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("vllm:num_requests_running{model_name=\"llmbench-sim\"} 0"),
            std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("vllm:num_requests_waiting{model_name=\"llmbench-sim\"} 0"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("vllm:prompt_tokens_total{model_name=\"llmbench-sim\"} 2"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("vllm:generation_tokens_total{model_name=\"llmbench-sim\"} 3"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("vllm:request_success_total{finished_reason=\"length\","
                              "model_name=\"llmbench-sim\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("# TYPE vllm:generation_tokens_total counter"), std::string::npos);
}

TEST(Server, StreamedCompletionChunksUsageAndTiming) {
  ServerOptions options = fast_options();
  options.emission_log_path = temp_path("llmbench-emission");
  Server server(options);
  const auto port = server.start();
  TestClient client(port);
  const std::string prompt = "The quick brown fox";  // 19 bytes → 5 prompt tokens
  auto reply = client.stream(
      "/v1/completions",
      json{{"model", "llmbench-sim"},
           {"prompt", prompt},
           {"max_tokens", 7},
           {"stream", true},
           {"stream_options", {{"include_usage", true}, {"continuous_usage_stats", true}}}}
          .dump(),
      {{"X-Request-Id", "req-42"}});
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.content_type, "text/event-stream");
  EXPECT_TRUE(reply.chunked);
  ASSERT_FALSE(reply.events.empty());
  EXPECT_EQ(reply.events.back().data, "[DONE]");

  auto contents = content_events(reply.events);
  ASSERT_EQ(contents.size(), 4u);
  const std::vector<std::int64_t> running{2, 4, 6, 7};
  const std::vector<std::string> texts{" the model", " serves tokens", " at a", " steady"};
  std::string id;
  for (std::size_t i = 0; i < 4; ++i) {
    const json& j = contents[i].second;
    EXPECT_EQ(j["object"], "text_completion");
    EXPECT_EQ(j["model"], "llmbench-sim");
    EXPECT_EQ(j["choices"][0]["text"], texts[i]);
    EXPECT_EQ(j["usage"]["completion_tokens"], running[i]);
    EXPECT_EQ(j["usage"]["prompt_tokens"], 5);
    EXPECT_EQ(j["choices"][0]["finish_reason"], i == 3 ? json("length") : json(nullptr));
    if (i == 0)
      id = j["id"];
    EXPECT_EQ(j["id"], id);
  }
  EXPECT_EQ(id.rfind("cmpl-", 0), 0u);
  // Final usage event: no choices, totals.
  const json usage = json::parse(reply.events[reply.events.size() - 2].data);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 7);
  EXPECT_EQ(usage["usage"]["total_tokens"], 12);

  // Client view, loose: ≈ +30, +10, +10, +5 ms.
  const TimeNs first = contents[0].first.t_ns - reply.sent_ns;
  EXPECT_GE(first, 30 * kMs);
  EXPECT_LE(first, 30 * kMs + 3 * kLate);
  const std::vector<TimeNs> gaps{10 * kMs, 10 * kMs, 5 * kMs};
  for (std::size_t i = 1; i < 4; ++i) {
    const TimeNs gap = contents[i].first.t_ns - contents[i - 1].first.t_ns;
    EXPECT_GE(gap, gaps[i - 1] - kLate) << i;
    EXPECT_LE(gap, gaps[i - 1] + kLate) << i;
  }

  // Emission log: exact token counts, deadlines never early, same clock as the client.
  server.stop();
  auto lines = read_json_lines(options.emission_log_path);
  ASSERT_EQ(lines.size(), 1u);
  const json& line = lines[0];
  EXPECT_EQ(line["request_id"], "req-42");
  EXPECT_EQ(line["id"], id);
  const TimeNs arrival = line["arrival_ns"], admit = line["admit_ns"];
  EXPECT_GE(arrival, reply.sent_ns);
  EXPECT_GE(admit, arrival);
  ASSERT_EQ(line["chunks"].size(), 4u);
  const std::vector<TimeNs> offsets{30 * kMs, 40 * kMs, 50 * kMs, 55 * kMs};
  const std::vector<std::int64_t> tokens{2, 2, 2, 1};
  for (std::size_t i = 0; i < 4; ++i) {
    const TimeNs t = line["chunks"][i][0];
    EXPECT_EQ(line["chunks"][i][1], tokens[i]);
    EXPECT_GE(t - admit, offsets[i]) << i;
    EXPECT_LE(t - admit, offsets[i] + kLate) << i;
    EXPECT_LE(t, contents[i].first.t_ns) << "the client cannot receive before the write";
  }
  std::filesystem::remove(options.emission_log_path);
}

TEST(Server, StreamedChatSendsRoleFirst) {
  Server server(fast_options());
  TestClient client(server.start());
  auto reply = client.stream(
      "/v1/chat/completions",
      R"({"model":"llmbench-sim","messages":[{"role":"user","content":"hi there"}],"max_tokens":3,
          "stream":true})");
  ASSERT_EQ(reply.status, 200);
  ASSERT_GE(reply.events.size(), 4u);
  const json role = json::parse(reply.events[0].data);
  EXPECT_EQ(role["object"], "chat.completion.chunk");
  EXPECT_EQ(role["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(role["choices"][0]["delta"]["content"], "");
  EXPECT_TRUE(role["usage"].is_null());
  EXPECT_EQ(std::string(role["id"]).rfind("chatcmpl-", 0), 0u);

  auto contents = content_events(reply.events);
  ASSERT_EQ(contents.size(), 2u);  // 2 + 1 tokens
  std::string text;
  for (const auto& [event, j] : contents) text += j["choices"][0]["delta"]["content"];
  EXPECT_EQ(text, " the model serves");
  EXPECT_EQ(contents[1].second["choices"][0]["finish_reason"], "length");
  // The role event goes out at admission, a TTFT before the first content.
  EXPECT_GE(contents[0].first.t_ns - reply.events[0].t_ns, 30 * kMs - kLate);
  EXPECT_EQ(reply.events.back().data, "[DONE]");
  EXPECT_EQ(reply.events.size(), 4u);  // role, 2 content, [DONE]: no usage unless asked
}

TEST(Server, NonStreamingCompletionAndChat) {
  Server server(fast_options());
  TestClient client(server.start());
  const TimeNs start = steady_now_ns();
  auto reply = client.post("/v1/completions", R"({"prompt":"abcd","max_tokens":5})");
  const TimeNs elapsed = steady_now_ns() - start;
  ASSERT_EQ(reply.status, 200);
  EXPECT_EQ(reply.headers["Content-Type"], "application/json");
  json j = json::parse(reply.body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["text"], " the model serves tokens at");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 1);
  EXPECT_EQ(j["usage"]["completion_tokens"], 5);
  EXPECT_GE(elapsed, 45 * kMs);  // ttft 30 + 3 later tokens × 5 ms

  auto chat =
      client.post("/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}]})");
  ASSERT_EQ(chat.status, 200);
  json c = json::parse(chat.body);
  EXPECT_EQ(c["object"], "chat.completion");
  EXPECT_EQ(c["choices"][0]["message"]["content"], " the model serves tokens at a");  // default 6
  EXPECT_EQ(c["usage"]["completion_tokens"], 6);
  EXPECT_TRUE(eventually([&] { return server.stats().success_total == 2; }));
  const auto stats = server.stats();
  EXPECT_EQ(stats.generation_tokens_total, 11);
  EXPECT_EQ(stats.running, 0);
}

TEST(Server, ErrorsAre400404405) {
  Server server(fast_options());
  TestClient client(server.start());
  auto bad = client.post("/v1/completions", "{\"prompt\": ");
  EXPECT_EQ(bad.status, 400);
  json e = json::parse(bad.body);
  EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  EXPECT_EQ(e["error"]["code"], 400);
  EXPECT_TRUE(e["error"]["param"].is_null());

  auto missing = client.post("/v1/chat/completions", R"({"model":"x"})");
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(json::parse(missing.body)["error"]["param"], "messages");

  auto not_found = client.request(test::bhttp::verb::get, "/v2/nothing");
  EXPECT_EQ(not_found.status, 404);
  EXPECT_EQ(json::parse(not_found.body)["error"]["code"], 404);

  auto wrong_method = client.request(test::bhttp::verb::get, "/v1/completions");
  EXPECT_EQ(wrong_method.status, 405);
  EXPECT_EQ(wrong_method.headers["Allow"], "POST");
  auto wrong_method2 = client.request(test::bhttp::verb::post, "/health", "{}");
  EXPECT_EQ(wrong_method2.status, 405);
  // The connection survived all of that (keep-alive).
  EXPECT_EQ(client.request(test::bhttp::verb::get, "/health").status, 200);
  EXPECT_EQ(server.stats().rejected_total, 2);
}

TEST(Server, MaxTokensZero) {
  Server server(fast_options());
  TestClient client(server.start());
  auto reply = client.stream(
      "/v1/completions",
      R"({"prompt":"x","max_tokens":0,"stream":true,"stream_options":{"include_usage":true}})");
  ASSERT_EQ(reply.status, 200);
  EXPECT_TRUE(content_events(reply.events).empty());
  ASSERT_EQ(reply.events.size(), 3u);  // finish-only event, usage, [DONE]
  EXPECT_EQ(json::parse(reply.events[0].data)["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(json::parse(reply.events[1].data)["usage"]["completion_tokens"], 0);
  EXPECT_EQ(reply.events[2].data, "[DONE]");
  auto whole = client.post("/v1/completions", R"({"prompt":"x","max_tokens":0})");
  json j = json::parse(whole.body);
  EXPECT_EQ(j["choices"][0]["text"], "");
  EXPECT_EQ(j["usage"]["completion_tokens"], 0);
}

TEST(Server, MaxNumSeqsQueuesFifo) {
  ServerOptions options = fast_options();
  options.max_num_seqs = 1;
  options.emission_log_path = temp_path("llmbench-queue");
  Server server(options);
  const auto port = server.start();
  const std::string body = R"({"prompt":"x","max_tokens":4,"stream":true})";
  auto first = std::async(std::launch::async, [&] {
    TestClient c(port);
    return c.stream("/v1/completions", body, {{"X-Request-Id", "a"}});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));  // "a" arrives first
  auto second = std::async(std::launch::async, [&] {
    TestClient c(port);
    return c.stream("/v1/completions", body, {{"X-Request-Id", "b"}});
  });
  auto a = first.get();
  auto b = second.get();
  auto ca = content_events(a.events);
  auto cb = content_events(b.events);
  ASSERT_EQ(ca.size(), 2u);
  ASSERT_EQ(cb.size(), 2u);
  EXPECT_GE(cb.front().first.t_ns, ca.back().first.t_ns);
  server.stop();
  auto lines = read_json_lines(options.emission_log_path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["request_id"], "a");
  EXPECT_EQ(lines[1]["request_id"], "b");
  const TimeNs a_last = lines[0]["chunks"].back()[0];
  const TimeNs b_admit = lines[1]["admit_ns"];
  const TimeNs b_first = lines[1]["chunks"][0][0];
  EXPECT_GE(b_admit, a_last);
  EXPECT_GE(b_first, a_last + 30 * kMs);              // b's TTFT starts when a's slot frees
  EXPECT_LT(TimeNs{lines[1]["arrival_ns"]}, a_last);  // b really waited
  std::filesystem::remove(options.emission_log_path);
}

TEST(Server, DisconnectFreesSlot) {
  ServerOptions options = fast_options();
  options.max_num_seqs = 1;
  options.tokens_per_chunk = 1;
  options.itl_ms = 20;
  Server server(options);
  const auto port = server.start();
  {
    TestClient c(port);
    auto partial =
        c.stream("/v1/completions", R"({"prompt":"x","max_tokens":500,"stream":true})", {}, 1);
    ASSERT_EQ(partial.events.size(), 1u);
    c.close();
  }
  // 500 tokens × 20 ms would hold the slot for 10 s; the next request must get it at once.
  TestClient next(port);
  const TimeNs start = steady_now_ns();
  auto reply = next.post("/v1/completions", R"({"prompt":"x","max_tokens":1})");
  EXPECT_EQ(reply.status, 200);
  EXPECT_LT(steady_now_ns() - start, 2000 * kMs);
  EXPECT_EQ(server.stats().cancelled_total, 1);
  EXPECT_TRUE(eventually([&] { return server.stats().success_total == 1; }));
}

TEST(Server, ManyConcurrentStreamsOnTwoThreads) {
  ServerOptions options = fast_options();
  options.threads = 2;
  options.max_num_seqs = 64;
  Server server(options);
  const auto port = server.start();
  std::vector<std::future<std::size_t>> futures;
  for (int i = 0; i < 16; ++i) {
    futures.push_back(std::async(std::launch::async, [port] {
      TestClient c(port);
      auto r = c.stream("/v1/completions", R"({"prompt":"x","max_tokens":9,"stream":true})");
      return content_events(r.events).size();
    }));
  }
  for (auto& f : futures) EXPECT_EQ(f.get(), 5u);
  EXPECT_TRUE(eventually([&] { return server.stats().generation_tokens_total == 16 * 9; }))
      << server.stats().generation_tokens_total;
}

TEST(Server, StopWithRequestsInFlightIsClean) {
  ServerOptions options = fast_options();
  options.max_num_seqs = 1;
  options.ttft_ms = 5000;
  Server server(options);
  const auto port = server.start();
  std::vector<std::unique_ptr<TestClient>> clients;
  for (int i = 0; i < 3; ++i) {  // one admitted, two queued
    clients.push_back(std::make_unique<TestClient>(port));
    clients.back()->request(test::bhttp::verb::get, "/health");
  }
  std::vector<std::future<void>> streamers;
  for (auto& client : clients) {
    streamers.push_back(std::async(std::launch::async, [&client] {
      try {
        client->stream("/v1/completions", R"({"prompt":"x","stream":true})");
      } catch (const std::exception&) {
      }
    }));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(server.stats().running, 1);
  EXPECT_EQ(server.stats().waiting, 2);
  const TimeNs start = steady_now_ns();
  server.stop();
  EXPECT_LT(steady_now_ns() - start, 1000 * kMs);
  for (auto& s : streamers) s.get();  // the connections were closed, so the reads ended
  EXPECT_EQ(server.stats().waiting, 0);
  server.stop();  // idempotent
}

TEST(Server, PortFileAndRunBlocking) {
  const std::string path = temp_path("llmbench-port");
  std::promise<std::uint16_t> ready;
  ServerOptions options = fast_options();
  std::thread runner([&] {
    const int sig = run_blocking(options, [&](std::uint16_t port) {
      write_port_file(path, port);
      ready.set_value(port);
    });
    EXPECT_EQ(sig, SIGTERM);
  });
  const auto port = ready.get_future().get();
  std::ifstream in(path);
  int from_file = 0;
  in >> from_file;
  EXPECT_EQ(from_file, port);
  TestClient client(port);
  EXPECT_EQ(client.request(test::bhttp::verb::get, "/health").status, 200);
  pthread_kill(runner.native_handle(), SIGTERM);
  runner.join();
  std::filesystem::remove(path);
}

TEST(Server, PortInUseThrows) {
  Server first(fast_options());
  ServerOptions options = fast_options();
  options.port = first.start();
  Server second(options);
  EXPECT_THROW(second.start(), std::exception);
}

}  // namespace
}  // namespace llmbench::server
