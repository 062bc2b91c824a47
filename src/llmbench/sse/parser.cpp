#include "llmbench/sse/parser.hpp"

#include <cstring>
#include <limits>

// Every rule below is from the WHATWG HTML Living Standard §9.2.6 "Interpreting an event stream"
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
// Bytes are never decoded: the grammar's delimiters (CR, LF, ':', ' ', NUL) are ASCII and cannot
// occur inside a multi-byte UTF-8 sequence, so working on raw bytes gives the same fields as
// decoding first, and a character split across pieces is simply reassembled in the buffers.

namespace llmbench::sse {

namespace {

// UTF-8 encoding of U+FEFF BYTE ORDER MARK.
constexpr char kBom[3] = {'\xEF', '\xBB', '\xBF'};

// First CR or LF in [p, end), or `end`. Two memchr passes (both vectorized in glibc) beat a
// byte loop or find_first_of: LF bounds the CR search, so each byte is scanned at most twice,
// and for the usual LF-only stream the CR pass is a short miss over one line.
inline const char* find_line_end(const char* p, const char* end) noexcept {
  const auto* lf =
      static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
  const char* stop = lf != nullptr ? lf : end;
  const auto* cr =
      static_cast<const char*>(std::memchr(p, '\r', static_cast<std::size_t>(stop - p)));
  return cr != nullptr ? cr : stop;
}

// §9.2.6 `retry`: "If the field value consists of only ASCII digits, then interpret the field value
// as an integer in base ten ... Otherwise, ignore the field." An empty value has no integer to
// interpret and is ignored too. Values beyond int64 saturate (a reconnection time of ~292 years).
inline std::int64_t parse_retry(std::string_view value) noexcept {
  if (value.empty()) {
    return -1;
  }
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t result = 0;
  for (const char c : value) {
    if (c < '0' || c > '9') {
      return -1;
    }
    const std::int64_t digit = c - '0';
    result = result > (kMax - digit) / 10 ? kMax : result * 10 + digit;
  }
  return result;
}

// Releases a buffer's storage once it has grown past what is worth keeping for reuse.
inline void trim(std::string& s) {
  if (s.capacity() > Parser::kRetainBytes) {
    std::string().swap(s);
  }
}

}  // namespace

void Parser::reset() {
  line_.clear();
  data_.clear();
  type_.clear();
  last_id_.clear();
  trim(line_);
  trim(data_);
  retry_ms_ = -1;
  reconnection_ms_ = -1;
  event_ = Event{};
  dispatched_ = 0;
  bom_state_ = 0;
  skip_lf_ = false;
  ready_ = false;
  field_ready_ = false;
  field_name_.clear();
  field_value_.clear();
}

std::size_t Parser::consume(std::string_view bytes, std::size_t pos) {
  const char* const begin = bytes.data();
  const char* const end = begin + bytes.size();
  const char* p = begin + pos;

  // "One leading U+FEFF BYTE ORDER MARK character must be ignored if any are present." Matched
  // byte by byte so that a BOM split across pieces is still recognized; on a mismatch the bytes
  // matched so far were ordinary content and become the start of the first line.
  while (bom_state_ < 3 && p < end) {
    if (*p == kBom[bom_state_]) {
      ++bom_state_;
      ++p;
    } else {
      line_.assign(kBom, bom_state_);
      bom_state_ = 3;
    }
  }

  while (p < end) {
    // "Lines must be separated by either a U+000D CARRIAGE RETURN U+000A LINE FEED (CRLF)
    // character pair, a single U+000A LINE FEED (LF) character, or a single U+000D CARRIAGE
    // RETURN (CR) character." A CR ends its line at once (so a dispatch never waits for the next
    // piece); the LF of a CRLF pair is then dropped wherever it arrives.
    if (skip_lf_) {
      skip_lf_ = false;
      if (*p == '\n') {
        ++p;
        continue;
      }
    }
    const char* eol = find_line_end(p, end);
    if (eol == end) {
      line_.append(p, end);  // incomplete line: keep it for the next piece
      return bytes.size();
    }
    skip_lf_ = *eol == '\r';
    if (line_.empty()) {
      process_line(std::string_view(p, static_cast<std::size_t>(eol - p)));  // no copy
    } else {
      line_.append(p, eol);
      process_line(line_);
      line_.clear();
      trim(line_);
    }
    p = eol + 1;
    if (ready_ || field_ready_) {
      break;
    }
  }
  return static_cast<std::size_t>(p - begin);
}

void Parser::process_line(std::string_view line) {
  // "If the line is empty (a blank line): Dispatch the event."
  if (line.empty()) {
    dispatch();
    return;
  }
  // Fast path for the line that dominates LLM streams; same result as the general path below.
  if (line.size() >= 5 && std::memcmp(line.data(), "data:", 5) == 0) {
    std::string_view value = line.substr(5);
    if (!value.empty() && value.front() == ' ') {
      value.remove_prefix(1);
    }
    data_.append(value);
    data_.push_back('\n');
    return;
  }
  // "If the line starts with a U+003A COLON character (:): Ignore the line."
  if (line.front() == ':') {
    return;
  }
  // "If the line contains a U+003A COLON character: collect the characters on the line before
  // the first colon as field, and the characters after it as value; if value starts with a
  // U+0020 SPACE character, remove it from value." Otherwise the whole line is the field name
  // and the value is the empty string.
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    process_field(line, std::string_view());
    return;
  }
  std::string_view value = line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') {
    value.remove_prefix(1);
  }
  process_field(line.substr(0, colon), value);
}

void Parser::process_field(std::string_view name, std::string_view value) {
  // Field names are compared case-sensitively; any other name is ignored.
  if (name == "data") {
    // "Append the field value to the data buffer, then append a single U+000A LINE FEED (LF)."
    data_.append(value);
    data_.push_back('\n');
  } else if (name == "event") {
    // "Set the event type buffer to the field value."
    type_.assign(value);
  } else if (name == "id") {
    // "If the field value does not contain U+0000 NULL, then set the last event ID buffer to the
    // field value. Otherwise, ignore the field."
    if (value.find('\0') == std::string_view::npos) {
      last_id_.assign(value);
    }
  } else if (name == "retry") {
    const std::int64_t ms = parse_retry(value);
    if (ms >= 0) {
      retry_ms_ = ms;
      reconnection_ms_ = ms;
    }
  } else {
    // "Otherwise: The field is ignored." Kept aside for the caller (UnknownField); the line may
    // live in `line_`, which is cleared next, so it is copied.
    field_name_.assign(name);
    field_value_.assign(value);
    field_ready_ = true;
  }
}

void Parser::dispatch() {
  // Step 1 sets the source's last event ID string from the buffer; here it is copied into each
  // dispatched event instead, and the buffer itself is never cleared by a dispatch.
  const std::int64_t retry_ms = retry_ms_;
  retry_ms_ = -1;
  // Step 2: "If the data buffer is an empty string, set the data buffer and the event type
  // buffer to the empty string and return."
  if (data_.empty()) {
    type_.clear();
    return;
  }
  // Step 3: "If the data buffer's last character is a U+000A LINE FEED (LF) character, then
  // remove the last character from the data buffer." (It always is: every data line adds one.)
  data_.pop_back();
  // Steps 4-5: type is the event type buffer, or "message" when that is empty. The data buffer
  // is swapped, not copied, into the event; the event's previous storage becomes the next data
  // buffer, so two buffers alternate and steady state allocates nothing.
  event_.data.swap(data_);
  data_.clear();
  trim(data_);
  if (type_.empty()) {
    event_.type.assign("message");
  } else {
    event_.type.assign(type_);
  }
  event_.last_event_id.assign(last_id_);
  event_.retry_ms = retry_ms;
  // Step 6: "Set the data buffer and the event type buffer to the empty string."
  type_.clear();
  ++dispatched_;
  ready_ = true;
}

}  // namespace llmbench::sse
