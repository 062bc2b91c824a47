#pragma once
/// @file
/// Fault injection of `llmbench serve --fault KIND[:rate]` (docs/faults.md): the misbehaviour
/// a real server or proxy shows, injected into generation responses so a client's handling of
/// each can be tested exactly. Which request gets which fault is a pure function of the seed and
/// the request's sequence number (`pick_fault`), so a test knows the count of every kind.

#include "llmbench/core/error.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::server {

/// One kind of fault.
enum class FaultKind : std::uint8_t {
  None,
  Reset,          ///< the connection is reset (RST) mid-stream
  FinMidEvent,    ///< half an SSE event, then FIN
  StallHeaders,   ///< silence right after the response headers
  StallStream,    ///< silence mid-stream
  Http429,        ///< 429 Too Many Requests with Retry-After
  Http503,        ///< 503 Service Unavailable with Retry-After
  Http500Html,    ///< 500 with an HTML body (a proxy's error page)
  MalformedJson,  ///< an event whose data is not valid JSON
  StreamError,    ///< an OpenAI-style `data: {"error":{...}}` event, then [DONE]
  LlamaCppError,  ///< llama.cpp's `error: {json}` field line, then `data: [DONE]`
  HugeEvent,      ///< one content event padded with JSON whitespace to `huge_event_bytes`
  SlowDrip,       ///< the stream written a few bytes at a time
  EarlyClose,     ///< the body ends cleanly mid-stream: no finish_reason, no [DONE]
  Interim1xx,     ///< `HTTP/1.1 100 Continue` before the real response
};

/// A fault's CLI name, what it does, where it applies and the `error_kind` a correct client
/// records for it ("" = the request completes).
struct FaultKindInfo {
  FaultKind kind = FaultKind::None;
  std::string_view name;
  std::string_view help;
  bool stream_only = false;  ///< applies only to streamed requests (others are served cleanly)
  std::string_view client_kind;
};

/// The one table of fault kinds: parsing, the "valid: ..." message, `--help` and docs/faults.md
/// follow it.
inline constexpr std::array<FaultKindInfo, 14> kFaultKinds{{
    {.kind = FaultKind::Reset,
     .name = "reset",
     .help = "connection reset (RST) after half the output events",
     .stream_only = true,
     .client_kind = "stream_error"},
    {.kind = FaultKind::FinMidEvent,
     .name = "fin-mid-event",
     .help = "half of an SSE event after half the output, then FIN",
     .stream_only = true,
     .client_kind = "stream_error"},
    {.kind = FaultKind::StallHeaders,
     .name = "stall-headers",
     .help = "silence for --fault-stall-s right after the 200 headers",
     .stream_only = true,
     .client_kind = "timeout"},
    {.kind = FaultKind::StallStream,
     .name = "stall-stream",
     .help = "silence for --fault-stall-s after half the output",
     .stream_only = true,
     .client_kind = "timeout"},
    {.kind = FaultKind::Http429,
     .name = "http-429",
     .help = "429 Too Many Requests with Retry-After: 1",
     .stream_only = false,
     .client_kind = "http_4xx"},
    {.kind = FaultKind::Http503,
     .name = "http-503",
     .help = "503 Service Unavailable with Retry-After: 1",
     .stream_only = false,
     .client_kind = "http_5xx"},
    {.kind = FaultKind::Http500Html,
     .name = "http-500-html",
     .help = "500 Internal Server Error with an HTML body",
     .stream_only = false,
     .client_kind = "http_5xx"},
    {.kind = FaultKind::MalformedJson,
     .name = "malformed-json",
     .help = "an event of truncated JSON after half the output",
     .stream_only = true,
     .client_kind = "parse"},
    {.kind = FaultKind::StreamError,
     .name = "stream-error",
     .help = "an OpenAI-style error object event after half the output, then [DONE]",
     .stream_only = true,
     .client_kind = "stream_error"},
    {.kind = FaultKind::LlamaCppError,
     .name = "llamacpp-error",
     .help =
         "llama.cpp's 'error: {json}' line after half the output, then 'data: [DONE]' (HTTP 200)",
     .stream_only = true,
     .client_kind = "stream_error"},
    {.kind = FaultKind::HugeEvent,
     .name = "huge-event",
     .help = "one content event padded with JSON whitespace to --fault-huge-event-bytes",
     .stream_only = true,
     .client_kind = ""},
    {.kind = FaultKind::SlowDrip,
     .name = "slow-drip",
     .help = "every write split into --fault-drip-bytes pieces, --fault-drip-ms apart",
     .stream_only = true,
     .client_kind = ""},
    {.kind = FaultKind::EarlyClose,
     .name = "early-close",
     .help = "the body ends cleanly after half the output, without finish_reason or [DONE]",
     .stream_only = true,
     .client_kind = "stream_error"},
    {.kind = FaultKind::Interim1xx,
     .name = "interim-1xx",
     .help = "an 'HTTP/1.1 100 Continue' interim response before the real one",
     .stream_only = false,
     .client_kind = ""},
}};

/// The table entry of `kind` (`kind` != None).
const FaultKindInfo& fault_info(FaultKind kind) noexcept;

/// One `--fault KIND[:rate]`: the share of generation requests (in (0, 1]) that get `kind`.
struct FaultRule {
  FaultKind kind = FaultKind::None;
  double rate = 1.0;
};

/// Everything `--fault*` asks for. Plain values; `validate_faults` checks them.
struct FaultSettings {
  std::vector<FaultRule> rules;  ///< disjoint shares of the requests, in flag order
  std::uint64_t seed = 0;        ///< `--fault-seed`
  double stall_s = 30;           ///< how long a stall lasts (ended early when the client leaves)
  std::int64_t huge_event_bytes = std::int64_t{1} << 20;  ///< size of the padded event
  std::int64_t drip_bytes = 16;                           ///< bytes per write of a drip
  double drip_ms = 1;                                     ///< pause between drip writes
};

/// Parses "KIND" or "KIND:rate" (rate a number in (0, 1], default 1). Errors name `flag` and,
/// for an unknown kind, list the valid ones.
Result<FaultRule> parse_fault(std::string_view text, const std::string& flag);

/// Throws `llmbench::Exception` naming the flag when a rate is outside (0, 1], the rates add
/// up to more than 1, a kind repeats, or a size or time is out of range.
void validate_faults(const FaultSettings& settings);

/// The fault of generation request number `number` (1-based, in arrival order): request n
/// draws u = a hash of (seed, n) uniform in [0, 1), and rule i covers [r_0 + ... + r_{i-1},
/// r_0 + ... + r_i). Pure: the same settings give every test the same assignment.
FaultKind pick_fault(const FaultSettings& settings, std::int64_t number) noexcept;

/// "reset, fin-mid-event, ..." (for messages and help).
std::string fault_kind_names();

}  // namespace llmbench::server
