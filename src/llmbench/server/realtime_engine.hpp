#pragma once
/// @file
/// The simulated serving engine (`sim::EngineCore`) stepped in real time behind the HTTP front
/// (`ServerOptions::timing == Timing::Engine`). One engine thread runs the step loop on absolute
/// deadlines: a step that starts at nominal time t with duration d ends at t + d (never "sleep
/// after work"), the next starts at t + d, so timer lateness never accumulates; an idle engine
/// wakes at the first arrival. HTTP coroutines `submit` requests (queued to the engine thread)
/// and read the engine's tokens from a `TokenStream`, which wakes them on their own io_context.
/// The engine's gauges, counters and latency histograms feed `/metrics` under vLLM's names.

#include "llmbench/core/clock.hpp"
#include "llmbench/server/options.hpp"
#include "llmbench/server/prometheus.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace llmbench::server {

/// One engine step's output for one request.
struct StreamEvent {
  TimeNs time_ns = 0;               ///< nominal steady-clock end of the step that produced it
  std::int64_t tokens = 0;          ///< output tokens (one per step)
  bool finished = false;            ///< the request reached its length: the last event
  std::int64_t cached_tokens = -1;  ///< on the last event: prefix-cache hit (tokens)
  /// On the last event (else −1), nominal steady-clock instants of vLLM's request phases: the
  /// engine took the request in (start of the step it joined), first scheduled it (start of
  /// that step), and the end of the step that produced its first token.
  TimeNs queued_ns = -1;
  TimeNs scheduled_ns = -1;
  TimeNs first_token_ns = -1;
};

/// Hands engine events to one HTTP coroutine. Everything but `closed` runs on the coroutine's
/// io_context, which must be run by one thread: the engine posts each step's events there in one
/// batch per io_context (`RealtimeEngine`), so no lock is taken per token and a wake-up cannot
/// be lost (the waiter is suspended before any delivery runs).
class TokenStream {
 public:
  explicit TokenStream(const boost::asio::any_io_executor& executor);
  /// Returns when events are pending (at once if some are, or after `close`). One waiter.
  boost::asio::awaitable<void> wait();
  /// Moves the pending events, oldest first, into `into` (cleared first; its capacity is
  /// reused, so a caller that keeps `into` allocates nothing per step).
  void take(std::vector<StreamEvent>& into);
  /// Appends an event and wakes the waiter. Dropped after `close`.
  void deliver(const StreamEvent& event);
  /// The consumer is gone (request finished, client disconnected or server stopping): later
  /// deliveries are dropped, and the engine aborts the request if it is still live.
  void close() noexcept;
  /// True after `close`. Any thread.
  [[nodiscard]] bool closed() const noexcept {
    return closed_flag_.load(std::memory_order_acquire);
  }
  /// The io_context the stream's coroutine runs on.
  [[nodiscard]] const boost::asio::any_io_executor& executor() const noexcept { return executor_; }

 private:
  std::atomic<bool> closed_flag_{false};
  boost::asio::any_io_executor executor_;
  boost::asio::steady_timer timer_;  // never expires; cancel() is the wake-up
  std::vector<StreamEvent> events_;
  bool waiting_ = false;
};

/// A request for the engine.
struct EngineRequest {
  std::int64_t prompt_len = 1;               ///< ≥ 1
  std::int64_t output_len = 1;               ///< ≥ 1
  std::vector<std::uint32_t> prompt_tokens;  ///< pseudo ids for prefix caching (may be empty)
  TimeNs arrival_ns = 0;                     ///< steady clock, when the HTTP request arrived
  std::shared_ptr<TokenStream> stream;       ///< where its tokens go (non-null)
};

/// The engine's vLLM metrics. Counters and gauges are relaxed atomics written by the engine
/// thread; histograms observe in ns (seconds exposed) or tokens.
struct EngineMetrics {
  std::atomic<std::int64_t> running{0};  ///< vllm:num_requests_running
  std::atomic<std::int64_t> waiting{0};  ///< vllm:num_requests_waiting (incl. not yet picked up)
  std::atomic<double> kv_usage{0};       ///< vllm:kv_cache_usage_perc, 0-1
  std::atomic<std::int64_t> preemptions{0};
  std::atomic<std::int64_t> prefix_queries{0};  ///< tokens
  std::atomic<std::int64_t> prefix_hits{0};     ///< tokens
  std::atomic<std::int64_t> prompt_tokens{0};   ///< prompts whose prefill finished
  std::atomic<std::int64_t> generation_tokens{0};
  std::atomic<std::int64_t> steps{0};       ///< steps whose end was applied (tokens handed over)
  std::atomic<std::int64_t> late_steps{0};  ///< steps whose end was applied > 5 ms late
  /// Per step: wall time at which its end was applied − its nominal end (ns observed, s shown).
  Histogram step_lateness{kStepLatenessBuckets, 1e-9};
  /// Requests aborted because their client went away (vLLM counts them in
  /// vllm:request_success_total{finished_reason="abort"}).
  std::atomic<std::int64_t> aborted{0};
  /// Swap preemptions (`--swap-space` > 0; vLLM V1 has no swap metric). Suggested exposition:
  /// llmbench:num_swaps_total{direction="out"|"in"} and llmbench:num_recompute_fallbacks_total.
  std::atomic<std::int64_t> swap_outs{0};
  std::atomic<std::int64_t> swap_ins{0};
  std::atomic<std::int64_t> recompute_fallbacks{0};
  Histogram ttft{kTtftBuckets, 1e-9};           ///< arrival → first token
  Histogram itl{kItlBuckets, 1e-9};             ///< gap between a request's consecutive tokens
  Histogram tpot{kItlBuckets, 1e-9};            ///< per request: (last − first) / (N − 1)
  Histogram e2e{kRequestLatencyBuckets, 1e-9};  ///< arrival → last token
  Histogram iteration_tokens{kIterationTokenBuckets, 1};  ///< tokens per step
};

/// The engine thread and its queue. `submit`, `fits`, `metrics` from any thread; `start`/`stop`
/// from the controlling thread.
class RealtimeEngine {
 public:
  /// Builds the engine (`settings.engine.num_gpu_blocks` ≥ 1).
  explicit RealtimeEngine(const EngineSettings& settings);
  /// Stops the thread if running.
  ~RealtimeEngine();
  RealtimeEngine(const RealtimeEngine&) = delete;
  RealtimeEngine& operator=(const RealtimeEngine&) = delete;

  /// Starts the engine thread.
  void start();
  /// Stops and joins the engine thread, then drops every queued and live request's stream (no
  /// more pushes). Call before the io_contexts of the streams are destroyed. Idempotent.
  void stop();
  /// True when prompt + output fit the whole KV cache (else the request must be rejected).
  [[nodiscard]] bool fits(std::int64_t prompt_len, std::int64_t output_len) const noexcept;
  /// Queues a request for the engine thread; it joins the next batch that forms.
  void submit(EngineRequest request);
  [[nodiscard]] const EngineMetrics& metrics() const noexcept { return metrics_; }
  [[nodiscard]] const EngineSettings& settings() const noexcept { return settings_; }

 private:
  struct Live {
    std::shared_ptr<TokenStream> stream;
    TimeNs arrival_ns = 0;
    TimeNs first_ns = -1;
    TimeNs last_ns = -1;
    std::int64_t prompt_len = 0;
    std::int64_t output_len = 0;
    std::int64_t emitted = 0;
    std::int64_t cached_tokens = -1;
    TimeNs queued_ns = 0;      ///< max(arrival, nominal start of the step it was added at)
    TimeNs scheduled_ns = -1;  ///< nominal start of the first step that scheduled it
  };
  void loop();
  /// Aborts every live request whose stream was closed (client gone): its KV blocks are freed
  /// at once (`sim::EngineCore::abort`). Engine thread, between steps.
  void abort_closed();
  void publish_gauges(std::size_t pending);
  /// After `begin_step` at `start_ns`: stamps `scheduled_ns` of the requests the step
  /// scheduled for the first time (`sim::EngineCore::first_scheduled`).
  void mark_scheduled(TimeNs start_ns);
  void dispatch(const sim::StepOutcome& outcome, TimeNs end_ns);
  /// Queues `event` for `stream` in this step's batch for the stream's io_context.
  void queue_event(const std::shared_ptr<TokenStream>& stream, const StreamEvent& event);
  /// Posts each io_context's batch of this step (one post per io_context, not per token).
  void post_events();

  /// One step's events for the streams of one io_context.
  struct Outbox {
    boost::asio::any_io_executor executor;
    std::vector<std::pair<std::shared_ptr<TokenStream>, StreamEvent>> events;
  };

  EngineSettings settings_;
  sim::EngineCore core_;  // engine thread only (fits() reads the immutable config)
  EngineMetrics metrics_;
  std::unordered_map<std::int64_t, Live> live_;  // engine thread only
  std::int64_t next_id_ = 0;                     // engine thread only
  std::vector<Outbox> outboxes_;                 // engine thread only

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<EngineRequest> pending_;  // guarded by mu_
  bool stop_ = false;                   // guarded by mu_
  std::thread thread_;
};

}  // namespace llmbench::server
