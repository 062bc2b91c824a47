// The timing model of the simulated server (ServerOptions): admission, then output chunks at
// absolute deadlines computed from the admission time, so timer lateness never accumulates.

#include "llmbench/core/clock.hpp"
#include "llmbench/server/detail/state.hpp"
#include "llmbench/server/openai_format.hpp"
#include "llmbench/server/openai_request.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <variant>
#include <vector>

namespace llmbench::server::detail {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using namespace boost::asio::experimental::awaitable_operators;  // a || b: first to complete

constexpr auto kTuple = net::as_tuple(net::use_awaitable);

/// Most bytes of due events gathered into one write before it goes out.
constexpr std::size_t kMaxCoalescedBytes = 32 * 1024;

/// Sleeps until the absolute steady-clock time `deadline_ns`; returns at once if it has passed
/// (saves an event-loop round trip when the server runs behind).
net::awaitable<void> sleep_until(net::steady_timer& timer, TimeNs deadline_ns) {
  if (steady_now_ns() >= deadline_ns)
    co_return;
  timer.expires_at(net::steady_timer::time_point(std::chrono::nanoseconds(deadline_ns)));
  co_await timer.async_wait(kTuple);
}

/// Everything one generation needs besides the shared state.
struct Job {
  const GenerationParams& params;
  std::string id;
  std::int64_t created_s = 0;
  TimeNs arrival_ns = 0;
  TimeNs admit_ns = 0;
  std::string_view request_id;                 // X-Request-Id header, "" if none
  std::vector<Emission>* emissions = nullptr;  // null when no emission log
};

/// Deadline of the chunk that starts at output position `emitted` and carries `tokens` tokens:
/// t_0 = admit + ttft; t_j = t_{j-1} + itl × tokens_j, i.e. admit + ttft + itl × (tokens after
/// the first chunk, up to and including this one).
TimeNs chunk_deadline(const ServerState& state, const Job& job, std::int64_t emitted,
                      std::int64_t tokens) {
  const std::int64_t per_chunk = state.options.tokens_per_chunk;
  const std::int64_t first_chunk = std::min(per_chunk, job.params.output_tokens);
  if (emitted == 0)
    return job.admit_ns + state.ttft_ns;
  return job.admit_ns + state.ttft_ns + state.itl_ns * (emitted + tokens - first_chunk);
}

/// Counts a request as finished, observes vLLM's per-request histograms and writes its
/// emission-log line. Called right before the last write: a client that has read the whole
/// response then always finds all three (the completion of that write may never run if the
/// server is stopped at once). Phases follow the timing model, not the write instants: queued
/// = arrival, scheduled = admission (a slot freed), first token = admit + ttft, last token =
/// the last chunk's deadline; no output: every phase after the queue is 0.
void finish(ServerState& state, const Job& job) {
  state.success_total.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t total = job.params.output_tokens;
  RequestTimes times{job.arrival_ns,           job.admit_ns, job.admit_ns, job.admit_ns,
                     job.params.prompt_tokens, total,        total};
  if (total > 0) {
    const std::int64_t per_chunk = state.options.tokens_per_chunk;
    const std::int64_t last_start = ((total - 1) / per_chunk) * per_chunk;
    times.first_token_ns = chunk_deadline(state, job, 0, std::min(per_chunk, total));
    times.last_token_ns = chunk_deadline(state, job, last_start, total - last_start);
  }
  state.request_histograms.observe(times);
  if (state.emission_log && job.emissions != nullptr) {
    state.emission_log->append(job.request_id, job.id, job.arrival_ns, job.admit_ns,
                               *job.emissions);
  }
}

/// Streams the events of an admitted request. Returns false if the client went away. The slot
/// is released right after the last output chunk has been written.
net::awaitable<bool> stream_output(ServerState& state, http::ResponseWriter& writer,
                                   SlotPool::Slot& slot, const Job& job) {
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
  net::steady_timer timer(writer.executor());
  const std::int64_t total = params.output_tokens;
  const std::int64_t per_chunk = state.options.tokens_per_chunk;
  std::string text;
  std::int64_t emitted = 0;
  while (emitted < total) {
    co_await sleep_until(timer,
                         chunk_deadline(state, job, emitted, std::min(per_chunk, total - emitted)));
    // Every chunk already due goes into this one write (when the server runs behind, e.g. with
    // thousands of streams on one thread, one system call carries several events). Each chunk
    // stays its own SSE event, written at the earliest instant ≥ its deadline.
    const TimeNs now = steady_now_ns();
    const std::int64_t first = emitted;
    out.clear();
    bool last = false;
    do {
      const std::int64_t tokens = std::min(per_chunk, total - emitted);
      if (emitted != first && chunk_deadline(state, job, emitted, tokens) > now)
        break;
      last = emitted + tokens == total;
      std::string_view chunk_text = token_text(emitted);
      if (tokens != 1) {
        text.clear();
        append_tokens(text, emitted, tokens);
        chunk_text = text;
      }
      append_content_event(out, ctx, chunk_text, last, emitted + tokens);
      emitted += tokens;
    } while (!last && out.size() < kMaxCoalescedBytes);
    if (last) {
      // The trailing events go in the same write: one system call fewer per request.
      if (params.include_usage)
        append_usage_event(out, ctx, total);
      append_done_event(out);
    }
    const TimeNs t = steady_now_ns();
    if (job.emissions != nullptr) {
      for (std::int64_t e = first; e < emitted; e += per_chunk)
        job.emissions->emplace_back(t, std::min(per_chunk, emitted - e));
    }
    state.generation_tokens_total.fetch_add(emitted - first, std::memory_order_relaxed);
    if (last) {
      finish(state, job);
      // The chunked-body terminator goes in the same write as the last events.
      co_await writer.end_stream(out);
      slot.release();
      co_return true;
    }
    if (!co_await writer.write_chunk(out))
      co_return false;
    if (out.size() >= kMaxCoalescedBytes) {
      // Still behind after a full write: let the other streams of this thread run first.
      co_await net::post(writer.executor(), net::use_awaitable);
    }
  }
  if (total == 0) {
    // No output: one finish-only event (empty text) at admission, then usage and [DONE].
    out.clear();
    append_content_event(out, ctx, "", true, 0);
    if (params.include_usage)
      append_usage_event(out, ctx, 0);
    append_done_event(out);
    slot.release();
    finish(state, job);
    co_await writer.end_stream(out);
  }
  co_return true;
}

/// Sends the whole response once the last chunk would have been generated.
net::awaitable<bool> send_whole(ServerState& state, http::ResponseWriter& writer,
                                SlotPool::Slot& slot, const Job& job) {
  const std::int64_t total = job.params.output_tokens;
  if (total > 0) {
    const std::int64_t per_chunk = state.options.tokens_per_chunk;
    const std::int64_t last_start = ((total - 1) / per_chunk) * per_chunk;
    const TimeNs deadline = chunk_deadline(state, job, last_start, total - last_start);
    net::steady_timer timer(writer.executor());
    // Nothing is written until the end, so watch the socket meanwhile: a client that leaves
    // frees its slot at once (vLLM aborts such a request too).
    const auto woke = co_await (sleep_until(timer, deadline) || writer.peer_closed());
    if (woke.index() == 1) {
      if (std::get<1>(woke))
        co_return false;                      // client gone
      co_await sleep_until(timer, deadline);  // a pipelined request: just wait
    }
  }
  std::string text;
  append_tokens(text, 0, total);
  std::string body =
      format_full_response(job.params.chat, job.id, job.created_s, state.options.model, text,
                           job.params.prompt_tokens, total);
  slot.release();
  if (job.emissions != nullptr && total > 0)
    job.emissions->emplace_back(steady_now_ns(), total);
  state.generation_tokens_total.fetch_add(total, std::memory_order_relaxed);
  finish(state, job);
  co_await writer.send(bhttp::status::ok, std::move(body));
  co_return true;
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
  if (state.engine) {
    co_await serve_engine_generation(state, request, writer, chat);
    co_return;
  }
  const TimeNs arrival_ns = steady_now_ns();
  auto parsed = parse_generation_request(request.body(), chat, state.options.default_output_len,
                                         false, state.options.tokenizer);
  if (!parsed) {
    co_await reject_request(state, writer, parsed.error());
    co_return;
  }
  const GenerationParams& params = *parsed;
  if (auto too_long = check_context_length(params, state.options.max_model_len)) {
    co_await reject_request(state, writer, *too_long);
    co_return;
  }
  state.requests_total.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t number = state.next_id.fetch_add(1, std::memory_order_relaxed) + 1;
  Job job{params,
          fmt::format("{}-{}", chat ? "chatcmpl" : "cmpl", number),
          std::chrono::duration_cast<std::chrono::seconds>(
              std::chrono::system_clock::now().time_since_epoch())
              .count(),
          arrival_ns,
          0,
          {},
          nullptr};
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
  if (params.stream && !co_await writer.begin_stream()) {
    state.cancelled_total.fetch_add(1, std::memory_order_relaxed);
    co_return;
  }
  SlotPool::Slot slot = co_await state.pool.acquire();
  job.admit_ns = steady_now_ns();
  state.prompt_tokens_total.fetch_add(params.prompt_tokens, std::memory_order_relaxed);

  bool ok = false;  // no conditional operator around co_await: GCC 12 miscompiles some
  if (params.stream) {
    ok = co_await stream_output(state, writer, slot, job);
  } else {
    ok = co_await send_whole(state, writer, slot, job);
  }
  if (!ok) {
    state.cancelled_total.fetch_add(1, std::memory_order_relaxed);
    co_return;  // the slot (if still held) is released by its destructor
  }
}

}  // namespace llmbench::server::detail
