#include "llmbench/server/realtime_engine.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/core/thread_name.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <utility>

namespace llmbench::server {

namespace net = boost::asio;

TokenStream::TokenStream(const net::any_io_executor& executor)
    : executor_(executor), timer_(executor) {
  timer_.expires_at(net::steady_timer::time_point::max());
}

net::awaitable<void> TokenStream::wait() {
  if (!events_.empty() || closed_flag_.load(std::memory_order_relaxed))
    co_return;
  waiting_ = true;
  co_await timer_.async_wait(net::as_tuple(net::use_awaitable));
}

void TokenStream::take(std::vector<StreamEvent>& into) {
  into.clear();
  std::swap(into, events_);
}

void TokenStream::deliver(const StreamEvent& event) {
  if (closed_flag_.load(std::memory_order_relaxed))
    return;
  events_.push_back(event);
  if (std::exchange(waiting_, false))
    timer_.cancel();
}

void TokenStream::close() noexcept {
  closed_flag_.store(true, std::memory_order_release);
  events_.clear();
}

namespace {

std::chrono::steady_clock::time_point steady_point(TimeNs ns) {
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::nanoseconds(ns)));
}

}  // namespace

RealtimeEngine::RealtimeEngine(const EngineSettings& settings)
    : settings_(settings), core_(settings.spec.engine, settings.spec.make_exec_model()) {}

RealtimeEngine::~RealtimeEngine() {
  stop();
}

void RealtimeEngine::start() {
  LLMBENCH_ASSERT(!thread_.joinable(), "engine started twice");
  thread_ = std::thread([this] {
    set_thread_name("llmb-engine");
    loop();
  });
}

void RealtimeEngine::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
  std::lock_guard lock(mu_);
  pending_.clear();
  live_.clear();
}

bool RealtimeEngine::fits(std::int64_t prompt_len, std::int64_t output_len) const noexcept {
  return core_.fits(prompt_len, output_len);
}

void RealtimeEngine::submit(EngineRequest request) {
  LLMBENCH_ASSERT(request.stream != nullptr, "engine request without a stream");
  {
    std::lock_guard lock(mu_);
    if (stop_)
      return;
    pending_.push_back(std::move(request));
    metrics_.waiting.fetch_add(1, std::memory_order_relaxed);
  }
  cv_.notify_one();
}

void RealtimeEngine::publish_gauges(std::size_t pending) {
  constexpr auto relaxed = std::memory_order_relaxed;
  metrics_.running.store(static_cast<std::int64_t>(core_.num_running()), relaxed);
  metrics_.waiting.store(static_cast<std::int64_t>(core_.num_waiting() + pending), relaxed);
  metrics_.kv_usage.store(core_.kv_usage(), relaxed);
  const auto& s = core_.scheduler_stats();
  metrics_.preemptions.store(s.preemptions, relaxed);
  metrics_.prefix_queries.store(s.prefix_queries, relaxed);
  metrics_.prefix_hits.store(s.prefix_hits, relaxed);
  metrics_.swap_outs.store(s.swap_outs, relaxed);
  metrics_.swap_ins.store(s.swap_ins, relaxed);
  metrics_.recompute_fallbacks.store(s.recompute_fallbacks, relaxed);
}

void RealtimeEngine::abort_closed() {
  for (auto it = live_.begin(); it != live_.end();) {
    if (it->second.stream->closed()) {
      core_.abort(it->first);
      metrics_.aborted.fetch_add(1, std::memory_order_relaxed);
      it = live_.erase(it);
    } else {
      ++it;
    }
  }
}

void RealtimeEngine::mark_scheduled(TimeNs start_ns) {
  for (const std::int64_t id : core_.first_scheduled()) {
    const auto it = live_.find(id);  // every scheduled request is live (aborts come between steps)
    if (it != live_.end())
      it->second.scheduled_ns = std::max(start_ns, it->second.queued_ns);
  }
}

void RealtimeEngine::dispatch(const sim::StepOutcome& outcome, TimeNs end_ns) {
  constexpr auto relaxed = std::memory_order_relaxed;
  for (const auto& f : outcome.finished) live_.at(f.id).cached_tokens = f.cached_tokens;
  for (const std::int64_t id : outcome.emitted) {
    Live& r = live_.at(id);
    if (r.first_ns < 0) {
      r.first_ns = end_ns;
      metrics_.ttft.observe(end_ns - r.arrival_ns);
      metrics_.prompt_tokens.fetch_add(r.prompt_len, relaxed);
    } else {
      metrics_.itl.observe(end_ns - r.last_ns);
    }
    r.last_ns = end_ns;
    ++r.emitted;
    metrics_.generation_tokens.fetch_add(1, relaxed);
    const bool last = r.emitted >= r.output_len;
    StreamEvent event{end_ns, 1, last, -1, -1, -1, -1};
    if (last) {
      event.cached_tokens = r.cached_tokens;
      event.queued_ns = r.queued_ns;
      event.scheduled_ns = r.scheduled_ns;
      event.first_token_ns = r.first_ns;
    }
    queue_event(r.stream, event);
  }
  for (const auto& f : outcome.finished) {
    const auto it = live_.find(f.id);
    const Live& r = it->second;
    metrics_.e2e.observe(end_ns - r.arrival_ns);
    if (r.emitted > 1)
      metrics_.tpot.observe((r.last_ns - r.first_ns) / (r.emitted - 1));
    live_.erase(it);
  }
}

void RealtimeEngine::queue_event(const std::shared_ptr<TokenStream>& stream,
                                 const StreamEvent& event) {
  if (stream->closed())
    return;
  Outbox* box = nullptr;
  for (auto& b : outboxes_) {
    if (b.executor == stream->executor()) {
      box = &b;
      break;
    }
  }
  if (box == nullptr)
    box = &outboxes_.emplace_back(Outbox{stream->executor(), {}});
  box->events.emplace_back(stream, event);
}

void RealtimeEngine::post_events() {
  for (auto& box : outboxes_) {
    if (box.events.empty())
      continue;
    net::post(box.executor, [events = std::move(box.events)] {
      for (const auto& [stream, event] : events) stream->deliver(event);
    });
    box.events = {};
  }
}

void RealtimeEngine::loop() {
  const TimeNs window = ms_to_ns(settings_.admission_window_ms);
  std::unique_lock lock(mu_);
  bool idle = true;
  TimeNs nominal = 0;  // nominal start of the next step (steady clock)
  TimeNs last_dt = 0;  // duration of the previous step (0 after idling)
  while (!stop_) {
    if (idle) {
      cv_.wait(lock, [&] { return stop_ || !pending_.empty(); });
      if (stop_)
        break;
      // The arrival that wakes the engine starts its step, as in the virtual-time simulation.
      nominal = std::min(pending_.front().arrival_ns, steady_now_ns());
      idle = false;
    }
    // Capped at half the previous step so the batch forms before the step is due to end.
    const TimeNs delay = last_dt > 0 ? std::min(window, last_dt / 2) : window;
    if (delay > 0 && cv_.wait_until(lock, steady_point(nominal + delay), [&] { return stop_; }))
      break;
    std::vector<EngineRequest> arrivals = std::exchange(pending_, {});
    lock.unlock();
    abort_closed();
    for (auto& q : arrivals) {
      if (q.stream->closed())
        continue;  // the client left before the engine saw the request
      const std::int64_t id = next_id_++;
      core_.add_request(nominal, id, q.prompt_len, q.output_len, q.prompt_tokens);
      live_.emplace(id, Live{std::move(q.stream), q.arrival_ns, -1, -1, q.prompt_len, q.output_len,
                             0, -1, std::max(nominal, q.arrival_ns), -1});
    }
    const auto dt = core_.begin_step(nominal);
    mark_scheduled(nominal);
    lock.lock();
    publish_gauges(pending_.size());
    if (!dt) {
      idle = true;
      last_dt = 0;
      continue;
    }
    last_dt = *dt;
    metrics_.iteration_tokens.observe(core_.last_step().num_tokens);
    const TimeNs end = nominal + *dt;
    if (cv_.wait_until(lock, steady_point(end), [&] { return stop_; }))
      break;
    lock.unlock();
    const TimeNs late = std::max<TimeNs>(0, steady_now_ns() - end);
    metrics_.step_lateness.observe(late);
    metrics_.steps.fetch_add(1, std::memory_order_relaxed);
    if (late > 5'000'000)
      metrics_.late_steps.fetch_add(1, std::memory_order_relaxed);
    const sim::StepOutcome& outcome = core_.end_step();
    dispatch(outcome, end);
    nominal = end;
    lock.lock();
    publish_gauges(pending_.size());
    // After the gauges: a client that reads its last token then finds its request gone from
    // vllm:num_requests_running and its blocks freed in vllm:kv_cache_usage_perc. Posted
    // without the lock, so `submit` from the io threads does not wait behind it.
    lock.unlock();
    post_events();
    lock.lock();
  }
}

}  // namespace llmbench::server
