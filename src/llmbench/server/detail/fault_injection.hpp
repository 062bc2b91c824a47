#pragma once
/// @file
/// Private to the server module: the response side of one generation with its injected fault
/// (`FaultKind`, docs/faults.md). `serve_generation` writes every byte through `FaultyOutput`,
/// which passes them on unchanged when the request has no fault.

#include "llmbench/http/listener.hpp"
#include "llmbench/server/detail/token_source.hpp"
#include "llmbench/server/fault.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::server::detail {

/// One request's writer and fault. Used only from the request's coroutine.
class FaultyOutput {
 public:
  /// What a fault hook decided.
  enum class Step {
    Go,        ///< carry on
    Faulted,   ///< the fault ended the response (nothing more may be written)
    PeerGone,  ///< the client left during a stall
  };

  /// `output_tokens` = N of the request (the mid-stream faults act after N / 2 tokens); `id`
  /// goes into the injected error events.
  FaultyOutput(http::ResponseWriter& writer, const FaultSettings& settings, FaultKind fault,
               std::int64_t output_tokens, std::string_view id);

  /// Before anything is sent: a status fault answers the request (`Faulted`); the 1xx fault
  /// writes its interim response (`Go`, or `PeerGone` if that write failed).
  boost::asio::awaitable<Step> before_response();
  /// Right after the streamed response's headers (stall-headers).
  boost::asio::awaitable<Step> after_headers();
  /// Before the events in `out` are written, `emitted` tokens having been written before them:
  /// at the mid point a mid-stream fault acts (it may pad, precede or replace `out`).
  boost::asio::awaitable<Step> before_events(std::int64_t emitted, std::string& out);
  /// How many of `pieces` (the next output, `emitted` tokens having been written) come before
  /// the point where a pending mid-stream fault acts (N / 2 tokens); `pieces.size()` when none
  /// is pending.
  [[nodiscard]] std::size_t pieces_before_fault(std::int64_t emitted,
                                                const std::vector<Piece>& pieces) const noexcept;
  /// Writes `data` as chunk(s): dripped with slow-drip. False when the client is gone.
  boost::asio::awaitable<bool> write(std::string_view data);
  /// Writes `data` and ends the chunked body.
  boost::asio::awaitable<bool> end(std::string_view data);

 private:
  /// Writes `data` `settings_.drip_bytes` at a time, `settings_.drip_ms` apart.
  boost::asio::awaitable<bool> drip(std::string_view data);
  /// Silence for `settings_.stall_s`, ended early when the client leaves.
  boost::asio::awaitable<Step> stall();

  http::ResponseWriter& writer_;
  const FaultSettings& settings_;
  const FaultKind fault_;
  const std::int64_t mid_tokens_;
  std::string id_;
  bool acted_ = false;  ///< the mid-stream fault has acted
};

}  // namespace llmbench::server::detail
