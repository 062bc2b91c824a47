#pragma once
/// @file
/// The data contract of llmbench: one `RequestRecord` per request (docs/metrics.md, the per-request
/// record). Real runs and the simulator both produce these; every metric is a pure function of a
/// vector of them.

#include "llmbench/core/clock.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::metrics {

/// Which output channel a streamed chunk belongs to.
enum class Channel : std::uint8_t {
  Answer,     ///< `choices[].text` or `delta.content`
  Reasoning,  ///< `delta.reasoning_content` or `delta.reasoning`
  ToolCall,   ///< `delta.tool_calls[]`
};

/// One SSE event that carried generated output (role-only and empty chunks are never recorded).
struct Chunk {
  TimeNs time_ns = 0;  ///< receive time of the event's last byte, relative to run start
  std::int32_t tokens =
      -1;                  ///< tokens in this chunk; -1 = unknown (filled by `assign_chunk_tokens`)
  std::int32_t bytes = 0;  ///< UTF-8 bytes of generated text in this chunk
  Channel channel = Channel::Answer;
  bool operator==(const Chunk&) const = default;
};

/// Tokens `chunk` stands for in the metrics: its count, or one when unknown (docs/metrics.md counts
/// every output-carrying event as at least one token until a tokenizer says otherwise).
[[nodiscard]] inline std::int64_t tokens_or_one(const Chunk& chunk) noexcept {
  return chunk.tokens >= 0 ? chunk.tokens : 1;
}

/// Why a request failed. `None` means it completed.
enum class ErrorKind : std::uint8_t {
  None,
  Connect,      ///< TCP/TLS connection could not be established
  Timeout,      ///< connect, first-byte, idle or total timeout
  Http3xx,      ///< status 300-399: a redirect (llmbench does not follow redirects)
  Http4xx,      ///< status 400-499
  Http5xx,      ///< status 500-599
  HttpOther,    ///< any other status that is not 2xx (1xx as a final answer, 600+)
  StreamError,  ///< an error inside a 2xx stream (error object, `event: error`, llama.cpp's
                ///< `error:` field line), or the stream ended before it was complete
  EmptyOutput,  ///< a 2xx answer that carried no generated output at all (vLLM's client fails
                ///< such a response too: "never received a valid chunk")
  Parse,        ///< a chunk that is not valid JSON or not the expected shape
  Cancelled,    ///< the run ended (duration reached, interrupt) before the request finished
  Other,
};

/// Where `RequestRecord::output_tokens_local` came from.
enum class LocalCount : std::uint8_t {
  None,        ///< no client-side count
  ChunkUsage,  ///< the sum of per-chunk usage deltas (vLLM continuous_usage_stats)
  Tokenizer,   ///< the received text (answer and reasoning) encoded with `--tokenizer`
};

/// Stable name of a local-count source ("none", "chunk_usage", "tokenizer").
std::string_view to_string(LocalCount source) noexcept;
/// Inverse of `to_string(LocalCount)`; unknown names map to `LocalCount::None`.
LocalCount local_count_from_string(std::string_view name) noexcept;

/// Stable lower-case name of an error kind, as written in JSON ("connect", "http_4xx", ...).
std::string_view to_string(ErrorKind kind) noexcept;
/// Inverse of `to_string`; unknown names map to `ErrorKind::Other`.
ErrorKind error_kind_from_string(std::string_view name) noexcept;
/// Stable name of a channel ("answer", "reasoning", "tool_call").
std::string_view to_string(Channel channel) noexcept;

/// Everything observed about one request. Times are ns since run start; -1 = never happened.
struct RequestRecord {
  std::int64_t id = 0;        ///< index in the schedule (warm-ups first)
  bool warmup = false;        ///< warm-up requests are written but excluded from every metric
  TimeNs scheduled_ns = -1;   ///< when the load plan wanted it sent (open loop: arrival time;
                              ///< closed loop: when a concurrency slot freed)
  TimeNs slot_ns = -1;        ///< when it got its concurrency slot (docs/metrics.md `slot`; equal
                              ///< to `scheduled_ns` without a cap); -1 in records written before
                              ///< the field existed, read as `scheduled_ns` (`slot_time`)
  TimeNs sent_ns = -1;        ///< first byte of the request written
  TimeNs headers_ns = -1;     ///< response status line and headers received
  TimeNs done_ns = -1;        ///< stream end: [DONE], connection close, or failure time
  std::vector<Chunk> chunks;  ///< output-carrying events in arrival order

  int http_status = 0;  ///< 0 when no response was received
  ErrorKind error_kind = ErrorKind::None;
  std::string error_message;  ///< empty when ok; never contains secrets

  std::int64_t input_tokens = -1;         ///< server `usage.prompt_tokens`, -1 if not sent
  std::int64_t output_tokens = -1;        ///< server `usage.completion_tokens`, -1 if not sent
  std::int64_t input_tokens_local = -1;   ///< the sent prompt counted by `--tokenizer` as a
                                          ///< completions server counts it (BOS included);
                                          ///< -1 for chat (the template is the server's)
  std::int64_t output_tokens_local = -1;  ///< counted by the client (tokenizer / per-chunk usage)
  LocalCount output_tokens_local_source = LocalCount::None;  ///< what `output_tokens_local` is
  std::int64_t reasoning_tokens = -1;  ///< server `completion_tokens_details.reasoning_tokens`
  std::int64_t prompt_len = -1;        ///< input length the workload intended (tokens), -1 unknown
  std::int64_t max_tokens = -1;        ///< output length requested (`max_tokens`)
  std::int64_t cached_tokens = -1;     ///< server `prompt_tokens_details.cached_tokens`
  std::string finish_reason;           ///< last `finish_reason` seen ("stop", "length", ...)
  double server_prompt_ms = -1;  ///< server-reported prefill time (llama.cpp `timings.prompt_ms`)
  double server_predicted_ms = -1;  ///< server-reported decode time (`timings.predicted_ms`)
  /// Multi-turn runs (`--multi-turn`): the conversation this request is a turn of, 0-based in
  /// the order conversations started; -1 for a single-turn request (and in records written
  /// before the field existed). Written only when >= 0.
  std::int64_t conversation_id = -1;
  /// Multi-turn runs: this request's turn in its conversation, 1-based; -1 for a single-turn
  /// request. Written only when >= 1.
  std::int64_t turn = -1;
  /// Runs spread over several processes (`mpirun`, docs/distributed.md): the MPI rank that sent
  /// this request; -1 for a single process. Written only when >= 0.
  std::int64_t rank = -1;

  /// True when the request completed without error (it then counts in metrics unless warm-up).
  [[nodiscard]] bool ok() const noexcept { return error_kind == ErrorKind::None; }
  /// Field-by-field equality (doubles exactly), defaulted so new fields are compared.
  bool operator==(const RequestRecord&) const = default;
};

// ---- token counts: the one source of N and of a request's input tokens ----

/// Fills `Chunk::tokens` where unknown (-1) so the chunks sum to the request's output token count
/// N (server usage if present, else `output_tokens_local`, else one token per chunk). Unknown
/// chunks share what known chunks leave by their byte counts (largest-remainder rounding, at least
/// one token per chunk when possible); this is an estimate until a local tokenizer counts them.
/// Run once where a record is made: by the load generator before the record is stored or written,
/// and by `read_record_file` for records an older version wrote with unknown tokens.
void assign_chunk_tokens(RequestRecord& record);

/// Output token count N used by every metric: `output_tokens` (server usage) when ≥ 0, else
/// `output_tokens_local`, else the sum of chunk tokens (unknown chunks count 1).
std::int64_t output_token_count(const RequestRecord& record) noexcept;

/// N as counted by the server or the client: `output_tokens` when ≥ 0, else
/// `output_tokens_local`; -1 when neither exists (N is then the chunks' tokens).
std::int64_t counted_output_tokens(const RequestRecord& record) noexcept;

/// Input token count of a request used by every report (the summary's totals and
/// `--save-detailed`'s `input_lens`): server `usage.prompt_tokens`, else `input_tokens_local`,
/// else the workload's `prompt_len`, else 0.
std::int64_t input_token_count(const RequestRecord& record) noexcept;

/// The time `record` got its concurrency slot: `slot_ns`, or `scheduled_ns` for a record that
/// does not carry one (written before the field existed; no queue wait is then known).
[[nodiscard]] inline TimeNs slot_time(const RequestRecord& record) noexcept {
  return record.slot_ns >= 0 ? record.slot_ns : record.scheduled_ns;
}

}  // namespace llmbench::metrics
