// Conversations end to end (`llmbench run --multi-turn`, docs/workloads.md "Conversations"):
// (1) a scripted chat server on 127.0.0.1 that answers each request with a text naming the
// request, so the test can prove that turn k+1 carries the history with the answers the client
// streamed back as assistant turns, that each turn waited out its think time after the previous
// one finished, that a failed turn ends its conversation and that turns in flight count against
// --max-concurrency; the results' `by_turn` rows are recomputed from the records. (2) `llmbench
// serve` with its engine timing: turn 2 repeats turn 1's prompt and answer, so the engine's
// prefix cache serves it and its engine-timed prefill is shorter than turn 1's at a longer
// input.

#include "llmbench/http/listener.hpp"
#include "llmbench/metrics/record_io.hpp"
#include "llmbench/metrics/turns.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using nlohmann::json;

/// One chat request as the scripted server saw it.
struct Post {
  std::string request_id{};  // X-Request-Id: "llmbench-<record id>"
  json messages{};
};

/// Answers every chat POST after 20 ms with the streamed text "reply to <X-Request-Id>" in three
/// content events, usage prompt_tokens = 10 per message and cached_tokens = 10 per message
/// before the last; the first request with three messages (a turn 2) gets an HTTP 500 instead.
/// Counts the most requests it held at once.
class ScriptedChatServer {
 public:
  ScriptedChatServer()
      : listener_(
            {.port = 0, .threads = 2},
            [this](http::ServerRequest& r, http::ResponseWriter& w) { return handle(r, w); }) {}
  std::uint16_t start() { return listener_.start(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(listener_.port()); }
  std::vector<Post> posts() {
    std::lock_guard lock(mutex_);
    return posts_;
  }
  int max_in_flight() const { return max_in_flight_.load(); }

 private:
  net::awaitable<void> handle(http::ServerRequest& req, http::ResponseWriter& w) {
    if (req.method() == bhttp::verb::get) {
      co_await w.send(bhttp::status::ok, R"({"object":"list","data":[{"id":"m"}]})");
      co_return;
    }
    Post p;
    if (const auto it = req.find("X-Request-Id"); it != req.end())
      p.request_id = std::string(it->value());
    const json body = json::parse(req.body(), nullptr, false);
    p.messages = body.is_object() ? body.value("messages", json::array()) : json::array();
    const auto n = static_cast<std::int64_t>(p.messages.size());
    {
      std::lock_guard lock(mutex_);
      posts_.push_back(p);
    }
    const int now = ++in_flight_;
    int seen = max_in_flight_.load();
    while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {
    }
    net::steady_timer timer(co_await net::this_coro::executor);
    timer.expires_after(std::chrono::milliseconds(20));
    co_await timer.async_wait(net::use_awaitable);
    if (n == 3 && !failed_once_.exchange(true)) {
      --in_flight_;
      co_await w.send(bhttp::status::internal_server_error,
                      R"({"error":{"message":"scripted failure","type":"server_error"}})");
      co_return;
    }
    auto event = [](const std::string& content, const std::string& finish) {
      return R"(data: {"id":"x","choices":[{"index":0,"delta":{"content":)" + json(content).dump() +
             R"(},"finish_reason":)" + finish + "}]}\n\n";
    };
    const std::string usage = fmt::format(
        R"(data: {{"id":"x","choices":[],"usage":{{"prompt_tokens":{},"completion_tokens":3,)"
        R"("total_tokens":{},"prompt_tokens_details":{{"cached_tokens":{}}}}}}})"
        "\n\n",
        10 * n, 10 * n + 3, 10 * (n - 1));
    const std::string sse = event("reply", "null") + event(" to", "null") +
                            event(" " + p.request_id, "\"stop\"") + usage + "data: [DONE]\n\n";
    --in_flight_;
    co_await w.begin_stream();
    co_await w.end_stream(sse);
  }

  http::Listener listener_;
  std::mutex mutex_;
  std::vector<Post> posts_;
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
  std::atomic<bool> failed_once_{false};
};

/// Every record of a records file, in file order.
std::vector<metrics::RequestRecord> read_records(const std::string& path) {
  std::vector<metrics::RequestRecord> out;
  std::istringstream in(read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    auto r = metrics::record_from_json_line(line);
    EXPECT_TRUE(r) << r.error().what();
    if (r)
      out.push_back(std::move(*r));
  }
  return out;
}

/// A ShareGPT file of `n` conversations of three human turns, each answered by a reply of
/// 8·(turn) bytes (so 2·turn tokens by the text estimate); conversation c's turn t reads
/// "conversation c turn t".
std::string three_turn_sharegpt(int n) {
  json all = json::array();
  for (int c = 0; c < n; ++c) {
    json turns = json::array();
    for (int t = 1; t <= 3; ++t) {
      turns.push_back({{"from", "human"}, {"value", fmt::format("conversation {} turn {}", c, t)}});
      turns.push_back(
          {{"from", "gpt"}, {"value", std::string(static_cast<std::size_t>(8 * t), 'x')}});
    }
    all.push_back({{"id", fmt::format("c{}", c)}, {"conversations", turns}});
  }
  return all.dump();
}

class MultiTurnTest : public ScratchDirTest {
 protected:
  MultiTurnTest() : ScratchDirTest("multi-turn") {}

  std::string write(const std::string& name, const std::string& text) {
    const auto path = (dir_ / name).string();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    if (f != nullptr) {
      std::fwrite(text.data(), 1, text.size(), f);
      std::fclose(f);
    }
    return path;
  }
  int run(const std::vector<std::string>& args) {
    std::vector<std::string> argv{binary(), "run"};
    argv.insert(argv.end(), args.begin(), args.end());
    Process p(argv, (dir_ / "client.log").string());
    return p.wait(std::chrono::seconds(120));
  }
  std::string log() const { return read_file((dir_ / "client.log").string()); }
};

constexpr double kThinkMs = 120;

TEST_F(MultiTurnTest, TurnsCarryTheStreamedAnswersAndWaitTheirThinkTime) {
  ScriptedChatServer server;
  server.start();
  const auto data = write("conversations.json", three_turn_sharegpt(6));
  const auto results_dir = (dir_ / "results").string();
  // Exit code 1: one request failed (the scripted 500).
  ASSERT_EQ(run({"--base-url",
                 server.url(),
                 "--backend",
                 "openai-chat",
                 "--dataset-name",
                 "sharegpt",
                 "--dataset-path",
                 data,
                 "--multi-turn",
                 "--num-prompts",
                 "6",
                 "--think-time-ms",
                 fmt::format("{}", kThinkMs),
                 "--max-concurrency",
                 "3",
                 "--seed",
                 "3",
                 "--save-result",
                 "--result-dir",
                 results_dir,
                 "--result-filename",
                 "mt.json",
                 "--quiet"}),
            1)
      << log();

  const auto records = read_records(results_dir + "/mt.records.jsonl");
  const auto posts = server.posts();
  // Six conversations: turn 1 and 2 each; one turn 2 failed, so five turn 3s.
  ASSERT_EQ(posts.size(), 17U);
  ASSERT_EQ(records.size(), 17U);
  EXPECT_LE(server.max_in_flight(), 3);
  EXPECT_GE(server.max_in_flight(), 2);  // conversations did overlap

  std::map<std::int64_t, const metrics::RequestRecord*> by_id;
  std::map<std::int64_t, std::map<std::int64_t, const metrics::RequestRecord*>> conv;
  for (const auto& r : records) {
    ASSERT_GE(r.conversation_id, 0);
    ASSERT_GE(r.turn, 1);
    by_id[r.id] = &r;
    conv[r.conversation_id][r.turn] = &r;
  }
  ASSERT_EQ(conv.size(), 6U);
  int failed_conversations = 0;
  for (const auto& [id, turns] : conv) {
    const bool failed = turns.count(2) == 1 && !turns.at(2)->ok();
    failed_conversations += failed ? 1 : 0;
    EXPECT_EQ(turns.size(), failed ? 2U : 3U) << "conversation " << id;
    if (failed) {
      EXPECT_EQ(turns.at(2)->http_status, 500);
    }
    for (const auto& [t, r] : turns) {
      EXPECT_EQ(r->max_tokens, 2 * t) << "the reply after turn " << t << " has 8·t bytes";
      if (t == 1)
        continue;
      // Scheduled exactly the think time after the previous turn finished, sent no earlier.
      const auto* prev = turns.at(t - 1);
      const auto think_ns = static_cast<std::int64_t>(kThinkMs * 1e6);
      EXPECT_EQ(r->scheduled_ns, prev->done_ns + think_ns) << "conversation " << id;
      EXPECT_GE(r->sent_ns, prev->done_ns + think_ns) << "conversation " << id;
      EXPECT_GE(r->slot_ns, r->scheduled_ns);
    }
  }
  EXPECT_EQ(failed_conversations, 1);

  // Every request's messages: the conversation's user turns in order, and after each earlier
  // one the text the server streamed for that turn's request.
  for (const auto& p : posts) {
    ASSERT_TRUE(p.request_id.starts_with("llmbench-")) << p.request_id;
    const std::int64_t id = std::stoll(p.request_id.substr(9));
    ASSERT_EQ(by_id.count(id), 1U) << p.request_id;
    const auto& r = *by_id.at(id);
    ASSERT_EQ(p.messages.size(), static_cast<std::size_t>(2 * r.turn - 1)) << p.request_id;
    const std::string first = p.messages.at(0).at("content").get<std::string>();
    const std::string prefix = "conversation ";
    ASSERT_TRUE(first.starts_with(prefix)) << first;
    const std::string label = first.substr(0, first.rfind(" turn "));
    for (std::int64_t k = 1; k <= r.turn; ++k) {
      const auto& user = p.messages.at(static_cast<std::size_t>(2 * k - 2));
      EXPECT_EQ(user.at("role"), "user");
      EXPECT_EQ(user.at("content"), fmt::format("{} turn {}", label, k));
      if (k == r.turn)
        break;
      const auto& assistant = p.messages.at(static_cast<std::size_t>(2 * k - 1));
      EXPECT_EQ(assistant.at("role"), "assistant");
      const auto& earlier = *conv.at(r.conversation_id).at(k);
      EXPECT_EQ(assistant.at("content"), fmt::format("reply to llmbench-{}", earlier.id));
    }
  }

  // The results: conversations, and by_turn exactly as computed from the records.
  const json results = json::parse(read_file(results_dir + "/mt.json"));
  EXPECT_EQ(results.at("multi_turn"), true);
  EXPECT_EQ(results.at("num_prompts"), 6);
  EXPECT_EQ(results.at("completed"), 16);
  EXPECT_EQ(results.at("conversations").at("started"), 6);
  EXPECT_EQ(results.at("conversations").at("completed"), 5);
  EXPECT_EQ(results.at("conversations").at("ended_by_failure"), 1);
  EXPECT_EQ(results.at("conversations").at("cut"), 0);
  EXPECT_EQ(results.at("config_requested").at("think_time_ms"), kThinkMs);
  const auto expected = metrics::summarize_turns(records);
  const json& rows = results.at("by_turn");
  ASSERT_EQ(expected.size(), 3U);
  ASSERT_EQ(rows.size(), 3U);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& e = expected[i];
    const json& row = rows[i];
    EXPECT_EQ(row.at("turn"), static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(row.at("count"), e.count);
    EXPECT_EQ(row.at("failed"), e.failed);
    EXPECT_EQ(row.at("mean_ttft_ms").get<double>(), e.ttft_ms.mean);
    EXPECT_EQ(row.at("median_ttft_ms").get<double>(), e.ttft_ms.median);
    EXPECT_EQ(row.at("p99_ttft_ms").get<double>(), e.p99_ttft_ms);
    // The scripted usage: 10 prompt tokens per message, all but the last cached.
    EXPECT_EQ(row.at("mean_input_tokens").get<double>(), 10.0 * static_cast<double>(2 * i + 1));
    EXPECT_EQ(row.at("mean_cached_tokens").get<double>(), 10.0 * static_cast<double>(2 * i));
  }
  EXPECT_EQ(rows[0].at("count"), 6);
  EXPECT_EQ(rows[1].at("count"), 5);
  EXPECT_EQ(rows[1].at("failed"), 1);
  EXPECT_EQ(rows[2].at("count"), 5);
  // Fewer than ten completed requests per turn: no finding, and the line says why.
  EXPECT_EQ(results.at("turn_finding").at("evaluated"), false);
  EXPECT_NE(results.at("turn_finding").at("text").get<std::string>().find("at least 10"),
            std::string::npos);
}

TEST_F(MultiTurnTest, FlagsOutsideAMultiTurnRunAreErrors) {
  EXPECT_EQ(run({"--think-time-ms", "5", "--quiet"}), 2);
  EXPECT_NE(log().find("--multi-turn"), std::string::npos) << log();
  EXPECT_EQ(
      run({"--multi-turn", "--backend", "openai-chat", "--dataset-name", "random", "--quiet"}), 2);
  EXPECT_NE(log().find("sharegpt, mtbench"), std::string::npos) << log();
  // A completions backend cannot carry a history of messages.
  EXPECT_EQ(run({"--multi-turn", "--backend", "vllm", "--quiet"}), 2);
  EXPECT_NE(log().find("chat"), std::string::npos) << log();
}

TEST_F(MultiTurnTest, ServeCachesTheHistoryAndPrefillsTurnTwoFaster) {
  // Twelve conversations: a 2,000-byte first turn (500 tokens by the text estimate, the
  // server's count without a tokenizer) and a 100-byte second.
  json all = json::array();
  for (int c = 0; c < 12; ++c) {
    std::string first = fmt::format("document {:02} ", c);
    while (first.size() < 2000) first += fmt::format("line {} of document {}. ", first.size(), c);
    first.resize(2000);
    std::string second = fmt::format("question {:02} about it ", c);
    second.resize(100, 'q');
    all.push_back({{"id", fmt::format("d{}", c)},
                   {"conversations", json::array({{{"from", "human"}, {"value", first}},
                                                  {{"from", "human"}, {"value", second}}})}});
  }
  const auto data = write("documents.json", all.dump());
  ServeProcess server(dir_, {"--block-size", "16"});
  ASSERT_GT(server.port(), 0) << server.log();
  const auto results_dir = (dir_ / "results").string();
  ASSERT_EQ(run({"--base-url",
                 server.base_url(),
                 "--backend",
                 "openai-chat",
                 "--dataset-name",
                 "sharegpt",
                 "--dataset-path",
                 data,
                 "--multi-turn",
                 "--num-prompts",
                 "12",
                 "--output-len",
                 "16",
                 "--think-time-ms",
                 "20",
                 "--max-concurrency",
                 "1",
                 "--save-result",
                 "--result-dir",
                 results_dir,
                 "--result-filename",
                 "serve.json",
                 "--quiet"}),
            0)
      << log();
  const auto records = read_records(results_dir + "/serve.records.jsonl");
  ASSERT_EQ(records.size(), 24U);
  std::map<std::int64_t, std::map<std::int64_t, const metrics::RequestRecord*>> conv;
  for (const auto& r : records) {
    ASSERT_TRUE(r.ok()) << r.error_message;
    conv[r.conversation_id][r.turn] = &r;
  }
  ASSERT_EQ(conv.size(), 12U);
  for (const auto& [id, turns] : conv) {
    ASSERT_EQ(turns.size(), 2U);
    const auto& one = *turns.at(1);
    const auto& two = *turns.at(2);
    EXPECT_EQ(one.input_tokens, 500);
    // The server counted what the client sent: turn 1, the streamed answer, turn 2 (the
    // client's estimate of that history is the server's rule without a tokenizer).
    EXPECT_EQ(two.input_tokens, two.prompt_len) << "conversation " << id;
    EXPECT_GT(two.input_tokens, 500 + 25);
    // Turn 1's 500 pseudo tokens are 31 full blocks of 16, all of them in turn 2's prefix.
    EXPECT_EQ(one.cached_tokens, 0) << "conversation " << id;
    EXPECT_EQ(two.cached_tokens, 496) << "conversation " << id;
    // The engine's nominal prefill (no wall-clock reading): turn 2 prefills its uncached tail
    // only, so it takes less time than turn 1 at a longer input.
    ASSERT_GE(one.server_prompt_ms, 0);
    ASSERT_GE(two.server_prompt_ms, 0);
    EXPECT_LT(two.server_prompt_ms, one.server_prompt_ms) << "conversation " << id;
  }
  const json results = json::parse(read_file(results_dir + "/serve.json"));
  const json& rows = results.at("by_turn");
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].at("count"), 12);
  EXPECT_EQ(rows[1].at("count"), 12);
  EXPECT_EQ(rows[0].at("mean_cached_tokens").get<double>(), 0.0);
  EXPECT_EQ(rows[1].at("mean_cached_tokens").get<double>(), 496.0);
  EXPECT_EQ(results.at("turn_finding").at("evaluated"), true);
  std::fprintf(stderr, "turn finding: %s\n",
               results.at("turn_finding").at("text").get<std::string>().c_str());
}

}  // namespace
}  // namespace llmbench::e2e
