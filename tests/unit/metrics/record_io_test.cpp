#include "llmbench/metrics/record_io.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace llmbench::metrics {
namespace {

using ::testing::HasSubstr;

RequestRecord full_record() {
  RequestRecord r;
  r.id = 42;
  r.warmup = true;
  r.scheduled_ns = 1000;
  r.slot_ns = 1200;
  r.sent_ns = 1500;
  r.headers_ns = 2'000'000;
  r.done_ns = 9'000'000'000;
  r.chunks = {Chunk{3'000'000, 1, 5, Channel::Reasoning}, Chunk{4'000'000, 3, 12, Channel::Answer},
              Chunk{5'000'000, -1, 0, Channel::ToolCall}};
  r.http_status = 200;
  r.error_kind = ErrorKind::StreamError;
  r.error_message = "bad \"quote\"\\ line\nbreak\x01 caf\xC3\xA9";
  r.input_tokens = 17;
  r.output_tokens = 4;
  r.output_tokens_local = 5;
  r.input_tokens_local = 18;
  r.output_tokens_local_source = LocalCount::Tokenizer;
  r.reasoning_tokens = 1;
  r.cached_tokens = 16;
  r.prompt_len = 18;
  r.max_tokens = 128;
  r.finish_reason = "length";
  r.server_prompt_ms = 12.345;
  r.server_predicted_ms = 1e-7;
  return r;
}

void expect_same(const RequestRecord& a, const RequestRecord& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.warmup, b.warmup);
  EXPECT_EQ(a.scheduled_ns, b.scheduled_ns);
  EXPECT_EQ(a.slot_ns, b.slot_ns);
  EXPECT_EQ(a.sent_ns, b.sent_ns);
  EXPECT_EQ(a.headers_ns, b.headers_ns);
  EXPECT_EQ(a.done_ns, b.done_ns);
  ASSERT_EQ(a.chunks.size(), b.chunks.size());
  for (std::size_t i = 0; i < a.chunks.size(); ++i) {
    EXPECT_EQ(a.chunks[i].time_ns, b.chunks[i].time_ns) << i;
    EXPECT_EQ(a.chunks[i].tokens, b.chunks[i].tokens) << i;
    EXPECT_EQ(a.chunks[i].bytes, b.chunks[i].bytes) << i;
    EXPECT_EQ(a.chunks[i].channel, b.chunks[i].channel) << i;
  }
  EXPECT_EQ(a.http_status, b.http_status);
  EXPECT_EQ(a.error_kind, b.error_kind);
  EXPECT_EQ(a.error_message, b.error_message);
  EXPECT_EQ(a.input_tokens, b.input_tokens);
  EXPECT_EQ(a.output_tokens, b.output_tokens);
  EXPECT_EQ(a.output_tokens_local, b.output_tokens_local);
  EXPECT_EQ(a.input_tokens_local, b.input_tokens_local);
  EXPECT_EQ(a.output_tokens_local_source, b.output_tokens_local_source);
  EXPECT_EQ(a.reasoning_tokens, b.reasoning_tokens);
  EXPECT_EQ(a.cached_tokens, b.cached_tokens);
  EXPECT_EQ(a.prompt_len, b.prompt_len);
  EXPECT_EQ(a.max_tokens, b.max_tokens);
  EXPECT_EQ(a.finish_reason, b.finish_reason);
  EXPECT_EQ(a.server_prompt_ms, b.server_prompt_ms);  // shortest round-trip text: exact
  EXPECT_EQ(a.server_predicted_ms, b.server_predicted_ms);
  EXPECT_EQ(a.conversation_id, b.conversation_id);
  EXPECT_EQ(a.turn, b.turn);
  EXPECT_EQ(a, b);  // every field, including any added later
}

TEST(RecordIo, ExactLineForASmallRecord) {
  RequestRecord r;
  r.id = 7;
  r.scheduled_ns = 10;
  r.slot_ns = 10;
  r.sent_ns = 11;
  r.headers_ns = 12;
  r.done_ns = 20;
  r.http_status = 200;
  r.chunks = {Chunk{15, 2, 6, Channel::Answer}, Chunk{18, 1, 3, Channel::Reasoning}};
  r.output_tokens = 3;
  r.finish_reason = "stop";
  EXPECT_EQ(
      record_to_json_line(r),
      R"({"id":7,"warmup":false,"scheduled_ns":10,"slot_ns":10,"sent_ns":11,"headers_ns":12,)"
      R"("done_ns":20,"http_status":200,"ok":true,"error_kind":"none","error_message":"",)"
      R"("input_tokens":-1,"output_tokens":3,"input_tokens_local":-1,"output_tokens_local":-1,)"
      R"("reasoning_tokens":-1,"cached_tokens":-1,"prompt_len":-1,"max_tokens":-1,)"
      R"("finish_reason":"stop","chunks":[[15,2,6,"a"],[18,1,3,"r"]]})");
}

TEST(RecordIo, RoundTrip) {
  const RequestRecord r = full_record();
  const std::string line = record_to_json_line(r);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_THAT(line, HasSubstr(R"("error_message":"bad \"quote\"\\ line\nbreak\u0001 café")"));
  EXPECT_THAT(line, HasSubstr(R"("ok":false,"error_kind":"stream_error")"));
  EXPECT_THAT(line, HasSubstr(R"("input_tokens_local":18,"output_tokens_local":5,)"
                              R"("output_tokens_local_source":"tokenizer")"));
  auto back = record_from_json_line(line);
  ASSERT_TRUE(back.has_value()) << back.error().what();
  expect_same(r, *back);
  EXPECT_EQ(record_to_json_line(*back), line);
}

TEST(RecordIo, ConversationAndTurnRoundTripAndOldLinesReadAsSingleTurn) {
  RequestRecord r = full_record();
  r.conversation_id = 12;
  r.turn = 3;
  const std::string line = record_to_json_line(r);
  EXPECT_THAT(line, HasSubstr(R"("conversation_id":12,"turn":3,"chunks":)"));
  auto back = record_from_json_line(line);
  ASSERT_TRUE(back.has_value()) << back.error().what();
  EXPECT_EQ(back->conversation_id, 12);
  EXPECT_EQ(back->turn, 3);
  expect_same(r, *back);
  // A single-turn record writes neither key, so its line is what it was before the fields.
  const std::string single = record_to_json_line(full_record());
  EXPECT_EQ(single.find("conversation_id"), std::string::npos);
  EXPECT_EQ(single.find("\"turn\""), std::string::npos);
  // An old line without them reads as single-turn.
  auto old = record_from_json_line(R"({"id":1,"scheduled_ns":100,"sent_ns":130})");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->conversation_id, -1);
  EXPECT_EQ(old->turn, -1);
  // A bad value names the field.
  auto bad = record_from_json_line(R"({"id":1,"turn":"two"})");
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().what(), HasSubstr("'turn'"));
}

TEST(RecordIo, InvalidUtf8BecomesReplacementCharacter) {
  RequestRecord r;
  r.error_kind = ErrorKind::Other;
  r.error_message = "x\xFFy\xC3";
  auto back = record_from_json_line(record_to_json_line(r));
  ASSERT_TRUE(back.has_value()) << back.error().what();
  EXPECT_EQ(back->error_message, "x\xEF\xBF\xBDy\xEF\xBF\xBD");
}

TEST(RecordIo, UnknownKeysAndMissingKeys) {
  auto r = record_from_json_line(
      R"( {"id":3,"future":{"a":[1,2]},"sent_ns":5,"chunks":[[6,1,2,"t"]]} )");
  ASSERT_TRUE(r.has_value()) << r.error().what();
  EXPECT_EQ(r->id, 3);
  EXPECT_EQ(r->sent_ns, 5);
  EXPECT_EQ(r->done_ns, -1);
  EXPECT_EQ(r->slot_ns, -1);
  ASSERT_EQ(r->chunks.size(), 1u);
  EXPECT_EQ(r->chunks[0].channel, Channel::ToolCall);
  EXPECT_TRUE(r->ok());
}

TEST(RecordIo, ARecordWrittenBeforeSlotNsExistedGetsItsSlotAtScheduled) {
  auto r = record_from_json_line(R"({"id":1,"scheduled_ns":100,"sent_ns":130})");
  ASSERT_TRUE(r.has_value()) << r.error().what();
  EXPECT_EQ(r->slot_ns, -1);
  EXPECT_EQ(slot_time(*r), 100);
  r->slot_ns = 120;
  EXPECT_EQ(slot_time(*r), 120);
}

// Each bad line, the field the error must name and the byte offset it must point at.
struct BadLine {
  std::string line;
  std::string field;
  std::int64_t offset;
};

TEST(RecordIo, ErrorsNameFieldAndOffset) {
  const std::vector<BadLine> cases = {
      {R"({"id":"x"})", "field 'id'", 6},
      {R"({"id":1,"sent_ns":1.5})", "field 'sent_ns'", 18},
      {R"({"id":1,"warmup":1})", "field 'warmup'", 17},
      {R"({"http_status":1000})", "field 'http_status'", 15},
      {R"({"chunks":[[1,2,3,"x"]]})", "chunk 0 channel", 18},
      {R"({"chunks":[[1,2,3,"a"],[1,2,3]]})", "chunk 1: expected 4 elements", 23},
      {R"({"chunks":[[1,-2,3,"a"]]})", "chunk 0 tokens", 14},
      {R"({"chunks":5})", "field 'chunks'", 10},
      {R"({"server_prompt_ms":"1"})", "field 'server_prompt_ms'", 20},
      {R"({"ok":true,"error_kind":"timeout"})", "field 'ok'", -1},
      {R"([1,2])", "expected a JSON object", 0},
      {R"({"id":1} x)", "unexpected content", 9},
      {R"({"id":1} {"id":2})", "unexpected content", 9},
      {R"({"id":1,"m":"}"  )", "not closed", 17},
  };
  for (const auto& c : cases) {
    auto r = record_from_json_line(c.line);
    ASSERT_FALSE(r.has_value()) << c.line;
    EXPECT_THAT(r.error().what(), HasSubstr(c.field)) << c.line;
    EXPECT_EQ(r.error().offset, c.offset) << c.line << " → " << r.error().what();
  }
}

TEST(RecordIo, MalformedJsonIsAnErrorNotACrash) {
  for (const char* line : {"", "{", R"({"id":)", R"({"id":1,)", R"({"id" 1})", "nul",
                           R"({"error_message":"unterminated})"}) {
    auto r = record_from_json_line(line);
    EXPECT_FALSE(r.has_value()) << line;
    if (!r.has_value()) {
      EXPECT_THAT(r.error().what(), HasSubstr("request record")) << line;
    }
  }
}

}  // namespace
}  // namespace llmbench::metrics
