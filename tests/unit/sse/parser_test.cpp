#include "llmbench/sse/parser.hpp"

#include "llmbench/core/rng.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

// Tests for the WHATWG §9.2.6 SSE parser. Every fixture is parsed whole, split at every byte
// offset into two pieces, byte by byte and at 200 seeded random multi-splits (Beast's parsegrind);
// all must give the same events, and a prefix must give exactly the events of that prefix alone
// (no dispatch is held back waiting for more bytes).

namespace llmbench::sse {

// Test-only equality and printing, found by ADL from gtest's EXPECT_EQ.
bool operator==(const Event& a, const Event& b) {
  return a.type == b.type && a.data == b.data && a.last_event_id == b.last_event_id &&
         a.retry_ms == b.retry_ms;
}

namespace {

std::string escaped(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20) {
      out += "\\x" + std::to_string(u);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

void PrintTo(const Event& e, std::ostream* os) {
  *os << "{type=\"" << escaped(e.type) << "\" data=\"" << escaped(e.data) << "\" id=\""
      << escaped(e.last_event_id) << "\" retry=" << e.retry_ms << "}";
}

namespace {

using namespace std::literals;
using Events = std::vector<Event>;

Event ev(std::string data, std::string type = "message", std::string id = "",
         std::int64_t retry_ms = -1) {
  return Event{std::move(type), std::move(data), std::move(id), retry_ms};
}

struct Fixture {
  std::string name;
  std::string bytes;
  Events expected;
  std::int64_t reconnection_ms = -1;  // Parser::reconnection_time_ms() after the whole stream
};

// A chunk as OpenAI's /v1/chat/completions streams it (one JSON object per `data:` line).
std::string openai_chunk(std::string_view delta, std::string_view finish = "null") {
  return R"({"id":"chatcmpl-9Zq3","object":"chat.completion.chunk","created":1718000000,)"
         R"("model":"gpt-4o-mini","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,)"
         R"("delta":)" +
         std::string(delta) + R"(,"logprobs":null,"finish_reason":)" + std::string(finish) + "}]}";
}

// Builds `data: <json><eol><eol>` for every chunk, ending with `data: [DONE]`, and the events
// expected from it.
Fixture data_stream(std::string name, const std::vector<std::string>& jsons, std::string_view eol,
                    std::string_view comment = {}) {
  Fixture f{std::move(name), {}, {}};
  for (const auto& j : jsons) {
    if (!comment.empty()) {
      f.bytes += std::string(comment) + std::string(eol);
    }
    f.bytes += "data: " + j + std::string(eol) + std::string(eol);
    f.expected.push_back(ev(j));
  }
  f.bytes += "data: [DONE]" + std::string(eol) + std::string(eol);
  f.expected.push_back(ev("[DONE]"));
  return f;
}

std::vector<std::string> openai_jsons() {
  return {
      openai_chunk(R"({"role":"assistant","content":""})"),
      openai_chunk(R"({"content":"你好"})"),
      openai_chunk(R"({"content":"，世界！"})"),
      openai_chunk(R"({"content":" 😀🎉 ok"})"),
      openai_chunk(R"({"content":"Ünïcödé"})"),
      openai_chunk("{}", R"("stop")"),
      R"({"id":"chatcmpl-9Zq3","object":"chat.completion.chunk","created":1718000000,)"
      R"("model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":9,)"
      R"("completion_tokens":6,"total_tokens":15}})",
  };
}

// vLLM serving DeepSeek-R1 with a reasoning parser: reasoning_content first, then content.
std::vector<std::string> vllm_r1_jsons() {
  const std::string head =
      R"({"id":"chatcmpl-b7c1e0","object":"chat.completion.chunk","created":1740000000,)"
      R"("model":"deepseek-ai/DeepSeek-R1","choices":[{"index":0,"delta":)";
  return {
      head + R"({"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]})",
      head + R"({"reasoning_content":"嗯，用户"},"logprobs":null,"finish_reason":null}]})",
      head + R"({"reasoning_content":"想要🤔"},"logprobs":null,"finish_reason":null}]})",
      head + R"({"content":"答案是 42。"},"logprobs":null,"finish_reason":null}]})",
      head + R"({"content":""},"logprobs":null,"finish_reason":"length",)"
             R"("stop_reason":null}],"usage":{"prompt_tokens":12,"total_tokens":17,)"
             R"("completion_tokens":5}})",
  };
}

std::vector<Fixture> fixtures() {
  std::vector<Fixture> f = {
      {"empty stream", "", {}},
      {"only blank lines", "\n\n\r\n\r\r", {}},
      {"basic", "data: hello\n\n", {ev("hello")}},
      {"data without space", "data:hello\n\n", {ev("hello")}},
      {"only one space stripped", "data:  two\n\n", {ev(" two")}},
      {"trailing spaces kept", "data: x y \n\n", {ev("x y ")}},
      {"tab not stripped", "data:\tx\n\n", {ev("\tx")}},
      {"colons in value", "data: a:b: c\n\n", {ev("a:b: c")}},
      {"multiple data lines", "data: a\ndata:b\ndata\n\n", {ev("a\nb\n")}},
      {"empty data dispatches", "data\n\ndata:\n\ndata: \n\n", {ev(""), ev(""), ev("")}},
      {"two empty data lines", "data\ndata\n\n", {ev("\n")}},
      {"event type and reset", "event: delta\ndata: x\n\ndata: y\n\n", {ev("x", "delta"), ev("y")}},
      {"last event type wins", "event: a\nevent: b\ndata: x\n\n", {ev("x", "b")}},
      {"empty event is message", "event\ndata: x\n\nevent:\ndata: y\n\n", {ev("x"), ev("y")}},
      {"no data: no dispatch, type reset", "event: foo\n\ndata: x\n\n", {ev("x")}},
      {"id persistence",
       "id: 1\ndata: a\n\ndata: b\n\nid: 2\n\ndata: c\n\nid\ndata: d\n\n",
       {ev("a", "message", "1"), ev("b", "message", "1"), ev("c", "message", "2"),
        ev("d", "message", "")}},
      {"id keeps inner spaces", "id:  x \ndata: a\n\n", {ev("a", "message", " x ")}},
      {"NUL in id ignored",
       "id: 7\ndata: a\n\nid: 8\0x\ndata: b\n\nid: \0\ndata: c\n\n"s,
       {ev("a", "message", "7"), ev("b", "message", "7"), ev("c", "message", "7")}},
      {"NUL in data kept", "data: a\0b\n\n"s, {ev("a\0b"s)}},
      {"retry valid",
       "retry: 3000\ndata: a\n\ndata: b\n\n",
       {ev("a", "message", "", 3000), ev("b")},
       3000},
      {"retry invalid ignored",
       "retry: 12a\ndata: a\n\nretry: -5\ndata: b\n\nretry:  100\ndata: c\n\nretry\ndata: d\n\n"
       "retry: 1.5\ndata: e\n\n",
       {ev("a"), ev("b"), ev("c"), ev("d"), ev("e")}},
      {"retry last valid wins, bad one keeps it",
       "retry: 10\nretry: 20\nretry: x\ndata: a\n\n",
       {ev("a", "message", "", 20)},
       20},
      {"retry in event-less block", "retry: 1000\n\ndata: x\n\n", {ev("x")}, 1000},
      {"retry huge saturates",
       "retry:99999999999999999999999\ndata: a\n\n",
       {ev("a", "message", "", INT64_MAX)},
       INT64_MAX},
      {"retry leading zeros", "retry: 007\ndata: a\n\n", {ev("a", "message", "", 7)}, 7},
      {"comments ignored", ": keep-alive\n\ndata: x\n: mid comment\ndata: y\n:\n\n", {ev("x\ny")}},
      {"comment with data-like text", ":data: no\n\n", {}},
      {"unknown and case-sensitive fields",
       "foo: bar\nData: y\nDATA: z\ndata: x\nevent : t\n\n",
       {ev("x")}},
      {"field name with space is unknown", "data : x\n\n", {}},
      {"CRLF", "data: a\r\ndata: b\r\n\r\n", {ev("a\nb")}},
      {"CR only", "data: a\rdata: b\r\r", {ev("a\nb")}},
      {"mixed line ends",
       "data: a\r\ndata: b\rdata: c\n\r\nevent: t\rdata: d\r\n\n",
       {ev("a\nb\nc"), ev("d", "t")}},
      {"CR CR LF is two line ends", "data: a\r\r\ndata: b\n\n", {ev("a"), ev("b")}},
      {"LF CR is two line ends", "data: a\n\rdata: b\n\n", {ev("a"), ev("b")}},
      {"CR LF LF dispatches", "data: a\r\n\ndata: b\r\n\r\n", {ev("a"), ev("b")}},
      {"ends on CR", "data: x\r\n\r", {ev("x")}},
      {"BOM removed",
       "\xEF\xBB\xBF"
       "data: a\n\n",
       {ev("a")}},
      {"BOM then comment", "\xEF\xBB\xBF: hi\ndata: a\n\n", {ev("a")}},
      {"only first BOM removed",
       "\xEF\xBB\xBF\xEF\xBB\xBF"
       "data: a\n\ndata: b\n\n",
       {ev("b")}},
      {"BOM mid-stream not removed",
       "data: a\n\n\xEF\xBB\xBF"
       "data: b\n\ndata: c\n\n",
       {ev("a"), ev("c")}},
      {"partial BOM is content",
       "\xEF\xBB"
       "data: a\n\ndata: b\n\n",
       {ev("b")}},
      {"partial BOM then line end", "\xEF\ndata: a\n\n", {ev("a")}},
      {"BOM inside data kept", "data: \xEF\xBB\xBFx\n\n", {ev("\xEF\xBB\xBFx")}},
      {"incomplete event at end not dispatched", "data: a\n\ndata: b\n", {ev("a")}},
      {"incomplete line at end", "data: a\n\ndata: b", {ev("a")}},
      {"chinese and emoji",
       "data: 你好，世界 😀🎉\n\nevent: 事件\ndata: 第一行\ndata: 🚀\n\n",
       {ev("你好，世界 😀🎉"), ev("第一行\n🚀", "事件")}},
      {"anthropic-style typed events",
       "event: message_start\ndata: {\"type\":\"message_start\"}\n\n"
       "event: ping\ndata: {\"type\": \"ping\"}\n\n"
       "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
       "\"delta\":{\"text\":\"Hi\"}}\n\n",
       {ev(R"({"type":"message_start"})", "message_start"), ev(R"({"type": "ping"})", "ping"),
        ev(R"({"type":"content_block_delta","delta":{"text":"Hi"}})", "content_block_delta")}},
  };
  f.push_back(data_stream("openai chat stream", openai_jsons(), "\n"));
  f.push_back(data_stream("openai chat stream CRLF", openai_jsons(), "\r\n"));
  f.push_back(data_stream("openai with keep-alive comments", openai_jsons(), "\n", ": keep-alive"));
  f.push_back(data_stream("vllm deepseek-r1 reasoning", vllm_r1_jsons(), "\n"));
  f.push_back(data_stream("vllm CR only", vllm_r1_jsons(), "\r"));
  return f;
}

struct Outcome {
  Events events;
  std::int64_t reconnection_ms = -1;
  std::uint64_t dispatched = 0;
};

// Feeds `bytes` cut at the sorted offsets `cuts` (duplicates give empty pieces).
Outcome parse_cut(std::string_view bytes, const std::vector<std::size_t>& cuts) {
  Parser p;
  Outcome out;
  std::size_t from = 0;
  auto collect = [&](const Event& e) { out.events.push_back(e); };
  for (const std::size_t cut : cuts) {
    p.feed(bytes.substr(from, cut - from), collect);
    from = cut;
  }
  p.feed(bytes.substr(from), collect);
  out.reconnection_ms = p.reconnection_time_ms();
  out.dispatched = p.events_dispatched();
  return out;
}

Events parse_whole(std::string_view bytes) {
  return parse_cut(bytes, {}).events;
}

class FixtureTest : public ::testing::TestWithParam<Fixture> {};

TEST_P(FixtureTest, Whole) {
  const Fixture& f = GetParam();
  const Outcome out = parse_cut(f.bytes, {});
  EXPECT_EQ(out.events, f.expected);
  EXPECT_EQ(out.dispatched, f.expected.size());
  EXPECT_EQ(out.reconnection_ms, f.reconnection_ms);
}

TEST_P(FixtureTest, EveryTwoWaySplitAndPrefixPromptness) {
  const Fixture& f = GetParam();
  for (std::size_t k = 0; k <= f.bytes.size(); ++k) {
    const std::string_view bytes = f.bytes;
    Parser p;
    Events got;
    p.feed(bytes.substr(0, k), [&](const Event& e) { got.push_back(e); });
    // Everything the prefix completes must already be out, no more and no less.
    ASSERT_EQ(got, parse_whole(bytes.substr(0, k))) << "prefix length " << k;
    p.feed(bytes.substr(k), [&](const Event& e) { got.push_back(e); });
    ASSERT_EQ(got, f.expected) << "split at " << k;
    ASSERT_EQ(p.reconnection_time_ms(), f.reconnection_ms) << "split at " << k;
  }
}

TEST_P(FixtureTest, ByteByByte) {
  const Fixture& f = GetParam();
  std::vector<std::size_t> cuts;
  for (std::size_t k = 1; k < f.bytes.size(); ++k) {
    cuts.push_back(k);
  }
  const Outcome out = parse_cut(f.bytes, cuts);
  EXPECT_EQ(out.events, f.expected);
  EXPECT_EQ(out.reconnection_ms, f.reconnection_ms);
}

TEST_P(FixtureTest, RandomMultiSplits) {
  const Fixture& f = GetParam();
  Rng rng(20240601, f.name);
  const auto n = static_cast<std::int64_t>(f.bytes.size());
  for (int trial = 0; trial < 200; ++trial) {
    const std::int64_t pieces =
        rng.uniform_int(1, std::max<std::int64_t>(1, std::min<std::int64_t>(n, 24)));
    std::vector<std::size_t> cuts;
    for (std::int64_t c = 1; c < pieces; ++c) {
      cuts.push_back(static_cast<std::size_t>(rng.uniform_int(0, n)));
    }
    std::sort(cuts.begin(), cuts.end());
    const Outcome out = parse_cut(f.bytes, cuts);
    ASSERT_EQ(out.events, f.expected) << "trial " << trial;
    ASSERT_EQ(out.reconnection_ms, f.reconnection_ms) << "trial " << trial;
  }
}

std::string fixture_name(const ::testing::TestParamInfo<Fixture>& info) {
  std::string s;
  for (const char c : info.param.name) {
    s += (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_';
  }
  return s + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Sse, FixtureTest, ::testing::ValuesIn(fixtures()), fixture_name);

// ---- targeted tests ----

TEST(Parser, DispatchOnCrDoesNotWaitForNextPiece) {
  Parser p;
  Events got;
  auto collect = [&](const Event& e) { got.push_back(e); };
  p.feed("data: a\r\r", collect);
  ASSERT_EQ(got, Events{ev("a")});  // the second CR is a complete blank line
  p.feed("\n", collect);            // LF of the CRLF pair: not another blank line
  p.feed("data: b\r", collect);
  EXPECT_EQ(p.buffered_bytes(), 0U);
  p.feed("\n\r\n", collect);
  EXPECT_EQ(got, (Events{ev("a"), ev("b")}));
}

TEST(Parser, CrAtPieceEndThenNonLf) {
  Parser p;
  Events got;
  auto collect = [&](const Event& e) { got.push_back(e); };
  p.feed("data: a\r", collect);
  p.feed("\r", collect);  // a second CR is a new (blank) line, not part of a pair
  EXPECT_EQ(got, Events{ev("a")});
}

TEST(Parser, WholeLinesInsideOnePieceAreNotBuffered) {
  Parser p;
  int count = 0;
  p.feed("data: abc\n", [&](const Event&) { ++count; });
  EXPECT_EQ(p.buffered_bytes(), 0U);
  p.feed("data: de", [&](const Event&) { ++count; });
  EXPECT_EQ(p.buffered_bytes(), 8U);
  p.feed("f\n\n", [&](const Event& e) {
    ++count;
    EXPECT_EQ(e.data, "abc\ndef");
  });
  EXPECT_EQ(p.buffered_bytes(), 0U);
  EXPECT_EQ(count, 1);
}

TEST(Parser, BomSplitAcrossPieces) {
  for (const std::vector<std::string>& pieces :
       std::vector<std::vector<std::string>>{{"\xEF", "\xBB", "\xBF", "data: a\n\n"},
                                             {"\xEF\xBB",
                                              "\xBF"
                                              "data: a\n\n"},
                                             {"", "\xEF", "",
                                              "\xBB\xBF"
                                              "data",
                                              ": a\n", "\n"}}) {
    Parser p;
    Events got;
    for (const auto& piece : pieces) {
      p.feed(piece, [&](const Event& e) { got.push_back(e); });
    }
    EXPECT_EQ(got, Events{ev("a")});
  }
}

TEST(Parser, PartialBomBytesBecomeLineContent) {
  Parser p;
  p.feed("\xEF\xBB", [](const Event&) {});
  p.feed("X", [](const Event&) {});
  EXPECT_EQ(p.buffered_bytes(), 3U);  // EF BB X: the first line so far
}

TEST(Parser, FourMegabyteSingleLineEvent) {
  std::string payload;
  const std::string unit = "token 你好 😀 {\"k\":[1,2,3]} ";
  while (payload.size() < (std::size_t{4} << 20)) {
    payload += unit;
  }
  const std::string stream = "id: big\ndata: " + payload + "\n\ndata: after\n\n";
  const Events expected = {ev(payload, "message", "big"), ev("after", "message", "big")};

  EXPECT_EQ(parse_whole(stream), expected);

  Rng rng(7, "4mb");
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<std::size_t> cuts;
    std::size_t at = 0;
    while (true) {
      at += static_cast<std::size_t>(rng.uniform_int(1, 100000));
      if (at >= stream.size()) {
        break;
      }
      cuts.push_back(at);
    }
    const Outcome out = parse_cut(stream, cuts);
    ASSERT_EQ(out.events.size(), 2U) << "trial " << trial;
    EXPECT_TRUE(out.events[0] == expected[0]) << "trial " << trial;
    EXPECT_EQ(out.events[1], expected[1]);
  }

  // The incomplete line is held, then released once it has been handed out.
  Parser p;
  std::size_t got = 0;
  p.feed(std::string_view(stream).substr(0, 1 << 20), [&](const Event&) { ++got; });
  EXPECT_EQ(p.buffered_bytes(), (std::size_t{1} << 20) - 8);  // minus the "id: big\n" line
  p.feed(std::string_view(stream).substr(1 << 20), [&](const Event& e) {
    ++got;
    if (got == 1) {
      EXPECT_EQ(e.data.size(), payload.size());
    }
  });
  EXPECT_EQ(got, 2U);
  EXPECT_EQ(p.buffered_bytes(), 0U);
}

TEST(Parser, ResetForgetsEverything) {
  Parser p;
  Events got;
  auto collect = [&](const Event& e) { got.push_back(e); };
  p.feed("\xEF\xBB\xBFid: 5\nretry: 100\ndata: a\n\nevent: x\ndata: partial\ndata: more", collect);
  ASSERT_EQ(got, Events{ev("a", "message", "5", 100)});
  EXPECT_EQ(p.events_dispatched(), 1U);
  EXPECT_GT(p.buffered_bytes(), 0U);

  p.reset();
  EXPECT_EQ(p.events_dispatched(), 0U);
  EXPECT_EQ(p.buffered_bytes(), 0U);
  EXPECT_EQ(p.reconnection_time_ms(), -1);
  got.clear();
  // A fresh stream: BOM is recognized again, no leftover type/data/id/line.
  p.feed(
      "\xEF\xBB\xBF"
      "data: y\n\n",
      collect);
  EXPECT_EQ(got, Events{ev("y")});
  EXPECT_EQ(p.events_dispatched(), 1U);
}

TEST(Parser, ResetClearsPendingCr) {
  Parser p;
  Events got;
  p.feed("data: a\r", [&](const Event& e) { got.push_back(e); });
  p.reset();
  // Without the reset the LF would be the second half of a CRLF pair; now it is a blank line.
  p.feed("\ndata: b\n\n", [&](const Event& e) { got.push_back(e); });
  EXPECT_EQ(got, Events{ev("b")});
}

TEST(Parser, EventReferenceReusedAcrossDispatches) {
  Parser p;
  std::vector<std::string> datas;
  p.feed("data: first\n\ndata: second\n\ndata: third\n\n",
         [&](const Event& e) { datas.push_back(e.data); });
  EXPECT_EQ(datas, (std::vector<std::string>{"first", "second", "third"}));
  EXPECT_EQ(p.events_dispatched(), 3U);
}

// llama.cpp's server ends a failed stream with `error: {json}` (no data) and then `data: [DONE]`;
// the unknown field reaches the caller in stream order, at every split, without changing events.
TEST(Parser, UnknownFieldLinesAreHandedOutInOrder) {
  const std::string stream =
      "data: a\n\n"
      "error: {\"code\":500,\"message\":\"context full\"}\n\n"
      ": comment\n"
      "x-custom\n"
      "data: [DONE]\n\n";
  const std::vector<std::string> want = {"event:a",
                                         "field:error={\"code\":500,\"message\":"
                                         "\"context full\"}",
                                         "field:x-custom=", "event:[DONE]"};
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    Parser p;
    std::vector<std::string> got;
    const auto on_event = [&](const Event& e) { got.push_back("event:" + e.data); };
    const auto on_field = [&](const UnknownField& f) {
      got.push_back("field:" + std::string(f.name) + "=" + std::string(f.value));
    };
    p.feed(std::string_view(stream).substr(0, cut), on_event, on_field);
    p.feed(std::string_view(stream).substr(cut), on_event, on_field);
    EXPECT_EQ(got, want) << "split at " << cut;
    EXPECT_EQ(p.events_dispatched(), 2U);
  }
}

TEST(Parser, TwoArgumentFeedStillIgnoresUnknownFields) {
  Parser p;
  Events got;
  p.feed("error: {}\n\nfoo: bar\ndata: b\n\n", [&](const Event& e) { got.push_back(e); });
  EXPECT_EQ(got, Events{ev("b")});
}

}  // namespace
}  // namespace llmbench::sse
