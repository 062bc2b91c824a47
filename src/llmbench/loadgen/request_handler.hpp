#pragma once
/// @file
/// Turns the byte stream of one HTTP response into a `RequestRecord`: SSE framing (sse::Parser),
/// OpenAI chunk decoding (protocol::Decoder), per-chunk timestamps and the final classification
/// of the request. Pure with respect to I/O, so tests can drive it with recorded bytes.

#include "llmbench/http/client.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/protocol/openai.hpp"
#include "llmbench/sse/parser.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <string>

namespace llmbench::loadgen {

/// Fills one record as the response arrives. Times given to it are absolute steady ns; the record
/// gets them relative to `run_start_ns`. Not thread-safe; one per request, on its worker thread.
class RecordingHandler final : public http::ResponseHandler {
 public:
  /// `record` and `decoder` must outlive the handler; `stream` selects SSE vs one JSON body.
  RecordingHandler(metrics::RequestRecord& record, protocol::Decoder& decoder, bool stream,
                   TimeNs run_start_ns);

  void on_sent(TimeNs now_ns) override;
  void on_headers(int status, TimeNs now_ns) override;
  void on_body(std::string_view bytes, TimeNs now_ns) override;
  bool want_stop() override { return stop_; }

  /// Counts output tokens locally (`--tokenizer`): the received answer and reasoning text is
  /// kept, and `finish` of a completed request encodes each channel's text without special
  /// tokens and stores the sum in `output_tokens_local` (source `LocalCount::Tokenizer`), beside
  /// the server's `usage.completion_tokens` when it sent one. Tool-call arguments are not counted.
  /// `tok` and `scratch` must outlive the handler; call before the response arrives.
  void count_output_with(const tokenizer::Tokenizer& tok, tokenizer::Scratch& scratch) {
    tok_ = &tok;
    scratch_ = &scratch;
  }

  /// Classifies the request from the transport outcome and what the stream said; sets
  /// `done_ns`, `error_kind`, `error_message`, token counts. Call once, after `execute`.
  void finish(const http::Outcome& outcome, TimeNs now_ns);

 private:
  void handle_event(std::string_view data, TimeNs t);
  void apply_delta(const protocol::Delta& delta, TimeNs t);
  void fail(metrics::ErrorKind kind, std::string message);

  metrics::RequestRecord& rec_;
  protocol::Decoder& decoder_;
  sse::Parser parser_;
  std::string body_;  // non-streamed body, or the body of a non-2xx response
  TimeNs start_;
  std::int64_t last_completion_tokens_ = 0;  // running usage for per-chunk token deltas
  std::int64_t chunk_token_sum_ = 0;
  std::int64_t chunk_events_ = 0;  // SSE events seen
  bool stream_;
  bool error_status_ = false;
  bool saw_done_ = false;
  bool stop_ = false;
  bool per_chunk_usage_ = true;                // every output chunk so far carried usage
  const tokenizer::Tokenizer* tok_ = nullptr;  // local counting when set
  tokenizer::Scratch* scratch_ = nullptr;
  std::string answer_text_;  // received text, kept only for local counting
  std::string reasoning_text_;
};

/// Maps a transport failure to the record's error kind.
metrics::ErrorKind error_kind_for(http::Failure failure, bool headers_received) noexcept;

}  // namespace llmbench::loadgen
