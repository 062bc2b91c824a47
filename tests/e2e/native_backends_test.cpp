// `llmbench run --backend sglang | tgi | trt-llm` against a scripted loopback server that answers
// in each dialect's own stream shape (SGLang's /generate with whole texts and meta_info, TGI's
// /generate_stream with one token per event, Triton's generate_stream with a text delta per
// step and no [DONE]) and keeps every request body: the run completes, the records carry the
// right output token counts and a TTFT that waits for the first text, and the bodies carry what
// the flags promise in each dialect's field names.

#include "llmbench/http/listener.hpp"
#include "llmbench/metrics/record_io.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <chrono>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using nlohmann::json;

/// The wait before the first text of every stream (ms): the TTFT lower bound the test checks.
constexpr int kFirstTextDelayMs = 150;

struct Captured {
  std::string target{};
  json body{};
};

/// Answers model discovery (/v1/models, /info, /v2) and generation POSTs in the dialect the
/// target names, with three output tokens ("a", " b", " c") after `kFirstTextDelayMs`.
class NativeServer {
 public:
  NativeServer()
      : listener_(
            {.port = 0, .threads = 1},
            [this](http::ServerRequest& r, http::ResponseWriter& w) { return handle(r, w); }) {}
  std::uint16_t start() { return listener_.start(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(listener_.port()); }
  std::vector<Captured> posts() {
    std::lock_guard lock(mutex_);
    return posts_;
  }

 private:
  static net::awaitable<void> pause() {
    net::steady_timer timer(co_await net::this_coro::executor);
    timer.expires_after(std::chrono::milliseconds(kFirstTextDelayMs));
    co_await timer.async_wait(net::as_tuple(net::use_awaitable));
  }

  net::awaitable<void> handle(http::ServerRequest& req, http::ResponseWriter& w) {
    const std::string target(req.target());
    if (req.method() == bhttp::verb::get) {
      if (target == "/info") {
        co_await w.send(bhttp::status::ok, R"({"model_id":"tgi/model","max_input_tokens":4096})");
      } else if (target == "/v2") {
        co_await w.send(bhttp::status::ok,
                        R"({"name":"triton","version":"2.48.0","extensions":["generate"]})");
      } else {
        co_await w.send(bhttp::status::ok, R"({"object":"list","data":[{"id":"sgl/model"}]})");
      }
      co_return;
    }
    Captured c{.target = target, .body = json::parse(req.body(), nullptr, false)};
    {
      std::lock_guard lock(mutex_);
      posts_.push_back(c);
    }
    const bool stream = c.body.is_object() && c.body.value("stream", false);
    if (target == "/generate") {
      co_await sglang(w, stream);
    } else if (target == "/generate_stream") {
      co_await tgi_stream(w);
    } else if (target.starts_with("/v2/models/") && target.ends_with("/generate_stream")) {
      co_await triton_stream(w);
    } else {
      co_await w.send(bhttp::status::not_found, R"({"error":"no such route"})");
    }
  }

  static net::awaitable<void> sglang(http::ResponseWriter& w, bool stream) {
    const auto event = [](const std::string& text, int n, const std::string& finish) {
      return R"(data: {"text":")" + text + R"(","meta_info":{"id":"r","finish_reason":)" + finish +
             R"(,"prompt_tokens":8,"completion_tokens":)" + std::to_string(n) +
             R"(,"cached_tokens":0}})" + "\n\n";
    };
    if (!stream) {
      co_await w.send(
          bhttp::status::ok,
          R"({"text":"a b c","meta_info":{"finish_reason":{"type":"length","length":3},"prompt_tokens":8,"completion_tokens":3,"cached_tokens":0}})");
      co_return;
    }
    co_await w.begin_stream();
    co_await pause();
    co_await w.write_chunk(event("a", 1, "null"));
    co_await w.write_chunk(event("a b", 2, "null"));
    co_await w.end_stream(event("a b c", 3, R"({"type":"length","length":3})") +
                          "data: [DONE]\n\n");
  }

  static net::awaitable<void> tgi_stream(http::ResponseWriter& w) {
    const auto token = [](int index, const std::string& text, const std::string& tail) {
      return "data:{\"index\":" + std::to_string(index) + R"(,"token":{"id":)" +
             std::to_string(100 + index) + R"(,"text":")" + text +
             R"(","logprob":-0.3,"special":false},)" + tail + "}\n\n";
    };
    const std::string none = R"("generated_text":null,"details":null)";
    co_await w.begin_stream();
    co_await pause();
    co_await w.write_chunk(token(1, "a", none));
    co_await w.write_chunk(token(2, " b", none));
    co_await w.end_stream(token(
        3, " c",
        R"("generated_text":"a b c","details":{"finish_reason":"length","generated_tokens":3,"seed":null,"input_length":8})"));
  }

  static net::awaitable<void> triton_stream(http::ResponseWriter& w) {
    const auto step = [](const std::string& text) {
      return R"(data: {"model_name":"ensemble","model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":")" +
             text + "\"}\n\n";
    };
    co_await w.begin_stream();
    co_await w.write_chunk(step(""));  // an empty first step: not the first token
    co_await pause();
    co_await w.write_chunk(step("a"));
    co_await w.write_chunk(step(" b"));
    co_await w.end_stream(step(" c"));  // no [DONE]: the body's end is the stream's end
  }

  http::Listener listener_;
  std::mutex mutex_;
  std::vector<Captured> posts_;
};

class NativeBackendsTest : public ScratchDirTest {
 protected:
  NativeBackendsTest() : ScratchDirTest("native-backends") {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    server_.start();
  }
  /// `llmbench run` of 3 random prompts of 3 output tokens; returns its exit code.
  int run(const std::vector<std::string>& extra) {
    std::vector<std::string> argv{binary(),
                                  "run",
                                  "--base-url",
                                  server_.url(),
                                  "--dataset-name",
                                  "random",
                                  "--num-prompts",
                                  "3",
                                  "--random-input-len",
                                  "8",
                                  "--random-output-len",
                                  "3",
                                  "--quiet",
                                  "--save-result",
                                  "--result-dir",
                                  dir_.string(),
                                  "--result-filename",
                                  "r.json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Process p(argv, (dir_ / "client.log").string());
    return p.wait(std::chrono::seconds(60));
  }
  std::string log() const { return read_file((dir_ / "client.log").string()); }
  std::vector<metrics::RequestRecord> records() const {
    std::vector<metrics::RequestRecord> out;
    std::istringstream in(read_file((dir_ / "r.records.jsonl").string()));
    for (std::string line; std::getline(in, line);) {
      auto rec = metrics::record_from_json_line(line);
      EXPECT_TRUE(rec.has_value()) << line;
      if (rec) {
        out.push_back(*rec);
      }
    }
    return out;
  }
  /// Every record completed with three one-token chunks, the first after the server's pause.
  void expect_three_tokens_each(std::int64_t server_count) const {
    const auto recs = records();
    ASSERT_EQ(recs.size(), 3U) << log();
    for (const auto& r : recs) {
      ASSERT_TRUE(r.ok()) << r.error_message;
      EXPECT_EQ(r.output_tokens, server_count);
      ASSERT_EQ(r.chunks.size(), 3U);
      for (const auto& c : r.chunks) EXPECT_EQ(c.tokens, 1);
      const double ttft_ms = static_cast<double>(r.chunks[0].time_ns - r.sent_ns) / 1e6;
      EXPECT_GE(ttft_ms, kFirstTextDelayMs) << "TTFT must wait for the first text";
    }
    const json results = json::parse(read_file((dir_ / "r.json").string()));
    EXPECT_EQ(results.at("completed"), 3);
    EXPECT_EQ(results.at("total_output_tokens"), 9);
    EXPECT_GE(results.at("mean_ttft_ms").get<double>(), kFirstTextDelayMs);
  }

  NativeServer server_;
};

TEST_F(NativeBackendsTest, SglangNativeGenerate) {
  ASSERT_EQ(run({"--backend", "sglang", "--top-k", "20", "--temperature", "0.5", "--ignore-eos",
                 "--min-tokens", "2"}),
            0)
      << log();
  expect_three_tokens_each(3);
  const auto posts = server_.posts();
  ASSERT_EQ(posts.size(), 3U);
  for (const auto& p : posts) {
    EXPECT_EQ(p.target, "/generate");
    EXPECT_TRUE(p.body.at("text").is_string());
    EXPECT_FALSE(p.body.contains("model"));
    EXPECT_EQ(p.body.at("stream"), true);
    const json& s = p.body.at("sampling_params");
    EXPECT_EQ(s.at("max_new_tokens"), 3);
    EXPECT_EQ(s.at("top_k"), 20);
    EXPECT_DOUBLE_EQ(s.at("temperature").get<double>(), 0.5);
    EXPECT_EQ(s.at("ignore_eos"), true);
    EXPECT_EQ(s.at("min_new_tokens"), 2);
  }
  EXPECT_EQ(log().find("not honoured"), std::string::npos) << log();
  EXPECT_NE(log().find("using 'sgl/model' from /v1/models"), std::string::npos) << log();
  // Whole bodies too.
  ASSERT_EQ(run({"--backend", "sglang", "--disable-stream"}), 0) << log();
  const auto recs = records();
  ASSERT_EQ(recs.size(), 3U);
  for (const auto& r : recs) EXPECT_EQ(r.output_tokens, 3) << r.error_message;
  EXPECT_EQ(server_.posts().back().body.at("stream"), false);
}

TEST_F(NativeBackendsTest, TgiGenerateStream) {
  ASSERT_EQ(run({"--backend", "tgi", "--top-k", "20", "--temperature", "0.5", "--ignore-eos",
                 "--min-tokens", "2"}),
            0)
      << log();
  expect_three_tokens_each(3);
  for (const auto& r : records()) {
    EXPECT_EQ(r.input_tokens, 8);
    EXPECT_EQ(r.finish_reason, "length");
  }
  const auto posts = server_.posts();
  ASSERT_EQ(posts.size(), 3U);
  for (const auto& p : posts) {
    EXPECT_EQ(p.target, "/generate_stream");
    EXPECT_TRUE(p.body.at("inputs").is_string());
    const json& s = p.body.at("parameters");
    EXPECT_EQ(s.at("max_new_tokens"), 3);
    EXPECT_EQ(s.at("top_k"), 20);
    EXPECT_DOUBLE_EQ(s.at("temperature").get<double>(), 0.5);
    EXPECT_EQ(s.at("details"), true);
    EXPECT_FALSE(s.contains("ignore_eos"));
    EXPECT_FALSE(p.body.contains("ignore_eos"));
  }
  // TGI has neither: the run says so before it starts.
  EXPECT_NE(log().find("--ignore-eos is not honoured: the tgi backend"), std::string::npos)
      << log();
  EXPECT_NE(log().find("--min-tokens is not honoured: the tgi backend"), std::string::npos)
      << log();
  EXPECT_NE(log().find("using 'tgi/model' from /info"), std::string::npos) << log();
}

TEST_F(NativeBackendsTest, TritonTensorRtLlmGenerateStream) {
  ASSERT_EQ(
      run({"--backend", "tensorrt-llm", "--top-k", "20", "--temperature", "0.5", "--ignore-eos"}),
      0)
      << log();
  expect_three_tokens_each(-1);  // Triton counts no tokens: one per step
  auto posts = server_.posts();
  ASSERT_EQ(posts.size(), 3U);
  for (const auto& p : posts) {
    EXPECT_EQ(p.target, "/v2/models/ensemble/generate_stream");
    EXPECT_TRUE(p.body.at("text_input").is_string());
    EXPECT_EQ(p.body.at("max_tokens"), 3);
    EXPECT_EQ(p.body.at("stream"), true);
    EXPECT_EQ(p.body.at("top_k"), 20);
    EXPECT_DOUBLE_EQ(p.body.at("temperature").get<double>(), 0.5);
    EXPECT_EQ(p.body.at("min_length"), 3);  // --ignore-eos: the whole output
    EXPECT_EQ(p.body.at("exclude_input_in_output"), true);
    EXPECT_EQ(p.body.at("bad_words"), "");
  }
  // --model names the Triton model in the path; --min-tokens is min_length.
  ASSERT_EQ(run({"--backend", "trt-llm", "--model", "tensorrt_llm_bls", "--min-tokens", "2"}), 0)
      << log();
  posts = server_.posts();
  ASSERT_EQ(posts.size(), 6U);
  EXPECT_EQ(posts[5].target, "/v2/models/tensorrt_llm_bls/generate_stream");
  EXPECT_EQ(posts[5].body.at("min_length"), 2);
  const json results = json::parse(read_file((dir_ / "r.json").string()));
  EXPECT_EQ(results.at("completed"), 3);
}

}  // namespace
}  // namespace llmbench::e2e
