#include "llmbench/loadgen/request_handler.hpp"

#include "llmbench/core/log.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <utility>

namespace llmbench::loadgen {

using metrics::Channel;
using metrics::ErrorKind;

namespace {

// Longest stored error message and finish_reason (bytes, after redaction).
constexpr std::size_t kMaxMessageBytes = 512;
constexpr std::size_t kMaxFinishReasonBytes = 64;

// Logs rejected server counts at the 1st, 10th, 100th, ... case of the process, so a hostile or
// broken server is named without filling the log.
void note_rejected_usage(std::string_view what, std::int64_t value) {
  static std::atomic<std::int64_t> rejected{0};
  const std::int64_t n = rejected.fetch_add(1, std::memory_order_relaxed) + 1;
  std::int64_t p = 1;
  while (p < n && p <= std::numeric_limits<std::int64_t>::max() / 10) {
    p *= 10;
  }
  if (p == n) {
    log::warn(
        "server reported {} = {}, more than the response could carry: ignored, the local count "
        "is used ({} such value(s) so far)",
        what, value, n);
  }
}

}  // namespace

bool plausible_output_tokens(std::int64_t count, std::int64_t max_tokens,
                             std::int64_t received_bytes) noexcept {
  if (count < 0 || count > kMaxTokenCount) {
    return false;
  }
  return (max_tokens >= 0 && count <= max_tokens) || count <= received_bytes;
}

ErrorKind error_kind_for_status(int status) noexcept {
  if (status >= 200 && status < 300) {
    return ErrorKind::None;
  }
  if (status >= 300 && status < 400) {
    return ErrorKind::Http3xx;
  }
  if (status >= 400 && status < 500) {
    return ErrorKind::Http4xx;
  }
  if (status >= 500 && status < 600) {
    return ErrorKind::Http5xx;
  }
  return ErrorKind::HttpOther;
}

const protocol::Redactor RecordingHandler::kNoSecrets{};

RecordingHandler::RecordingHandler(metrics::RequestRecord& record, protocol::StreamDecoder& decoder,
                                   bool stream, TimeNs run_start_ns)
    : rec_(record), decoder_(decoder), start_(run_start_ns), stream_(stream) {}

void RecordingHandler::on_sent(TimeNs now_ns) {
  // A retry on a fresh connection resends: the last attempt's send time counts.
  rec_.sent_ns = now_ns - start_;
}

void RecordingHandler::on_headers(int status, TimeNs now_ns) {
  rec_.headers_ns = now_ns - start_;
  rec_.http_status = status;
  error_status_ = status < 200 || status >= 300;
}

void RecordingHandler::on_body(std::string_view bytes, TimeNs now_ns) {
  received_bytes_ += static_cast<std::int64_t>(bytes.size());
  if (error_status_ || !stream_) {
    body_.append(bytes);
    return;
  }
  const TimeNs t = now_ns - start_;
  parser_.feed(
      bytes,
      [&](const sse::Event& event) {
        if (!stop_) {
          handle_event(event, t);
        }
      },
      [&](const sse::UnknownField& field) {
        if (!stop_) {
          if (auto delta = decoder_.decode_field(field.name, field.value)) {
            apply_delta(*delta, t);
          }
        }
      });
}

void RecordingHandler::fail(ErrorKind kind, std::string_view message) {
  if (rec_.error_kind == ErrorKind::None) {
    rec_.error_kind = kind;
    rec_.error_message = protocol::server_text(message, *redactor_, kMaxMessageBytes);
  }
  stop_ = true;
}

void RecordingHandler::handle_event(const sse::Event& event, TimeNs t) {
  ++chunk_events_;
  auto delta = decoder_.decode_sse(event.type, event.data);
  if (!delta) {
    fail(ErrorKind::Parse, delta.error().what());
    return;
  }
  apply_delta(*delta, t);
}

void RecordingHandler::reject_completion_usage(std::int64_t value) {
  if (!usage_rejected_) {
    note_rejected_usage("usage.completion_tokens", value);
  }
  usage_rejected_ = true;
  rec_.output_tokens = -1;
  per_chunk_usage_ = false;
  for (auto& c : rec_.chunks) {
    c.tokens = -1;
  }
}

std::int32_t RecordingHandler::apply_usage(const protocol::Usage& u) {
  if (u.prompt_tokens >= 0) {
    if (u.prompt_tokens <= kMaxTokenCount) {
      rec_.input_tokens = u.prompt_tokens;
    } else {
      note_rejected_usage("usage.prompt_tokens", u.prompt_tokens);
    }
  }
  std::int32_t usage_tokens = -1;
  if (u.completion_tokens >= 0 && !usage_rejected_) {
    const bool rises = u.completion_tokens >= last_completion_tokens_;
    if (!rises || !plausible_output_tokens(u.completion_tokens, rec_.max_tokens, received_bytes_)) {
      reject_completion_usage(u.completion_tokens);
    } else {
      // Bounded by kMaxTokenCount (2^24), so the delta fits in int32.
      usage_tokens = static_cast<std::int32_t>(u.completion_tokens - last_completion_tokens_);
      rec_.output_tokens = u.completion_tokens;
      last_completion_tokens_ = u.completion_tokens;
    }
  }
  // Reasoning tokens are part of the completion, cached tokens part of the prompt.
  if (u.reasoning_tokens >= 0 && u.reasoning_tokens <= kMaxTokenCount &&
      (rec_.output_tokens < 0 || u.reasoning_tokens <= rec_.output_tokens)) {
    rec_.reasoning_tokens = u.reasoning_tokens;
  }
  if (u.cached_tokens >= 0 && u.cached_tokens <= kMaxTokenCount &&
      (rec_.input_tokens < 0 || u.cached_tokens <= rec_.input_tokens)) {
    rec_.cached_tokens = u.cached_tokens;
    cached_from_usage_ = true;
  }
  return usage_tokens;
}

void RecordingHandler::apply_delta(const protocol::Delta& d, TimeNs t) {
  if (d.done) {
    saw_done_ = true;
    return;
  }
  if (d.is_error) {
    fail(ErrorKind::StreamError,
         d.error_message.empty() ? "error object in stream" : d.error_message);
    return;
  }
  const std::int32_t usage_tokens = d.usage ? apply_usage(*d.usage) : -1;
  if (!d.finish_reason.empty()) {
    rec_.finish_reason = protocol::server_text(d.finish_reason, *redactor_, kMaxFinishReasonBytes);
  }
  if (d.timings_prompt_ms >= 0)
    rec_.server_prompt_ms = d.timings_prompt_ms;
  if (d.timings_predicted_ms >= 0)
    rec_.server_predicted_ms = d.timings_predicted_ms;
  if (d.timings_prompt_n >= 0)
    timings_prompt_n_ = d.timings_prompt_n;
  // llama.cpp reports its prompt-cache reuse as `timings.cache_n`; usage's cached_tokens wins.
  if (d.timings_cache_n >= 0 && d.timings_cache_n <= kMaxTokenCount && !cached_from_usage_ &&
      (rec_.input_tokens < 0 || d.timings_cache_n <= rec_.input_tokens)) {
    rec_.cached_tokens = d.timings_cache_n;
  }
  // A choice with no text whose per-chunk usage rose (vLLM continuous_usage_stats; e.g. a token
  // that decodes to nothing) still carried output. A usage-only chunk (`"choices": []`, the
  // OpenAI final chunk) does not: its usage covers the whole stream.
  const bool silent_tokens =
      !d.has_output() && d.has_choice && usage_tokens > 0 && per_chunk_usage_;
  if (!d.has_output() && !silent_tokens) {
    return;
  }
  record_output(d, usage_tokens, t);
}

void RecordingHandler::record_output(const protocol::Delta& d, std::int32_t usage_tokens,
                                     TimeNs t) {
  if (tok_ != nullptr) {
    keep_for_count(answer_text_, answer_ends_, d.answer);
    keep_for_count(reasoning_text_, reasoning_ends_, d.reasoning);
  } else if (keep_answer_) {
    answer_text_ += d.answer;
  }
  // Tokens in this chunk: the growth of usage when the server streams it on every chunk (vLLM
  // continuous_usage_stats); otherwise unknown (-1) and estimated later. Usage that shows up
  // only on the last content chunk (OpenAI style) covers the whole stream, not that chunk.
  if (usage_tokens < 0 || !per_chunk_usage_) {
    per_chunk_usage_ = false;
    usage_tokens = -1;
  } else {
    chunk_token_sum_ += usage_tokens;
  }
  // A chunk that carries several channels is recorded once per channel at the same time. Its
  // known token count goes to the last entry (the split is not reported); unknown stays unknown.
  struct Part {
    Channel channel;
    std::size_t bytes;
  };
  std::array<Part, 3> parts{};
  std::size_t n = 0;
  if (!d.reasoning.empty())
    parts[n++] = {.channel = Channel::Reasoning, .bytes = d.reasoning.size()};
  if (!d.answer.empty())
    parts[n++] = {.channel = Channel::Answer, .bytes = d.answer.size()};
  if (d.tool_call)
    parts[n++] = {.channel = Channel::ToolCall, .bytes = d.tool_call_bytes};
  if (n == 0) {
    // Tokens without text belong to the channel being streamed (the answer before any text).
    parts[n++] = {.channel = rec_.chunks.empty() ? Channel::Answer : rec_.chunks.back().channel,
                  .bytes = 0};
  }
  for (std::size_t i = 0; i < n; ++i) {
    rec_.chunks.push_back(metrics::Chunk{
        .time_ns = t,
        .tokens = (i + 1 == n || usage_tokens < 0) ? usage_tokens : 0,
        .bytes = static_cast<std::int32_t>(std::min<std::size_t>(parts[i].bytes, INT32_MAX)),
        .channel = parts[i].channel,
    });
  }
}

void RecordingHandler::keep_for_count(std::string& text, std::vector<std::size_t>& ends,
                                      std::string_view piece) {
  if (!piece.empty()) {
    text += piece;
    ends.push_back(text.size());
  }
}

std::int64_t RecordingHandler::count_events(const std::string& text,
                                            const std::vector<std::size_t>& ends) const {
  // Each event on its own, at least one token each: a server emits an event only for generated
  // tokens, and re-encoding the joined text would merge tokens the server sent apart (fifteen
  // one-space events are fifteen tokens, not one). docs/metrics.md, "Local token counts".
  std::int64_t total = 0;
  std::size_t begin = 0;
  for (const std::size_t end : ends) {
    auto n = tok_->count(std::string_view(text).substr(begin, end - begin), false, *scratch_);
    if (!n) {
      return -1;
    }
    total += std::max<std::int64_t>(1, static_cast<std::int64_t>(*n));
    begin = end;
  }
  return total;
}

ErrorKind error_kind_for(http::Failure failure, bool headers_received) noexcept {
  switch (failure) {
    case http::Failure::None:
      return ErrorKind::None;
    case http::Failure::Connect:
      return ErrorKind::Connect;
    case http::Failure::Timeout:
      return ErrorKind::Timeout;
    case http::Failure::Cancelled:
      return ErrorKind::Cancelled;
    case http::Failure::Closed:
      return headers_received ? ErrorKind::StreamError : ErrorKind::Connect;
    case http::Failure::Protocol:
      return ErrorKind::Parse;
    case http::Failure::Io:
      return ErrorKind::Other;
  }
  return ErrorKind::Other;
}

void RecordingHandler::finish_body() {
  auto d = decoder_.decode_body(body_);
  if (!d) {
    fail(ErrorKind::Parse, d.error().what());
  } else if (d->is_error) {
    fail(ErrorKind::StreamError, d->error_message);
  } else {
    // The whole answer arrives at once: one chunk at the end (TTFT = E2EL, as vLLM reports).
    apply_delta(*d, rec_.done_ns);
    if (!rec_.chunks.empty() && rec_.output_tokens >= 0) {
      rec_.chunks.back().tokens = static_cast<std::int32_t>(rec_.output_tokens);
    }
  }
}

void RecordingHandler::classify(const http::Outcome& outcome) {
  if (outcome.failure != http::Failure::None) {
    const bool mid_response = outcome.failure == http::Failure::Closed && rec_.headers_ns >= 0;
    fail(error_kind_for(outcome.failure, rec_.headers_ns >= 0),
         mid_response ? "connection closed mid-response: " + outcome.message : outcome.message);
  } else if (error_status_) {
    // An unread body (in an encoding llmbench does not decode) is explained by the outcome.
    fail(error_kind_for_status(rec_.http_status),
         fmt::format("HTTP {}: {}", rec_.http_status,
                     body_.empty() && !outcome.message.empty()
                         ? outcome.message
                         : protocol::error_message_from_body(body_, *redactor_)));
  } else if (!stream_) {
    finish_body();
  } else if (!saw_done_ && !outcome.body_complete) {
    fail(ErrorKind::StreamError, "stream ended before it was complete");
  } else if (!saw_done_ && rec_.finish_reason.empty() && !decoder_.complete_at_body_end()) {
    fail(
        ErrorKind::StreamError,
        chunk_events_ == 0
            ? "no stream events in the response (a server that ignores \"stream\": try --no-stream)"
            : "stream ended without [DONE] or a finish_reason");
  }
}

void RecordingHandler::finish(const http::Outcome& outcome, TimeNs now_ns) {
  rec_.done_ns = now_ns - start_;
  if (rec_.error_kind == ErrorKind::None) {
    classify(outcome);  // else it failed while the response arrived
  }
  if (rec_.ok() && rec_.chunks.empty()) {
    // A normal end (`[DONE]` or a finish_reason) with `usage.completion_tokens` 0 is a
    // successful reply of zero tokens: vLLM answers so when the model stops at once. It counts
    // as completed and gives no TTFT, TPOT or ITL. A reply that claims tokens it never
    // streamed, or says neither, still fails (vLLM's benchmark client fails both: "never
    // received a valid chunk").
    const bool normal_end = saw_done_ || !rec_.finish_reason.empty() || !stream_;
    if (!(normal_end && rec_.output_tokens == 0)) {
      rec_.error_kind = ErrorKind::EmptyOutput;
      const std::string what =
          stream_ ? fmt::format("HTTP {} stream of {} event(s)", rec_.http_status, chunk_events_)
                  : fmt::format("HTTP {} body", rec_.http_status);
      rec_.error_message =
          rec_.output_tokens > 0
              ? fmt::format("{} claims {} completion token(s) but carried no generated output",
                            what, rec_.output_tokens)
              : fmt::format("{} with no generated output{}", what,
                            rec_.output_tokens < 0 ? " and no usage" : "");
    }
  }
  // llama.cpp builds without `timings.cache_n` (b4748) still say how many prompt tokens they
  // evaluated (`timings.prompt_n`): the rest of the prompt came from the slot's cache.
  if (rec_.ok() && rec_.cached_tokens < 0 && timings_prompt_n_ >= 0 && rec_.input_tokens >= 0 &&
      timings_prompt_n_ <= rec_.input_tokens) {
    rec_.cached_tokens = rec_.input_tokens - timings_prompt_n_;
  }
  if (rec_.ok() && per_chunk_usage_ && !rec_.chunks.empty() && stream_) {
    rec_.output_tokens_local = chunk_token_sum_;
    rec_.output_tokens_local_source = metrics::LocalCount::ChunkUsage;
  }
  if (rec_.ok() && tok_ != nullptr) {
    // Each channel on its own: a reasoning model's think delimiters are tokens in the server's
    // count but in neither text, and the two texts are not one string to the model either.
    const std::int64_t answer = count_events(answer_text_, answer_ends_);
    const std::int64_t reasoning = count_events(reasoning_text_, reasoning_ends_);
    if (answer >= 0 && reasoning >= 0) {
      rec_.output_tokens_local = answer + reasoning;
      rec_.output_tokens_local_source = metrics::LocalCount::Tokenizer;
    }
  }
}

}  // namespace llmbench::loadgen
