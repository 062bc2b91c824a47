// Secrets over a whole run (acceptance: "a grep over every output of a run
// whose server echoes the key ... finds no key and no 8-character fragment of it").
//
// The server is in this test (an `http::Listener`, so it sees exactly what the client sends): it
// echoes the credential of each request back in every place a server controls, one way per
// request, in turn (`kEchoes`): error bodies (whole, cut at 512 bytes inside the key, FastAPI's
// `detail`, plain text, JSON-escaped), `finish_reason` (bare, with "Bearer ", cut), the stream's
// error events (OpenAI error object, `event: error`, llama.cpp's `error:` line), a wrong-shaped
// and a malformed chunk, a response header and the reason phrase; `/v1/models` names the key as
// the model id, `owned_by` and (JSON-escaped) `root`. `llmbench run` gets the key by `--header
// 'Authorization: Bearer KEY'`, by $OPENAI_API_KEY, by `--api-key` and by a custom `--header
// 'api-key: KEY'`; afterwards its stdout, stderr and every file in its result folder (names too)
// are searched for the key and each of its 8-byte substrings.

#include "llmbench/http/listener.hpp"
#include "llmbench/metrics/record_io.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include <array>
#include <atomic>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;
namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using nlohmann::json;

/// One way of echoing the credential `key` (its header value `value`: "Bearer KEY" or KEY).
enum class Echo {
  Http400Full,         ///< 400, OpenAI error object naming the whole header value
  Http401Cut,          ///< 401, the key straddling byte 512 of the message
  Http401CutPrefixed,  ///< likewise at byte 512 of "HTTP 401: " + message
  Http422Detail,       ///< 422, FastAPI's {"detail": ...}
  Http500Text,         ///< 500, text/plain body holding the key
  Http403Reason,       ///< 403 whose reason phrase and X-Echo header hold the key
  EscapedMessage,      ///< 400 whose message spells the key with JSON \u escapes
  FinishBare,          ///< a stream ending with finish_reason KEY
  FinishBearer,        ///< finish_reason "Bearer KEY"
  FinishCut,           ///< finish_reason with the key straddling its 64-byte cut
  StreamErrorObject,   ///< data: {"error": {"message": ... KEY}} then [DONE]
  StreamErrorCut,      ///< likewise, the key straddling byte 512 of the message
  EventError,          ///< event: error with the key in its data
  LlamaCppError,       ///< error: {"message": ... KEY} then data: [DONE]
  WrongShape,          ///< data: {"choices": "KEY"} (a parse error naming the field)
  Malformed,           ///< data: {"choices":[{"text":"KEY (truncated JSON)
  Clean,               ///< a good stream (so the run has latencies to report)
};
constexpr std::array kEchoes{
    Echo::Http400Full,  Echo::Http401Cut,    Echo::Http401CutPrefixed, Echo::Http422Detail,
    Echo::Http500Text,  Echo::Http403Reason, Echo::EscapedMessage,     Echo::FinishBare,
    Echo::FinishBearer, Echo::FinishCut,     Echo::StreamErrorObject,  Echo::StreamErrorCut,
    Echo::EventError,   Echo::LlamaCppError, Echo::WrongShape,         Echo::Malformed,
    Echo::Clean,
};

/// `text` with every character written as a JSON \u escape: the same string once decoded.
std::string json_escaped(std::string_view text) {
  std::string out;
  for (const char c : text) out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
  return out;
}

/// `text` placed so that byte `cut` of the result falls in its middle.
std::string straddling(std::string_view text, std::size_t cut) {
  return std::string(cut - text.size() / 2, 'x') + std::string(text) + " tail";
}

std::string error_object(const std::string& message_json) {
  return R"({"error":{"message":)" + message_json + R"(,"type":"invalid_request_error"}})";
}

std::string event(const std::string& data) {
  return "data: " + data + "\n\n";
}

std::string text_chunk(const std::string& text, const std::string& finish_json) {
  return event(R"({"id":"c","object":"text_completion","choices":[{"index":0,"text":)" +
               json(text).dump() + R"(,"finish_reason":)" + finish_json + "}]}");
}

/// The credential a request carries: after "Bearer " in Authorization, else `api-key`.
std::pair<std::string, std::string> credential(const http::ServerRequest& request) {
  std::string value(request[bhttp::field::authorization]);
  if (value.rfind("Bearer ", 0) == 0)
    return {value.substr(7), value};
  value = std::string(request["api-key"]);
  return {value, value};
}

/// The echoing server: `/v1/models` and `POST /v1/completions`, on 127.0.0.1.
class EchoServer {
 public:
  EchoServer()
      : listener_(
            {.port = 0, .threads = 2},
            [this](http::ServerRequest& req, http::ResponseWriter& w) { return handle(req, w); }) {}
  std::uint16_t start() { return listener_.start(); }
  void stop() { listener_.stop(); }
  /// Requests that carried a credential / that did not.
  int with_key() const { return with_key_.load(); }
  int without_key() const { return without_key_.load(); }

 private:
  net::awaitable<void> handle(http::ServerRequest& req, http::ResponseWriter& w) {
    const auto [key, value] = credential(req);
    (key.empty() ? without_key_ : with_key_).fetch_add(1);
    if (req.target() == "/v1/models") {
      std::string model = json{{"id", key}, {"object", "model"}, {"owned_by", value}}.dump();
      model.insert(model.size() - 1, R"(,"root":")" + json_escaped(key) + "\"");
      std::string body = R"({"object":"list","data":[)" + model + "]}";
      co_await w.send(bhttp::status::ok, std::move(body));
      co_return;
    }
    const Echo echo = kEchoes[static_cast<std::size_t>(next_.fetch_add(1)) % kEchoes.size()];
    std::string stream;
    auto response = answer(echo, key, value, stream);
    if (response) {
      co_await w.send(std::move(*response));
      co_return;
    }
    co_await w.begin_stream();
    co_await w.end_stream(stream);
  }

  /// The answer to `echo`: a whole response, or (no value) the body of a 200 SSE stream in
  /// `stream`. Not a coroutine: GCC 12 miscompiles co_await in switch cases.
  static std::optional<http::ServerResponse> answer(Echo echo, const std::string& key,
                                                    const std::string& value, std::string& stream) {
    const std::string message = "Incorrect API key provided: " + key;
    auto whole = [](bhttp::status status, std::string body,
                    std::string_view type = "application/json") {
      http::ServerResponse response{status, 11};
      response.set(bhttp::field::content_type, type);
      response.body() = std::move(body);
      return response;
    };
    switch (echo) {
      case Echo::Http400Full:
        return whole(bhttp::status::bad_request,
                     error_object(json("header 'Authorization: " + value + "' refused: " + message +
                                       " (" + value + ")")
                                      .dump()));
      case Echo::Http401Cut:
        return whole(bhttp::status::unauthorized, error_object(json(straddling(key, 512)).dump()));
      case Echo::Http401CutPrefixed:
        return whole(bhttp::status::unauthorized,
                     error_object(json(straddling(key, 512 - 10)).dump()));
      case Echo::Http422Detail:
        return whole(bhttp::status::unprocessable_entity, json{{"detail", message}}.dump());
      case Echo::Http500Text:
        return whole(bhttp::status::internal_server_error, "upstream: " + value + "\n",
                     "text/plain");
      case Echo::Http403Reason: {
        auto response = whole(bhttp::status::forbidden, error_object(R"("forbidden")"));
        response.reason(key);
        response.set("X-Echo", value);
        return response;
      }
      case Echo::EscapedMessage:
        return whole(bhttp::status::bad_request,
                     error_object("\"key " + json_escaped(key) + " is invalid\""));
      default:
        break;
    }
    stream = text_chunk("Hello", "null") + text_chunk(" world", "null");
    switch (echo) {
      case Echo::FinishBare:
        stream += text_chunk("", json(key).dump());
        break;
      case Echo::FinishBearer:
        stream += text_chunk("", json(value).dump());
        break;
      case Echo::FinishCut:
        stream += text_chunk("", json(straddling(key, 64)).dump());
        break;
      case Echo::StreamErrorObject:
        stream += event(error_object(json(message + " / " + value).dump()));
        break;
      case Echo::StreamErrorCut:
        stream += event(error_object(json(straddling(key, 512)).dump()));
        break;
      case Echo::EventError:
        stream += "event: error\n" + event(json{{"message", message}}.dump());
        break;
      case Echo::LlamaCppError:
        stream +=
            "error: " + json{{"code", 401}, {"message", message}, {"type", "auth"}}.dump() + "\n\n";
        break;
      case Echo::WrongShape:
        stream += event(json{{"choices", value}}.dump());
        break;
      case Echo::Malformed:
        stream += "data: {\"choices\":[{\"index\":0,\"text\":\"" + key + "\n\n";
        break;
      default:
        stream += text_chunk("!", R"("length")");
        break;
    }
    stream += "data: [DONE]\n\n";
    return std::nullopt;
  }

  http::Listener listener_;
  std::atomic<int> next_{0};
  std::atomic<int> with_key_{0};
  std::atomic<int> without_key_{0};
};

/// Where `key` or one of its 8-byte substrings occurs in `text`: "" when nowhere, else the
/// fragment and its context.
std::string find_fragment(const std::string& text, const std::string& key) {
  for (std::size_t i = 0; i + 8 <= key.size(); ++i) {
    const std::string fragment = key.substr(i, 8);
    const auto at = text.find(fragment);
    if (at != std::string::npos) {
      const std::size_t from = at < 60 ? 0 : at - 60;
      return fmt::format("'{}' at byte {}: ...{}...", fragment, at, text.substr(from, 140));
    }
  }
  return "";
}

class SecretEcho : public ScratchDirTest {
 protected:
  SecretEcho() : ScratchDirTest("secrets") {}

  void SetUp() override {
    ScratchDirTest::SetUp();
    port_ = server_.start();
  }
  void TearDown() override {
    server_.stop();
    ScratchDirTest::TearDown();
  }

  /// Runs `llmbench run` (through /usr/bin/env with `env` set) with `credential_args`, twice
  /// through the echoes, and checks every output for `key`.
  void run_and_grep(const std::string& name, const std::string& key,
                    const std::vector<std::string>& env,
                    const std::vector<std::string>& credential_args) {
    const fs::path out = dir_ / name;
    fs::create_directories(out);
    std::vector<std::string> argv{"/usr/bin/env"};
    argv.insert(argv.end(), env.begin(), env.end());
    const std::vector<std::string> run{binary(),
                                       "run",
                                       "--base-url",
                                       fmt::format("http://127.0.0.1:{}", port_),
                                       "--num-prompts",
                                       std::to_string(2 * kEchoes.size()),
                                       "--max-concurrency",
                                       "1",
                                       "--random-output-len",
                                       "3",
                                       "--dataset-name",
                                       "random",
                                       "--random-input-len",
                                       "16",
                                       "--seed",
                                       "5",
                                       "--save-result",
                                       "--save-detailed",
                                       "--result-dir",
                                       out.string()};
    argv.insert(argv.end(), run.begin(), run.end());
    argv.insert(argv.end(), credential_args.begin(), credential_args.end());
    const fs::path log = dir_ / (name + ".log");  // stdout and stderr
    const int before = server_.with_key();
    Process client(argv, log.string());
    const int code = client.wait(std::chrono::seconds(60));
    const std::string console = read_file(log.string());
    ASSERT_EQ(code, 1) << "requests failed, so the run exits 1\n" << console;
    // Every request, and the model discovery, carried the key: the echoes really happened.
    EXPECT_EQ(server_.with_key() - before, static_cast<int>(2 * kEchoes.size()) + 1);
    EXPECT_EQ(server_.without_key(), 0);

    EXPECT_EQ(find_fragment(console, key), "") << "console output of " << name;
    // The console shows the most frequent error messages, so it did get echoed text.
    EXPECT_NE(console.find("[redacted]"), std::string::npos) << console;
    int files = 0;
    bool saw_results = false;
    for (const auto& entry : fs::recursive_directory_iterator(out)) {
      EXPECT_EQ(find_fragment(entry.path().filename().string(), key), "")
          << "file name " << entry.path();
      if (!entry.is_regular_file())
        continue;
      ++files;
      const std::string content = read_file(entry.path().string());
      EXPECT_EQ(find_fragment(content, key), "") << entry.path();
      if (entry.path().extension() == ".json") {
        saw_results = true;
        EXPECT_EQ(json::parse(content).value("model_id", ""), "[redacted]");
      }
      if (entry.path().extension() == ".jsonl") {
        std::vector<metrics::RequestRecord> records;
        std::istringstream in(content);
        for (std::string line; std::getline(in, line);) {
          auto rec = metrics::record_from_json_line(line);
          ASSERT_TRUE(rec) << line;
          records.push_back(std::move(*rec));
        }
        check_records(records);
      }
    }
    EXPECT_TRUE(saw_results);
    EXPECT_GE(files, 2) << "results and records";
  }

  /// The echoes reached the outputs: every request failed or completed as its echo makes it,
  /// with the mark where the key was.
  static void check_records(const std::vector<metrics::RequestRecord>& records) {
    ASSERT_EQ(records.size(), 2 * kEchoes.size());
    for (const auto& r : records) {
      const Echo echo = kEchoes[static_cast<std::size_t>(r.id) % kEchoes.size()];
      const Expected want = expected(echo);
      SCOPED_TRACE(fmt::format("request {} (echo {})", r.id, static_cast<int>(echo)));
      EXPECT_EQ(metrics::to_string(r.error_kind), want.kind) << r.error_message;
      const std::string& marked = r.ok() ? r.finish_reason : r.error_message;
      EXPECT_EQ(marked.find("[redacted]") != std::string::npos, want.marked) << marked;
    }
  }

  /// What a correct client records for `echo`: the error kind, and whether the stored text
  /// (error message, or finish_reason of a completed request) shows a removed key.
  struct Expected {
    std::string_view kind;
    bool marked = true;
  };
  static Expected expected(Echo echo) {
    switch (echo) {
      case Echo::Http500Text:
        return {.kind = "http_5xx"};
      case Echo::Http403Reason:
        return {.kind = "http_4xx", .marked = false};  // a reason phrase is not recorded
      case Echo::FinishBare:
      case Echo::FinishBearer:
      case Echo::FinishCut:
        return {.kind = "none"};
      case Echo::Clean:
        return {.kind = "none", .marked = false};
      case Echo::StreamErrorObject:
      case Echo::StreamErrorCut:
      case Echo::EventError:
      case Echo::LlamaCppError:
        return {.kind = "stream_error"};
      case Echo::WrongShape:
      case Echo::Malformed:
        return {.kind = "parse", .marked = false};
      default:
        return {.kind = "http_4xx"};
    }
  }

  EchoServer server_;
  std::uint16_t port_ = 0;
};

constexpr const char* kKeyHeader = "sk-hdr-Qm7vX2pLr9TzK4wN8bYc1HdF6sJ0gUe3";
constexpr const char* kKeyEnv = "sk-env-Wd3kP8sZq1RxL6vT0nBy5MhG2cJ9fA4e";
constexpr const char* kKeyFlag = "sk-flg-Hn4tR7wQ2zLk9XpV1mCs6BdY3gF8jU0a";
constexpr const char* kKeyCustom = "az-cst-Jb8nM2qT5vXw1KzR7pLd4YhC9sG6fE3u";

TEST_F(SecretEcho, AuthorizationHeaderNeverReachesAnOutput) {
  run_and_grep("header", kKeyHeader, {"OPENAI_API_KEY="},
               {"--header", std::string("Authorization: Bearer ") + kKeyHeader});
}

TEST_F(SecretEcho, EnvironmentApiKeyNeverReachesAnOutput) {
  run_and_grep("env", kKeyEnv, {std::string("OPENAI_API_KEY=") + kKeyEnv}, {});
}

TEST_F(SecretEcho, ApiKeyFlagNeverReachesAnOutput) {
  run_and_grep("flag", kKeyFlag, {"OPENAI_API_KEY="}, {"--api-key", kKeyFlag});
}

TEST_F(SecretEcho, CustomKeyHeaderNeverReachesAnOutput) {
  run_and_grep("custom", kKeyCustom, {"OPENAI_API_KEY="},
               {"--header", std::string("api-key: ") + kKeyCustom});
}

}  // namespace
}  // namespace llmbench::e2e
