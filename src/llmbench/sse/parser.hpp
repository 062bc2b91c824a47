#pragma once
/// @file
/// Incremental Server-Sent Events parser: bytes in, events out, no I/O. Implements the WHATWG HTML
/// Living Standard §9.2.6 "Interpreting an event stream": LF, CR and CRLF line ends (mixed, and a
/// CR at the end of one piece followed by LF at the start of the next), comment lines starting with
/// ':', `field:value` with one optional leading space stripped, `data` lines joined with LF,
/// `event`, `id` (ignored if it contains NUL) and `retry` (ASCII digits only) fields, a single
/// leading UTF-8 BOM removed, and dispatch on an empty line (an event with an empty data buffer is
/// not dispatched). Lines may be of any length; bytes may arrive split anywhere, including inside
/// a multi-byte UTF-8 character (bytes are kept as they are; no decoding happens here).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace llmbench::sse {

/// One dispatched event. `data` has the trailing LF of the last data line removed.
struct Event {
  std::string type = "message";  ///< `event:` field, "message" when absent
  std::string data;              ///< joined `data:` lines
  std::string last_event_id;     ///< the last event ID buffer at dispatch (persists across events)
  std::int64_t retry_ms = -1;    ///< last valid `retry:` value since the previous blank line, or -1
};

/// A field line whose name the standard does not define (§9.2.6: "Otherwise: The field is
/// ignored."). The parser still ignores it for event building, but hands it to the caller of the
/// three-argument `feed`, because some servers put meaning there: llama.cpp's server ends a failed
/// stream with an `error: {json}` line that carries no `data`.
struct UnknownField {
  std::string_view name;   ///< the characters before the first colon (the whole line if none)
  std::string_view value;  ///< after the colon, one leading space removed; empty if no colon
};

/// Stateful parser for one stream. Not thread-safe; one per connection/response. Reusable after
/// `reset()`. Memory: holds at most one incomplete line plus the current event's data; buffers
/// keep their capacity between events (no allocation per event after warm-up) unless a line or
/// event grew beyond `kRetainBytes`, whose storage is released once it has been handed out.
/// Never throws on input: every byte sequence is a valid (possibly event-less) stream.
class Parser {
 public:
  /// Buffers larger than this (bytes) are released after use instead of being kept for reuse.
  static constexpr std::size_t kRetainBytes = std::size_t{1} << 16;

  /// Parses the next piece of the stream (any length, split anywhere, empty allowed) and calls
  /// `on_event(const Event&)` for each event completed by it, in stream order, before returning.
  /// The reference is valid only during the call. Events are dispatched as soon as their blank
  /// line ends (a CR completes a line at once; an LF right after it is skipped, even when it
  /// arrives in the next piece). `on_event` must not call back into this parser.
  template <class OnEvent>
  void feed(std::string_view bytes, OnEvent&& on_event) {
    feed(bytes, on_event, [](const UnknownField&) {});
  }

  /// As `feed(bytes, on_event)`, and also calls `on_field(const UnknownField&)` for each field
  /// line with a name other than `data`, `event`, `id` and `retry` (comment lines excluded), in
  /// stream order relative to the events, as soon as its line ends. The views are valid only
  /// during the call. The standard's event building is unchanged: such lines still add nothing.
  template <class OnEvent, class OnField>
  void feed(std::string_view bytes, OnEvent&& on_event, OnField&& on_field) {
    const std::size_t n = bytes.size();
    std::size_t i = 0;
    while (i < n) {
      i = consume(bytes, i);
      if (ready_) {
        ready_ = false;
        on_event(static_cast<const Event&>(event_));
      }
      if (field_ready_) {
        field_ready_ = false;
        on_field(UnknownField{.name = field_name_, .value = field_value_});
      }
    }
  }

  /// Forgets all state (buffers, BOM check, last event id, counters) for a new stream.
  void reset();

  /// Bytes held in the incomplete-line buffer (for memory accounting and tests). A line that
  /// begins and ends inside one piece is never copied here.
  [[nodiscard]] std::size_t buffered_bytes() const noexcept { return line_.size(); }

  /// Events dispatched since construction or the last `reset()`.
  [[nodiscard]] std::uint64_t events_dispatched() const noexcept { return dispatched_; }

  /// The stream's reconnection time in ms: the last valid `retry:` value seen anywhere in the
  /// stream (also in blocks that dispatch no event, such as a lone `retry: 3000` + blank line),
  /// -1 if none. WHATWG §9.2.6 sets the event source's reconnection time from `retry` at once.
  [[nodiscard]] std::int64_t reconnection_time_ms() const noexcept { return reconnection_ms_; }

 private:
  /// Consumes bytes from `bytes[pos...]` up to and including at most one dispatch or one unknown
  /// field line; returns the new position. Sets `ready_` when `event_` holds a dispatched event,
  /// `field_ready_` when `field_name_`/`field_value_` hold an unknown field.
  std::size_t consume(std::string_view bytes, std::size_t pos);
  /// Handles one complete line (without its line end).
  void process_line(std::string_view line);
  /// Handles a field whose name is `name` and whose value (leading space already stripped) is
  /// `value`.
  void process_field(std::string_view name, std::string_view value);
  /// The blank-line step of §9.2.6: dispatch the event being built, or drop it if it has no data.
  void dispatch();

  std::string line_;                   // incomplete line carried over between feeds
  std::string data_;                   // data buffer of the event being built
  std::string type_;                   // event type buffer
  std::string last_id_;                // last event ID buffer (persists across events)
  std::int64_t retry_ms_ = -1;         // valid `retry` seen since the last blank line, -1 if none
  std::int64_t reconnection_ms_ = -1;  // valid `retry` seen anywhere in the stream, -1 if none
  Event event_;                        // the event being handed out (its buffers are reused)
  std::uint64_t dispatched_ = 0;
  std::uint8_t bom_state_ = 0;  // 0..2 = bytes of a BOM matched so far, 3 = BOM phase over
  bool skip_lf_ = false;        // the last line ended in CR: one LF next (in any piece) is skipped
  bool ready_ = false;          // `event_` holds an event that `feed` has yet to hand out
  bool field_ready_ = false;    // `field_name_`/`field_value_` hold a line not yet handed out
  std::string field_name_;      // the last unknown field line (rare: copied, not viewed)
  std::string field_value_;
};

}  // namespace llmbench::sse
