#include "llmbench/loadgen/request_handler.hpp"

#include <fmt/core.h>

#include <array>
#include <utility>

namespace llmbench::loadgen {

using metrics::Channel;
using metrics::ErrorKind;

RecordingHandler::RecordingHandler(metrics::RequestRecord& record, protocol::Decoder& decoder,
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
  if (error_status_ || !stream_) {
    body_.append(bytes);
    return;
  }
  const TimeNs t = now_ns - start_;
  parser_.feed(bytes, [&](const sse::Event& event) {
    if (!stop_) {
      handle_event(event.data, t);
    }
  });
}

void RecordingHandler::fail(ErrorKind kind, std::string message) {
  if (rec_.error_kind == ErrorKind::None) {
    rec_.error_kind = kind;
    rec_.error_message = std::move(message);
  }
  stop_ = true;
}

void RecordingHandler::handle_event(std::string_view data, TimeNs t) {
  ++chunk_events_;
  auto delta = decoder_.decode_event(data);
  if (!delta) {
    fail(ErrorKind::Parse, delta.error().what());
    return;
  }
  apply_delta(*delta, t);
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
  std::int32_t usage_tokens = -1;
  if (d.usage) {
    const auto& u = *d.usage;
    if (u.prompt_tokens >= 0)
      rec_.input_tokens = u.prompt_tokens;
    if (u.completion_tokens >= 0) {
      usage_tokens = static_cast<std::int32_t>(u.completion_tokens - last_completion_tokens_);
      rec_.output_tokens = u.completion_tokens;
      last_completion_tokens_ = u.completion_tokens;
    }
    if (u.reasoning_tokens >= 0)
      rec_.reasoning_tokens = u.reasoning_tokens;
    if (u.cached_tokens >= 0)
      rec_.cached_tokens = u.cached_tokens;
  }
  if (!d.finish_reason.empty()) {
    rec_.finish_reason = d.finish_reason;
  }
  if (d.timings_prompt_ms >= 0)
    rec_.server_prompt_ms = d.timings_prompt_ms;
  if (d.timings_predicted_ms >= 0)
    rec_.server_predicted_ms = d.timings_predicted_ms;
  if (!d.has_output()) {
    return;
  }
  if (tok_ != nullptr) {
    answer_text_ += d.answer;
    reasoning_text_ += d.reasoning;
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
    parts[n++] = {Channel::Reasoning, d.reasoning.size()};
  if (!d.answer.empty())
    parts[n++] = {Channel::Answer, d.answer.size()};
  if (d.tool_call)
    parts[n++] = {Channel::ToolCall, d.tool_call_bytes};
  for (std::size_t i = 0; i < n; ++i) {
    metrics::Chunk c;
    c.time_ns = t;
    c.bytes = static_cast<std::int32_t>(parts[i].bytes);
    c.channel = parts[i].channel;
    c.tokens = (i + 1 == n || usage_tokens < 0) ? usage_tokens : 0;
    rec_.chunks.push_back(c);
  }
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

void RecordingHandler::finish(const http::Outcome& outcome, TimeNs now_ns) {
  rec_.done_ns = now_ns - start_;
  if (outcome.failure != http::Failure::None && rec_.error_kind == ErrorKind::None) {
    rec_.error_kind = error_kind_for(outcome.failure, rec_.headers_ns >= 0);
    rec_.error_message = outcome.message;
    if (outcome.failure == http::Failure::Closed && rec_.headers_ns >= 0) {
      rec_.error_message = "connection closed mid-response: " + outcome.message;
    }
  } else if (error_status_ && rec_.error_kind == ErrorKind::None) {
    rec_.error_kind =
        rec_.http_status >= 400 && rec_.http_status < 500 ? ErrorKind::Http4xx : ErrorKind::Http5xx;
    rec_.error_message =
        fmt::format("HTTP {}: {}", rec_.http_status, protocol::error_message_from_body(body_));
  } else if (rec_.error_kind == ErrorKind::None && !stream_) {
    auto d = decoder_.decode_body(body_);
    if (!d) {
      rec_.error_kind = ErrorKind::Parse;
      rec_.error_message = d.error().what();
    } else if (d->is_error) {
      rec_.error_kind = ErrorKind::StreamError;
      rec_.error_message = d->error_message;
    } else {
      // The whole answer arrives at once: one chunk at the end (TTFT = E2EL, as vLLM reports).
      apply_delta(*d, rec_.done_ns);
      if (!rec_.chunks.empty() && rec_.output_tokens >= 0) {
        rec_.chunks.back().tokens = static_cast<std::int32_t>(rec_.output_tokens);
      }
    }
  } else if (rec_.error_kind == ErrorKind::None && !saw_done_ && !outcome.body_complete) {
    rec_.error_kind = ErrorKind::StreamError;
    rec_.error_message = "stream ended before it was complete";
  } else if (rec_.error_kind == ErrorKind::None && !saw_done_ && rec_.finish_reason.empty()) {
    rec_.error_kind = ErrorKind::StreamError;
    rec_.error_message =
        chunk_events_ == 0
            ? "no stream events in the response (a server that ignores \"stream\": try --no-stream)"
            : "stream ended without [DONE] or a finish_reason";
  }
  if (rec_.ok() && per_chunk_usage_ && !rec_.chunks.empty() && stream_) {
    rec_.output_tokens_local = chunk_token_sum_;
    rec_.output_tokens_local_source = metrics::LocalCount::ChunkUsage;
  }
  if (rec_.ok() && tok_ != nullptr) {
    // Each channel on its own: a reasoning model's think delimiters are tokens in the server's
    // count but in neither text, and the two texts are not one string to the model either.
    auto answer = tok_->count(answer_text_, false, *scratch_);
    auto reasoning = tok_->count(reasoning_text_, false, *scratch_);
    if (answer && reasoning) {
      rec_.output_tokens_local = static_cast<std::int64_t>(*answer + *reasoning);
      rec_.output_tokens_local_source = metrics::LocalCount::Tokenizer;
    }
  }
}

}  // namespace llmbench::loadgen
