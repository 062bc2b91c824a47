// Generation with `Timing::Engine`: the request joins the real-time engine (RealtimeEngine) and
// each output token is due when the engine step that produced it ends.

#include "llmbench/server/detail/state.hpp"
#include "llmbench/server/detail/token_source.hpp"
#include "llmbench/server/prometheus.hpp"
#include "llmbench/server/realtime_engine.hpp"
#include "llmbench/sim/engine.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <fmt/format.h>

#include <string_view>
#include <variant>

namespace llmbench::server::detail {
namespace {

namespace net = boost::asio;
using namespace boost::asio::experimental::awaitable_operators;  // a || b: first to complete

/// Appends the engine's families: vLLM V1 names, types and buckets
/// (`vllm/v1/metrics/loggers.py`; docs/simulator.md "Sources", Prometheus metrics).
void append_engine_metrics(std::string& out, const RealtimeEngine& engine,
                           const std::string& labels) {
  const auto& e = engine.metrics();
  const auto& cfg = engine.settings().spec.engine;
  constexpr auto relaxed = std::memory_order_relaxed;
  auto one = [&](std::string_view name, std::string_view type, std::string_view help,
                 double value) {
    append_family_header(out, name, type, help);
    append_sample(out, name, labels, value);
  };
  const double usage = e.kv_usage.load(relaxed);
  one("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", usage);
  one("vllm:gpu_cache_usage_perc", "gauge",
      "GPU KV-cache usage. 1 means 100 percent usage (deprecated alias).", usage);
  append_family_header(out, "vllm:cache_config_info", "gauge",
                       "Information of the LLMEngine CacheConfig.");
  append_sample(out, "vllm:cache_config_info",
                fmt::format("block_size=\"{}\",enable_prefix_caching=\"{}\",num_gpu_blocks=\"{}\","
                            "{}",
                            cfg.block_size, cfg.scheduler.enable_prefix_caching ? "True" : "False",
                            cfg.num_gpu_blocks, labels),
                1);
  one("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.",
      static_cast<double>(e.preemptions.load(relaxed)));
  // Swap preemption (`--swap-space` > 0): vLLM V1 has no swap metric, so these carry our prefix.
  append_family_header(out, "llmbench:num_swaps_total", "counter",
                       "Cumulative number of requests swapped out to or in from CPU memory.");
  append_sample(out, "llmbench:num_swaps_total", "direction=\"out\"," + labels,
                static_cast<double>(e.swap_outs.load(relaxed)));
  append_sample(out, "llmbench:num_swaps_total", "direction=\"in\"," + labels,
                static_cast<double>(e.swap_ins.load(relaxed)));
  one("llmbench:num_recompute_fallbacks_total", "counter",
      "Preemptions that recomputed because the CPU swap space was full.",
      static_cast<double>(e.recompute_fallbacks.load(relaxed)));
  one("vllm:prefix_cache_queries_total", "counter",
      "Prefix cache queries, in terms of number of queried tokens.",
      static_cast<double>(e.prefix_queries.load(relaxed)));
  one("vllm:prefix_cache_hits_total", "counter",
      "Prefix cache hits, in terms of number of cached tokens.",
      static_cast<double>(e.prefix_hits.load(relaxed)));
  auto histogram = [&](std::string_view name, std::string_view help, const Histogram& h) {
    append_family_header(out, name, "histogram", help);
    h.write(out, name, labels);
  };
  histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
            e.ttft);
  histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
            e.itl);
  histogram("vllm:time_per_output_token_seconds",
            "Histogram of time per output token in seconds (deprecated alias of "
            "inter_token_latency_seconds).",
            e.itl);
  histogram("vllm:request_time_per_output_token_seconds",
            "Histogram of time_per_output_token_seconds per request.", e.tpot);
  histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
            e.e2e);
  histogram("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.",
            e.iteration_tokens);
  // Whether the server keeps the simulated clock: not a vLLM metric, hence our prefix.
  one("llmbench:engine_steps_total", "counter",
      "Engine steps run in real time (counted at their end, as the lateness histogram).",
      static_cast<double>(e.steps.load(relaxed)));
  one("llmbench:engine_late_steps_total", "counter",
      "Engine steps whose end (token emission) was applied more than 5 ms after its simulated "
      "time: the server could not keep up.",
      static_cast<double>(e.late_steps.load(relaxed)));
  histogram("llmbench:engine_step_lateness_seconds",
            "How long after its simulated end each engine step's tokens were handed to the "
            "HTTP streams.",
            e.step_lateness);
}

/// The engine behind every request of the server.
class EngineTiming final : public TimingModel {
 public:
  explicit EngineTiming(const ServerState& state) : engine_(*state.options.engine) {}

  void start() override { engine_.start(); }
  void stop() noexcept override { engine_.stop(); }
  [[nodiscard]] bool keep_prompt() const noexcept override { return true; }

  [[nodiscard]] std::optional<Error> refuse(const GenerationParams& params) const override {
    const std::int64_t total = params.output_tokens;
    if (total > 0 && !engine_.fits(params.prompt_tokens, total)) {
      const auto& cfg = engine_.settings().spec.engine;
      return Error{fmt::format("prompt ({} tokens) + max_tokens ({}) exceed the KV cache of the "
                               "simulated engine ({} blocks of {} tokens)",
                               params.prompt_tokens, total, cfg.num_gpu_blocks, cfg.block_size),
                   "max_tokens", -1};
    }
    return std::nullopt;
  }

  std::unique_ptr<TokenSource> open(const GenerationParams& params, TimeNs arrival_ns,
                                    std::int64_t number,
                                    const net::any_io_executor& executor) override;
  // The engine counts tokens as its steps emit them and aborts as it drops requests
  // (vLLM's iteration stats), not as they are written.
  void count_written(std::int64_t tokens) noexcept override { (void)tokens; }
  void count_aborted() noexcept override {}
  [[nodiscard]] Gauges gauges() const noexcept override {
    const auto& m = engine_.metrics();
    constexpr auto relaxed = std::memory_order_relaxed;
    return Gauges{.running = m.running.load(relaxed),
                  .waiting = m.waiting.load(relaxed),
                  .prompt_tokens = m.prompt_tokens.load(relaxed),
                  .generation_tokens = m.generation_tokens.load(relaxed),
                  .aborted = m.aborted.load(relaxed)};
  }
  void append_metrics(std::string& out, const std::string& labels) const override {
    append_engine_metrics(out, engine_, labels);
  }
  RealtimeEngine& engine() noexcept { return engine_; }

 private:
  RealtimeEngine engine_;
};

/// One request in the engine: one piece per engine step that produced one of its tokens.
class EngineSource final : public TokenSource {
 public:
  EngineSource(RealtimeEngine& engine, const GenerationParams& params, TimeNs arrival_ns,
               std::int64_t number, const net::any_io_executor& executor)
      : engine_(engine),
        params_(params),
        arrival_ns_(arrival_ns),
        number_(number),
        stream_(std::make_shared<TokenStream>(executor)) {
    times_ = RequestTimes{.queued_ns = arrival_ns,
                          .scheduled_ns = arrival_ns,
                          .first_token_ns = arrival_ns,
                          .last_token_ns = arrival_ns,
                          .prompt_tokens = params.prompt_tokens,
                          .generation_tokens = 0,
                          .max_tokens = 0};
  }
  /// Closes the stream, so the engine stops pushing to it and aborts the request if live.
  ~EngineSource() override { stream_->close(); }
  EngineSource(const EngineSource&) = delete;
  EngineSource& operator=(const EngineSource&) = delete;

  net::awaitable<void> admit() override {
    if (params_.output_tokens == 0)
      co_return;  // nothing to generate: answered at once, as the fixed timing does
    EngineRequest job;
    job.prompt_len = params_.prompt_tokens;
    job.output_len = params_.output_tokens;
    job.prompt_tokens =
        sim::prompt_cache_ids(params_.prompt_ids, params_.prompt_text, params_.prompt_tokens,
                              static_cast<std::uint64_t>(number_));
    job.arrival_ns = arrival_ns_;
    job.stream = stream_;
    engine_.submit(std::move(job));
    co_return;
  }

  net::awaitable<bool> next(std::vector<Piece>& pieces, http::ResponseWriter* peer) override {
    // A whole response is watched until the client pipelines another request.
    if (peer != nullptr && watch_peer_) {
      const auto woke = co_await (stream_->wait() || peer->peer_closed());
      if (woke.index() == 1) {
        if (std::get<1>(woke))
          co_return false;  // the destructor closes the stream: the engine aborts it
        watch_peer_ = false;
      }
    } else {
      co_await stream_->wait();
    }
    stream_->take(events_);
    for (const auto& e : events_) {
      emitted_ += e.tokens;
      pieces.push_back(Piece{.tokens = e.tokens, .last = e.finished});
      if (e.finished) {
        times_ = RequestTimes{.queued_ns = e.queued_ns,
                              .scheduled_ns = e.scheduled_ns,
                              .first_token_ns = e.first_token_ns,
                              .last_token_ns = e.time_ns,
                              .prompt_tokens = params_.prompt_tokens,
                              .generation_tokens = emitted_,
                              .max_tokens = params_.output_tokens,
                              .cached_tokens = e.cached_tokens};
      }
    }
    co_return true;
  }

  [[nodiscard]] TimeNs admit_ns() const noexcept override { return arrival_ns_; }
  [[nodiscard]] RequestTimes times() const noexcept override { return times_; }

 private:
  RealtimeEngine& engine_;
  const GenerationParams& params_;
  const TimeNs arrival_ns_;
  const std::int64_t number_;
  std::shared_ptr<TokenStream> stream_;
  std::vector<StreamEvent> events_;  // one wake-up's events (reused: no allocation per step)
  std::int64_t emitted_ = 0;
  bool watch_peer_ = true;
  RequestTimes times_;
};

std::unique_ptr<TokenSource> EngineTiming::open(const GenerationParams& params, TimeNs arrival_ns,
                                                std::int64_t number,
                                                const net::any_io_executor& executor) {
  return std::make_unique<EngineSource>(engine_, params, arrival_ns, number, executor);
}

}  // namespace

std::unique_ptr<TimingModel> make_engine_timing(const ServerState& state) {
  return std::make_unique<EngineTiming>(state);
}

}  // namespace llmbench::server::detail
