#pragma once
/// @file
/// Incremental Server-Sent Events parser: bytes in, events out, no I/O. Implements the WHATWG HTML
/// Living Standard §9.2.6 "Interpreting an event stream": LF, CR and CRLF line ends (mixed, and a CR
/// at the end of one piece followed by LF at the start of the next), comment lines starting with
/// ':', `field:value` with one optional leading space stripped, `data` lines joined with LF,
/// `event`, `id` (ignored if it contains NUL) and `retry` (ASCII digits only) fields, a single
/// leading UTF-8 BOM removed, and dispatch on an empty line (an event with an empty data buffer is
/// not dispatched). Lines may be of any length; bytes may arrive split anywhere, including inside
/// a multi-byte UTF-8 character (bytes are kept as they are; no decoding happens here).

#include <cstdint>
#include <string>
#include <string_view>

namespace llmbench::sse {

/// One dispatched event. `data` has the trailing LF of the last data line removed.
struct Event {
  std::string type = "message";  ///< `event:` field, "message" when absent
  std::string data;              ///< joined `data:` lines
  std::string last_event_id;     ///< the last event ID buffer at dispatch (persists across events)
  std::int64_t retry_ms = -1;    ///< last valid `retry:` value seen in this event, -1 if none
};

/// Stateful parser for one stream. Not thread-safe; one per connection/response. Reusable after
/// `reset()`. Memory: holds at most one incomplete line plus the current event's data.
class Parser {
 public:
  /// Receives each dispatched event. The reference is valid only during the call.
  template <class OnEvent>
  void feed(std::string_view bytes, OnEvent&& on_event) {
    const std::size_t n = bytes.size();
    std::size_t i = 0;
    while (i < n) {
      i = consume(bytes, i);
      if (ready_) {
        ready_ = false;
        on_event(static_cast<const Event&>(event_));
      }
    }
  }

  /// Forgets all state (buffers, BOM check, last event id) for a new stream.
  void reset();

  /// Bytes held in the incomplete-line buffer (for memory accounting and tests).
  [[nodiscard]] std::size_t buffered_bytes() const noexcept { return line_.size(); }

  /// Events dispatched since construction or the last `reset()`.
  [[nodiscard]] std::uint64_t events_dispatched() const noexcept { return dispatched_; }

 private:
  /// Consumes bytes from `bytes[pos...]` up to and including at most one dispatch; returns the new
  /// position. Sets `ready_` when `event_` holds a dispatched event.
  std::size_t consume(std::string_view bytes, std::size_t pos);
  void process_line(std::string_view line);

  std::string line_;        // incomplete line carried over between feeds
  std::string data_;        // data buffer of the event being built
  std::string type_;        // event type buffer
  std::string last_id_;     // last event ID buffer
  std::int64_t retry_ms_ = -1;
  Event event_;             // the event being handed out
  std::uint64_t dispatched_ = 0;
  std::uint8_t bom_state_ = 0;  // 0..2 = bytes of a BOM matched so far, 3 = BOM phase over
  bool last_was_cr_ = false;    // previous piece ended in CR: skip one LF at the next start
  bool ready_ = false;
  bool has_data_ = false;
};

}  // namespace llmbench::sse
