#include "llmbench/sim/engine.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"

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

Simulation::Simulation(const SimOptions& options, std::unique_ptr<ExecTimeModel> exec_model)
    : options_(options), exec_model_(std::move(exec_model)) {
  LLMBENCH_ASSERT(options.num_gpu_blocks >= 1, "the KV cache needs at least one block");
  LLMBENCH_ASSERT(exec_model_ != nullptr, "no execution-time model");
  scheduler_ = make_scheduler(options.scheduler_kind, options.scheduler, options.num_gpu_blocks,
                              options.block_size);
}

void Simulation::admit(std::size_t index, TimeNs now) {
  ++in_flight_;
  auto& rec = records_[index];
  rec.scheduled_ns = now;
  rec.sent_ns = now;
  rec.headers_ns = now;
  scheduler_->add_request(&states_[index]);
}

std::vector<Event> Simulation::maybe_start(TimeNs now) {
  if (busy_)
    return {};
  busy_ = true;
  return {Event{now, EventKind::StepStart, 0, -1}};
}

std::vector<Event> Simulation::on_arrival(const Event& event) {
  const auto index = static_cast<std::size_t>(event.request);
  const RequestState& st = states_[index];
  const std::int64_t need =
      (st.prompt_len + st.output_len + options_.block_size - 1) / options_.block_size;
  if (need > options_.num_gpu_blocks) {
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
  current_ = scheduler_->schedule();
  if (current_.empty()) {
    // Nothing runnable: every waiting request must be blocked by a running one.
    LLMBENCH_ASSERT(scheduler_->num_running() > 0 || scheduler_->num_waiting() == 0,
                    "waiting requests but an empty, idle engine");
    busy_ = false;
    return {};
  }
  std::vector<SeqWork> work;
  work.reserve(current_.seqs.size());
  for (const auto& s : current_.seqs)
    work.push_back(SeqWork{s.num_new_tokens, s.num_computed_before, s.samples()});
  const TimeNs dt = exec_model_->step_time_ns(work);
  if (options_.record_steps) {
    StepTrace tr;
    tr.start_ns = event.time_ns;
    tr.end_ns = event.time_ns + dt;
    tr.num_seqs = static_cast<std::int64_t>(current_.seqs.size());
    tr.num_tokens = current_.num_tokens;
    for (const auto& w : work)
      tr.num_decode_seqs += (w.num_new_tokens == 1 && w.num_context_tokens > 0) ? 1 : 0;
    tr.num_waiting = static_cast<std::int64_t>(scheduler_->num_waiting());
    tr.num_preempted = static_cast<std::int64_t>(current_.preempted.size());
    tr.kv_usage = scheduler_->blocks().usage();
    steps_.push_back(tr);
  }
  ++stats_.steps;
  stats_.busy_s += ns_to_s(dt);
  step_tokens_sum_ += static_cast<double>(current_.num_tokens);
  return {Event{event.time_ns + dt, EventKind::StepEnd, 0, -1}};
}

std::vector<Event> Simulation::on_step_end(const Event& event) {
  const TimeNs now = event.time_ns;
  const StepResult result = scheduler_->update(current_);
  if (options_.check_invariants)
    scheduler_->blocks().check_invariants();
  for (const RequestState* r : result.emitted) {
    auto& rec = records_[static_cast<std::size_t>(r->id)];
    rec.chunks.push_back(metrics::Chunk{now, 1, 0, metrics::Channel::Answer});
  }
  for (const RequestState* r : result.finished) {
    auto& rec = records_[static_cast<std::size_t>(r->id)];
    rec.done_ns = now;
    rec.http_status = 200;
    rec.output_tokens = r->num_output_tokens;
    rec.output_tokens_local = r->num_output_tokens;
    rec.cached_tokens = r->cached_tokens;
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
  states_.assign(n, RequestState{});
  records_.assign(n, metrics::RequestRecord{});
  std::priority_queue<Event, std::vector<Event>, EventOrder> queue;
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const SimRequest& q = requests_[i];
    LLMBENCH_ASSERT(q.prompt_len >= 1 && q.output_len >= 1, "lengths must be >= 1");
    RequestState& st = states_[i];
    st.id = static_cast<std::int64_t>(i);
    st.prompt_len = q.prompt_len;
    st.output_len = q.output_len;
    if (options_.scheduler.enable_prefix_caching && !q.prompt_tokens.empty())
      st.block_hashes = block_hashes(q.prompt_tokens, options_.block_size);
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
  LLMBENCH_ASSERT(
      scheduler_->num_running() == 0 && scheduler_->num_waiting() == 0 && blocked_.empty(),
      "simulation ended with unfinished requests");
  const auto& s = scheduler_->stats();
  stats_.preemptions = s.preemptions;
  stats_.prefix_queries = s.prefix_queries;
  stats_.prefix_hits = s.prefix_hits;
  stats_.max_running = s.max_running;
  stats_.end_ns = now;
  stats_.mean_step_tokens =
      stats_.steps > 0 ? step_tokens_sum_ / static_cast<double>(stats_.steps) : 0;
  return SimResult{std::move(records_), stats_, std::move(steps_)};
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
