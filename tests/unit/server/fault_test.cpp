// Fault injection of `llmbench serve --fault` (docs/faults.md): parsing, the seeded assignment,
// and each kind's bytes on the wire.

#include "llmbench/server/fault.hpp"

#include "llmbench/server/server.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "raw_socket.hpp"
#include "test_client.hpp"
#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace llmbench::server {
namespace {

using nlohmann::json;
using test::RawConnection;
using namespace std::chrono_literals;

TEST(FaultParse, KindsRatesAndErrors) {
  auto reset = parse_fault("reset", "--fault");
  ASSERT_TRUE(reset) << reset.error().what();
  EXPECT_EQ(reset->kind, FaultKind::Reset);
  EXPECT_EQ(reset->rate, 1.0);
  auto busy = parse_fault("http-429:0.25", "--fault");
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->kind, FaultKind::Http429);
  EXPECT_EQ(busy->rate, 0.25);
  auto unknown = parse_fault("rst", "--fault");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("valid: reset, fin-mid-event,"), std::string::npos)
      << unknown.error().message;
  EXPECT_EQ(unknown.error().source, "--fault");
  for (const char* bad : {"reset:0", "reset:1.5", "reset:x", "reset:", "reset:0.5x"}) {
    auto r = parse_fault(bad, "--fault");
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_EQ(r.error().offset, 6) << bad;
    }
  }
  // Every kind of the table parses back to itself.
  for (const auto& info : kFaultKinds) {
    auto r = parse_fault(info.name, "--fault");
    ASSERT_TRUE(r) << info.name;
    EXPECT_EQ(r->kind, info.kind);
    EXPECT_EQ(fault_info(info.kind).name, info.name);
  }
}

TEST(FaultValidate, RatesAddUpToOneAtMostAndKindsDoNotRepeat) {
  FaultSettings s;
  s.rules = {{.kind = FaultKind::Reset, .rate = 0.6}, {.kind = FaultKind::Http503, .rate = 0.4}};
  EXPECT_NO_THROW(validate_faults(s));
  s.rules[1].rate = 0.5;
  EXPECT_THROW(validate_faults(s), Exception);
  s.rules[1] = {.kind = FaultKind::Reset, .rate = 0.1};
  EXPECT_THROW(validate_faults(s), Exception);
  s = FaultSettings{};
  s.drip_bytes = 0;
  EXPECT_THROW(validate_faults(s), Exception);
}

TEST(FaultPick, TheSeededAssignmentFollowsTheRates) {
  FaultSettings s;
  s.seed = 7;
  s.rules = {{.kind = FaultKind::Reset, .rate = 0.25}, {.kind = FaultKind::Http429, .rate = 0.5}};
  std::map<FaultKind, int> counts;
  constexpr int kRequests = 20000;
  for (int n = 1; n <= kRequests; ++n) ++counts[pick_fault(s, n)];
  // Binomial standard deviations are below 0.004 here: 0.02 is five of them.
  EXPECT_NEAR(counts[FaultKind::Reset] / double(kRequests), 0.25, 0.02);
  EXPECT_NEAR(counts[FaultKind::Http429] / double(kRequests), 0.5, 0.02);
  EXPECT_NEAR(counts[FaultKind::None] / double(kRequests), 0.25, 0.02);
  // Pure: the same settings give the same assignment; another seed another one.
  FaultSettings other = s;
  other.seed = 8;
  int same = 0;
  int differ = 0;
  for (int n = 1; n <= 200; ++n) {
    same += pick_fault(s, n) == pick_fault(s, n) ? 1 : 0;
    differ += pick_fault(s, n) != pick_fault(other, n) ? 1 : 0;
  }
  EXPECT_EQ(same, 200);
  EXPECT_GT(differ, 40);
  EXPECT_EQ(pick_fault(FaultSettings{}, 1), FaultKind::None);
}

/// A streamed completion of 8 tokens from a server that gives every request `kind`, read raw.
struct Wire {
  test::RawReply raw;
  std::string head;
  std::string body;  // de-chunked
  bool body_complete = false;
  std::vector<std::string> events;  // each block before a blank line
};

Wire exchange(FaultKind kind, bool stream = true) {
  ServerOptions options;
  options.ttft_ms = 1;
  options.itl_ms = 1;
  if (kind != FaultKind::None)
    options.faults.rules = {{.kind = kind, .rate = 1.0}};
  options.faults.stall_s = 0.2;
  options.faults.huge_event_bytes = 100000;
  options.faults.drip_bytes = 7;
  options.faults.drip_ms = 0;
  Server server(options);
  RawConnection c(server.start());
  const std::string body = stream ? R"({"prompt":"hi","max_tokens":8,"stream":true})"
                                  : R"({"prompt":"hi","max_tokens":8})";
  EXPECT_TRUE(
      c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
             "Content-Type: application/json\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n\r\n" + body));
  Wire w;
  w.raw = c.read_until_closed(10s);
  std::size_t split = w.raw.bytes.find("\r\n\r\n");
  if (kind == FaultKind::Interim1xx)
    split = w.raw.bytes.find("\r\n\r\n", split + 4);  // past the interim response
  if (split == std::string::npos)
    return w;
  w.head = w.raw.bytes.substr(0, split + 4);
  const std::string rest = w.raw.bytes.substr(split + 4);
  w.body =
      w.head.find("chunked") != std::string::npos ? test::dechunk(rest, w.body_complete) : rest;
  for (std::size_t at = 0, end; (end = w.body.find("\n\n", at)) != std::string::npos;
       at = end + 2) {
    w.events.push_back(w.body.substr(at, end - at));
  }
  return w;
}

bool has_done(const Wire& w) {
  return !w.events.empty() && w.events.back() == "data: [DONE]";
}

/// The number of events that are valid JSON carrying text.
int content_events(const Wire& w) {
  int n = 0;
  for (const auto& e : w.events) {
    if (e.rfind("data: {", 0) != 0)
      continue;
    const auto j = json::parse(e.substr(6), nullptr, false);
    if (!j.is_discarded() && j.contains("choices") && !j["choices"].empty())
      ++n;
  }
  return n;
}

TEST(FaultServer, CleanStreamForReference) {
  const Wire w = exchange(FaultKind::None);
  EXPECT_TRUE(w.raw.eof);
  EXPECT_TRUE(w.body_complete);
  EXPECT_EQ(content_events(w), 8);
  EXPECT_TRUE(has_done(w));
}

TEST(FaultServer, ResetAndFinCutTheStreamMidway) {
  const Wire reset = exchange(FaultKind::Reset);
  EXPECT_TRUE(reset.raw.reset) << reset.raw.bytes;
  EXPECT_FALSE(reset.body_complete);
  // Half of the 8 tokens, then RST (which may overtake bytes still in flight, never add any).
  EXPECT_LE(content_events(reset), 4);
  EXPECT_GE(content_events(reset), 1);
  EXPECT_FALSE(has_done(reset));
  const Wire fin = exchange(FaultKind::FinMidEvent);
  EXPECT_TRUE(fin.raw.eof);
  EXPECT_FALSE(fin.body_complete);
  EXPECT_EQ(content_events(fin), 4);
  ASSERT_FALSE(fin.body.empty());
  EXPECT_NE(fin.body.substr(fin.body.size() - 2), "\n\n") << "the last event is not cut";
}

TEST(FaultServer, StallsDelayThenTheStreamGoesOn) {
  for (const FaultKind kind : {FaultKind::StallHeaders, FaultKind::StallStream}) {
    const auto start = std::chrono::steady_clock::now();
    const Wire w = exchange(kind);
    // Timers never fire early: the 0.2 s of silence is a lower bound.
    EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
    EXPECT_EQ(content_events(w), 8);
    EXPECT_TRUE(has_done(w));
  }
}

TEST(FaultServer, StatusFaultsAnswerInsteadOfTheRequest) {
  const Wire busy = exchange(FaultKind::Http429);
  EXPECT_EQ(busy.head.rfind("HTTP/1.1 429 Too Many Requests\r\n", 0), 0u) << busy.head;
  EXPECT_NE(busy.head.find("Retry-After: 1\r\n"), std::string::npos);
  EXPECT_EQ(json::parse(busy.body)["error"]["code"], 429);
  const Wire down = exchange(FaultKind::Http503, false);  // also for a whole response
  EXPECT_EQ(down.head.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0), 0u) << down.head;
  EXPECT_NE(down.head.find("Retry-After: 1\r\n"), std::string::npos);
  const Wire html = exchange(FaultKind::Http500Html);
  EXPECT_EQ(html.head.rfind("HTTP/1.1 500 Internal Server Error\r\n", 0), 0u);
  EXPECT_NE(html.head.find("Content-Type: text/html"), std::string::npos);
  EXPECT_EQ(html.body.rfind("<!DOCTYPE html>", 0), 0u) << html.body;
}

TEST(FaultServer, InStreamErrorsAndBrokenEvents) {
  const Wire bad = exchange(FaultKind::MalformedJson);
  int broken = 0;
  for (const auto& e : bad.events) {
    if (e.rfind("data: {", 0) == 0 && json::parse(e.substr(6), nullptr, false).is_discarded())
      ++broken;
  }
  EXPECT_EQ(broken, 1);
  EXPECT_EQ(content_events(bad), 8);  // the stream goes on after it
  const Wire openai = exchange(FaultKind::StreamError);
  ASSERT_GE(openai.events.size(), 2u);
  const std::string& error_event = openai.events[openai.events.size() - 2];
  ASSERT_EQ(error_event.rfind("data: ", 0), 0u);
  EXPECT_EQ(json::parse(error_event.substr(6))["error"]["code"], 500);
  EXPECT_TRUE(has_done(openai));
  EXPECT_EQ(content_events(openai), 4);
  const Wire llama = exchange(FaultKind::LlamaCppError);
  ASSERT_GE(llama.events.size(), 2u);
  const std::string& line = llama.events[llama.events.size() - 2];
  ASSERT_EQ(line.rfind("error: ", 0), 0u) << line;
  EXPECT_EQ(json::parse(line.substr(7))["type"], "server_error");
  EXPECT_TRUE(has_done(llama));
  EXPECT_NE(llama.head.find("200 OK"), std::string::npos);
}

TEST(FaultServer, HugeDripAndEarlyClose) {
  const Wire huge = exchange(FaultKind::HugeEvent);
  std::size_t largest = 0;
  for (const auto& e : huge.events) largest = std::max(largest, e.size());
  EXPECT_GE(largest, 100000u - 2);
  EXPECT_EQ(content_events(huge), 8);  // still valid JSON
  EXPECT_TRUE(has_done(huge));
  const Wire drip = exchange(FaultKind::SlowDrip);
  EXPECT_EQ(content_events(drip), 8);
  EXPECT_TRUE(has_done(drip));
  EXPECT_GT(std::count(drip.raw.bytes.begin(), drip.raw.bytes.end(), '\n'), 200)
      << "7-byte chunks: each has its own size line";
  const Wire early = exchange(FaultKind::EarlyClose);
  EXPECT_TRUE(early.body_complete);
  EXPECT_FALSE(has_done(early));
  EXPECT_EQ(content_events(early), 4);
  EXPECT_EQ(early.body.find("\"length\""), std::string::npos);
}

TEST(FaultServer, InterimResponseComesFirst) {
  const Wire w = exchange(FaultKind::Interim1xx);
  EXPECT_EQ(w.raw.bytes.rfind("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n", 0), 0u)
      << w.raw.bytes.substr(0, 80);
  EXPECT_EQ(content_events(w), 8);
  EXPECT_TRUE(has_done(w));
}

}  // namespace
}  // namespace llmbench::server
