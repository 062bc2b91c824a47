#pragma once
/// @file
/// Turns the byte stream of one HTTP response into a `RequestRecord`: SSE framing (sse::Parser),
/// the dialect's decoding (protocol::StreamDecoder), per-chunk timestamps and the final
/// classification of the request. Pure with respect to I/O, so tests can drive it with recorded
/// bytes.

#include "llmbench/http/client.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/protocol/openai.hpp"
#include "llmbench/protocol/redact.hpp"
#include "llmbench/sse/parser.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace llmbench::loadgen {

/// The largest token count accepted from a server (2^24 = 16,777,216): above every context length
/// served today, far below what would make one record allocate without bound (a per-token
/// expansion of 2^31 or 2^63 tokens).
inline constexpr std::int64_t kMaxTokenCount = std::int64_t{1} << 24;

/// Whether a server's output-token count could be true: in [0, kMaxTokenCount], and at most the
/// requested `max_tokens` (-1 = unknown) or at most the `received_bytes` of the response so far
/// (every token reaches the client as at least one byte of JSON; the second bound admits a server
/// that overruns `max_tokens`, such as DeepSeek's reasoner, whose limit excludes reasoning).
bool plausible_output_tokens(std::int64_t count, std::int64_t max_tokens,
                             std::int64_t received_bytes) noexcept;

/// The error kind of a final HTTP status: `None` for 2xx, `Http3xx` (redirects are not
/// followed), `Http4xx`, `Http5xx`, else `HttpOther` (RFC 9110 §15 defines 1xx-5xx).
metrics::ErrorKind error_kind_for_status(int status) noexcept;

/// Fills one record as the response arrives. Times given to it are absolute steady ns; the record
/// gets them relative to `run_start_ns`. Not thread-safe; one per request, on its worker thread.
class RecordingHandler final : public http::ResponseHandler {
 public:
  /// `record` and `decoder` (the dialect's, `protocol::Dialect::make_decoder`, new for this
  /// response) must outlive the handler; `stream` selects SSE vs one JSON body. A stream is
  /// complete at `[DONE]`, at a finish reason, or, for a decoder that says so
  /// (`StreamDecoder::complete_at_body_end`), when its body ends cleanly.
  RecordingHandler(metrics::RequestRecord& record, protocol::StreamDecoder& decoder, bool stream,
                   TimeNs run_start_ns);

  void on_sent(TimeNs now_ns) override;
  void on_headers(int status, TimeNs now_ns) override;
  void on_body(std::string_view bytes, TimeNs now_ns) override;
  bool want_stop() override { return stop_; }

  /// Counts output tokens locally (`--tokenizer`): the received answer and reasoning text is
  /// kept with its event boundaries, and `finish` of a completed request encodes each event's
  /// text without special tokens, counts at least one token per event (the server sent it apart),
  /// and stores the sum over both channels in `output_tokens_local` (source
  /// `LocalCount::Tokenizer`), beside the server's `usage.completion_tokens` when it sent one.
  /// Tool-call arguments are not counted.
  /// `tok` and `scratch` must outlive the handler; call before the response arrives.
  void count_output_with(const tokenizer::Tokenizer& tok, tokenizer::Scratch& scratch) {
    tok_ = &tok;
    scratch_ = &scratch;
  }

  /// Multi-turn runs (`LoadOptions::multi_turn`): keeps the answer-channel text the server
  /// streamed (or sent in one body), so the next turn can send it back as the assistant
  /// message; reasoning and tool-call text are not kept. Without this call (single-turn runs)
  /// no text is kept unless `count_output_with` needs it. Call before the response arrives.
  void keep_answer() noexcept { keep_answer_ = true; }

  /// The answer text kept by `keep_answer` (or `count_output_with`), moved out; "" when none was
  /// kept. Call after `finish`.
  [[nodiscard]] std::string take_answer() noexcept { return std::move(answer_text_); }

  /// Removes `redactor`'s secrets from every server-controlled string before it is cut and stored
  /// (error messages, `finish_reason`). `redactor` must outlive the handler; without this call
  /// nothing is redacted (strings are still cut).
  void redact_with(const protocol::Redactor& redactor) { redactor_ = &redactor; }

  /// Classifies the request from the transport outcome and what the stream said; sets
  /// `done_ns`, `error_kind`, `error_message`, token counts. A 2xx answer without any output
  /// chunk is `EmptyOutput`. Server counts that fail `plausible_output_tokens` (or prompt counts
  /// above `kMaxTokenCount`) are dropped, so the local count stands in. Call once, after
  /// `execute`.
  void finish(const http::Outcome& outcome, TimeNs now_ns);

  /// True when the server's `usage.completion_tokens` was rejected as implausible.
  [[nodiscard]] bool usage_rejected() const noexcept { return usage_rejected_; }

 private:
  void handle_event(const sse::Event& event, TimeNs t);
  void apply_delta(const protocol::Delta& delta, TimeNs t);
  /// Copies checked usage into the record; returns the chunk's token delta, -1 if unknown.
  std::int32_t apply_usage(const protocol::Usage& usage);
  void reject_completion_usage(std::int64_t value);
  void record_output(const protocol::Delta& d, std::int32_t usage_tokens, TimeNs t);
  void finish_body();
  /// The end-of-response classification of a request that has not failed yet.
  void classify(const http::Outcome& outcome);
  void fail(metrics::ErrorKind kind, std::string_view message);
  static void keep_for_count(std::string& text, std::vector<std::size_t>& ends,
                             std::string_view piece);
  /// Local count of one channel (see `count_output_with`); -1 when the tokenizer fails.
  [[nodiscard]] std::int64_t count_events(const std::string& text,
                                          const std::vector<std::size_t>& ends) const;

  static const protocol::Redactor kNoSecrets;

  metrics::RequestRecord& rec_;
  protocol::StreamDecoder& decoder_;
  sse::Parser parser_;
  std::string body_;  // non-streamed body, or the body of a non-2xx response
  TimeNs start_;
  std::int64_t last_completion_tokens_ = 0;  // running usage for per-chunk token deltas
  std::int64_t chunk_token_sum_ = 0;
  std::int64_t chunk_events_ = 0;    // SSE events seen
  std::int64_t received_bytes_ = 0;  // response body bytes so far (bounds server counts)
  bool stream_;
  bool error_status_ = false;
  bool saw_done_ = false;
  bool stop_ = false;
  bool per_chunk_usage_ = true;         // every output chunk so far carried usage
  bool usage_rejected_ = false;         // completion_tokens failed the plausibility check
  bool keep_answer_ = false;            // multi-turn: keep the answer text for the next turn
  bool cached_from_usage_ = false;      // cached_tokens came from usage (beats timings.cache_n)
  std::int64_t timings_prompt_n_ = -1;  // llama.cpp timings.prompt_n: prompt tokens evaluated
  const protocol::Redactor* redactor_ = &kNoSecrets;
  const tokenizer::Tokenizer* tok_ = nullptr;  // local counting when set
  tokenizer::Scratch* scratch_ = nullptr;
  std::string answer_text_;  // received text, kept only for local counting or the next turn
  std::string reasoning_text_;
  std::vector<std::size_t> answer_ends_;  // end offset of each event's text in `answer_text_`
  std::vector<std::size_t> reasoning_ends_;
};

/// Maps a transport failure to the record's error kind.
metrics::ErrorKind error_kind_for(http::Failure failure, bool headers_received) noexcept;

}  // namespace llmbench::loadgen
