// The built-in server under abuse: lengths near 2^63, unknown models and
// fields, idle, slow and surplus connections, the listen address.

#include "llmbench/server/openai_request.hpp"
#include "llmbench/server/server.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "raw_socket.hpp"
#include "test_client.hpp"
#include <chrono>
#include <limits>
#include <string>
#include <thread>

namespace llmbench::server {
namespace {

using nlohmann::json;
using test::RawConnection;
using test::TestClient;
using namespace std::chrono_literals;

ServerOptions quick_options() {
  ServerOptions options;
  options.ttft_ms = 1;
  options.itl_ms = 1;
  options.default_output_len = 2;
  return options;
}

template <class Predicate>
bool eventually(Predicate predicate) {
  for (int i = 0; i < 400; ++i) {
    if (predicate())
      return true;
    std::this_thread::sleep_for(5ms);
  }
  return predicate();
}

TEST(ContextCheck, LengthsNearInt64MaxAreRefusedNotWrapped) {
  GenerationParams p;
  p.prompt_tokens = 5;
  p.output_tokens = std::numeric_limits<std::int64_t>::max();
  const auto error = check_context_length(p, 32768);
  ASSERT_TRUE(error.has_value()) << "prompt + max_tokens wrapped below max_model_len";
  EXPECT_EQ(error->source, "max_tokens");
  // The sum is reported exactly: 5 + (2^63 - 1).
  EXPECT_NE(error->message.find("9223372036854775812 tokens"), std::string::npos) << error->message;
  p.output_tokens = 32763;
  EXPECT_FALSE(check_context_length(p, 32768).has_value());
  p.output_tokens = 32764;
  EXPECT_TRUE(check_context_length(p, 32768).has_value());
}

TEST(ServerAbuse, MaxTokensNearInt64MaxIsA400) {
  Server server(quick_options());
  TestClient client(server.start());
  for (const char* body : {R"({"prompt":"hi","max_tokens":9223372036854775807})",
                           R"({"prompt":"hi","max_tokens":9223372036854775000,"stream":true})"}) {
    const auto reply = client.post("/v1/completions", body);
    ASSERT_EQ(reply.status, 400) << reply.body;
    EXPECT_EQ(json::parse(reply.body)["error"]["param"], "max_tokens");
  }
  EXPECT_EQ(server.stats().rejected_total, 2);
}

TEST(ServerAbuse, UnknownModelIs404AsInVllm) {
  Server server(quick_options());
  TestClient client(server.start());
  const auto reply = client.post("/v1/completions", R"({"model":"nope","prompt":"hi"})");
  ASSERT_EQ(reply.status, 404) << reply.body;
  const json e = json::parse(reply.body)["error"];
  EXPECT_EQ(e["type"], "NotFoundError");
  EXPECT_EQ(e["message"], "The model `nope` does not exist.");
  EXPECT_EQ(client.post("/v1/completions", R"({"model":"llmbench-sim","prompt":"hi"})").status,
            200);
  EXPECT_EQ(client.post("/v1/completions", R"({"prompt":"hi"})").status, 200);
}

TEST(ServerAbuse, UnimplementedFieldsAreRejectedNotDropped) {
  Server server(quick_options());
  TestClient client(server.start());
  struct Case {
    const char* path;
    const char* body;
    int status;
    const char* param;
  };
  const Case cases[] = {
      {"/v1/completions", R"({"prompt":"hi","n":2})", 400, "n"},
      {"/v1/completions", R"({"prompt":"hi","best_of":3})", 400, "best_of"},
      {"/v1/completions", R"({"prompt":"hi","echo":true})", 400, "echo"},
      {"/v1/completions", R"({"prompt":"hi","logprobs":1})", 400, "logprobs"},
      {"/v1/completions", R"({"prompt":"hi","stop":["the"]})", 400, "stop"},
      {"/v1/completions", R"({"prompt":"hi","suffix":"x"})", 400, "suffix"},
      {"/v1/completions", R"({"prompt":"hi","frobnicate":1})", 400, "frobnicate"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"hi"}],"logprobs":true})",
       400, "logprobs"},
      {"/v1/chat/completions",
       R"({"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}})",
       400, "response_format"},
      {"/v1/chat/completions",
       R"({"messages":[{"role":"user","content":"hi"}],"tool_choice":"required"})", 400,
       "tool_choice"},
      // Neutral values and sampling knobs leave the simulated answer as it is: accepted.
      {"/v1/completions",
       R"({"prompt":"hi","n":1,"best_of":1,"echo":false,"stop":[],"logprobs":null,
           "temperature":0.7,"top_p":0.9,"seed":3,"ignore_eos":true,"min_tokens":1})",
       200, ""},
      {"/v1/chat/completions",
       R"({"messages":[{"role":"user","content":"hi"}],"logprobs":false,"tool_choice":"auto",
           "response_format":{"type":"text"},"max_completion_tokens":2})",
       200, ""},
  };
  for (const auto& c : cases) {
    const auto reply = client.post(c.path, c.body);
    ASSERT_EQ(reply.status, c.status) << c.body << "\n" << reply.body;
    if (c.status == 400) {
      const json e = json::parse(reply.body)["error"];
      EXPECT_EQ(e["param"], c.param) << reply.body;
      EXPECT_EQ(e["type"], "invalid_request_error");
    }
  }
}

TEST(ListenerLimits, IdleKeepAliveConnectionIsClosed) {
  ServerOptions options = quick_options();
  options.timeout_keep_alive_s = 0.2;
  Server server(options);
  RawConnection idle(server.start());
  const auto reply = idle.read_until_closed(5s);
  EXPECT_TRUE(reply.eof) << "an idle connection was kept open";
  EXPECT_TRUE(reply.bytes.empty());
  EXPECT_TRUE(eventually([&] { return server.stats().open_connections == 0; }));
}

TEST(ListenerLimits, SlowlorisHeadersAreCutOff) {
  ServerOptions options = quick_options();
  options.header_timeout_s = 0.3;
  Server server(options);
  RawConnection slow(server.start());
  ASSERT_TRUE(slow.send("GET /health HTTP/1.1\r\nHost: x\r\n"));
  // One more header byte every 20 ms: each arrives well inside any per-read timeout, so only a
  // limit on the whole header block ends it.
  bool closed = false;
  for (int i = 0; i < 250 && !closed; ++i) {
    closed = !slow.send("X") || !slow.read_until_closed(20ms).timed_out;
  }
  EXPECT_TRUE(closed) << "a client dripping header bytes held its connection for 5 s";
}

TEST(ListenerLimits, SlowBodyIsCutOff) {
  ServerOptions options = quick_options();
  options.body_timeout_s = 0.2;
  Server server(options);
  RawConnection slow(server.start());
  ASSERT_TRUE(
      slow.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"pr"));
  const auto reply = slow.read_until_closed(5s);
  EXPECT_FALSE(reply.timed_out) << "a request body that never arrives held its connection";
}

TEST(ListenerLimits, ConnectionsBeyondTheCapGet503AndHealthRecovers) {
  ServerOptions options = quick_options();
  options.max_connections = 2;
  Server server(options);
  const auto port = server.start();
  RawConnection first(port);
  auto second = std::make_unique<RawConnection>(port);
  ASSERT_TRUE(eventually([&] { return server.stats().open_connections == 2; }));
  TestClient third(port);
  const auto refused = third.request(test::bhttp::verb::get, "/health");
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.headers.at("Retry-After"), "1");
  EXPECT_NE(refused.body.find("connection limit"), std::string::npos) << refused.body;
  EXPECT_EQ(server.stats().refused_connections, 1);
  second.reset();
  ASSERT_TRUE(eventually([&] { return server.stats().open_connections == 1; }));
  TestClient fourth(port);
  EXPECT_EQ(fourth.request(test::bhttp::verb::get, "/health").status, 200);
}

TEST(ServerHost, OnlyLoopbackAddressesCountAsLocal) {
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("127.8.9.1"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_TRUE(is_loopback_host("localhost"));
  EXPECT_FALSE(is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(is_loopback_host("::"));
  EXPECT_FALSE(is_loopback_host("192.168.1.4"));
  EXPECT_FALSE(is_loopback_host("not-an-address"));
}

TEST(Options, LengthsTimesAndLimitsAreBounded) {
  const auto throws_naming = [](ServerOptions o, const std::string& flag) {
    try {
      validate(o);
    } catch (const std::exception& e) {
      return std::string(e.what()).find(flag) != std::string::npos;
    }
    return false;
  };
  ServerOptions o;
  o.max_model_len = 0;
  EXPECT_TRUE(throws_naming(o, "--max-model-len"));
  o.max_model_len = kMaxModelLen + 1;
  EXPECT_TRUE(throws_naming(o, "--max-model-len"));
  o = ServerOptions{};
  o.itl_ms = 1e300;
  EXPECT_TRUE(throws_naming(o, "--itl-ms"));
  o = ServerOptions{};
  o.header_timeout_s = -1;
  EXPECT_TRUE(throws_naming(o, "--header-timeout"));
  o = ServerOptions{};
  o.max_connections = -1;
  EXPECT_TRUE(throws_naming(o, "--max-connections"));
  o = ServerOptions{};
  o.max_model_len = kMaxModelLen;
  EXPECT_NO_THROW(validate(o));
}

}  // namespace
}  // namespace llmbench::server
