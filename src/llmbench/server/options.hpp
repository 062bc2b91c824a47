#pragma once
/// @file
/// Settings of the built-in simulated OpenAI-compatible server (`llmbench serve`).

#include <cstdint>
#include <string>

namespace llmbench::server {

/// What `llmbench serve` was asked for. Plain values with defaults; `validate()` checks them.
///
/// Timing model (exact, so tests and clients can predict it): a request is admitted when one of
/// `max_num_seqs` slots is free (FIFO otherwise); its first output chunk is written at
/// admit + `ttft_ms`; each later chunk at previous + `itl_ms` × (tokens in that chunk); chunks
/// carry `tokens_per_chunk` tokens (the last may carry fewer); the slot is freed after the last.
struct ServerOptions {
  std::string host = "127.0.0.1";  ///< listen address (IPv4/IPv6 literal or "localhost")
  std::uint16_t port = 0;          ///< TCP port; 0 = any free port (reported by `Server::start`)
  int threads = 1;                 ///< HTTP worker threads, each with its own io_context (≥ 1)
  std::string model = "llmbench-sim";  ///< model id reported in /v1/models and every response
  double ttft_ms = 50.0;               ///< admission → first output chunk, milliseconds (≥ 0)
  double itl_ms = 10.0;                ///< per-token decode time, milliseconds (≥ 0)
  int tokens_per_chunk = 1;  ///< tokens per streamed chunk (≥ 1; > 1 mimics MTP/spec decode)
  int max_num_seqs = 256;    ///< concurrently generating requests (≥ 1), vLLM's name
  std::int64_t default_output_len = 128;  ///< output tokens when a request sets no max_tokens
  std::int64_t max_model_len = 32768;     ///< reported in /v1/models (`max_model_len`) only
  std::string emission_log_path;  ///< if non-empty, one JSON line per finished request (append)
};

/// Throws `llmbench::Exception` naming the offending field (e.g. "--tokens-per-chunk") if a value
/// is out of range: threads/tokens_per_chunk/max_num_seqs < 1, negative or non-finite times,
/// default_output_len < 0, empty model name.
void validate(const ServerOptions& options);

}  // namespace llmbench::server
