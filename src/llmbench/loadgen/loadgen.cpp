#include "llmbench/loadgen/loadgen.hpp"

#include "llmbench/core/log.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/core/thread_name.hpp"
#include "llmbench/http/connection_tally.hpp"
#include "llmbench/loadgen/detail/loop_lag.hpp"
#include "llmbench/loadgen/detail/prewarm.hpp"
#include "llmbench/loadgen/record_writer.hpp"
#include "llmbench/loadgen/request_handler.hpp"
#include "llmbench/workload/arrivals.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <iterator>
#include <thread>
#include <utility>

namespace llmbench::loadgen {

namespace net = boost::asio;
using metrics::RequestRecord;

namespace {

constexpr auto kAsTuple = net::as_tuple(net::use_awaitable);

/// Open loop: how long before its time a request is handed to its worker thread. The hand-over
/// between threads and taking (or opening) a connection happen within it, and the worker writes
/// the request at its time (`http::Request::send_at_ns`), so the send time is the plan's plus
/// only the worker's wake-up (docs/metrics.md, `sent`).
constexpr TimeNs kSendLeadNs = 5'000'000;

/// One planned request.
struct Job {
  std::int64_t id = 0;
  std::size_t sample = 0;
  TimeNs scheduled_ns = 0;  // run-relative: what the plan wanted (docs/metrics.md, the per-request
                            // record: `scheduled`)
  TimeNs slot_ns = 0;       // run-relative: when it got its concurrency slot (`slot`)
  TimeNs send_at_ns = 0;    // steady clock: not written before (0: at once); see kSendLeadNs
  bool warmup = false;
  std::size_t worker = 0;  // index of the worker thread running it
  // Multi-turn: the conversation (index of `Run::conversations`), its id (the plan index of its
  // first turn, alike in every share) and the 1-based turn; -1 otherwise.
  std::int64_t conversation = -1;
  std::int64_t conversation_id = -1;
  std::int64_t turn = -1;
  // Turns after the first: the body with the history, and its lengths; empty = bodies[sample].
  std::string body{};
  std::int64_t prompt_len = -1;
  std::int64_t max_tokens = -1;
};

/// One conversation of a multi-turn run, owned by the dispatcher.
struct Conversation {
  std::int64_t id = 0;  // the plan index of its first turn
  std::size_t sample = 0;
  ChatMessages history{};  // every message sent or answered so far, in order
};

/// A client thread: its own io_context and connection pool (nothing shared).
struct Worker {
  net::io_context ioc{1};
  net::executor_work_guard<net::io_context::executor_type> guard{ioc.get_executor()};
  http::ConnectionPool pool;
  const protocol::Dialect& dialect;    // `LoadOptions::backend`; one decoder per request
  tokenizer::Scratch scratch;          // local token counting (`LoadOptions::tokenizer`)
  std::vector<RequestRecord> records;  // finished here; merged after the thread joins
  detail::LoopLagProbe lag{ioc};       // this loop's wake-up lag
  std::thread thread;

  Worker(const http::Url& url, const http::ClientOptions& options, const protocol::Dialect& d,
         http::ConnectionTally& tally)
      : pool(ioc, url, options, &tally), dialect(d) {}
};

/// Shared state of one run. Fields marked (D) are touched only on the dispatcher thread.
struct Run {
  const LoadOptions& opt;
  const std::vector<workload::Sample>& samples;
  RecordWriterThread& writer;
  Progress* progress;
  const std::atomic<bool>* stop;
  RunClock clock;
  std::vector<std::string> bodies;  // one request body per sample, built before the run
  protocol::Redactor redactor;      // opt.secrets, applied to every server-controlled string
  // The dataset's own arrival times (trace replay) for the measured requests; empty when it has
  // none. A dataset with its own schedule is open loop at its own times.
  const std::vector<TimeNs> own_schedule;
  // Open loop: requests go at planned times (the dataset's own schedule, a request rate or a
  // ramp-up); otherwise closed: each request when a concurrency slot frees.
  const bool open_loop;
  http::ConnectionTally tally;  // every worker's connections (outlives them)
  std::vector<std::unique_ptr<Worker>> workers;
  net::io_context dispatcher{1};
  std::int64_t in_flight = 0;    // (D)
  std::int64_t next_id = 0;      // (D) ids, warm-ups first
  std::int64_t later_turns = 0;  // (D) later turns of conversations sent (a share's turn ids)
  std::int64_t cap = std::numeric_limits<std::int64_t>::max();  // (D)
  // (D) Never expires: every waiter for a slot (the plan, the drain, the turns of conversations)
  // waits on it at once, and `cancel()` wakes them all: when a slot frees, and every 50 ms from
  // `tick` so each can look at the stop flag and its deadline. Re-arming it per waiter would
  // cancel the other waiters' waits, so it is armed once.
  net::steady_timer slot_freed{dispatcher, net::steady_timer::time_point::max()};
  bool ticking = true;                                 // (D) `tick` runs until the plan ends
  std::vector<std::int64_t> worker_load;               // (D) in flight per worker
  bool cancelled = false;                              // (D)
  TimeNs end_ns = std::numeric_limits<TimeNs>::max();  // (D) end of --duration
  TimeNs last_dispatch_ns = 0;                         // (D) latest send
  std::vector<Conversation> conversations;             // (D) multi-turn
  std::int64_t pending_turns = 0;          // (D) turns waiting out their think time or for a slot
  ConversationCounts conversation_counts;  // (D)

  Run(const LoadOptions& o, const std::vector<workload::Sample>& s, RecordWriterThread& wr,
      Progress* p, const std::atomic<bool>* st)
      : opt(o),
        samples(s),
        writer(wr),
        progress(p),
        stop(st),
        redactor(o.secrets),
        own_schedule(workload::dataset_arrivals(
            s, static_cast<std::size_t>(o.num_warmups) % s.size(), o.num_prompts)),
        open_loop(workload::is_open_loop(!own_schedule.empty(), o.request_rate, o.ramp_up)) {}

  [[nodiscard]] bool stop_requested() const {
    return stop != nullptr && stop->load(std::memory_order_relaxed);
  }

  std::string target() const { return opt.url.path_prefix + opt.endpoint; }

  void build_bodies() {
    bodies.reserve(samples.size());
    for (const auto& s : samples) {
      protocol::GenRequest g = opt.request;
      g.prompt = s.prompt;
      g.prompt_token_ids = s.prompt_token_ids;
      g.messages = s.messages;
      g.max_tokens = s.output_len;
      bodies.push_back(protocol::build_request_body(opt.backend, g));
    }
  }

  /// Runs on a worker: sends one request and records it.
  net::awaitable<void> execute(Worker& w, Job job) {
    RequestRecord rec;
    rec.id = job.id;
    rec.warmup = job.warmup;
    rec.scheduled_ns = job.scheduled_ns;
    rec.slot_ns = job.slot_ns;
    rec.conversation_id = job.conversation_id;
    rec.turn = job.turn;
    rec.rank = opt.share.spread() ? opt.share.rank : -1;
    const auto& sample = samples[job.sample];
    rec.prompt_len = job.turn > 1 ? job.prompt_len : sample.prompt_len;
    rec.max_tokens = job.turn > 1 ? job.max_tokens : sample.output_len;
    if (job.turn <= 1 && sample.prompt_len_exact &&
        (!opt.request.chat || sample.prompt_len_templated)) {
      // The workload counted it as the server does: completions with the special tokens, chat
      // as the rendered chat template.
      rec.input_tokens_local = sample.prompt_len;
    }
    http::Request req;
    req.target = target();
    req.body = job.body.empty() ? bodies[job.sample] : std::move(job.body);
    req.accept = opt.request.stream ? "text/event-stream" : "application/json";
    req.headers.emplace_back("X-Request-Id", fmt::format("llmbench-{}", job.id));
    req.send_at_ns = job.send_at_ns;
    // A decoder per request: one may keep state of its response (SGLang's whole-text events),
    // and a worker runs many requests at once.
    const std::unique_ptr<protocol::StreamDecoder> decoder = w.dialect.make_decoder();
    RecordingHandler handler(rec, *decoder, opt.request.stream, clock.start_ns());
    handler.redact_with(redactor);
    if (opt.tokenizer != nullptr) {
      handler.count_output_with(*opt.tokenizer, w.scratch);
    }
    if (job.conversation >= 0) {
      handler.keep_answer();
    }
    if (progress != nullptr && !job.warmup) {
      progress->sent.fetch_add(1, std::memory_order_relaxed);
    }
    http::Outcome outcome;
    try {
      outcome = co_await w.pool.execute(req, handler);
    } catch (const std::exception& e) {
      outcome.failure = http::Failure::Io;
      outcome.message = e.what();
    }
    handler.finish(outcome, steady_now_ns());
    if (rec.sent_ns < 0) {
      rec.sent_ns = rec.done_ns;  // never reached the wire (connect failure)
    }
    TurnEnd end{.conversation = job.conversation,
                .turn = job.turn,
                .kind = rec.error_kind,
                .done_ns = rec.done_ns,
                .answer = job.conversation >= 0 ? handler.take_answer() : std::string()};
    deliver(w, std::move(rec));
    net::post(dispatcher, [this, wi = job.worker, end = std::move(end)]() mutable {
      release_slot(wi);
      if (end.conversation >= 0) {
        on_turn_end(std::move(end));
      }
    });
  }

  /// How a turn of a conversation ended, handed from its worker to the dispatcher.
  struct TurnEnd {
    std::int64_t conversation = -1;
    std::int64_t turn = -1;
    metrics::ErrorKind kind = metrics::ErrorKind::None;
    TimeNs done_ns = 0;
    std::string answer{};  // the answer text streamed back
  };

  /// (D) The think time after `turn` of `conversation`, ns: fixed, or exponential drawn from a
  /// stream of its own per (conversation, turn), so the value does not depend on the order in
  /// which turns finish.
  [[nodiscard]] TimeNs think_ns(std::int64_t conversation, std::int64_t turn) const {
    const double mean_ns = opt.think_time_ms * 1e6;
    if (opt.think_time == ThinkTime::Fixed || mean_ns <= 0) {
      return static_cast<TimeNs>(std::llround(mean_ns));
    }
    const auto key =
        (static_cast<std::uint64_t>(conversation) << 20U) ^ static_cast<std::uint64_t>(turn);
    Rng rng(splitmix64(derive_seed(opt.seed, "think-time") ^ key));
    return static_cast<TimeNs>(std::llround(rng.exponential(1.0 / mean_ns)));
  }

  /// (D) Turn `end.turn` of a conversation finished: on success the answer joins the history and
  /// the next turn is scheduled its think time after `done`; a failed turn ends the conversation.
  void on_turn_end(TurnEnd end) {
    auto& c = conversations[static_cast<std::size_t>(end.conversation)];
    const auto& turns = samples[c.sample].turns;
    if (end.kind == metrics::ErrorKind::Cancelled) {
      ++conversation_counts.cut;
      return;
    }
    if (end.kind != metrics::ErrorKind::None) {
      ++conversation_counts.ended_by_failure;
      return;
    }
    if (end.turn >= static_cast<std::int64_t>(turns.size())) {
      ++conversation_counts.completed;
      return;
    }
    if (stop_requested() || cancelled) {
      ++conversation_counts.cut;
      return;
    }
    c.history.push_back({.role = "assistant", .content = std::move(end.answer)});
    ++pending_turns;
    net::co_spawn(dispatcher,
                  next_turn(end.conversation, end.turn + 1, end.done_ns + think_ns(c.id, end.turn)),
                  [](const std::exception_ptr& e) {
                    if (e) {
                      try {
                        std::rethrow_exception(e);
                      } catch (const std::exception& ex) {
                        log::error("conversation coroutine failed: {}", ex.what());
                      }
                    }
                  });
  }

  /// (D) Sends `turn` (1-based, >= 2) of `conversation` at run-relative `due_ns` (the previous
  /// turn's done + think time) once a slot is free; the conversation is cut when the run stops,
  /// is cancelled or its --duration ends first.
  net::awaitable<void> next_turn(std::int64_t conversation, std::int64_t turn, TimeNs due_ns) {
    const bool go =
        co_await sleep_until(due_ns) && co_await acquire_slot(end_ns) && clock.now() < end_ns;
    --pending_turns;
    if (!go) {
      ++conversation_counts.cut;
      slot_freed.cancel();  // a drain waiting on this turn looks again
      co_return;
    }
    auto& c = conversations[static_cast<std::size_t>(conversation)];
    const auto& next = samples[c.sample].turns[static_cast<std::size_t>(turn - 1)];
    c.history.push_back({.role = "user", .content = next.content});
    protocol::GenRequest g = opt.request;
    g.messages = c.history;
    g.max_tokens = next.output_len;
    TextTokenEstimate estimate;  // the history's text; the server's usage has the exact count
    for (const auto& m : c.history) {
      estimate.add(m.content);
    }
    dispatch(Job{.id = turn_id(),
                 .sample = c.sample,
                 .scheduled_ns = due_ns,
                 .slot_ns = clock.now(),
                 .warmup = false,
                 .conversation = conversation,
                 .conversation_id = c.id,
                 .turn = turn,
                 .body = protocol::build_request_body(opt.backend, g),
                 .prompt_len = estimate.value(),
                 .max_tokens = next.output_len});
  }

  /// (D) Registers a new conversation of `sample` whose turn 1 is `job`, plan index `index`.
  void start_conversation(Job& job, std::int64_t index) {
    job.conversation = static_cast<std::int64_t>(conversations.size());
    job.conversation_id = index;
    job.turn = 1;
    const auto& first = samples[job.sample].turns.front();
    conversations.push_back({.id = index,
                             .sample = job.sample,
                             .history = {{.role = "user", .content = first.content}}});
    ++conversation_counts.started;
  }

  /// On worker `w`'s thread: completes `rec` (chunk tokens; secrets were redacted by the
  /// handler), counts it, hands a copy to the writer thread and keeps it in the worker's
  /// records. No formatting or I/O here.
  void deliver(Worker& w, RequestRecord&& rec) {
    // Once, before the record is stored or written: the JSONL and the summary read
    // the same chunk tokens.
    metrics::assign_chunk_tokens(rec);
    if (progress != nullptr && !rec.warmup) {
      progress->done.fetch_add(1, std::memory_order_relaxed);
      if (!rec.ok()) {
        progress->failed.fetch_add(1, std::memory_order_relaxed);
      }
      progress->output_tokens.fetch_add(metrics::output_token_count(rec),
                                        std::memory_order_relaxed);
    }
    writer.push(rec);
    w.records.push_back(std::move(rec));
  }

  void release_slot(std::size_t worker) {  // (D)
    --in_flight;
    --worker_load[worker];
    slot_freed.cancel();
  }

  /// (D) Waits until fewer than `cap` requests are in flight; false when the run is stopped or
  /// run-relative `deadline_ns` (the end of a `--duration`) passes first.
  net::awaitable<bool> acquire_slot(TimeNs deadline_ns = std::numeric_limits<TimeNs>::max()) {
    while (in_flight >= cap) {
      if (stop_requested() || cancelled || clock.now() >= deadline_ns) {
        co_return false;
      }
      co_await slot_freed.async_wait(kAsTuple);
    }
    co_return !(stop_requested() || cancelled);
  }

  /// (D) Wakes every waiter on `slot_freed` every 50 ms until the plan has ended.
  net::awaitable<void> tick() {
    net::steady_timer timer(dispatcher);
    while (ticking) {
      timer.expires_after(std::chrono::milliseconds(50));
      co_await timer.async_wait(kAsTuple);
      slot_freed.cancel();
    }
  }

  /// (D) Waits until run-relative time `t_ns`, waking every 50 ms to honour `stop` (and the
  /// drain's cancel); false when either comes first.
  net::awaitable<bool> sleep_until(TimeNs t_ns) {
    net::steady_timer timer(dispatcher);
    for (;;) {
      if (stop_requested() || cancelled) {
        co_return false;
      }
      const TimeNs left = t_ns - clock.now();
      if (left <= 0) {
        co_return true;
      }
      const auto step = std::min<TimeNs>(left, 50'000'000);
      timer.expires_at(steady_time_point(steady_now_ns() + step));
      co_await timer.async_wait(kAsTuple);
    }
  }

  /// (D) The id of a later turn of a conversation: the next in dispatch order, or in a share
  /// of a spread load one above every plan index that no other rank uses.
  std::int64_t turn_id() {
    if (!opt.share.spread())
      return next_id++;
    return RankShare::kTurnIdBase + (later_turns++) * opt.share.ranks + opt.share.rank;
  }

  void dispatch(Job job) {  // (D)
    ++in_flight;
    last_dispatch_ns = clock.now();
    // The least-loaded worker: keeps each thread's connection count near cap / threads, so the
    // connections opened ahead of the run are the ones used.
    job.worker = static_cast<std::size_t>(std::min_element(worker_load.begin(), worker_load.end()) -
                                          worker_load.begin());
    ++worker_load[job.worker];
    Worker& w = *workers[job.worker];
    net::co_spawn(w.ioc, execute(w, std::move(job)), [](const std::exception_ptr& e) {
      if (e) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          log::error("request coroutine failed: {}", ex.what());
        }
      }
    });
  }

  /// (D) Waits for every in-flight request (and every turn still to come of a conversation),
  /// cancelling them after `timeout_ns` or on stop. With `per_send`, the timeout counts from the
  /// latest send instead (multi-turn runs without --duration: later turns are sent during the
  /// drain, each bounded by its own request timeout).
  net::awaitable<void> drain(TimeNs timeout_ns, bool per_send = false) {
    const TimeNs start = clock.now();
    net::steady_timer timer(dispatcher);
    while (in_flight > 0 || pending_turns > 0) {
      const TimeNs deadline = (per_send ? std::max(start, last_dispatch_ns) : start) + timeout_ns;
      if ((stop_requested() || clock.now() >= deadline) && !cancelled) {
        cancelled = true;
        for (auto& w : workers) {
          net::post(w->ioc, [wp = w.get()] { wp->pool.cancel_all(); });
        }
      }
      co_await slot_freed.async_wait(kAsTuple);
    }
  }

  net::awaitable<void> plan(LoadResult& result) {
    const bool timed = opt.duration_s > 0;
    if (opt.max_concurrency > 0) {
      cap = opt.max_concurrency;
    }
    // ---- warm-up: sent together (within the cap), not timed ----
    for (std::int64_t i = 0; i < opt.num_warmups; ++i) {
      if (!opt.share.mine(i))
        continue;
      if (!co_await acquire_slot())
        break;
      const TimeNs now = clock.now();
      next_id = i + 1;
      dispatch(Job{.id = i,
                   .sample = static_cast<std::size_t>(i) % samples.size(),
                   .scheduled_ns = now,
                   .slot_ns = now,
                   .warmup = true});
    }
    co_await drain(static_cast<TimeNs>(opt.drain_timeout_s * 1e9));
    TimeNs t0 = clock.now();
    if (opt.share.agree_start) {
      // Every rank starts its share of the schedule at the one agreed instant (t0 is that
      // instant even when this rank wakes a little after it: its sends are then late). Called
      // on a stopped rank too, since the others wait in it.
      t0 = opt.share.agree_start(clock.start_ns() + t0) - clock.start_ns();
      co_await sleep_until(t0);
    }
    if (stop_requested()) {
      result.interrupted = true;
      co_return;
    }
    // ---- measured phase ----
    result.measure_start_ns = t0;
    end_ns =
        timed ? t0 + static_cast<TimeNs>(opt.duration_s * 1e9) : std::numeric_limits<TimeNs>::max();
    std::vector<TimeNs> arrivals;
    const workload::ArrivalOptions ao{.request_rate = opt.request_rate,
                                      .burstiness = opt.burstiness,
                                      .seed = opt.seed,
                                      .ramp_up = opt.ramp_up,
                                      .ramp_up_start_rps = opt.ramp_up_start_rps,
                                      .ramp_up_end_rps = opt.ramp_up_end_rps};
    constexpr std::int64_t kMaxTimedRequests = 10'000'000;
    if (open_loop) {
      if (!own_schedule.empty()) {
        arrivals = own_schedule;
      } else {
        arrivals = timed ? workload::arrival_times_until(end_ns - t0, kMaxTimedRequests, ao)
                         : workload::arrival_times(opt.num_prompts, ao);
      }
      result.planned = static_cast<std::int64_t>(arrivals.size());
      if (!arrivals.empty())
        result.schedule_span_ns = arrivals.back();
    } else {
      result.planned = timed ? 0 : opt.num_prompts;
    }
    if (progress != nullptr) {
      progress->total.store(timed && !open_loop ? 0 : planned_requests(result.planned));
    }
    const std::int64_t count = timed && !open_loop ? kMaxTimedRequests : result.planned;
    for (std::int64_t i = 0; i < count; ++i) {
      if (!opt.share.mine(i))
        continue;
      TimeNs scheduled = 0;
      if (open_loop) {
        scheduled = t0 + arrivals[static_cast<std::size_t>(i)];
        if (!co_await sleep_until(scheduled - kSendLeadNs))
          break;
        if (!co_await acquire_slot(end_ns))
          break;
      } else {
        if (!co_await acquire_slot(end_ns))
          break;
        scheduled = clock.now();  // closed loop: the moment a slot freed
      }
      // Open loop: the slot counts from the arrival (taken up to kSendLeadNs ahead, while the
      // request goes to its worker) or later; closed loop: the slot is the plan.
      const TimeNs slot = std::max(clock.now(), scheduled);
      if (slot >= end_ns)
        break;
      Job job{.id = opt.share.spread() ? opt.num_warmups + i : next_id++,
              .sample = static_cast<std::size_t>(i + opt.num_warmups) % samples.size(),
              .scheduled_ns = scheduled,
              .slot_ns = slot,
              .send_at_ns = open_loop ? clock.start_ns() + scheduled : 0,
              .warmup = false};
      if (opt.multi_turn && !samples[job.sample].turns.empty()) {
        start_conversation(job, i);
      }
      dispatch(std::move(job));
    }
    result.interrupted = stop_requested();
    if (timed && progress != nullptr) {
      progress->total.store(next_id - opt.num_warmups);
    }
    co_await drain(drain_timeout(timed), opt.multi_turn && !timed);
    if (timed && opt.multi_turn && progress != nullptr) {
      progress->total.store(next_id - opt.num_warmups);  // with the turns sent while draining
    }
    result.interrupted = result.interrupted || stop_requested();
    result.conversations = conversation_counts;
  }

  /// (D) Requests of `conversations` planned conversations (or single requests): with
  /// --multi-turn every turn of each, an upper bound since a failed turn ends its conversation.
  [[nodiscard]] std::int64_t planned_requests(std::int64_t planned) const {
    if (!opt.multi_turn) {
      return planned;
    }
    std::int64_t total = 0;
    for (std::int64_t i = 0; i < planned; ++i) {
      const auto& s = samples[static_cast<std::size_t>(i + opt.num_warmups) % samples.size()];
      total += std::max<std::int64_t>(1, static_cast<std::int64_t>(s.turns.size()));
    }
    return total;
  }

  /// (D) How long the final drain may take: `drain_timeout_s` after the last send, or with
  /// `--duration` what is left of the duration plus `duration_grace_s`, so the duration bounds
  /// the whole run and not only the sending.
  TimeNs drain_timeout(bool timed) const {
    const auto drain_ns = static_cast<TimeNs>(opt.drain_timeout_s * 1e9);
    if (!timed) {
      return drain_ns;
    }
    const auto grace_ns =
        std::min(drain_ns, static_cast<TimeNs>(std::max(0.0, opt.duration_grace_s) * 1e9));
    return std::max<TimeNs>(0, end_ns + grace_ns - clock.now());
  }
};

}  // namespace

ThinkTime parse_think_time(std::string_view name) {
  if (const auto kind = kThinkTimes.find(name))
    return *kind;
  throw Exception(Error{
      fmt::format("unknown think-time distribution \"{}\"; valid: {}", name, kThinkTimes.names()),
      "--think-time-dist", -1});
}

std::string_view to_string(ThinkTime kind) noexcept {
  return kThinkTimes.name(kind, "fixed");
}

namespace {

/// Every worker's records, by completion time (ties by id).
std::vector<RequestRecord> merge_records(std::vector<std::unique_ptr<Worker>>& workers) {
  std::size_t total = 0;
  for (const auto& w : workers) total += w->records.size();
  std::vector<RequestRecord> out;
  out.reserve(total);
  for (auto& w : workers) {
    std::move(w->records.begin(), w->records.end(), std::back_inserter(out));
    w->records.clear();
  }
  std::sort(out.begin(), out.end(), [](const RequestRecord& a, const RequestRecord& b) {
    return a.done_ns != b.done_ns ? a.done_ns < b.done_ns : a.id < b.id;
  });
  return out;
}

}  // namespace

LoadResult run_load(const LoadOptions& options, const std::vector<workload::Sample>& samples,
                    const RecordSink& sink, Progress* progress, const std::atomic<bool>* stop) {
  if (samples.empty()) {
    throw Exception("no samples to send (the dataset produced no prompts)");
  }
  if (options.duration_s <= 0 && options.num_prompts <= 0) {
    throw Exception("--num-prompts must be positive (or give --duration)");
  }
  RecordWriterThread writer(sink);
  Run run(options, samples, writer, progress, stop);
  run.build_bodies();
  int threads = options.client_threads;
  if (threads <= 0) {
    threads = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  }
  for (int i = 0; i < threads; ++i) {
    run.workers.push_back(std::make_unique<Worker>(options.url, options.client,
                                                   protocol::dialect(options.backend), run.tally));
  }
  run.worker_load.assign(run.workers.size(), 0);
  for (std::size_t i = 0; i < run.workers.size(); ++i) {
    Worker* wp = run.workers[i].get();
    wp->lag.start();
    wp->thread = std::thread([wp, i] {
      set_thread_name("llmb-load-" + std::to_string(i));
      set_thread_timer_slack_ns(1);  // its timers send the open loop's requests (kSendLeadNs)
      wp->ioc.run();
    });
  }
  // Open the cap's keep-alive connections before the clock matters (detail/prewarm.hpp), only
  // for a closed loop, where the number needed is known. An open loop's cap (--max-concurrency,
  // or the open-file limit's) bounds what is in flight, not what is needed: 2,000 req/s of
  // short requests needs about 100 connections, and opening the open-file cap of 19,872 took
  // the first 8 s of such a run.
  if (options.prewarm_connections && options.max_concurrency > 0 && !run.open_loop) {
    const std::int64_t want =
        options.duration_s > 0
            ? options.max_concurrency
            : std::min(options.max_concurrency, std::max<std::int64_t>(options.num_prompts, 1));
    std::vector<detail::PrewarmTarget> targets;
    for (auto& w : run.workers) targets.push_back({.ioc = w->ioc, .pool = w->pool});
    if (const std::string why = detail::prewarm(targets, want); !why.empty())
      log::warn("could not open connections ahead of the run: {}", why);
  }
  LoadResult result;
  result.run_start_steady_ns = run.clock.start_ns();
  std::exception_ptr failure;
  net::co_spawn(run.dispatcher, run.tick(), net::detached);
  net::co_spawn(run.dispatcher, run.plan(result), [&failure, &run](const std::exception_ptr& e) {
    failure = e;
    run.ticking = false;
  });
  run.dispatcher.run();
  for (auto& w : run.workers) {
    net::post(w->ioc, [wp = w.get()] {
      wp->pool.cancel_all();
      wp->lag.cancel();
      wp->guard.reset();
    });
  }
  for (auto& w : run.workers) {
    w->thread.join();
    result.connections_opened += w->pool.connections_opened();
    const auto& lags = w->lag.lags_ms();
    result.loop_lag_ms.insert(result.loop_lag_ms.end(), lags.begin(), lags.end());
  }
  result.ports_in_use_peak = run.tally.peak();
  result.connect_errors = run.tally.connect_errors();
  writer.finish();  // every worker has joined: all records are pushed
  if (failure) {
    std::rethrow_exception(failure);
  }
  result.records = merge_records(run.workers);
  const auto cancelled =
      std::count_if(result.records.begin(), result.records.end(), [](const RequestRecord& r) {
        return !r.warmup && r.error_kind == metrics::ErrorKind::Cancelled;
      });
  if (options.duration_s > 0 && !result.interrupted && cancelled > 0) {
    log::warn(
        "--duration {}s: {} requests still in flight {:g} s after it ended were cancelled "
        "(counted as failed, kind cancelled)",
        options.duration_s, cancelled, std::min(options.duration_grace_s, options.drain_timeout_s));
  }
  return result;
}

}  // namespace llmbench::loadgen
