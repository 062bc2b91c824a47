// The vLLM and SGLang habits, each checked on what reaches the server: a
// capturing server in this test (an `http::Listener` on 127.0.0.1 that keeps every request's
// target, headers and body, and answers an OpenAI-shaped stream or JSON body) and `llmbench run`
// as a child process against it. Sampling knobs, backend names, --header in both forms,
// --output-len, the stream aliases, --extra-request-body, --served-model-name, --label,
// --metadata, --append-result, --ready-check-timeout-sec and Hugging Face tokenizer ids.

#include "llmbench/http/listener.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../unit/tokenizer/test_data.hpp"
#include "process.hpp"
#include <cstdio>
#include <mutex>
#include <netinet/in.h>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using nlohmann::json;

/// One request as the server saw it.
struct Captured {
  std::string target{};
  std::vector<std::pair<std::string, std::string>> headers{};
  json body{};
};

/// Answers `/v1/models` with model "m" and any POST with two tokens, as a stream or (a body
/// with "stream": false) as one JSON body, in the completions or chat shape by the target.
class CaptureServer {
 public:
  explicit CaptureServer(std::uint16_t port = 0)
      : listener_(
            {.port = port, .threads = 1},
            [this](http::ServerRequest& r, http::ResponseWriter& w) { return handle(r, w); }) {}
  std::uint16_t start() { return listener_.start(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(listener_.port()); }
  std::vector<Captured> posts() {
    std::lock_guard lock(mutex_);
    return posts_;
  }

 private:
  net::awaitable<void> handle(http::ServerRequest& req, http::ResponseWriter& w) {
    if (req.method() == bhttp::verb::get) {
      co_await w.send(bhttp::status::ok, R"({"object":"list","data":[{"id":"m"}]})");
      co_return;
    }
    Captured c{.target = std::string(req.target()),
               .body = json::parse(req.body(), nullptr, false)};
    for (const auto& field : req) c.headers.emplace_back(field.name_string(), field.value());
    const bool chat = c.target.find("chat") != std::string::npos;
    const bool stream = !c.body.is_object() || c.body.value("stream", true);
    {
      std::lock_guard lock(mutex_);
      posts_.push_back(c);
    }
    const std::string usage =
        R"("usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10})";
    if (!stream) {
      const std::string choice =
          chat
              ? R"({"index":0,"message":{"role":"assistant","content":"a b"},"finish_reason":"length"})"
              : R"({"index":0,"text":"a b","finish_reason":"length"})";
      co_await w.send(bhttp::status::ok, R"({"id":"x","choices":[)" + choice + "]," + usage + "}");
      co_return;
    }
    auto chunk = [chat](const std::string& text, const std::string& finish) {
      const std::string choice =
          chat ? R"({"index":0,"delta":{"content":")" + text + R"("},"finish_reason":)" + finish +
                     "}"
               : R"({"index":0,"text":")" + text + R"(","finish_reason":)" + finish + "}";
      return R"(data: {"id":"x","choices":[)" + choice + "]}\n\n";
    };
    const std::string sse = chunk("a", "null") + chunk(" b", "\"length\"") +
                            R"(data: {"id":"x","choices":[],)" + usage + "}\n\ndata: [DONE]\n\n";
    co_await w.begin_stream();
    co_await w.end_stream(sse);
  }

  http::Listener listener_;
  std::mutex mutex_;
  std::vector<Captured> posts_;
};

std::optional<std::string> header(const Captured& c, const std::string& name) {
  for (const auto& [k, v] : c.headers) {
    if (strcasecmp(k.c_str(), name.c_str()) == 0)
      return v;
  }
  return std::nullopt;
}

class RequestFlagsTest : public ScratchDirTest {
 protected:
  RequestFlagsTest() : ScratchDirTest("request-flags") {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    server_.start();
  }
  /// `llmbench run` of 2 random prompts against the capture server; returns its exit code.
  int run(const std::vector<std::string>& extra, const std::string& url = "") {
    std::vector<std::string> argv{binary(),
                                  "run",
                                  "--base-url",
                                  url.empty() ? server_.url() : url,
                                  "--dataset-name",
                                  "random",
                                  "--num-prompts",
                                  "2",
                                  "--random-input-len",
                                  "8",
                                  "--quiet"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Process p(argv, (dir_ / "client.log").string());
    return p.wait(std::chrono::seconds(60));
  }
  std::string log() const { return read_file((dir_ / "client.log").string()); }

  CaptureServer server_;
};

TEST_F(RequestFlagsTest, SamplingKnobsReachTheBody) {
  ASSERT_EQ(run({"--backend", "vllm", "--top-k", "20", "--min-p", "0.05", "--presence-penalty",
                 "0.5", "--frequency-penalty", "0.25", "--repetition-penalty", "1.1"}),
            0)
      << log();
  const auto posts = server_.posts();
  ASSERT_EQ(posts.size(), 2U);
  for (const auto& p : posts) {
    EXPECT_EQ(p.target, "/v1/completions");
    EXPECT_EQ(p.body.at("top_k"), 20);
    EXPECT_DOUBLE_EQ(p.body.at("min_p").get<double>(), 0.05);
    EXPECT_DOUBLE_EQ(p.body.at("presence_penalty").get<double>(), 0.5);
    EXPECT_DOUBLE_EQ(p.body.at("frequency_penalty").get<double>(), 0.25);
    EXPECT_DOUBLE_EQ(p.body.at("repetition_penalty").get<double>(), 1.1);
  }
}

TEST_F(RequestFlagsTest, LlamaCppGetsItsRepeatPenaltyName) {
  ASSERT_EQ(run({"--backend", "llamacpp", "--repetition-penalty", "1.2"}), 0) << log();
  const auto p = server_.posts().at(0);
  EXPECT_DOUBLE_EQ(p.body.at("repeat_penalty").get<double>(), 1.2);
  EXPECT_FALSE(p.body.contains("repetition_penalty"));
}

TEST_F(RequestFlagsTest, PeerBackendNames) {
  ASSERT_EQ(run({"--backend", "vllm-chat", "--ignore-eos", "--min-tokens", "2"}), 0) << log();
  ASSERT_EQ(run({"--backend", "sglang-oai-chat", "--top-k", "3"}), 0) << log();
  ASSERT_EQ(run({"--backend", "sglang-oai", "--min-tokens", "1"}), 0) << log();
  const auto posts = server_.posts();
  ASSERT_EQ(posts.size(), 6U);
  EXPECT_EQ(posts[0].target, "/v1/chat/completions");
  EXPECT_TRUE(posts[0].body.contains("messages"));
  EXPECT_EQ(posts[0].body.at("ignore_eos"), true);
  EXPECT_EQ(posts[0].body.at("min_tokens"), 2);
  EXPECT_EQ(posts[2].target, "/v1/chat/completions");
  EXPECT_EQ(posts[2].body.at("top_k"), 3);
  EXPECT_EQ(posts[4].target, "/v1/completions");
  EXPECT_EQ(posts[4].body.at("min_tokens"), 1);
  // "sglang" is SGLang's native /generate, as in SGLang's bench_serving (native_backends_test).
}

TEST_F(RequestFlagsTest, HeaderInBothForms) {
  ASSERT_EQ(run({"--header", "X-Team=serving", "--header", "X-Run: a=b"}), 0) << log();
  const auto p = server_.posts().at(0);
  EXPECT_EQ(header(p, "X-Team"), "serving");
  EXPECT_EQ(header(p, "X-Run"), "a=b");
  EXPECT_EQ(run({"--header", "=x"}), 2);
  EXPECT_NE(log().find("KEY=VALUE"), std::string::npos) << log();
}

TEST_F(RequestFlagsTest, OutputLenAppliesToRandom) {
  ASSERT_EQ(run({"--output-len", "7"}), 0) << log();
  for (const auto& p : server_.posts()) EXPECT_EQ(p.body.at("max_tokens"), 7);
  EXPECT_EQ(run({"--output-len", "7", "--random-output-len", "9"}), 2);
  EXPECT_NE(log().find("disagree"), std::string::npos) << log();
}

TEST_F(RequestFlagsTest, StreamAliasesAndOtherPeerNames) {
  ASSERT_EQ(run({"--disable-stream", "--extra-request-body", R"({"foo":1})", "--served-model-name",
                 "m2"}),
            0)
      << log();
  EXPECT_EQ(log().find("vllm bench serve's --no-stream"), std::string::npos) << log();
  ASSERT_EQ(run({"--no-stream"}), 0) << log();
  EXPECT_NE(log().find("vllm bench serve's --no-stream"), std::string::npos) << log();
  const auto posts = server_.posts();
  // The server lists "m", not "m2": one probe request of one token comes first, and since this
  // server answers it, the run goes on (with a warning).
  ASSERT_EQ(posts.size(), 5U);
  EXPECT_EQ(posts[0].body.at("model"), "m2");
  EXPECT_EQ(posts[0].body.at("max_tokens"), 1);
  EXPECT_EQ(posts[1].body.at("stream"), false);
  EXPECT_EQ(posts[1].body.at("foo"), 1);
  EXPECT_EQ(posts[1].body.at("model"), "m2");
  EXPECT_EQ(posts[3].body.at("stream"), false);
}

TEST_F(RequestFlagsTest, LabelMetadataAndAppendResult) {
  const std::vector<std::string> flags{"--label",      "nightly",     "--metadata",
                                       "tp=8",         "version=0.9", "--append-result",
                                       "--result-dir", dir_.string(), "--result-filename",
                                       "all.json"};
  ASSERT_EQ(run(flags), 0) << log();
  ASSERT_EQ(run(flags), 0) << log();
  const std::string text = read_file((dir_ / "all.json").string());
  std::vector<json> lines;
  std::size_t start = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    lines.push_back(json::parse(text.substr(start, nl - start)));
    start = nl + 1;
  }
  ASSERT_EQ(lines.size(), 2U) << text;
  for (const auto& j : lines) {
    EXPECT_EQ(j.at("label"), "nightly");
    EXPECT_EQ(j.at("metadata"), (json{{"tp", "8"}, {"version", "0.9"}}));
    EXPECT_EQ(j.at("tp"), "8");  // and at the top level, where vLLM writes them
    EXPECT_EQ(j.at("version"), "0.9");
    EXPECT_EQ(j.at("endpoint_type"), j.at("backend"));
    EXPECT_EQ(j.at("completed"), 2);
  }
  EXPECT_EQ(run({"--metadata", "novalue"}), 2);
  EXPECT_NE(log().find("not KEY=VALUE"), std::string::npos) << log();
}

/// A loopback port that nothing listens on now (bound, then closed).
std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST_F(RequestFlagsTest, ReadyCheckWaitsForALateServer) {
  const std::uint16_t port = free_port();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  std::vector<std::string> argv{binary(),
                                "run",
                                "--base-url",
                                url,
                                "--dataset-name",
                                "random",
                                "--num-prompts",
                                "1",
                                "--random-input-len",
                                "8",
                                "--quiet",
                                "--ready-check-timeout-sec",
                                "30"};
  Process client(argv, (dir_ / "client.log").string());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  CaptureServer late(port);
  late.start();
  ASSERT_EQ(client.wait(std::chrono::seconds(60)), 0) << log();
  EXPECT_EQ(late.posts().size(), 1U);
  EXPECT_NE(log().find("waiting up to 30 s"), std::string::npos) << log();
}

TEST_F(RequestFlagsTest, TokenizerByFileHashAndByHubId) {
  const auto tok = tokenizer::testing::data_file("deepseek-v3/tokenizer.json");
  if (!tok.empty()) {
    ASSERT_EQ(run({"--tokenizer", tok.string(), "--save-result", "--result-dir", dir_.string(),
                   "--result-filename", "r.json"}),
              0)
        << log();
    const json j = json::parse(read_file((dir_ / "r.json").string()));
    std::string expected(64, '\0');
    FILE* pipe = ::popen(("sha256sum '" + tok.string() + "'").c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    ASSERT_EQ(std::fread(expected.data(), 1, 64, pipe), 64U);
    ::pclose(pipe);
    EXPECT_EQ(j.at("tokenizer").at("sha256"), expected);
    EXPECT_EQ(j.at("tokenizer").at("file"), tok.string());
  }
  // An id that names no bundled tokenizer: an error that says what to do, before any request.
  EXPECT_EQ(run({"--tokenizer", "someorg/some-model"}), 2);
  EXPECT_NE(log().find("does not download"), std::string::npos) << log();
  EXPECT_NE(log().find("--local-dir DIR"), std::string::npos) << log();
}

}  // namespace
}  // namespace llmbench::e2e
