#pragma once
/// @file
/// Private to the server module: where a generation's tokens come from. One `TimingModel` per
/// server (the fixed ttft/itl schedule or the real-time engine) opens one `TokenSource` per
/// request; `serve_generation` (generation.cpp) turns the pieces a source yields into SSE events
/// or a whole body, so the two timings share every byte of framing and bookkeeping.

#include "llmbench/core/clock.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/http/listener.hpp"
#include "llmbench/server/openai_request.hpp"
#include "llmbench/server/prometheus.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::server::detail {

/// Output that is due: `tokens` output tokens in one SSE event; `last` on the final one.
struct Piece {
  std::int64_t tokens = 0;
  bool last = false;
};

/// The counters behind `/metrics` and `Server::stats()` that depend on the timing, read with
/// relaxed atomic loads (vLLM V1 names in brackets).
struct Gauges {
  std::int64_t running = 0;            ///< generating now (`vllm:num_requests_running`)
  std::int64_t waiting = 0;            ///< queued for admission (`vllm:num_requests_waiting`)
  std::int64_t prompt_tokens = 0;      ///< prompt tokens taken in (`vllm:prompt_tokens_total`)
  std::int64_t generation_tokens = 0;  ///< output tokens (`vllm:generation_tokens_total`)
  std::int64_t aborted = 0;            ///< requests whose client left (`finished_reason="abort"`)
};

/// One request's tokens. Used only from the request's coroutine (its connection's thread).
/// Order of calls: `admit()`, then `next()` until a piece with `last`, then `times()`.
class TokenSource {
 public:
  virtual ~TokenSource() = default;
  /// Waits until the request may generate (fixed: a free slot; engine: queued to the engine).
  virtual boost::asio::awaitable<void> admit() = 0;
  /// Waits until output is due and appends it to `pieces` (possibly nothing). With `peer`
  /// non-null the socket is watched meanwhile (for a response that writes nothing until its
  /// end): returns false when the client left, else true.
  virtual boost::asio::awaitable<bool> next(std::vector<Piece>& pieces,
                                            http::ResponseWriter* peer) = 0;
  /// Steady-clock instant of admission (set by `admit`).
  [[nodiscard]] virtual TimeNs admit_ns() const noexcept = 0;
  /// vLLM's request phases once the last piece was taken (`RequestHistograms::observe`).
  [[nodiscard]] virtual RequestTimes times() const noexcept = 0;
  /// Gives back what admission took (the slot), before the last write. Idempotent.
  virtual void release() noexcept {}
};

/// How the server times output: one per server, shared by every worker thread (thread-safe).
class TimingModel {
 public:
  virtual ~TimingModel() = default;
  /// Starts background work (the engine thread). Controlling thread, before serving.
  virtual void start() {}
  /// Stops handing out work; call before the io_contexts are torn down. Idempotent.
  virtual void stop() noexcept {}
  /// Whether requests must keep their prompt text and ids (`parse_generation_request`).
  [[nodiscard]] virtual bool keep_prompt() const noexcept { return false; }
  /// Refuses what this timing cannot run, after the context-length check (so both lengths are
  /// at most `max_model_len`): an error naming the field, or nullopt.
  [[nodiscard]] virtual std::optional<Error> refuse(const GenerationParams& params) const {
    (void)params;
    return std::nullopt;
  }
  /// The token source of one accepted request. `number` is the request's 1-based sequence
  /// number (also its id), `executor` its connection's.
  virtual std::unique_ptr<TokenSource> open(const GenerationParams& params, TimeNs arrival_ns,
                                            std::int64_t number,
                                            const boost::asio::any_io_executor& executor) = 0;
  /// `tokens` output tokens were written to a client (fixed timing counts them here).
  virtual void count_written(std::int64_t tokens) noexcept = 0;
  /// A client left before its answer was complete.
  virtual void count_aborted() noexcept = 0;
  /// The current gauges.
  [[nodiscard]] virtual Gauges gauges() const noexcept = 0;
  /// Appends this timing's own `/metrics` families (engine: KV cache, prefix cache, latency
  /// histograms); `labels` is the label list without braces.
  virtual void append_metrics(std::string& out, const std::string& labels) const {
    (void)out;
    (void)labels;
  }
};

struct ServerState;

/// The timing model of `state.options.timing` (`make_fixed_timing` or `make_engine_timing`).
std::unique_ptr<TimingModel> make_timing(const ServerState& state);

/// `ServerOptions` fixed ttft/itl schedule behind `max_num_seqs` FIFO slots (fixed_timing.cpp).
std::unique_ptr<TimingModel> make_fixed_timing(const ServerState& state);

/// The simulated engine stepped in real time (`RealtimeEngine`, engine_timing.cpp).
std::unique_ptr<TimingModel> make_engine_timing(const ServerState& state);

}  // namespace llmbench::server::detail
