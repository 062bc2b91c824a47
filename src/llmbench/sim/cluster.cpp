// The cluster simulation, request side: arrivals and the concurrency cap, routing, the KV
// handoff of disaggregated prefill and decode, completion and follow-up turns, records and the
// result. The units' steps are in cluster_steps.cpp.

#include "llmbench/sim/cluster.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/sim/detail/cluster_impl.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace llmbench::sim {

namespace {

std::size_t role_index(PoolRole role) noexcept {
  return static_cast<std::size_t>(role);
}

}  // namespace

RecordsMode parse_records_mode(std::string_view name) {
  if (const auto mode = kRecordsModes.find(name))
    return *mode;
  throw Exception(
      Error{fmt::format("unknown records mode '{}' (valid: {})", name, kRecordsModes.names()),
            "--records", -1});
}

TimeNs StepRing::at(std::int64_t step) const {
  LLMBENCH_ASSERT(step >= 0 && step < count_ && count_ - step <= kSize,
                  "step end time no longer kept");
  return ends_[static_cast<std::size_t>(step & (kSize - 1))];
}

ClusterSimulation::Impl::Impl(const ClusterSpec& spec, std::vector<ResolvedGroup> groups,
                              ClusterOptions options)
    : spec_(spec),
      groups_(std::move(groups)),
      options_(std::move(options)),
      router_(spec, spec.model_id.empty() && !groups_.empty() ? groups_.front().engine.model.name
                                                              : spec.model_id) {
  const std::size_t versions = std::max<std::size_t>(1, spec_.versions.size());
  for (auto& per_role : candidates_) per_role.assign(versions, {});
  for (const auto& v : spec_.versions)
    result_.versions.push_back(
        VersionStats{.name = v.name, .share = v.share, .requests = 0, .latency = {}});
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const ResolvedGroup& rg = groups_[g];
    int version = -1;
    for (std::size_t v = 0; v < spec_.versions.size(); ++v)
      if (spec_.versions[v].name == rg.spec.version)
        version = static_cast<int>(v);
    group_version_.push_back(version);
    group_slope_.push_back(-1);
    has_prefill_ = has_prefill_ || rg.spec.role == PoolRole::Prefill;
    has_decode_ = has_decode_ || rg.spec.role == PoolRole::Decode;
    has_mixed_ = has_mixed_ || rg.spec.role == PoolRole::Mixed;
    if (rg.spec.role != PoolRole::Decode && rg.engine.engine.scheduler.enable_prefix_caching)
      cache_block_size_ = rg.engine.engine.block_size;
    for (int u = 0; u < rg.units; ++u) {
      ClusterUnit unit;
      unit.group = static_cast<int>(g);
      for (int r = 0; r < rg.engines_per_unit; ++r) {
        ClusterEngine e;
        e.core = std::make_unique<EngineCore>(rg.engine.engine, rg.model);
        e.core->enable_decode_lane();
        e.group = static_cast<int>(g);
        e.unit = static_cast<int>(units_.size());
        e.role = rg.spec.role;
        e.stats.group = rg.spec.name;
        e.stats.role = static_cast<int>(rg.spec.role);
        e.stats.unit = e.unit;
        unit.engines.push_back(engines_.size());
        for (std::size_t v = 0; v < versions; ++v)
          if (version < 0 || static_cast<std::size_t>(version) == v)
            candidates_[role_index(rg.spec.role)][v].push_back(engines_.size());
        engines_.push_back(std::move(e));
        assigned_.push_back(0);
        assigned_tokens_.push_back(0);
      }
      unit.run_ranks.resize(unit.engines.size());
      unit.sums.resize(unit.engines.size());
      units_.push_back(std::move(unit));
    }
  }
}

RouteTargets ClusterSimulation::Impl::route_targets(TimeNs now) {
  return RouteTargets{
      .requests = assigned_,
      .tokens = assigned_tokens_,
      .cached_tokens = [this, now](std::size_t engine, const std::vector<std::uint64_t>& hashes,
                                   std::int64_t prompt_len) {
        // Steady steps may have evicted cached blocks (new decode blocks): bring them to now.
        sync_steady(engines_[engine].unit, now);
        return engines_[engine].core->cached_prefix_tokens(hashes, prompt_len);
      }};
}

void ClusterSimulation::Impl::push(ClusterEvent e) {
  e.seq = seq_++;
  queue_.push(e);
}

std::int64_t ClusterSimulation::Impl::new_slot(ClusterRequest&& request) {
  std::int64_t id = 0;
  if (!free_slots_.empty()) {
    id = free_slots_.back();
    free_slots_.pop_back();
  } else {
    id = static_cast<std::int64_t>(slots_.size());
    slots_.emplace_back();
  }
  ClusterSlot& s = slots_[static_cast<std::size_t>(id)];
  s = ClusterSlot{};
  s.request = std::move(request);
  return id;
}

void ClusterSimulation::Impl::free_slot(std::int64_t slot) {
  ClusterSlot& s = slots_[static_cast<std::size_t>(slot)];
  s.request = ClusterRequest{};
  s.chunks = {};
  free_slots_.push_back(slot);
}

std::int64_t ClusterSimulation::Impl::engine_outputs(int group, std::int64_t n,
                                                     std::uint64_t seed) const {
  // The first token comes from the prompt's step; each later step verifies one MTP draft.
  return 1 + decode_steps_for(groups_[static_cast<std::size_t>(group)].spec.mtp, n - 1, seed);
}

void ClusterSimulation::Impl::on_arrival(const ClusterEvent& e) {
  std::int64_t slot = e.target;
  if (slot < 0) {
    slot = new_slot(std::move(source_next_));
    source_pending_ = source_->next(source_next_);
    if (source_pending_) {
      LLMBENCH_ASSERT(source_next_.arrival_ns >= e.time_ns, "source arrivals go back in time");
      push(ClusterEvent{.time_ns = source_next_.arrival_ns, .kind = ClusterEventKind::Arrival});
    }
  }
  ClusterSlot& s = slots_[static_cast<std::size_t>(slot)];
  s.index = arrived_++;
  if (options_.max_concurrency > 0 && in_flight_ >= options_.max_concurrency) {
    blocked_.push_back(slot);
    return;
  }
  admit(slot, e.time_ns);
}

void ClusterSimulation::Impl::admit(std::int64_t slot, TimeNs now) {
  ++in_flight_;
  ClusterSlot& s = slots_[static_cast<std::size_t>(slot)];
  s.slot_ns = now;
  s.version = router_.version_of(s.request.input_hash);
  if (!result_.versions.empty())
    ++result_.versions[static_cast<std::size_t>(s.version)].requests;
  s.sampled =
      options_.records == RecordsMode::All ||
      (options_.records == RecordsMode::Sample &&
       splitmix64(static_cast<std::uint64_t>(s.index)) %
               static_cast<std::uint64_t>(std::max<std::int64_t>(options_.sample_every, 1)) ==
           0);
  const std::uint64_t seed = splitmix64(options_.seed ^ static_cast<std::uint64_t>(s.index));
  s.mtp_state = mtp_initial_state(seed);
  s.tokens_left = s.request.output_len - 1;
  route_front(slot, now);
}

void ClusterSimulation::Impl::route_front(std::int64_t slot, TimeNs now) {
  ClusterSlot& s = slots_[static_cast<std::size_t>(slot)];
  const ClusterRequest& q = s.request;
  const PoolRole role =
      has_prefill_ ? PoolRole::Prefill : (has_decode_ ? PoolRole::Decode : PoolRole::Mixed);
  const auto& cands = candidates_[role_index(role)][static_cast<std::size_t>(s.version)];
  const std::vector<std::uint64_t> hashes =
      role != PoolRole::Decode && cache_block_size_ > 0
          ? request_block_hashes(q, cache_block_size_, static_cast<std::uint64_t>(s.index))
          : std::vector<std::uint64_t>{};
  const RouteTargets targets = route_targets(now);
  const RouteQuery query{
      .conversation = q.conversation, .hashes = &hashes, .prompt_len = q.prompt_len};
  const std::size_t set =
      role_index(role) * candidates_[0].size() + static_cast<std::size_t>(s.version);
  const std::size_t e = router_.pick(spec_.router.policy, set, cands, targets, query);
  ClusterEngine& eng = engines_[e];
  const std::uint64_t seed = splitmix64(options_.seed ^ static_cast<std::uint64_t>(s.index));
  s.engine = static_cast<std::int64_t>(e);
  if (role == PoolRole::Decode) {
    // A decode pool alone: the prompt was computed elsewhere, its KV is here as it arrives.
    s.prefill_done_ns = now;
    s.kv_arrival_ns = now;
    if (q.output_len <= 1) {
      s.first_token_ns = now;
      emit_chunk(s, now, true);
      complete(slot, now);
      return;
    }
    const std::int64_t out = engine_outputs(eng.group, q.output_len, seed);
    if (!eng.core->fits(q.prompt_len, out)) {
      reject(slot, now);
      return;
    }
    wake(eng.unit, now);
    eng.core->add_request_prefilled(now, slot, q.prompt_len, out, {});
  } else {
    const std::int64_t out =
        role == PoolRole::Prefill ? 1 : engine_outputs(eng.group, q.output_len, seed);
    if (!eng.core->fits(q.prompt_len, out)) {
      reject(slot, now);
      return;
    }
    wake(eng.unit, now);
    eng.core->add_request_hashed(now, slot, q.prompt_len, out, hashes);
  }
  ++assigned_[e];
  assigned_tokens_[e] += q.prompt_len + q.output_len;
}

void ClusterSimulation::Impl::prefill_done(std::int64_t slot, std::size_t engine, TimeNs now) {
  ClusterSlot& s = slots_[static_cast<std::size_t>(slot)];
  s.prefill_done_ns = now;
  if (!has_decode_ || s.request.output_len <= 1) {
    complete(slot, now);
    return;
  }
  // The decode replica, then the KV over the prefill replica's link (queued behind its earlier
  // transfers): latency + prompt tokens × KV bytes per token / bandwidth.
  const auto& cands =
      candidates_[role_index(PoolRole::Decode)][static_cast<std::size_t>(s.version)];
  const RouteTargets targets = route_targets(now);
  const RouteQuery query{
      .conversation = s.request.conversation, .hashes = nullptr, .prompt_len = 0};
  const std::size_t set =
      role_index(PoolRole::Decode) * candidates_[0].size() + static_cast<std::size_t>(s.version);
  const std::size_t d = router_.pick(spec_.router.decode_policy, set, cands, targets, query);
  ClusterEngine& dec = engines_[d];
  ++assigned_[d];
  assigned_tokens_[d] += s.request.prompt_len + s.request.output_len;
  const double per_token =
      spec_.kv_transfer.bytes_per_token > 0
          ? spec_.kv_transfer.bytes_per_token
          : groups_[static_cast<std::size_t>(dec.group)].engine.model.kv_bytes_per_token(1);
  const double bytes = per_token * static_cast<double>(s.request.prompt_len);
  ClusterEngine& pre = engines_[engine];
  const TimeNs start = std::max(now, pre.link_free_ns);
  pre.link_free_ns =
      start + static_cast<TimeNs>(std::llround(bytes / (spec_.kv_transfer.link_gb_s * 1e9) * 1e9));
  const TimeNs arrival =
      pre.link_free_ns + static_cast<TimeNs>(std::llround(spec_.kv_transfer.latency_us * 1e3));
  ++result_.kv_transfers;
  result_.kv_bytes += bytes;
  s.engine = static_cast<std::int64_t>(d);
  push(ClusterEvent{.time_ns = arrival,
                    .kind = ClusterEventKind::KvArrival,
                    .tag = static_cast<std::uint32_t>(d),
                    .target = slot});
}

void ClusterSimulation::Impl::on_kv_arrival(const ClusterEvent& e) {
  const TimeNs now = e.time_ns;
  ClusterSlot& s = slots_[static_cast<std::size_t>(e.target)];
  s.kv_arrival_ns = now;
  ClusterEngine& dec = engines_[e.tag];
  const std::uint64_t seed = splitmix64(options_.seed ^ static_cast<std::uint64_t>(s.index));
  const std::int64_t out = engine_outputs(dec.group, s.request.output_len, seed);
  if (!dec.core->fits(s.request.prompt_len, out)) {
    --assigned_[e.tag];
    assigned_tokens_[e.tag] -= s.request.prompt_len + s.request.output_len;
    reject(e.target, now);
    return;
  }
  wake(dec.unit, now);
  dec.core->add_request_prefilled(now, e.target, s.request.prompt_len, out, {});
}

void ClusterSimulation::Impl::emit_chunk(ClusterSlot& s, TimeNs time_ns, bool first) {
  if (!s.sampled)
    return;
  std::int64_t tokens = 1;
  if (!first) {
    const MtpConfig& mtp =
        groups_[static_cast<std::size_t>(engines_[static_cast<std::size_t>(s.engine)].group)]
            .spec.mtp;
    if (mtp.enabled())
      tokens = std::min<std::int64_t>(draw_step_tokens(mtp, s.mtp_state), s.tokens_left);
    s.tokens_left -= tokens;
  }
  if (tokens > 0)
    s.chunks.push_back(metrics::Chunk{
        .time_ns = time_ns, .tokens = static_cast<std::int32_t>(tokens), .bytes = 0});
}

void ClusterSimulation::Impl::complete(std::int64_t slot, TimeNs now) {
  ClusterSlot& s = slots_[static_cast<std::size_t>(slot)];
  const ClusterRequest& q = s.request;
  LLMBENCH_ASSERT(s.first_token_ns >= 0, "a request finished without its first token");
  result_.overall.add_request(s.slot_ns, s.first_token_ns, now, q.prompt_len, q.output_len,
                              s.cached_tokens);
  if (!result_.versions.empty())
    result_.versions[static_cast<std::size_t>(s.version)].latency.add_request(
        s.slot_ns, s.first_token_ns, now, q.prompt_len, q.output_len, s.cached_tokens);
  if (s.kv_arrival_ns >= 0 && has_prefill_) {
    result_.pools.prefill_ms.add(ns_to_ms(s.prefill_done_ns - s.slot_ns));
    result_.pools.transfer_ms.add(ns_to_ms(s.kv_arrival_ns - s.prefill_done_ns));
    result_.pools.admit_ms.add(ns_to_ms(s.first_token_ns - s.kv_arrival_ns));
  }
  if (s.sampled && options_.record_sink) {
    metrics::RequestRecord rec;
    rec.id = s.index;
    rec.warmup = q.warmup;
    rec.scheduled_ns = options_.closed_loop ? s.slot_ns : q.arrival_ns;
    rec.slot_ns = rec.sent_ns = rec.headers_ns = s.slot_ns;
    rec.done_ns = now;
    rec.http_status = 200;
    rec.input_tokens = rec.prompt_len = q.prompt_len;
    rec.max_tokens = q.output_len;
    rec.output_tokens = rec.output_tokens_local = q.output_len;
    rec.cached_tokens = s.cached_tokens;
    rec.finish_reason = "length";
    rec.conversation_id = q.conversation;
    rec.turn = q.conversation >= 0 ? q.turn : -1;
    rec.chunks = std::move(s.chunks);
    options_.record_sink(std::move(rec));
  }
  --in_flight_;
  ClusterRequest next;
  if (source_->follow_up(q, now, next)) {
    const TimeNs at = next.arrival_ns;
    const std::int64_t follow = new_slot(std::move(next));
    push(ClusterEvent{.time_ns = at, .kind = ClusterEventKind::Arrival, .target = follow});
  }
  free_slot(slot);
  while (!blocked_.empty() &&
         (options_.max_concurrency <= 0 || in_flight_ < options_.max_concurrency)) {
    const std::int64_t b = blocked_.front();
    blocked_.pop_front();
    admit(b, now);
  }
}

void ClusterSimulation::Impl::reject(std::int64_t slot, TimeNs now) {
  ClusterSlot& s = slots_[static_cast<std::size_t>(slot)];
  ++result_.rejected;
  ++result_.overall.failed;
  if (!result_.versions.empty())
    ++result_.versions[static_cast<std::size_t>(s.version)].latency.failed;
  if (s.sampled && options_.record_sink) {
    metrics::RequestRecord rec;
    rec.id = s.index;
    rec.scheduled_ns = options_.closed_loop ? s.slot_ns : s.request.arrival_ns;
    rec.slot_ns = rec.sent_ns = rec.headers_ns = rec.done_ns = now;
    rec.http_status = 400;
    rec.error_kind = metrics::ErrorKind::Http4xx;
    rec.error_message = "prompt + output exceed the KV cache of the simulated replica";
    rec.input_tokens = rec.prompt_len = s.request.prompt_len;
    rec.max_tokens = s.request.output_len;
    options_.record_sink(std::move(rec));
  }
  --in_flight_;
  free_slot(slot);  // a failed turn ends its conversation, as in `run`
  while (!blocked_.empty() &&
         (options_.max_concurrency <= 0 || in_flight_ < options_.max_concurrency)) {
    const std::int64_t b = blocked_.front();
    blocked_.pop_front();
    admit(b, now);
  }
}

ClusterResult ClusterSimulation::Impl::run(RequestSource& source) {
  source_ = &source;
  source_pending_ = source_->next(source_next_);
  if (source_pending_)
    push(ClusterEvent{.time_ns = source_next_.arrival_ns, .kind = ClusterEventKind::Arrival});
  TimeNs now = 0;
  while (!queue_.empty()) {
    const ClusterEvent e = queue_.top();
    queue_.pop();
    LLMBENCH_ASSERT(e.time_ns >= now, "virtual time went backwards");
    now = e.time_ns;
    ++result_.events;
    switch (e.kind) {
      case ClusterEventKind::StepEnd:
        on_step_end(e);
        break;
      case ClusterEventKind::KvArrival:
        on_kv_arrival(e);
        break;
      case ClusterEventKind::Arrival:
        on_arrival(e);
        break;
      case ClusterEventKind::StepStart:
        on_step_start(e);
        break;
    }
  }
  LLMBENCH_ASSERT(in_flight_ == 0 && blocked_.empty(), "cluster run ended with requests in flight");
  result_.end_ns = now;
  ClusterResult out = std::move(result_);
  finish_result(out);
  return out;
}

void ClusterSimulation::Impl::finish_result(ClusterResult& out) {
  out.arrived = arrived_;
  out.units = static_cast<int>(units_.size());
  out.engines = static_cast<int>(engines_.size());
  for (const auto& u : units_) {
    out.unit_steps += u.steps;
    out.steady_steps += u.steady_steps;
  }
  for (auto& e : engines_) {
    LLMBENCH_ASSERT(e.core->num_live() == 0, "an engine ended with live requests");
    const auto& st = e.core->scheduler_stats();
    e.stats.prefix_queries = st.prefix_queries;
    e.stats.prefix_hits = st.prefix_hits;
    e.stats.preemptions = st.preemptions;
    e.stats.steps = e.core->steps();
    e.stats.busy_s = units_[static_cast<std::size_t>(e.unit)].busy_s;
    out.replicas.push_back(e.stats);
  }
}

ClusterSimulation::ClusterSimulation(const ClusterSpec& spec, std::vector<ResolvedGroup> groups,
                                     ClusterOptions options)
    : impl_(std::make_unique<Impl>(spec, std::move(groups), std::move(options))) {}

ClusterSimulation::~ClusterSimulation() = default;

ClusterResult ClusterSimulation::run(RequestSource& source) {
  return impl_->run(source);
}

}  // namespace llmbench::sim
