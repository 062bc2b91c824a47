#include "llmbench/sim/engine.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/sim/step_pricing.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <queue>
#include <tuple>

namespace llmbench::sim {

bool EventOrder::before(const Event& a, const Event& b) noexcept {
  return std::make_tuple(a.time_ns, static_cast<int>(a.kind), a.seq) <
         std::make_tuple(b.time_ns, static_cast<int>(b.kind), b.seq);
}

std::vector<Event> Event::handle(Simulation& sim) const {
  switch (kind) {
    case EventKind::Arrival:
      return sim.on_arrival(*this);
    case EventKind::StepStart:
      return sim.on_step_start(*this);
    case EventKind::StepEnd:
      return sim.on_step_end(*this);
  }
  return {};
}

std::vector<std::uint32_t> pseudo_tokens(std::string_view text, std::int64_t count,
                                         std::uint64_t salt) {
  std::vector<std::uint32_t> out;
  out.reserve(static_cast<std::size_t>(std::max<std::int64_t>(count, 0)));
  for (std::int64_t i = 0; i < count; ++i) {
    const auto start = static_cast<std::size_t>(i) * 4;
    std::uint64_t h = 0;
    if (start < text.size()) {
      for (std::size_t k = start; k < std::min(start + 4, text.size()); ++k)
        h = (h << 8) | static_cast<unsigned char>(text[k]);
      h = splitmix64(h);
    } else {
      h = splitmix64(salt ^ splitmix64(static_cast<std::uint64_t>(i)));
    }
    out.push_back(static_cast<std::uint32_t>(h));
  }
  return out;
}

EngineCore::EngineCore(const EngineConfig& config, std::unique_ptr<ExecTimeModel> exec_model)
    : config_(config), exec_model_(std::move(exec_model)) {
  LLMBENCH_ASSERT(config.num_gpu_blocks >= 1, "the KV cache needs at least one block");
  LLMBENCH_ASSERT(config.block_size >= 1, "block_size must be >= 1");
  LLMBENCH_ASSERT(exec_model_ != nullptr, "no execution-time model");
  scheduler_ = make_scheduler(config.scheduler_kind, config.scheduler, config.num_gpu_blocks,
                              config.block_size);
}

bool EngineCore::fits(std::int64_t prompt_len, std::int64_t output_len) const noexcept {
  const std::int64_t need = (prompt_len + output_len + config_.block_size - 1) / config_.block_size;
  return need <= config_.num_gpu_blocks;
}

void EngineCore::add_request(TimeNs now_ns, std::int64_t id, std::int64_t prompt_len,
                             std::int64_t output_len,
                             const std::vector<std::uint32_t>& prompt_tokens) {
  LLMBENCH_ASSERT(prompt_len >= 1 && output_len >= 1, "lengths must be >= 1");
  auto state = std::make_unique<RequestState>();
  state->id = id;
  state->prompt_len = prompt_len;
  state->output_len = output_len;
  if (config_.scheduler.enable_prefix_caching && !prompt_tokens.empty())
    state->block_hashes = block_hashes(prompt_tokens, config_.block_size);
  RequestState* raw = state.get();
  const bool inserted = live_.emplace(id, std::move(state)).second;
  LLMBENCH_ASSERT(inserted, "request id already live in the engine");
  scheduler_->set_now(now_ns);
  scheduler_->add_request(raw);
}

std::optional<TimeNs> EngineCore::begin_step(TimeNs now_ns) {
  LLMBENCH_ASSERT(!in_step_, "begin_step while a step is in flight");
  const SchedulerStats before = scheduler_->stats();
  scheduler_->set_now(now_ns);
  scheduler_->schedule_into(current_);
  if (current_.empty())
    return std::nullopt;
  const TimeNs dt = price_step(*exec_model_, current_, config_.block_size, work_);
  const SchedulerStats& after = scheduler_->stats();
  StepTrace tr;
  tr.start_ns = now_ns;
  tr.end_ns = now_ns + dt;
  tr.num_seqs = static_cast<std::int64_t>(current_.seqs.size());
  tr.num_tokens = current_.num_tokens;
  for (const auto& w : work_)
    tr.num_decode_seqs += (w.num_new_tokens == 1 && w.num_context_tokens > 0) ? 1 : 0;
  tr.num_waiting = static_cast<std::int64_t>(scheduler_->num_waiting());
  tr.num_preempted = static_cast<std::int64_t>(current_.preempted.size());
  tr.kv_usage = scheduler_->blocks().usage();
  tr.num_running = static_cast<std::int64_t>(scheduler_->num_running());
  tr.prefix_queries = after.prefix_queries - before.prefix_queries;
  tr.prefix_hits = after.prefix_hits - before.prefix_hits;
  last_ = tr;
  ++steps_;
  busy_s_ += ns_to_s(dt);
  step_tokens_sum_ += static_cast<double>(current_.num_tokens);
  in_step_ = true;
  return dt;
}

StepOutcome EngineCore::end_step() {
  LLMBENCH_ASSERT(in_step_, "end_step without a step in flight");
  in_step_ = false;
  scheduler_->update_into(current_, result_);
  const StepResult& result = result_;
  if (config_.check_invariants)
    scheduler_->blocks().check_invariants();
  StepOutcome out;
  out.emitted.reserve(result.emitted.size());
  for (const RequestState* r : result.emitted) out.emitted.push_back(r->id);
  out.finished.reserve(result.finished.size());
  for (const RequestState* r : result.finished) {
    out.finished.push_back(
        FinishedRequest{r->id, r->num_output_tokens, r->cached_tokens, r->num_preemptions});
  }
  for (const auto& f : out.finished) live_.erase(f.id);
  return out;
}

namespace {

EngineConfig engine_config(const SimOptions& o) {
  EngineConfig c;
  c.scheduler = o.scheduler;
  c.scheduler_kind = o.scheduler_kind;
  c.num_gpu_blocks = o.num_gpu_blocks;
  c.block_size = o.block_size;
  c.check_invariants = o.check_invariants;
  return c;
}

}  // namespace

Simulation::Simulation(const SimOptions& options, std::unique_ptr<ExecTimeModel> exec_model)
    : options_(options), core_(engine_config(options), std::move(exec_model)) {}

void Simulation::admit(std::size_t index, TimeNs now) {
  ++in_flight_;
  auto& rec = records_[index];
  rec.scheduled_ns = now;
  rec.sent_ns = now;
  rec.headers_ns = now;
  const SimRequest& q = requests_[index];
  core_.add_request(now, static_cast<std::int64_t>(index), q.prompt_len, q.output_len,
                    q.prompt_tokens);
}

std::vector<Event> Simulation::maybe_start(TimeNs now) {
  if (busy_)
    return {};
  busy_ = true;
  return {Event{now, EventKind::StepStart, 0, -1}};
}

std::vector<Event> Simulation::on_arrival(const Event& event) {
  const auto index = static_cast<std::size_t>(event.request);
  const SimRequest& q = requests_[index];
  if (!core_.fits(q.prompt_len, q.output_len)) {
    auto& rec = records_[index];
    rec.scheduled_ns = rec.sent_ns = rec.headers_ns = rec.done_ns = event.time_ns;
    rec.http_status = 400;
    rec.error_kind = metrics::ErrorKind::Http4xx;
    rec.error_message = "prompt + output exceed the KV cache of the simulated replica";
    ++stats_.rejected;
    return {};
  }
  if (options_.max_concurrency > 0 && in_flight_ >= options_.max_concurrency) {
    blocked_.push_back(index);
    return {};
  }
  admit(index, event.time_ns);
  return maybe_start(event.time_ns);
}

std::vector<Event> Simulation::on_step_start(const Event& event) {
  const auto dt = core_.begin_step(event.time_ns);
  if (!dt) {
    // Nothing runnable: every waiting request must be blocked by a running one.
    LLMBENCH_ASSERT(core_.num_running() > 0 || core_.num_waiting() == 0,
                    "waiting requests but an empty, idle engine");
    busy_ = false;
    return {};
  }
  if (options_.record_steps)
    steps_.push_back(core_.last_step());
  return {Event{event.time_ns + *dt, EventKind::StepEnd, 0, -1}};
}

std::vector<Event> Simulation::on_step_end(const Event& event) {
  const TimeNs now = event.time_ns;
  const StepOutcome result = core_.end_step();
  for (const std::int64_t id : result.emitted) {
    auto& rec = records_[static_cast<std::size_t>(id)];
    rec.chunks.push_back(metrics::Chunk{now, 1, 0, metrics::Channel::Answer});
  }
  for (const FinishedRequest& r : result.finished) {
    auto& rec = records_[static_cast<std::size_t>(r.id)];
    rec.done_ns = now;
    rec.http_status = 200;
    rec.output_tokens = r.output_tokens;
    rec.output_tokens_local = r.output_tokens;
    rec.cached_tokens = r.cached_tokens;
    rec.finish_reason = "length";
    --in_flight_;
  }
  // Closed loop: each freed slot releases the next blocked request now.
  while (!blocked_.empty() &&
         (options_.max_concurrency <= 0 || in_flight_ < options_.max_concurrency)) {
    admit(blocked_.front(), now);
    blocked_.pop_front();
  }
  busy_ = false;
  return maybe_start(now);
}

SimResult Simulation::run(std::vector<SimRequest> requests) {
  requests_ = std::move(requests);
  const std::size_t n = requests_.size();
  records_.assign(n, metrics::RequestRecord{});
  std::priority_queue<Event, std::vector<Event>, EventOrder> queue;
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const SimRequest& q = requests_[i];
    LLMBENCH_ASSERT(q.prompt_len >= 1 && q.output_len >= 1, "lengths must be >= 1");
    auto& rec = records_[i];
    rec.id = static_cast<std::int64_t>(i);
    rec.warmup = q.warmup;
    rec.input_tokens = q.prompt_len;
    rec.prompt_len = q.prompt_len;
    rec.max_tokens = q.output_len;
    queue.push(Event{q.arrival_ns, EventKind::Arrival, seq++, static_cast<std::int64_t>(i)});
  }
  TimeNs now = 0;
  while (!queue.empty()) {
    const Event ev = queue.top();
    queue.pop();
    LLMBENCH_ASSERT(ev.time_ns >= now, "virtual time went backwards");
    now = ev.time_ns;
    for (Event next : ev.handle(*this)) {
      next.seq = seq++;
      queue.push(next);
    }
  }
  LLMBENCH_ASSERT(core_.num_running() == 0 && core_.num_waiting() == 0 && blocked_.empty(),
                  "simulation ended with unfinished requests");
  const auto& s = core_.scheduler_stats();
  stats_.steps = core_.steps();
  stats_.busy_s = core_.busy_s();
  stats_.preemptions = s.preemptions;
  stats_.prefix_queries = s.prefix_queries;
  stats_.prefix_hits = s.prefix_hits;
  stats_.max_running = s.max_running;
  stats_.end_ns = now;
  stats_.mean_step_tokens =
      stats_.steps > 0 ? core_.step_tokens_sum() / static_cast<double>(stats_.steps) : 0;
  return SimResult{std::move(records_), stats_, std::move(steps_)};
}

std::vector<TimelineBucket> summarize_timeline(const std::vector<StepTrace>& steps,
                                               TimeNs bucket_ns) {
  LLMBENCH_ASSERT(bucket_ns > 0, "timeline bucket must be > 0 ns");
  std::vector<TimelineBucket> out;
  if (steps.empty())
    return out;
  TimeNs last_end = 0;
  for (const auto& s : steps) last_end = std::max(last_end, s.end_ns);
  const auto count = static_cast<std::size_t>((last_end + bucket_ns - 1) / bucket_ns);
  out.resize(std::max<std::size_t>(count, 1));
  std::vector<double> weight(out.size(), 0.0);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].start_ns = static_cast<TimeNs>(i) * bucket_ns;
    out[i].end_ns = out[i].start_ns + bucket_ns;
  }
  for (const auto& s : steps) {
    const auto i = std::min(static_cast<std::size_t>(std::max<TimeNs>(s.start_ns, 0) / bucket_ns),
                            out.size() - 1);
    auto& b = out[i];
    const double w = static_cast<double>(s.end_ns - s.start_ns);
    ++b.steps;
    weight[i] += w;
    b.mean_kv_usage += w * s.kv_usage;
    b.mean_running += w * static_cast<double>(s.num_running);
    b.max_kv_usage = std::max(b.max_kv_usage, s.kv_usage);
    b.max_waiting = std::max(b.max_waiting, s.num_waiting);
    b.preemptions += s.num_preempted;
    b.prefix_queries += s.prefix_queries;
    b.prefix_hits += s.prefix_hits;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto& b = out[i];
    if (weight[i] > 0) {
      b.mean_kv_usage /= weight[i];
      b.mean_running /= weight[i];
    }
    b.busy_fraction = weight[i] / static_cast<double>(bucket_ns);
  }
  return out;
}

std::string steps_to_chrome_trace(const std::vector<StepTrace>& steps) {
  std::string out = "{\"traceEvents\":[";
  out += R"({"name":"process_name","ph":"M","pid":1,"args":{"name":"llmbench simulate"}})";
  for (const auto& s : steps) {
    const double ts = static_cast<double>(s.start_ns) / 1e3;
    out += fmt::format(
        R"(,{{"name":"step","cat":"engine","ph":"X","pid":1,"tid":1,"ts":{:.3f},"dur":{:.3f},)"
        R"("args":{{"seqs":{},"tokens":{},"decodes":{},"waiting":{},"preempted":{}}}}})",
        ts, static_cast<double>(s.end_ns - s.start_ns) / 1e3, s.num_seqs, s.num_tokens,
        s.num_decode_seqs, s.num_waiting, s.num_preempted);
    out += fmt::format(
        R"(,{{"name":"kv_usage","ph":"C","pid":1,"ts":{:.3f},"args":{{"usage":{:.4f}}}}})", ts,
        s.kv_usage);
    out += fmt::format(
        R"(,{{"name":"waiting","ph":"C","pid":1,"ts":{:.3f},"args":{{"requests":{}}}}})", ts,
        s.num_waiting);
  }
  out += "],\"displayTimeUnit\":\"ms\"}\n";
  return out;
}

}  // namespace llmbench::sim
