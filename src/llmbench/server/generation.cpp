// The one generation path of the simulated server: parse, refuse, admit, then frame what the
// timing's token source yields as SSE events or one JSON body, with the request bookkeeping
// (ids, counters, vLLM's per-request histograms, the emission log). The timing (fixed schedule
// or real-time engine) only decides when tokens are due (detail/token_source.hpp).

#include "llmbench/core/clock.hpp"
#include "llmbench/server/detail/state.hpp"
#include "llmbench/server/detail/token_source.hpp"
#include "llmbench/server/openai_format.hpp"
#include "llmbench/server/openai_request.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace llmbench::server::detail {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;

/// Everything one generation needs besides the shared state.
struct Job {
  const GenerationParams& params;
  std::string id;                              // "cmpl-7" / "chatcmpl-7"
  std::int64_t created_s = 0;                  // Unix seconds
  TimeNs arrival_ns = 0;                       // steady clock
  std::string_view request_id;                 // X-Request-Id header, "" if none
  std::vector<Emission>* emissions = nullptr;  // null when no emission log
  TokenSource* source = nullptr;
};

/// Counts a request as finished, observes vLLM's per-request histograms and writes its
/// emission-log line. Called right before the last write: a client that has read the whole
/// response then always finds all three (the completion of that write may never run if the
/// server is stopped at once).
void finish(ServerState& state, const Job& job) {
  state.success_total.fetch_add(1, std::memory_order_relaxed);
  state.request_histograms.observe(job.source->times());
  if (state.emission_log && job.emissions != nullptr) {
    state.emission_log->append(job.request_id, job.id, job.arrival_ns, job.source->admit_ns(),
                               *job.emissions);
  }
}

/// Notes the pieces of one write: emission-log entries (the instant right before the write)
/// and the written-token counter.
void note_written(ServerState& state, const Job& job, const std::vector<Piece>& pieces) {
  const TimeNs t = steady_now_ns();
  std::int64_t tokens = 0;
  for (const Piece& p : pieces) {
    tokens += p.tokens;
    if (job.emissions != nullptr && p.tokens > 0)
      job.emissions->emplace_back(t, p.tokens);
  }
  state.timing->count_written(tokens);
}

/// Streams an admitted request as SSE (vLLM's event shapes, openai_format.hpp). Returns false
/// if the client went away.
net::awaitable<bool> stream_output(ServerState& state, http::ResponseWriter& writer,
                                   const Job& job) {
  const GenerationParams& params = job.params;
  const StreamContext ctx =
      make_stream_context(params.chat, job.id, job.created_s, state.options.model,
                          params.prompt_tokens, params.continuous_usage);
  std::string out;
  out.reserve(ctx.prefix.size() + 256);
  if (params.chat) {
    // vLLM sends the role-only delta first; here it goes out at admission, before TTFT.
    append_role_event(out, ctx);
    if (!co_await writer.write_chunk(out))
      co_return false;
  }
  if (params.output_tokens == 0) {
    // No output: one finish-only event (empty text) at admission, then usage and [DONE].
    out.clear();
    append_content_event(out, ctx, "", true, 0);
    if (params.include_usage)
      append_usage_event(out, ctx, 0);
    append_done_event(out);
    job.source->release();
    finish(state, job);
    co_await writer.end_stream(out);
    co_return true;
  }
  std::vector<Piece> pieces;
  std::string text;
  std::int64_t emitted = 0;
  for (;;) {
    pieces.clear();
    co_await job.source->next(pieces, nullptr);
    if (pieces.empty())
      continue;
    // One SSE event per piece; the pieces that are due together share one write.
    out.clear();
    bool last = false;
    for (const Piece& p : pieces) {
      std::string_view chunk_text = token_text(emitted);
      if (p.tokens != 1) {
        text.clear();
        append_tokens(text, emitted, p.tokens);
        chunk_text = text;
      }
      emitted += p.tokens;
      last = p.last;
      append_content_event(out, ctx, chunk_text, p.last, emitted);
    }
    if (last) {
      // The trailing events go in the same write: one system call fewer per request.
      if (params.include_usage)
        append_usage_event(out, ctx, emitted);
      append_done_event(out);
    }
    note_written(state, job, pieces);
    if (last) {
      job.source->release();
      finish(state, job);
      // The chunked-body terminator goes in the same write as the last events.
      co_await writer.end_stream(out);
      co_return true;
    }
    if (!co_await writer.write_chunk(out))
      co_return false;
  }
}

/// Sends the whole response once the last token is due; the socket is watched meanwhile.
net::awaitable<bool> send_whole(ServerState& state, http::ResponseWriter& writer, const Job& job) {
  std::vector<Piece> pieces;
  std::int64_t total = 0;
  bool last = job.params.output_tokens == 0;
  while (!last) {
    pieces.clear();
    if (!co_await job.source->next(pieces, &writer))
      co_return false;
    note_written(state, job, pieces);
    for (const Piece& p : pieces) {
      total += p.tokens;
      last = last || p.last;
    }
  }
  std::string text;
  append_tokens(text, 0, total);
  std::string body =
      format_full_response(job.params.chat, job.id, job.created_s, state.options.model, text,
                           job.params.prompt_tokens, total);
  job.source->release();
  finish(state, job);
  co_await writer.send(bhttp::status::ok, std::move(body));
  co_return true;
}

/// Parses and checks a request body; an error is answered with 400 by the caller.
Result<GenerationParams> accept_request(const ServerState& state, std::string_view body,
                                        bool chat) {
  auto parsed = parse_generation_request(body, chat, state.options.default_output_len,
                                         state.timing->keep_prompt(), state.options.tokenizer);
  if (!parsed)
    return parsed.error();
  if (auto refused = state.timing->prepare(*parsed))
    return *refused;
  if (auto too_long = check_context_length(*parsed, state.options.max_model_len))
    return *too_long;
  return parsed;
}

}  // namespace

net::awaitable<void> reject_request(ServerState& state, http::ResponseWriter& writer,
                                    const Error& error) {
  state.rejected_total.fetch_add(1, std::memory_order_relaxed);
  co_await writer.send(bhttp::status::bad_request,
                       format_error(error.message, "invalid_request_error", error.source, 400));
}

net::awaitable<void> serve_generation(ServerState& state, http::ServerRequest& request,
                                      http::ResponseWriter& writer, bool chat) {
  const TimeNs arrival_ns = steady_now_ns();
  auto parsed = accept_request(state, request.body(), chat);
  if (!parsed) {
    co_await reject_request(state, writer, parsed.error());
    co_return;
  }
  const GenerationParams& params = *parsed;
  state.requests_total.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t number = state.next_id.fetch_add(1, std::memory_order_relaxed) + 1;
  const auto source = state.timing->open(params, arrival_ns, number, writer.executor());
  Job job{.params = params,
          .id = fmt::format("{}-{}", chat ? "chatcmpl" : "cmpl", number),
          .created_s = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count(),
          .arrival_ns = arrival_ns,
          .request_id = {},
          .emissions = nullptr,
          .source = source.get()};
  std::vector<Emission> emissions;
  if (state.emission_log) {
    const std::int64_t per_chunk = state.options.tokens_per_chunk;
    emissions.reserve(static_cast<std::size_t>(
        std::min<std::int64_t>((params.output_tokens + per_chunk - 1) / per_chunk, 1 << 16)));
    job.emissions = &emissions;
    job.request_id = request["X-Request-Id"];
  }

  // Streaming headers go out at arrival, as with vLLM (the HTTP response starts before the
  // request is scheduled); queueing then shows up as a late first event.
  bool ok = true;
  if (params.stream)
    ok = co_await writer.begin_stream();
  if (ok) {
    co_await source->admit();
    // No conditional operator around co_await: GCC 12 miscompiles some.
    if (params.stream) {
      ok = co_await stream_output(state, writer, job);
    } else {
      ok = co_await send_whole(state, writer, job);
    }
  }
  if (!ok) {
    state.cancelled_total.fetch_add(1, std::memory_order_relaxed);
    state.timing->count_aborted();
  }
}

}  // namespace llmbench::server::detail
