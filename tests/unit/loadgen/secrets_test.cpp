// Secrets: a server that echoes the API key (whole, bare, cut, in finish_reason, in an
// in-stream error) must leave no key and no 8-byte piece of it in any record.

#include "llmbench/loadgen/request_handler.hpp"
#include "llmbench/metrics/record_io.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace llmbench::loadgen {
namespace {

constexpr TimeNs kStart = 1'000'000'000;
const std::string kKey = "sk-proj-Zq81nW3xTt5vLr0aaB7c";
const std::string kHeader = "Bearer " + kKey;  // what --header 'Authorization: ...' sends

// Every 8-byte piece of the key found in `text`.
std::vector<std::string> fragments_in(const std::string& text) {
  std::vector<std::string> found;
  for (std::size_t i = 0; i + 8 <= kKey.size(); ++i) {
    if (text.find(kKey.substr(i, 8)) != std::string::npos) {
      found.push_back(kKey.substr(i, 8));
    }
  }
  return found;
}

std::string record_line(int status, bool stream, const std::vector<std::string>& pieces) {
  const protocol::Redactor redactor({kHeader});  // as loadgen builds it from LoadOptions::secrets
  metrics::RequestRecord rec;
  protocol::Decoder decoder;
  RecordingHandler handler(rec, decoder, stream, kStart);
  handler.redact_with(redactor);
  handler.on_sent(kStart);
  handler.on_headers(status, kStart + 1'000'000);
  TimeNs t = kStart + 2'000'000;
  for (const auto& p : pieces) {
    handler.on_body(p, t += 1'000'000);
  }
  http::Outcome outcome;
  outcome.status = status;
  outcome.body_complete = true;
  handler.finish(outcome, t);
  return metrics::record_to_json_line(rec);
}

TEST(Secrets, EchoedKeyNeverReachesARecord) {
  const std::string pad(490, 'p');  // puts the key across the 512-byte cut
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"401 echoing the header",
       record_line(401, true, {R"({"error":{"message":"bad token )" + kHeader + R"("}})"})},
      {"401 echoing the bare key at the cut",
       record_line(401, true, {R"({"error":{"message":")" + pad + kKey + R"("}})"})},
      {"403 plain text", record_line(403, false, {"denied for " + kKey})},
      {"in-stream error object",
       record_line(200, true,
                   {"data: {\"choices\":[{\"index\":0,\"text\":\"a\"}]}\n\n",
                    "data: {\"error\":{\"message\":\"key " + kKey + " revoked\"}}\n\n"})},
      {"llama.cpp error line",
       record_line(
           200, true,
           {"data: {\"choices\":[{\"index\":0,\"text\":\"a\"}]}\n\n",
            "error: {\"code\":401,\"message\":\"" + pad + kKey + "\"}\n\ndata: [DONE]\n\n"})},
      {"event: error", record_line(200, true, {"event: error\ndata: " + kKey + "\n\n"})},
      {"finish_reason",
       record_line(200, true,
                   {"data: {\"choices\":[{\"index\":0,\"text\":\"a\",\"finish_reason\":\"" +
                    kKey.substr(0, 20) + "\"}]}\n\ndata: [DONE]\n\n"})},
      {"non-streamed finish_reason",
       record_line(
           200, false,
           {R"({"choices":[{"index":0,"text":"a","finish_reason":")" + kHeader + R"("}]})"})},
  };
  for (const auto& [name, line] : cases) {
    EXPECT_EQ(fragments_in(line), std::vector<std::string>{}) << name << ": " << line;
    EXPECT_NE(line.find("[redacted]"), std::string::npos) << name << ": " << line;
  }
}

}  // namespace
}  // namespace llmbench::loadgen
