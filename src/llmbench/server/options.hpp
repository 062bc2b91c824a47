#pragma once
/// @file
/// Settings of the built-in simulated OpenAI-compatible server (`llmbench serve`).

#include "llmbench/server/fault.hpp"
#include "llmbench/server/time_warp.hpp"
#include "llmbench/sim/engine_spec.hpp"
#include "llmbench/tokenizer/chat_template.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace llmbench::server {

/// How the server times its output.
enum class Timing {
  Fixed,   ///< the exact ttft/itl model below (for tests and client benchmarks)
  Engine,  ///< the simulated serving engine (`sim::EngineCore`) stepped in real time
};

/// Parses "fixed" or "engine"; throws `llmbench::Exception` naming `flag` otherwise.
Timing parse_timing(std::string_view text, const std::string& flag);

/// The simulated engine behind `Timing::Engine`: the engine spec `llmbench simulate` resolves
/// (`sim::make_engine_spec`: scheduler knobs, KV blocks from the memory plan, the step-time
/// model), plus the real-time driver's admission window.
struct EngineSettings {
  sim::EngineSpec spec;
  /// Each batch is formed this long after its nominal start (the previous step's end, or the
  /// arrival that woke an idle engine) and the step still ends at nominal start + duration, so
  /// requests a client sends in reaction to the previous step's tokens (loopback turnaround: ≈
  /// 0.1 ms idle, several ms on a loaded machine) join it as they do in `simulate`'s
  /// zero-latency closed loop. Capped at half the previous step's duration so the batch forms
  /// before the step is due to end. 0 = strict: a request that arrives after a step started
  /// waits for the next one.
  double admission_window_ms = 5.0;
};

/// What `llmbench serve` was asked for. Plain values with defaults; `validate()` checks them.
///
/// With `Timing::Engine` every request joins the simulated engine: tokens stream at the ends of
/// the engine steps that produce them, and ttft/itl/tokens_per_chunk/max_num_seqs below are
/// unused (the engine's own scheduler knobs apply). Fixed timing model (exact, so tests and clients
/// can predict it): a request is admitted when one of `max_num_seqs` slots is free (FIFO
/// otherwise); its first output chunk is written at admit + `ttft_ms`; each later chunk at previous
/// + `itl_ms` × (tokens in that chunk); chunks carry `tokens_per_chunk` tokens (the last may carry
/// fewer); the slot is freed after the last.
struct ServerOptions {
  Timing timing = Timing::Fixed;         ///< `Engine` needs `engine`
  std::optional<EngineSettings> engine;  ///< the engine of `Timing::Engine`
  std::string host = "127.0.0.1";        ///< listen address (IPv4/IPv6 literal or "localhost")
  std::uint16_t port = 0;  ///< TCP port; 0 = any free port (reported by `Server::start`)
  int threads = 1;         ///< HTTP worker threads, each with its own io_context (≥ 1)
  std::string model = "llmbench-sim";  ///< model id reported in /v1/models and every response
  double ttft_ms = 50.0;               ///< admission → first output chunk, milliseconds (≥ 0)
  double itl_ms = 10.0;                ///< per-token decode time, milliseconds (≥ 0)
  int tokens_per_chunk = 1;  ///< tokens per streamed chunk (≥ 1; > 1 mimics MTP/spec decode)
  int max_num_seqs = 256;    ///< concurrently generating requests (≥ 1), vLLM's name
  std::int64_t default_output_len = 128;  ///< output tokens when a request sets no max_tokens
  std::int64_t max_model_len = 32768;     ///< reported in /v1/models (`max_model_len`) only
  std::string emission_log_path;  ///< if non-empty, one JSON line per finished request (append)
  /// Counts prompt tokens exactly (`parse_generation_request`) instead of estimating them from
  /// bytes; not owned, must outlive the server. Null = estimate.
  const tokenizer::Tokenizer* tokenizer = nullptr;
  /// With `tokenizer`: chat prompts are the messages rendered with this template (vLLM's chat
  /// path: render, then count without special tokens); not owned. Null = message contents only.
  const tokenizer::ChatTemplate* chat_template = nullptr;
  // ---- connection limits: idle, slow and surplus clients are dropped ----
  /// Seconds a keep-alive connection may wait for its next request's first byte (uvicorn's,
  /// hence vLLM's, `--timeout-keep-alive`; theirs is 5 s). 0 = no limit.
  double timeout_keep_alive_s = 30;
  /// Seconds from a request's first byte to the end of its headers (a slowloris client that
  /// drips header bytes is closed after this). 0 = no limit.
  double header_timeout_s = 10;
  /// Seconds to read a request's body once its headers are in. 0 = no limit.
  double body_timeout_s = 30;
  /// Open connections at most; a connection beyond it is answered 503 and closed. 0 = the
  /// descriptor limit (RLIMIT_NOFILE at start) minus 64, so the server keeps descriptors to
  /// answer /health and to log.
  std::int64_t max_connections = 0;
  /// Faults injected into generation responses (`--fault`, docs/faults.md); none by default.
  FaultSettings faults;
  /// Stalls and drift of the fixed timing (`--stall`, `--drift`; time_warp.hpp); none by default.
  TimingPerturbation perturbation;
};

/// Longest `max_model_len` accepted (2^24 tokens, beyond every context of data/sim/models):
/// a whole non-streamed answer of that length is about 100 MB of text.
inline constexpr std::int64_t kMaxModelLen = std::int64_t{1} << 24;

/// Throws `llmbench::Exception` naming the offending field (e.g. "--tokens-per-chunk") if a value
/// is out of range: threads/tokens_per_chunk/max_num_seqs < 1, ttft/itl not in [0, 1 hour] ms,
/// default_output_len < 0, max_model_len not in [1, kMaxModelLen], empty model name, timeouts
/// not in [0, 1 day] s, max_connections < 0, `Timing::Engine` without engine settings (or with
/// fewer than 1 KV block, or a negative admission window), bad faults (`validate_faults`), bad
/// stalls or drift (`validate_perturbation`) or either with engine timing.
void validate(const ServerOptions& options);

}  // namespace llmbench::server
