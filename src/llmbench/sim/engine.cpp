#include "llmbench/sim/engine.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/sim/step_pricing.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <tuple>
#include <utility>

namespace llmbench::sim {

bool EventOrder::before(const Event& a, const Event& b) noexcept {
  return std::make_tuple(a.time_ns, static_cast<int>(a.kind), a.seq) <
         std::make_tuple(b.time_ns, static_cast<int>(b.kind), b.seq);
}

void Event::handle(Simulation& sim, std::vector<Event>& out) const {
  switch (kind) {
    case EventKind::Arrival:
      sim.on_arrival(*this, out);
      return;
    case EventKind::Enqueue:
      sim.on_enqueue(*this, out);
      return;
    case EventKind::StepStart:
      sim.on_step_start(*this, out);
      return;
    case EventKind::StepEnd:
      sim.on_step_end(*this, out);
      return;
  }
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

std::vector<std::uint32_t> prompt_cache_ids(std::span<const std::uint32_t> token_ids,
                                            std::string_view text, std::int64_t prompt_len,
                                            std::uint64_t salt) {
  std::vector<std::uint32_t> ids(token_ids.begin(), token_ids.end());
  const std::int64_t rest = prompt_len - static_cast<std::int64_t>(ids.size());
  if (rest > 0) {
    const auto more = pseudo_tokens(text, rest, salt);
    ids.insert(ids.end(), more.begin(), more.end());
  }
  return ids;
}

std::vector<std::uint64_t> synthetic_block_hashes(std::int64_t prompt_len,
                                                  std::int64_t shared_prefix_len,
                                                  std::uint64_t content_key,
                                                  std::int64_t block_size) {
  LLMBENCH_ASSERT(block_size > 0, "block_size must be > 0");
  std::vector<std::uint64_t> out;
  const std::int64_t blocks = std::max<std::int64_t>(prompt_len, 0) / block_size;
  out.reserve(static_cast<std::size_t>(blocks));
  const std::uint64_t own = splitmix64(content_key ^ 0x6f776e2d74657874ULL);  // "own-text"
  std::uint64_t h = splitmix64(0x7072656669782d31ULL ^ static_cast<std::uint64_t>(block_size));
  for (std::int64_t j = 0; j < blocks; ++j) {
    const bool shared = (j + 1) * block_size <= shared_prefix_len;
    const auto index = static_cast<std::uint64_t>(j);
    h = splitmix64(h ^ (shared ? index : own + index));
    out.push_back(h);
  }
  return out;
}

EngineCore::EngineCore(const EngineConfig& config, std::shared_ptr<const ExecTimeModel> exec_model)
    : config_(config), exec_model_(std::move(exec_model)) {
  LLMBENCH_ASSERT(config.num_gpu_blocks >= 1, "the KV cache needs at least one block");
  LLMBENCH_ASSERT(config.block_size >= 1, "block_size must be >= 1");
  LLMBENCH_ASSERT(exec_model_ != nullptr, "no execution-time model");
  scheduler_ = make_scheduler(config.scheduler_kind, config.scheduler, config.num_gpu_blocks,
                              config.block_size);
  if (config.slot_cache)
    slots_.emplace(config.scheduler.max_num_seqs, config.initial_slot_cells);
}

std::vector<std::int64_t> EngineCore::slot_cells() const {
  return slots_ ? slots_->cells_by_age() : std::vector<std::int64_t>{};
}

bool EngineCore::enable_decode_lane() {
  LLMBENCH_ASSERT(live_.empty() && steps_ == 0, "decode lane enabled after the first request");
  if (!lane_ && exec_model_->prices_from_sums())
    lane_ = scheduler_->enable_decode_lane();
  return lane_;
}

bool EngineCore::fits(std::int64_t prompt_len, std::int64_t output_len) const noexcept {
  if (config_.max_request_tokens > 0 && prompt_len + output_len > config_.max_request_tokens)
    return false;
  const std::int64_t need = (prompt_len + output_len + config_.block_size - 1) / config_.block_size;
  if (!config_.scheduler.enable_chunked_prefill &&
      prompt_len + output_len > config_.scheduler.max_num_batched_tokens)
    return false;
  return need <= config_.num_gpu_blocks;
}

void EngineCore::add_request(TimeNs now_ns, std::int64_t id, std::int64_t prompt_len,
                             std::int64_t output_len,
                             const std::vector<std::uint32_t>& prompt_tokens) {
  add_request_hashed(now_ns, id, prompt_len, output_len,
                     config_.scheduler.enable_prefix_caching && !prompt_tokens.empty()
                         ? block_hashes(prompt_tokens, config_.block_size)
                         : std::vector<std::uint64_t>{});
}

void EngineCore::add_request_hashed(TimeNs now_ns, std::int64_t id, std::int64_t prompt_len,
                                    std::int64_t output_len, std::vector<std::uint64_t> hashes) {
  LLMBENCH_ASSERT(prompt_len >= 1 && output_len >= 1, "lengths must be >= 1");
  auto state = std::make_unique<RequestState>();
  state->id = id;
  state->prompt_len = prompt_len;
  state->output_len = output_len;
  if (config_.scheduler.enable_prefix_caching)
    state->block_hashes = std::move(hashes);
  RequestState* raw = state.get();
  const bool inserted = live_.emplace(id, std::move(state)).second;
  LLMBENCH_ASSERT(inserted, "request id already live in the engine");
  scheduler_->set_now(now_ns);
  scheduler_->add_request(raw);
}

void EngineCore::add_request_prefilled(TimeNs now_ns, std::int64_t id, std::int64_t prompt_len,
                                       std::int64_t output_len, std::vector<std::uint64_t> hashes) {
  LLMBENCH_ASSERT(output_len >= 2, "a prefilled request needs a second output token");
  LLMBENCH_ASSERT(config_.scheduler_kind == SchedulerKind::VllmV1,
                  "prefilled requests need the vllm-v1 scheduler");
  add_request_hashed(now_ns, id, prompt_len, output_len, std::move(hashes));
  RequestState& r = *live_.at(id);
  r.num_external_tokens = prompt_len;
  r.num_output_tokens = 1;
}

std::int64_t EngineCore::cached_prefix_tokens(const std::vector<std::uint64_t>& hashes,
                                              std::int64_t num_tokens) const {
  return scheduler_->blocks().cached_prefix_blocks(hashes, num_tokens) * config_.block_size;
}

SteadyRun EngineCore::steady_run() const {
  return lane_ && !in_step_ ? scheduler_->steady_run() : SteadyRun{};
}

void EngineCore::skip_steady_steps(std::int64_t k, double busy_s) {
  if (k <= 0)
    return;
  const SteadyRun run = steady_run();
  scheduler_->skip_steady_steps(k);
  steps_ += k;
  busy_s_ += busy_s;
  step_tokens_sum_ += static_cast<double>(k * run.seqs);
}

std::optional<TimeNs> EngineCore::begin_step(TimeNs now_ns) {
  LLMBENCH_ASSERT(!in_step_, "begin_step while a step is in flight");
  const std::int64_t queries_before = scheduler_->stats().prefix_queries;
  const std::int64_t hits_before = scheduler_->stats().prefix_hits;
  scheduler_->set_now(now_ns);
  scheduler_->schedule_into(current_);
  first_scheduled_.clear();
  if (current_.empty())
    return std::nullopt;
  // Lane members (not in `seqs`) were all scheduled before they entered the lane.
  for (const ScheduledSeq& seq : current_.seqs) {
    if (!seq.request->scheduled_once) {
      seq.request->scheduled_once = true;
      first_scheduled_.push_back(seq.request->id);
      if (slots_)
        slots_->take(seq.request->id);
    }
  }
  if (config_.check_invariants && current_.has_sums) {
    // The sums the scheduler built while forming the batch equal a fresh pass over it.
    BatchSums fresh = batch_sums(current_.seqs);
    fresh.add_decodes(current_.lane.seqs, current_.lane.context);
    LLMBENCH_ASSERT(current_.sums == fresh, "scheduler batch sums differ from the batch");
  }
  std::int64_t decodes = 0;
  TimeNs dt = price_step(*exec_model_, current_, config_.block_size, work_, &decodes,
                         slots_ ? slots_->retained_cells() : 0);
  if (steps_ == 0 && config_.overheads.first_step_overhead_us > 0)
    dt += static_cast<TimeNs>(std::llround(config_.overheads.first_step_overhead_us * 1e3));
  const SchedulerStats& after = scheduler_->stats();
  StepTrace& tr = last_;
  tr = StepTrace{};
  tr.start_ns = now_ns;
  tr.end_ns = now_ns + dt;
  tr.num_seqs = static_cast<std::int64_t>(current_.seqs.size()) + current_.lane.seqs;
  tr.num_tokens = current_.num_tokens;
  tr.num_decode_seqs = decodes;
  tr.num_waiting = static_cast<std::int64_t>(scheduler_->num_waiting());
  tr.num_preempted = static_cast<std::int64_t>(current_.preempted.size());
  tr.kv_usage = scheduler_->blocks().usage();
  tr.num_running = static_cast<std::int64_t>(scheduler_->num_running());
  tr.prefix_queries = after.prefix_queries - queries_before;
  tr.prefix_hits = after.prefix_hits - hits_before;
  ++steps_;
  busy_s_ += ns_to_s(dt);
  step_tokens_sum_ += static_cast<double>(current_.num_tokens);
  in_step_ = true;
  return dt;
}

const StepOutcome& EngineCore::end_step() {
  LLMBENCH_ASSERT(in_step_, "end_step without a step in flight");
  in_step_ = false;
  scheduler_->update_into(current_, result_);
  const StepResult& result = result_;
  if (slots_) {
    // The slot keeps the prompt and every output token but the last (never fed back).
    for (const RequestState* r : result.finished)
      slots_->release(r->id, r->prompt_len + r->num_output_tokens - 1);
  }
  StepOutcome& out = outcome_;
  out.finished.clear();
  out.lane_runs.assign(result.lane_runs.begin(), result.lane_runs.end());
  if (deferred_aborts_.empty()) {
    out.emitted.resize(result.emitted.size());
    std::int64_t* const ids = out.emitted.data();
    for (std::size_t i = 0; i < result.emitted.size(); ++i) ids[i] = result.emitted[i]->id;
    for (const RequestState* r : result.finished) {
      out.finished.push_back(
          FinishedRequest{r->id, r->num_output_tokens, r->cached_tokens, r->num_preemptions});
    }
  } else {
    out.emitted.clear();
    const auto aborted = [&](std::int64_t id) {
      return std::find(deferred_aborts_.begin(), deferred_aborts_.end(), id) !=
             deferred_aborts_.end();
    };
    for (const RequestState* r : result.emitted)
      if (!aborted(r->id))
        out.emitted.push_back(r->id);
    for (const RequestState* r : result.finished) {
      if (!aborted(r->id))
        out.finished.push_back(
            FinishedRequest{r->id, r->num_output_tokens, r->cached_tokens, r->num_preemptions});
    }
    // Finished in this step: already released by the scheduler, only the state goes.
    for (const RequestState* r : result.finished)
      if (aborted(r->id))
        live_.erase(r->id);
    const std::vector<std::int64_t> ids = std::exchange(deferred_aborts_, {});
    for (const std::int64_t id : ids) abort(id);
  }
  for (const auto& f : out.finished) live_.erase(f.id);
  if (config_.check_invariants)
    scheduler_->blocks().check_invariants();
  return out;
}

bool EngineCore::abort(std::int64_t id) {
  LLMBENCH_ASSERT(!lane_, "EngineCore::abort with the decode lane on (it is for Simulation only)");
  const auto it = live_.find(id);
  if (it == live_.end())
    return false;
  if (in_step_) {
    if (std::find(deferred_aborts_.begin(), deferred_aborts_.end(), id) == deferred_aborts_.end())
      deferred_aborts_.push_back(id);
    return true;
  }
  if (slots_)
    slots_->release(id, it->second->num_computed_tokens);
  scheduler_->abort(id);
  live_.erase(it);
  return true;
}

Simulation::Simulation(const SimOptions& options, std::unique_ptr<ExecTimeModel> exec_model)
    : options_(options) {
  LLMBENCH_ASSERT(options.data_parallel_size >= 1, "data_parallel_size must be >= 1");
  const std::shared_ptr<const ExecTimeModel> shared = std::move(exec_model);
  replicas_.resize(static_cast<std::size_t>(options.data_parallel_size));
  for (auto& r : replicas_) {
    r.core = std::make_unique<EngineCore>(options.engine, shared);
    if (options.decode_lane)
      r.core->enable_decode_lane();
  }
}

std::size_t Simulation::pick_replica() const {
  std::size_t best = 0;
  std::size_t best_load = std::numeric_limits<std::size_t>::max();
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    const EngineCore& c = *replicas_[i].core;
    const std::size_t load = c.num_running() + c.num_waiting();
    if (load < best_load) {
      best = i;
      best_load = load;
    }
  }
  return best;
}

void Simulation::admit(std::size_t index, TimeNs now, std::vector<Event>& out) {
  ++in_flight_;
  auto& rec = records_[index];
  rec.scheduled_ns = options_.closed_loop ? now : requests_[index].arrival_ns;
  rec.slot_ns = now;
  rec.sent_ns = now;
  rec.headers_ns = now;
  const double alpha_us = options_.engine.overheads.api_overhead_us;
  if (alpha_us > 0) {
    // Request i's overhead is α·(0.5 + u_i), u_i uniform in [0, 1) from a hash of i: a real API
    // server's overhead varies, and a fixed one would lock arrivals to the step grid.
    const double u = static_cast<double>(splitmix64(index + 0x9e3779b97f4a7c15ULL) >> 11) * 0x1p-53;
    out.push_back(Event{now + static_cast<TimeNs>(std::llround(alpha_us * (0.5 + u) * 1e3)),
                        EventKind::Enqueue, 0, static_cast<std::int64_t>(index), 0});
    return;
  }
  enqueue(index, now, out);
}

void Simulation::on_enqueue(const Event& event, std::vector<Event>& out) {
  enqueue(static_cast<std::size_t>(event.request), event.time_ns, out);
}

void Simulation::enqueue(std::size_t index, TimeNs now, std::vector<Event>& out) {
  const SimRequest& q = requests_[index];
  const std::size_t r = replicas_.size() == 1 ? 0 : pick_replica();
  if (q.block_hashes.empty()) {
    replicas_[r].core->add_request(now, static_cast<std::int64_t>(index), q.prompt_len,
                                   q.output_len, q.prompt_tokens);
  } else {
    replicas_[r].core->add_request_hashed(now, static_cast<std::int64_t>(index), q.prompt_len,
                                          q.output_len, std::move(requests_[index].block_hashes));
  }
  maybe_start(r, now, out);
}

void Simulation::maybe_start(std::size_t replica, TimeNs now, std::vector<Event>& out) {
  Replica& r = replicas_[replica];
  if (r.busy)
    return;
  r.busy = true;
  out.push_back(Event{now, EventKind::StepStart, 0, -1, static_cast<std::int32_t>(replica)});
}

void Simulation::on_arrival(const Event& event, std::vector<Event>& out) {
  const auto index = static_cast<std::size_t>(event.request);
  const SimRequest& q = requests_[index];
  if (!replicas_.front().core->fits(q.prompt_len, q.output_len)) {
    auto& rec = records_[index];
    rec.scheduled_ns = rec.slot_ns = rec.sent_ns = rec.headers_ns = rec.done_ns = event.time_ns;
    rec.http_status = 400;
    rec.error_kind = metrics::ErrorKind::Http4xx;
    rec.error_message = options_.engine.scheduler.enable_chunked_prefill
                            ? "prompt + output exceed the KV cache of the simulated replica"
                            : "prompt + output exceed the KV cache of the simulated replica or, "
                              "with chunked prefill off, max_num_batched_tokens";
    ++stats_.rejected;
    return;
  }
  if (options_.max_concurrency > 0 && in_flight_ >= options_.max_concurrency) {
    blocked_.push_back(index);
    return;
  }
  admit(index, event.time_ns, out);
}

void Simulation::on_step_start(const Event& event, std::vector<Event>& out) {
  Replica& r = replicas_[static_cast<std::size_t>(event.replica)];
  EngineCore& core = *r.core;
  const auto dt = core.begin_step(event.time_ns);
  if (!dt) {
    // Nothing runnable: every waiting request must be blocked by a running one.
    LLMBENCH_ASSERT(core.num_running() > 0 || core.num_waiting() == 0,
                    "waiting requests but an empty, idle engine");
    r.busy = false;
    return;
  }
  const auto running = static_cast<std::int64_t>(core.num_running());
  running_total_ += running - r.last_running;
  r.last_running = running;
  stats_.max_running = std::max(stats_.max_running, running_total_);
  if (options_.record_steps) {
    steps_.push_back(core.last_step());
    steps_.back().replica = event.replica;
  }
  out.push_back(Event{event.time_ns + *dt, EventKind::StepEnd, 0, -1, event.replica});
}

void Simulation::add_token_steps(std::size_t request, std::int32_t replica, std::int64_t first,
                                 std::int64_t last) {
  OpenRun& open = open_run_[request];
  if (open.last + 1 == first && open.replica == replica) {
    open.last = last;
    return;
  }
  close_run(request);
  open = OpenRun{first, last, replica};
}

void Simulation::close_run(std::size_t request) {
  const OpenRun& open = open_run_[request];
  if (open.last >= 0)
    tokens_.runs.push_back(metrics::TokenRuns::Run{
        request, static_cast<std::uint32_t>(open.replica), open.first, open.last - open.first + 1});
}

void Simulation::on_step_end(const Event& event, std::vector<Event>& out) {
  const TimeNs now = event.time_ns;
  const auto replica = static_cast<std::size_t>(event.replica);
  const StepOutcome& result = replicas_[replica].core->end_step();
  std::vector<TimeNs>& ends = tokens_.grids[replica];
  const auto step = static_cast<std::int64_t>(ends.size());
  ends.push_back(now);
  // Lane runs end at or before this step and precede its explicit tokens.
  for (const LaneRun& lane : result.lane_runs)
    add_token_steps(static_cast<std::size_t>(lane.id), event.replica, lane.first, lane.last);
  for (const std::int64_t id : result.emitted)
    add_token_steps(static_cast<std::size_t>(id), event.replica, step, step);
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
    const std::size_t next = blocked_.front();
    blocked_.pop_front();
    admit(next, now, out);
  }
  replicas_[replica].busy = false;
  maybe_start(replica, now, out);
}

SimResult Simulation::run(std::vector<SimRequest> requests) {
  requests_ = std::move(requests);
  const std::size_t n = requests_.size();
  records_.assign(n, metrics::RequestRecord{});
  open_run_.assign(n, OpenRun{});
  tokens_.runs.clear();
  tokens_.runs.reserve(n + n / 4);
  tokens_.grids.assign(replicas_.size(), {});
  std::vector<Event> storage;
  storage.reserve(n + 2 * replicas_.size() + 4);
  std::priority_queue<Event, std::vector<Event>, EventOrder> queue(EventOrder{},
                                                                   std::move(storage));
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
    queue.push(Event{q.arrival_ns, EventKind::Arrival, seq++, static_cast<std::int64_t>(i), 0});
  }
  TimeNs now = 0;
  std::vector<Event> next;
  next.reserve(2 * replicas_.size() + 4);
  while (!queue.empty()) {
    const Event ev = queue.top();
    queue.pop();
    LLMBENCH_ASSERT(ev.time_ns >= now, "virtual time went backwards");
    now = ev.time_ns;
    next.clear();
    ev.handle(*this, next);
    for (Event& e : next) {
      e.seq = seq++;
      queue.push(e);
    }
  }
  stats_.replicas = static_cast<int>(replicas_.size());
  double step_tokens = 0;
  for (const auto& r : replicas_) {
    const EngineCore& core = *r.core;
    LLMBENCH_ASSERT(core.num_running() == 0 && core.num_waiting() == 0,
                    "simulation ended with unfinished requests");
    const auto& s = core.scheduler_stats();
    stats_.steps += core.steps();
    stats_.busy_s += core.busy_s();
    step_tokens += core.step_tokens_sum();
    stats_.preemptions += s.preemptions;
    stats_.prefix_queries += s.prefix_queries;
    stats_.prefix_hits += s.prefix_hits;
    stats_.swap_outs += s.swap_outs;
    stats_.swap_ins += s.swap_ins;
    stats_.swap_out_blocks += s.swap_out_blocks;
    stats_.swap_in_blocks += s.swap_in_blocks;
    stats_.recompute_fallbacks += s.recompute_fallbacks;
  }
  LLMBENCH_ASSERT(blocked_.empty(), "simulation ended with blocked requests");
  finish_runs();
  stats_.end_ns = now;
  stats_.mean_step_tokens = stats_.steps > 0 ? step_tokens / static_cast<double>(stats_.steps) : 0;
  return SimResult{std::move(records_), std::move(tokens_), stats_, std::move(steps_)};
}

void Simulation::finish_runs() {
  for (std::size_t i = 0; i < open_run_.size(); ++i) close_run(i);
  open_run_.clear();
  // Runs were closed in time order per request, so appending keeps each request's chunks sorted.
  if (options_.expand_chunks)
    metrics::expand_token_runs(tokens_, records_);
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
  std::vector<double> busy(out.size(), 0.0);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].start_ns = static_cast<TimeNs>(i) * bucket_ns;
    out[i].end_ns = out[i].start_ns + bucket_ns;
  }
  std::int32_t replicas = 1;
  const auto bucket_of = [&](TimeNs t) {
    return std::min(static_cast<std::size_t>(std::max<TimeNs>(t, 0) / bucket_ns), out.size() - 1);
  };
  for (const auto& s : steps) {
    replicas = std::max(replicas, s.replica + 1);
    const auto i = bucket_of(s.start_ns);
    // Busy time is the part of the step inside each window it spans, so a window is never more
    // than wholly busy (a step that runs past the window's end is busy in the next one too).
    for (std::size_t j = i; j <= bucket_of(std::max(s.start_ns, s.end_ns - 1)); ++j) {
      busy[j] += static_cast<double>(std::min(s.end_ns, out[j].end_ns) -
                                     std::max(s.start_ns, out[j].start_ns));
    }
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
    b.busy_fraction =
        std::min(1.0, busy[i] / (static_cast<double>(bucket_ns) * static_cast<double>(replicas)));
  }
  return out;
}

std::string steps_to_chrome_trace(const std::vector<StepTrace>& steps) {
  std::string out = "{\"traceEvents\":[";
  out += R"({"name":"process_name","ph":"M","pid":1,"args":{"name":"llmbench simulate"}})";
  for (const auto& s : steps) {
    const double ts = static_cast<double>(s.start_ns) / 1e3;
    out += fmt::format(
        R"(,{{"name":"step","cat":"engine","ph":"X","pid":1,"tid":{},"ts":{:.3f},"dur":{:.3f},)"
        R"("args":{{"seqs":{},"tokens":{},"decodes":{},"waiting":{},"preempted":{}}}}})",
        s.replica + 1, ts, static_cast<double>(s.end_ns - s.start_ns) / 1e3, s.num_seqs,
        s.num_tokens, s.num_decode_seqs, s.num_waiting, s.num_preempted);
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
