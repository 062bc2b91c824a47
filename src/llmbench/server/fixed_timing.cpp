// The fixed timing model of the simulated server (ServerOptions): admission by one of
// `max_num_seqs` FIFO slots, then output chunks at absolute deadlines computed from the
// admission time, so timer lateness never accumulates.

#include "llmbench/server/detail/state.hpp"
#include "llmbench/server/detail/token_source.hpp"
#include "llmbench/server/slot_pool.hpp"
#include "llmbench/server/time_warp.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <variant>

namespace llmbench::server::detail {
namespace {

namespace net = boost::asio;
using namespace boost::asio::experimental::awaitable_operators;  // a || b: first to complete

constexpr auto kTuple = net::as_tuple(net::use_awaitable);

/// Most due chunks handed out by one `next()`: when the server runs behind (thousands of
/// streams on one thread) one write carries several events, about 32 KB at most.
constexpr std::size_t kMaxPiecesPerWake = 128;

/// Sleeps until the absolute steady-clock time `deadline_ns`; returns at once if it has passed
/// (saves an event-loop round trip when the server runs behind).
net::awaitable<void> sleep_until(net::steady_timer& timer, TimeNs deadline_ns) {
  if (steady_now_ns() >= deadline_ns)
    co_return;
  timer.expires_at(steady_time_point(deadline_ns));
  co_await timer.async_wait(kTuple);
}

/// a + b and a × b clamped to the int64 range: a long --itl-ms times a long output must not
/// wrap a deadline into the past (an hour-long ITL × 2^24 tokens is beyond 2^63 ns).
TimeNs saturating_add(TimeNs a, TimeNs b) noexcept {
  TimeNs out = 0;
  return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<TimeNs>::max() : out;
}
TimeNs saturating_mul(TimeNs a, std::int64_t b) noexcept {
  TimeNs out = 0;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<TimeNs>::max() : out;
}

/// The schedule's constants and the slot pool.
class FixedTiming final : public TimingModel {
 public:
  explicit FixedTiming(const ServerState& state)
      : ttft_ns_(state.ttft_ns),
        itl_ns_(state.itl_ns),
        per_chunk_(state.options.tokens_per_chunk),
        pool_(state.options.max_num_seqs),
        warped_(state.options.perturbation.active()),
        warp_(state.options.perturbation) {}

  void stop() noexcept override { pool_.shutdown(); }
  std::unique_ptr<TokenSource> open(const GenerationParams& params, TimeNs arrival_ns,
                                    std::int64_t number,
                                    const net::any_io_executor& executor) override;
  void count_written(std::int64_t tokens) noexcept override {
    generation_tokens_.fetch_add(tokens, std::memory_order_relaxed);
  }
  void count_aborted() noexcept override { aborted_.fetch_add(1, std::memory_order_relaxed); }
  [[nodiscard]] Gauges gauges() const noexcept override {
    constexpr auto relaxed = std::memory_order_relaxed;
    return Gauges{.running = pool_.running(),
                  .waiting = pool_.waiting(),
                  .prompt_tokens = prompt_tokens_.load(relaxed),
                  .generation_tokens = generation_tokens_.load(relaxed),
                  .aborted = aborted_.load(relaxed)};
  }

  /// Deadline of the chunk that starts at output position `emitted` and carries `tokens`
  /// tokens: t_0 = admit + ttft; t_j = t_{j-1} + itl × tokens_j, i.e. admit + ttft + itl ×
  /// (tokens after the first chunk, up to and including this one). `total` = N.
  /// With `--stall` / `--drift` the schedule is laid out in engine time (`TimeWarp`, from the
  /// first request) and mapped back to the wall clock.
  [[nodiscard]] TimeNs deadline(TimeNs admit_ns, std::int64_t total, std::int64_t emitted,
                                std::int64_t tokens) const noexcept {
    const TimeNs origin = origin_ns_.load(std::memory_order_relaxed);
    const TimeNs start = warped_ ? warp_.to_engine(admit_ns - origin) : admit_ns;
    TimeNs due = saturating_add(start, ttft_ns_);
    if (emitted > 0) {
      const std::int64_t first_chunk = std::min(per_chunk_, total);
      due = saturating_add(due, saturating_mul(itl_ns_, emitted + tokens - first_chunk));
    }
    if (!warped_ || due == std::numeric_limits<TimeNs>::max())
      return due;
    return saturating_add(origin, warp_.to_wall(due));
  }
  /// Sets the perturbations' origin to the first request's arrival (later calls keep it).
  void mark_origin(TimeNs arrival_ns) noexcept {
    TimeNs unset = kUnsetOrigin;
    origin_ns_.compare_exchange_strong(unset, arrival_ns, std::memory_order_relaxed);
  }
  [[nodiscard]] std::int64_t per_chunk() const noexcept { return per_chunk_; }
  SlotPool& pool() noexcept { return pool_; }
  void count_prompt(std::int64_t tokens) noexcept {
    prompt_tokens_.fetch_add(tokens, std::memory_order_relaxed);
  }

 private:
  const TimeNs ttft_ns_;
  const TimeNs itl_ns_;
  const std::int64_t per_chunk_;
  SlotPool pool_;
  std::atomic<std::int64_t> prompt_tokens_{0};
  std::atomic<std::int64_t> generation_tokens_{0};
  std::atomic<std::int64_t> aborted_{0};
  static constexpr TimeNs kUnsetOrigin = std::numeric_limits<TimeNs>::min();
  const bool warped_;
  const TimeWarp warp_;
  std::atomic<TimeNs> origin_ns_{kUnsetOrigin};
};

/// One request on the fixed schedule: `tokens_per_chunk` tokens per piece (the last may carry
/// fewer), streamed piece by piece, or all at the last deadline for a whole response.
class FixedSource final : public TokenSource {
 public:
  FixedSource(FixedTiming& timing, const GenerationParams& params, TimeNs arrival_ns,
              const net::any_io_executor& executor)
      : timing_(timing),
        total_(params.output_tokens),
        prompt_tokens_(params.prompt_tokens),
        whole_(!params.stream),
        arrival_ns_(arrival_ns),
        timer_(executor) {}

  net::awaitable<void> admit() override {
    slot_ = co_await timing_.pool().acquire();
    admit_ns_ = steady_now_ns();
    timing_.count_prompt(prompt_tokens_);
  }

  net::awaitable<bool> next(std::vector<Piece>& pieces, http::ResponseWriter* peer) override {
    if (emitted_ >= total_)
      co_return true;
    bool ok = true;
    if (whole_) {
      ok = co_await next_whole(pieces, peer);
      co_return ok;
    }
    if (behind_) {
      // Still behind after a full batch: let the other streams of this thread run first.
      co_await net::post(timer_.get_executor(), net::use_awaitable);
    }
    co_await sleep_until(timer_, deadline_of(emitted_));
    // Every chunk already due goes out now (each its own event, written at the earliest
    // instant >= its deadline).
    const TimeNs now = steady_now_ns();
    const std::size_t first = pieces.size();
    do {
      const std::int64_t tokens = chunk_at(emitted_);
      emitted_ += tokens;
      pieces.push_back(Piece{.tokens = tokens, .last = emitted_ == total_});
    } while (emitted_ < total_ && deadline_of(emitted_) <= now &&
             pieces.size() - first < kMaxPiecesPerWake);
    behind_ = pieces.size() - first == kMaxPiecesPerWake;
    co_return true;
  }

  [[nodiscard]] TimeNs admit_ns() const noexcept override { return admit_ns_; }

  /// Phases follow the timing model, not the write instants: queued = arrival, scheduled =
  /// admission (a slot freed), first token = admit + ttft, last token = the last chunk's
  /// deadline; no output: every phase after the queue is 0.
  [[nodiscard]] RequestTimes times() const noexcept override {
    RequestTimes t{.queued_ns = arrival_ns_,
                   .scheduled_ns = admit_ns_,
                   .first_token_ns = admit_ns_,
                   .last_token_ns = admit_ns_,
                   .prompt_tokens = prompt_tokens_,
                   .generation_tokens = total_,
                   .max_tokens = total_};
    if (total_ > 0) {
      t.first_token_ns = deadline_of(0);
      t.last_token_ns = deadline_of(last_start());
    }
    return t;
  }

  void release() noexcept override { slot_.release(); }

 private:
  /// Tokens of the chunk that starts at output position `at`.
  [[nodiscard]] std::int64_t chunk_at(std::int64_t at) const noexcept {
    return std::min(timing_.per_chunk(), total_ - at);
  }
  [[nodiscard]] TimeNs deadline_of(std::int64_t at) const noexcept {
    return timing_.deadline(admit_ns_, total_, at, chunk_at(at));
  }
  [[nodiscard]] std::int64_t last_start() const noexcept {
    return ((total_ - 1) / timing_.per_chunk()) * timing_.per_chunk();
  }

  /// A whole response: nothing is written until the last chunk's deadline, so the socket is
  /// watched meanwhile and a client that leaves frees its slot at once (vLLM aborts such a
  /// request too); a pipelined next request only ends the watch.
  net::awaitable<bool> next_whole(std::vector<Piece>& pieces, http::ResponseWriter* peer) {
    const TimeNs deadline = deadline_of(last_start());
    if (peer != nullptr && steady_now_ns() < deadline) {
      const auto woke = co_await (sleep_until(timer_, deadline) || peer->peer_closed());
      if (woke.index() == 1) {
        if (std::get<1>(woke))
          co_return false;                       // client gone
        co_await sleep_until(timer_, deadline);  // a pipelined request: just wait
      }
    } else {
      co_await sleep_until(timer_, deadline);
    }
    pieces.push_back(Piece{.tokens = total_, .last = true});
    emitted_ = total_;
    co_return true;
  }

  FixedTiming& timing_;
  const std::int64_t total_;
  const std::int64_t prompt_tokens_;
  const bool whole_;
  const TimeNs arrival_ns_;
  TimeNs admit_ns_ = 0;
  std::int64_t emitted_ = 0;
  bool behind_ = false;
  net::steady_timer timer_;
  SlotPool::Slot slot_;
};

std::unique_ptr<TokenSource> FixedTiming::open(const GenerationParams& params, TimeNs arrival_ns,
                                               std::int64_t number,
                                               const net::any_io_executor& executor) {
  (void)number;
  if (warped_)
    mark_origin(arrival_ns);
  return std::make_unique<FixedSource>(*this, params, arrival_ns, executor);
}

}  // namespace

std::unique_ptr<TimingModel> make_fixed_timing(const ServerState& state) {
  return std::make_unique<FixedTiming>(state);
}

}  // namespace llmbench::server::detail
