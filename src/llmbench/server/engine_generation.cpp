// Generation with `Timing::Engine`: the request joins the real-time engine (RealtimeEngine) and
// each output token is written when the engine step that produced it ends.

#include "llmbench/core/clock.hpp"
#include "llmbench/server/detail/state.hpp"
#include "llmbench/server/openai_format.hpp"
#include "llmbench/server/openai_request.hpp"
#include "llmbench/sim/engine.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <fmt/format.h>

#include <chrono>
#include <string>
#include <variant>
#include <vector>

namespace llmbench::server::detail {
namespace {

namespace net = boost::asio;
using namespace boost::asio::experimental::awaitable_operators;  // a || b: first to complete
namespace bhttp = boost::beast::http;

/// Closes the stream when the coroutine ends (finished, client gone, or server stopped), so the
/// engine stops pushing to it.
struct CloseOnExit {
  std::shared_ptr<TokenStream> stream;
  ~CloseOnExit() { stream->close(); }
};

/// Prompt length as `llmbench simulate` counts it: ids one each, text by the 4-bytes rule.
std::int64_t engine_prompt_len(const GenerationParams& p) {
  const auto ids = static_cast<std::int64_t>(p.prompt_ids.size());
  const std::int64_t text = p.prompt_text.empty() ? 0 : estimate_text_tokens(p.prompt_text);
  return std::max<std::int64_t>(1, ids + text);
}

}  // namespace

net::awaitable<void> serve_engine_generation(ServerState& state, http::ServerRequest& request,
                                             http::ResponseWriter& writer, bool chat) {
  const TimeNs arrival_ns = steady_now_ns();
  RealtimeEngine& engine = *state.engine;
  auto parsed = parse_generation_request(request.body(), chat, state.options.default_output_len,
                                         true, state.options.tokenizer);
  if (!parsed) {
    co_await reject_request(state, writer, parsed.error());
    co_return;
  }
  GenerationParams& params = *parsed;
  // Without a tokenizer: the estimate `llmbench simulate` uses (so both see the same lengths);
  // with one, the exact count `parse_generation_request` made.
  if (state.options.tokenizer == nullptr)
    params.prompt_tokens = engine_prompt_len(params);
  if (auto too_long = check_context_length(params, state.options.max_model_len)) {
    co_await reject_request(state, writer, *too_long);
    co_return;
  }
  const std::int64_t total = params.output_tokens;
  if (total > 0 && !engine.fits(params.prompt_tokens, total)) {
    const auto& cfg = engine.settings().spec.engine;
    co_await reject_request(
        state, writer,
        Error{fmt::format("prompt ({} tokens) + max_tokens ({}) exceed the KV cache of the "
                          "simulated engine ({} blocks of {} tokens)",
                          params.prompt_tokens, total, cfg.num_gpu_blocks, cfg.block_size),
              "max_tokens", -1});
    co_return;
  }
  state.requests_total.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t number = state.next_id.fetch_add(1, std::memory_order_relaxed) + 1;
  const std::string id = fmt::format("{}-{}", chat ? "chatcmpl" : "cmpl", number);
  const std::int64_t created = std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
  std::vector<Emission> emissions;
  const bool logging = state.emission_log != nullptr;
  // Counts the request as finished and observes vLLM's per-request histograms.
  auto finish = [&](const RequestTimes& times) {
    state.success_total.fetch_add(1, std::memory_order_relaxed);
    state.request_histograms.observe(times);
    if (logging)
      state.emission_log->append(request["X-Request-Id"], id, arrival_ns, arrival_ns, emissions);
  };

  if (params.stream && !co_await writer.begin_stream()) {
    state.cancelled_total.fetch_add(1, std::memory_order_relaxed);
    co_return;
  }
  const StreamContext ctx = make_stream_context(params.chat, id, created, state.options.model,
                                                params.prompt_tokens, params.continuous_usage);
  std::string out;
  if (params.stream && params.chat) {
    append_role_event(out, ctx);  // vLLM sends the role-only delta first
    if (!co_await writer.write_chunk(out)) {
      state.cancelled_total.fetch_add(1, std::memory_order_relaxed);
      co_return;
    }
  }
  if (total == 0) {
    // Nothing to generate: answer at once, as the fixed timing model does (every phase 0).
    const RequestTimes times{arrival_ns,           arrival_ns, arrival_ns, arrival_ns,
                             params.prompt_tokens, 0,          0};
    if (params.stream) {
      out.clear();
      append_content_event(out, ctx, "", true, 0);
      if (params.include_usage)
        append_usage_event(out, ctx, 0);
      append_done_event(out);
      finish(times);
      co_await writer.end_stream(out);
    } else {
      finish(times);
      co_await writer.send(bhttp::status::ok,
                           format_full_response(params.chat, id, created, state.options.model, "",
                                                params.prompt_tokens, 0));
    }
    co_return;
  }

  auto stream = std::make_shared<TokenStream>(writer.executor());
  CloseOnExit closer{stream};
  EngineRequest job;
  job.prompt_len = params.prompt_tokens;
  job.output_len = total;
  job.prompt_tokens =
      sim::prompt_cache_ids(params.prompt_ids, params.prompt_text, params.prompt_tokens,
                            static_cast<std::uint64_t>(number));
  job.arrival_ns = arrival_ns;
  job.stream = stream;
  engine.submit(std::move(job));

  std::int64_t emitted = 0;
  std::string text;
  std::vector<StreamEvent> events;  // one step's events (reused: no allocation per step)
  // A non-streamed request writes nothing until its end, so a client that leaves is noticed by
  // watching the socket while the engine works (vLLM aborts such requests too); a streamed one
  // is noticed by its next write. The watch stops if the client pipelines another request.
  bool watch_peer = !params.stream;
  while (true) {
    if (watch_peer) {
      const auto woke = co_await (stream->wait() || writer.peer_closed());
      if (woke.index() == 1) {
        if (std::get<1>(woke)) {
          state.cancelled_total.fetch_add(1, std::memory_order_relaxed);
          co_return;  // CloseOnExit closes the stream: the engine aborts the request
        }
        watch_peer = false;
      }
    } else {
      co_await stream->wait();
    }
    stream->take(events);
    if (events.empty())
      continue;
    std::int64_t tokens = 0;
    bool last = false;
    RequestTimes times;
    for (const auto& e : events) {
      tokens += e.tokens;
      if (e.finished) {
        last = true;
        times = RequestTimes{e.queued_ns, e.scheduled_ns,       e.first_token_ns,
                             e.time_ns,   params.prompt_tokens, emitted + tokens,
                             total};
      }
    }
    state.generation_tokens_total.fetch_add(tokens, std::memory_order_relaxed);
    if (logging)
      emissions.emplace_back(steady_now_ns(), tokens);
    if (!params.stream) {
      emitted += tokens;
      if (!last)
        continue;
      text.clear();
      append_tokens(text, 0, emitted);
      finish(times);
      co_await writer.send(bhttp::status::ok,
                           format_full_response(params.chat, id, created, state.options.model, text,
                                                params.prompt_tokens, emitted));
      co_return;
    }
    // One SSE event per engine step (a late reader writes the backlog in one write).
    out.clear();
    for (const auto& e : events) {
      text.clear();
      append_tokens(text, emitted, e.tokens);
      emitted += e.tokens;
      append_content_event(out, ctx, text, e.finished, emitted);
    }
    if (last) {
      if (params.include_usage)
        append_usage_event(out, ctx, emitted);
      append_done_event(out);
      finish(times);
      co_await writer.end_stream(out);
      co_return;
    }
    if (!co_await writer.write_chunk(out)) {
      state.cancelled_total.fetch_add(1, std::memory_order_relaxed);
      co_return;
    }
  }
}

}  // namespace llmbench::server::detail
