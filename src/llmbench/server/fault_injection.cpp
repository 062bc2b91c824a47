// Each fault of docs/faults.md as bytes on the wire. The shapes follow what real servers send:
// OpenAI's error object (API reference "Error codes"), llama.cpp's `error:` SSE field line
// (tools/server/utils.hpp `format_error_response`, written by `server_sent_event` as
// "error: {json}\n\n" and followed by "data: [DONE]"), RFC 9110 §15.5.20 (429 with Retry-After,
// RFC 6585 §4), §15.6.4 (503) and §15.2 (1xx interim responses).

#include "llmbench/server/detail/fault_injection.hpp"

#include "llmbench/core/json_string.hpp"
#include "llmbench/server/openai_format.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <variant>

namespace llmbench::server::detail {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using namespace boost::asio::experimental::awaitable_operators;  // a || b: first to complete

constexpr auto kTuple = net::as_tuple(net::use_awaitable);

constexpr std::string_view kHtmlPage =
    "<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head>\n<body><h1>"
    "Internal Server Error</h1><p>The upstream server failed (llmbench fault "
    "http-500-html).</p></body></html>\n";

/// 429 (rate limited) or 503 (overloaded), each with `Retry-After: 1` and an OpenAI error.
http::ServerResponse busy_response(bool rate_limited) {
  http::ServerResponse response{
      rate_limited ? bhttp::status::too_many_requests : bhttp::status::service_unavailable, 11};
  response.set(bhttp::field::content_type, "application/json");
  response.set(bhttp::field::retry_after, "1");
  response.body() = format_error(
      rate_limited ? "rate limit reached (llmbench fault http-429)"
                   : "server overloaded, try again later (llmbench fault http-503)",
      rate_limited ? "rate_limit_error" : "server_error", "", rate_limited ? 429 : 503);
  return response;
}

/// An event whose JSON is cut inside a string: no JSON parser can accept it.
std::string malformed_event(std::string_view id) {
  std::string event = "data: {\"id\":";
  append_json_string(event, id);
  event += ",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"trunc\n\n";
  return event;
}

/// The end of a failed stream: an OpenAI error object event, or llama.cpp's `error:` field line;
/// then [DONE].
std::string error_events(FaultKind kind) {
  if (kind == FaultKind::LlamaCppError) {
    return "error: {\"code\":500,\"message\":\"simulated failure mid-stream (llmbench fault "
           "llamacpp-error)\",\"type\":\"server_error\"}\n\ndata: [DONE]\n\n";
  }
  return "data: " +
         format_error("simulated failure mid-stream (llmbench fault stream-error)", "server_error",
                      "", 500) +
         "\n\ndata: [DONE]\n\n";
}

std::chrono::nanoseconds to_ns(double seconds) {
  return std::chrono::nanoseconds(static_cast<std::int64_t>(seconds * 1e9));
}

}  // namespace

FaultyOutput::FaultyOutput(http::ResponseWriter& writer, const FaultSettings& settings,
                           FaultKind fault, std::int64_t output_tokens, std::string_view id)
    : writer_(writer),
      settings_(settings),
      fault_(fault),
      mid_tokens_(output_tokens / 2),
      id_(id) {}

net::awaitable<FaultyOutput::Step> FaultyOutput::before_response() {
  if (fault_ == FaultKind::Http429 || fault_ == FaultKind::Http503) {
    http::ServerResponse response = busy_response(fault_ == FaultKind::Http429);
    co_await writer_.send(std::move(response));
    co_return Step::Faulted;
  }
  if (fault_ == FaultKind::Http500Html) {
    std::string page(kHtmlPage);
    co_await writer_.send(bhttp::status::internal_server_error, std::move(page),
                          "text/html; charset=utf-8");
    co_return Step::Faulted;
  }
  if (fault_ == FaultKind::Interim1xx) {
    const bool ok = co_await writer_.send_interim("HTTP/1.1 100 Continue\r\n\r\n");
    co_return ok ? Step::Go : Step::PeerGone;
  }
  co_return Step::Go;
}

net::awaitable<FaultyOutput::Step> FaultyOutput::after_headers() {
  Step step = Step::Go;
  if (fault_ == FaultKind::StallHeaders)
    step = co_await stall();
  co_return step;
}

net::awaitable<FaultyOutput::Step> FaultyOutput::stall() {
  net::steady_timer timer(writer_.executor());
  timer.expires_after(to_ns(settings_.stall_s));
  const auto woke = co_await (timer.async_wait(kTuple) || writer_.peer_closed());
  if (woke.index() == 1 && std::get<1>(woke))
    co_return Step::PeerGone;
  if (woke.index() == 1)
    co_await timer.async_wait(kTuple);  // a pipelined request: stall on, unwatched
  co_return Step::Go;
}

std::size_t FaultyOutput::pieces_before_fault(std::int64_t emitted,
                                              const std::vector<Piece>& pieces) const noexcept {
  if (acted_ || fault_ == FaultKind::None || !fault_info(fault_).stream_only ||
      fault_ == FaultKind::StallHeaders || fault_ == FaultKind::SlowDrip)
    return pieces.size();
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (emitted >= mid_tokens_)
      return i;
    emitted += pieces[i].tokens;
  }
  return pieces.size();
}

net::awaitable<FaultyOutput::Step> FaultyOutput::before_events(std::int64_t emitted,
                                                               std::string& out) {
  // An if-chain, not a switch: GCC 12 miscompiles some co_await inside switch cases.
  if (acted_ || emitted < mid_tokens_)
    co_return Step::Go;
  acted_ = true;
  if (fault_ == FaultKind::Reset) {
    writer_.close_now(true);
    co_return Step::Faulted;
  }
  if (fault_ == FaultKind::FinMidEvent) {
    // Half of the next event's bytes (at least its "data: " prefix and one more byte).
    const std::size_t half = std::max<std::size_t>(7, out.find("\n\n") / 2);
    co_await writer_.write_chunk(std::string_view(out).substr(0, half));
    writer_.close_now(false);
    co_return Step::Faulted;
  }
  if (fault_ == FaultKind::StallStream) {
    const Step step = co_await stall();
    co_return step;
  }
  if (fault_ == FaultKind::MalformedJson) {
    // The stream goes on after the broken event.
    const std::string event = malformed_event(id_);
    const bool ok = co_await write(event);
    co_return ok ? Step::Go : Step::PeerGone;
  }
  if (fault_ == FaultKind::StreamError || fault_ == FaultKind::LlamaCppError) {
    const std::string events = error_events(fault_);
    co_await end(events);
    co_return Step::Faulted;
  }
  if (fault_ == FaultKind::HugeEvent) {
    // JSON allows any whitespace after '{' (RFC 8259 §2), so the event stays valid. `out` may
    // hold several events when tokens fell due together: only the first one is padded.
    const auto pad = static_cast<std::size_t>(settings_.huge_event_bytes);
    const std::size_t first_end = out.find("\n\n");
    const std::size_t first_size = first_end == std::string::npos ? out.size() : first_end + 2;
    if (out.rfind("data: {", 0) == 0 && pad > first_size)
      out.insert(7, pad - first_size, ' ');
    co_return Step::Go;
  }
  if (fault_ == FaultKind::EarlyClose) {
    co_await writer_.end_stream();
    co_return Step::Faulted;
  }
  co_return Step::Go;
}

net::awaitable<bool> FaultyOutput::drip(std::string_view data) {
  net::steady_timer timer(writer_.executor());
  const auto step = static_cast<std::size_t>(settings_.drip_bytes);
  bool ok = true;
  for (std::size_t at = 0; ok && at < data.size(); at += step) {
    if (at > 0) {
      timer.expires_after(to_ns(settings_.drip_ms / 1000));
      co_await timer.async_wait(kTuple);
    }
    ok = co_await writer_.write_chunk(data.substr(at, step));
  }
  co_return ok;
}

// No `co_return co_await` below and one co_await per branch: GCC 12 mis-resumes some
// coroutines written so.
net::awaitable<bool> FaultyOutput::write(std::string_view data) {
  bool ok = false;
  if (fault_ == FaultKind::SlowDrip) {
    ok = co_await drip(data);
  } else {
    ok = co_await writer_.write_chunk(data);
  }
  co_return ok;
}

net::awaitable<bool> FaultyOutput::end(std::string_view data) {
  bool ok = false;
  if (fault_ == FaultKind::SlowDrip) {
    ok = co_await drip(data);
    if (ok)
      ok = co_await writer_.end_stream();
  } else {
    ok = co_await writer_.end_stream(data);
  }
  co_return ok;
}

}  // namespace llmbench::server::detail
