// The one generation path of the simulated server: parse, refuse, admit, then frame what the
// timing's token source yields as SSE events or one JSON body, with the request bookkeeping
// (ids, counters, vLLM's per-request histograms, the emission log). The timing (fixed schedule
// or real-time engine) only decides when tokens are due (detail/token_source.hpp).

#include "llmbench/core/clock.hpp"
#include "llmbench/server/detail/fault_injection.hpp"
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

/// How a generation ended.
enum class Outcome {
  Finished,    ///< the whole answer was written
  ClientGone,  ///< the client left first (a cancel, vLLM's abort)
  Faulted,     ///< an injected fault ended it (docs/faults.md)
};

/// Everything one generation needs besides the shared state.
struct Job {
  const GenerationParams& params;
  std::string id;                              // "cmpl-7" / "chatcmpl-7"
  std::int64_t created_s = 0;                  // Unix seconds
  TimeNs arrival_ns = 0;                       // steady clock
  std::string_view request_id;                 // X-Request-Id header, "" if none
  std::vector<Emission>* emissions = nullptr;  // null when no emission log
  TokenSource* source = nullptr;
  FaultyOutput* output = nullptr;  // every streamed byte goes through it
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

/// Appends one content event per piece to `out`, advancing `emitted` (output position);
/// `text` is scratch. Returns whether the last piece was the answer's last.
bool append_events(std::string& out, const StreamContext& ctx, const std::vector<Piece>& pieces,
                   std::int64_t& emitted, std::string& text) {
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
  return last;
}

/// Streams an admitted request as SSE (vLLM's event shapes, openai_format.hpp).
net::awaitable<Outcome> stream_output(ServerState& state, const Job& job) {
  using Step = FaultyOutput::Step;
  const GenerationParams& params = job.params;
  FaultyOutput& output = *job.output;
  const StreamContext ctx =
      make_stream_context(params.chat, job.id, job.created_s, state.options.model,
                          params.prompt_tokens, params.continuous_usage);
  std::string out;
  out.reserve(ctx.prefix.size() + 256);
  if (params.chat) {
    // vLLM sends the role-only delta first; here it goes out at admission, before TTFT.
    append_role_event(out, ctx);
    if (!co_await output.write(out))
      co_return Outcome::ClientGone;
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
    co_await output.end(out);
    co_return Outcome::Finished;
  }
  std::vector<Piece> pieces;
  std::vector<Piece> rest;  // the pieces from a mid-stream fault's point on
  std::string text;
  std::int64_t emitted = 0;
  std::int64_t before = 0;  // tokens written before this batch (outside the loop: GCC 12)
  for (;;) {
    pieces.clear();
    co_await job.source->next(pieces, nullptr);
    if (pieces.empty())
      continue;
    // A pending mid-stream fault acts exactly at its point: the pieces before it go first.
    const std::size_t split = output.pieces_before_fault(emitted, pieces);
    if (split > 0 && split < pieces.size()) {
      rest.assign(pieces.begin() + static_cast<std::ptrdiff_t>(split), pieces.end());
      pieces.resize(split);
      out.clear();
      append_events(out, ctx, pieces, emitted, text);
      note_written(state, job, pieces);
      if (!co_await output.write(out))
        co_return Outcome::ClientGone;
      pieces.swap(rest);
    }
    // One SSE event per piece; the pieces that are due together share one write.
    out.clear();
    before = emitted;
    const bool last = append_events(out, ctx, pieces, emitted, text);
    if (last) {
      // The trailing events go in the same write: one system call fewer per request.
      if (params.include_usage) {
        // The engine's prefix-cache hit and its nominal prefill time (first token − first
        // scheduled, both step boundaries of the cost model, not wall-clock readings).
        const RequestTimes t = job.source->times();
        append_usage_event(out, ctx, emitted, t.cached_tokens,
                           t.cached_tokens >= 0
                               ? static_cast<double>(t.first_token_ns - t.scheduled_ns) / 1e6
                               : -1.0);
      }
      append_done_event(out);
    }
    // A client that leaves during an injected stall leaves because of the fault.
    const Step step = co_await output.before_events(before, out);
    if (step != Step::Go)
      co_return Outcome::Faulted;
    note_written(state, job, pieces);
    if (last) {
      job.source->release();
      finish(state, job);
      // The chunked-body terminator goes in the same write as the last events.
      co_await output.end(out);
      co_return Outcome::Finished;
    }
    if (!co_await output.write(out))
      co_return Outcome::ClientGone;
  }
}

/// Sends the whole response once the last token is due; the socket is watched meanwhile.
net::awaitable<Outcome> send_whole(ServerState& state, http::ResponseWriter& writer,
                                   const Job& job) {
  std::vector<Piece> pieces;
  std::int64_t total = 0;
  bool last = job.params.output_tokens == 0;
  while (!last) {
    pieces.clear();
    if (!co_await job.source->next(pieces, &writer))
      co_return Outcome::ClientGone;
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
  co_return Outcome::Finished;
}

/// The fault request `number` gets, if it applies: stream faults act only on a streamed answer
/// with output.
FaultKind fault_for(const ServerState& state, const GenerationParams& params, std::int64_t number) {
  const FaultKind kind = pick_fault(state.options.faults, number);
  if (kind == FaultKind::None)
    return kind;
  if (fault_info(kind).stream_only && (!params.stream || params.output_tokens == 0))
    return FaultKind::None;
  return kind;
}

/// Admits the request and writes its answer.
net::awaitable<Outcome> generate(ServerState& state, http::ResponseWriter& writer, const Job& job) {
  using Step = FaultyOutput::Step;
  if (const Step step = co_await job.output->before_response(); step != Step::Go)
    co_return step == Step::Faulted ? Outcome::Faulted : Outcome::ClientGone;
  // Streaming headers go out at arrival, as with vLLM (the HTTP response starts before the
  // request is scheduled); queueing then shows up as a late first event.
  if (job.params.stream) {
    if (!co_await writer.begin_stream())
      co_return Outcome::ClientGone;
    if (co_await job.output->after_headers() != Step::Go)
      co_return Outcome::Faulted;
  }
  co_await job.source->admit();
  // No conditional operator around co_await: GCC 12 miscompiles some.
  Outcome outcome = Outcome::Finished;
  if (job.params.stream) {
    outcome = co_await stream_output(state, job);
  } else {
    outcome = co_await send_whole(state, writer, job);
  }
  co_return outcome;
}

/// Refuses what the server cannot run (after parsing): vLLM's context-length check, then the
/// timing's own limits (the engine's KV cache) on lengths the first check bounded.
std::optional<Error> check_limits(const ServerState& state, const GenerationParams& params) {
  if (auto too_long = check_context_length(params, state.options.max_model_len))
    return too_long;
  return state.timing->refuse(params);
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
  auto parsed = parse_generation_request(request.body(), chat, state.options.default_output_len,
                                         state.timing->keep_prompt(), state.options.tokenizer,
                                         state.options.chat_template);
  if (!parsed) {
    co_await reject_request(state, writer, parsed.error());
    co_return;
  }
  if (!parsed->model.empty() && parsed->model != state.options.model) {
    // vLLM's answer to a model it does not serve (`OpenAIServing._check_model`).
    state.rejected_total.fetch_add(1, std::memory_order_relaxed);
    co_await writer.send(bhttp::status::not_found,
                         format_error(fmt::format("The model `{}` does not exist.", parsed->model),
                                      "NotFoundError", "model", 404));
    co_return;
  }
  if (auto refused = check_limits(state, *parsed)) {
    co_await reject_request(state, writer, *refused);
    co_return;
  }
  const GenerationParams& params = *parsed;
  state.requests_total.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t number = state.next_id.fetch_add(1, std::memory_order_relaxed) + 1;
  const auto source = state.timing->open(params, arrival_ns, number, writer.executor());
  const std::string id = fmt::format("{}-{}", chat ? "chatcmpl" : "cmpl", number);
  const FaultKind fault = fault_for(state, params, number);
  if (fault != FaultKind::None)
    state.faults_injected[static_cast<std::size_t>(fault)].fetch_add(1, std::memory_order_relaxed);
  FaultyOutput output(writer, state.options.faults, fault, params.output_tokens, id);
  Job job{.params = params,
          .id = id,
          .created_s = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count(),
          .arrival_ns = arrival_ns,
          .request_id = {},
          .emissions = nullptr,
          .source = source.get(),
          .output = &output};
  std::vector<Emission> emissions;
  if (state.emission_log) {
    const std::int64_t per_chunk = state.options.tokens_per_chunk;
    emissions.reserve(static_cast<std::size_t>(
        std::min<std::int64_t>((params.output_tokens + per_chunk - 1) / per_chunk, 1 << 16)));
    job.emissions = &emissions;
    job.request_id = request["X-Request-Id"];
  }
  const Outcome outcome = co_await generate(state, writer, job);
  if (outcome == Outcome::ClientGone) {
    state.cancelled_total.fetch_add(1, std::memory_order_relaxed);
    state.timing->count_aborted();
  }
}

}  // namespace llmbench::server::detail
