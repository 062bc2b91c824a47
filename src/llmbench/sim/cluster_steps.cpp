// The cluster simulation, unit side: a unit's step (its engines' batches, priced alone or in
// lockstep), the handling of what a step produced, and steady runs (cluster.hpp, "Speed").

#include "llmbench/core/error.hpp"
#include "llmbench/sim/detail/cluster_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmbench::sim {

namespace {

/// A step's seconds as the engine rounds them (`price_step`): ns, at least 1.
TimeNs step_ns(double seconds) noexcept {
  return std::max<TimeNs>(1, static_cast<TimeNs>(std::llround(seconds * 1e9)));
}

}  // namespace

void ClusterSimulation::Impl::wake(int unit, TimeNs now) {
  ClusterUnit& u = units_[static_cast<std::size_t>(unit)];
  if (u.state == UnitState::Idle) {
    u.state = UnitState::StepQueued;
    push(ClusterEvent{.time_ns = now, .kind = ClusterEventKind::StepStart, .target = unit});
  } else if (u.state == UnitState::Steady) {
    cut_steady(unit, now);
  }
}

void ClusterSimulation::Impl::add_itl(int group, double step_ms, std::int64_t decodes) {
  if (decodes <= 0)
    return;
  // With MTP a step emits τ tokens per sequence on average: τ tokens each `step / τ` apart, as
  // the per-token ITL of a chunk of τ tokens counts them (docs/metrics.md).
  const double tau = groups_[static_cast<std::size_t>(group)].tokens_per_step();
  const double count = static_cast<double>(decodes) * tau;
  result_.overall.itl_ms.add(step_ms / tau, count);
  const int v = group_version_[static_cast<std::size_t>(group)];
  if (v >= 0)
    result_.versions[static_cast<std::size_t>(v)].latency.itl_ms.add(step_ms / tau, count);
}

void ClusterSimulation::Impl::on_step_start(const ClusterEvent& e) {
  const TimeNs now = e.time_ns;
  ClusterUnit& u = units_[static_cast<std::size_t>(e.target)];
  LLMBENCH_ASSERT(u.state == UnitState::StepQueued, "a step started twice");
  const ResolvedGroup& g = groups_[static_cast<std::size_t>(u.group)];
  bool any = false;
  TimeNs single = 0;
  for (std::size_t i = 0; i < u.engines.size(); ++i) {
    ClusterEngine& eng = engines_[u.engines[i]];
    const auto dt = eng.core->begin_step(now);
    eng.began = dt.has_value();
    u.sums[i] = eng.began ? eng.core->last_sums() : BatchSums{};
    if (!eng.began)
      continue;
    any = true;
    single = *dt;
    if (eng.role == PoolRole::Decode) {
      // A prefilled request's first token goes out when its decode replica takes it in.
      for (const std::int64_t id : eng.core->first_scheduled()) {
        ClusterSlot& s = slots_[static_cast<std::size_t>(id)];
        if (s.first_token_ns < 0) {
          s.first_token_ns = now;
          emit_chunk(s, now, true);
        }
      }
    }
  }
  if (!any) {
    u.state = UnitState::Idle;
    return;
  }
  const TimeNs dur = g.lockstep ? step_ns(g.lockstep->cost(u.sums).step_s) : single;
  for (const std::size_t idx : u.engines) {
    const ClusterEngine& eng = engines_[idx];
    if (eng.began)
      add_itl(u.group, ns_to_ms(dur), eng.core->last_step().num_decode_seqs);
  }
  ++u.steps;
  u.busy_s += ns_to_s(dur);
  u.state = UnitState::InStep;
  push(ClusterEvent{
      .time_ns = now + dur, .kind = ClusterEventKind::StepEnd, .tag = u.gen, .target = e.target});
}

void ClusterSimulation::Impl::on_step_end(const ClusterEvent& e) {
  const TimeNs now = e.time_ns;
  const int unit = static_cast<int>(e.target);
  ClusterUnit& u = units_[static_cast<std::size_t>(unit)];
  if (e.tag != u.gen)
    return;  // the end of a steady run that an arrival cut short
  if (u.state == UnitState::Steady) {
    apply_steady(unit, u.run_steps);
    after_step(unit, now);
    return;
  }
  LLMBENCH_ASSERT(u.state == UnitState::InStep, "a step ended that was not running");
  const bool records = options_.records != RecordsMode::None;
  for (const std::size_t idx : u.engines) {
    ClusterEngine& eng = engines_[idx];
    if (!eng.began)
      continue;
    eng.began = false;
    const StepOutcome& out = eng.core->end_step();
    if (records) {
      eng.ring.push(now);
      // Lane runs end at or before this step and come before its explicit tokens.
      for (const LaneRun& run : out.lane_runs) {
        ClusterSlot& s = slots_[static_cast<std::size_t>(run.id)];
        if (s.sampled)
          for (std::int64_t st = run.first; st <= run.last; ++st)
            emit_chunk(s, eng.ring.at(st), false);
      }
    }
    for (const std::int64_t id : out.emitted) {
      ClusterSlot& s = slots_[static_cast<std::size_t>(id)];
      // A prompt computed for the decode pool: its first token leaves with the decode replica.
      if (eng.role == PoolRole::Prefill && has_decode_ && s.request.output_len > 1)
        continue;
      const bool first = s.first_token_ns < 0;
      if (first)
        s.first_token_ns = now;
      emit_chunk(s, now, first);
    }
    for (const FinishedRequest& f : out.finished) {
      ClusterSlot& s = slots_[static_cast<std::size_t>(f.id)];
      --assigned_[idx];
      assigned_tokens_[idx] -= s.request.prompt_len + s.request.output_len;
      ++eng.stats.requests;
      if (eng.role != PoolRole::Decode) {
        eng.stats.input_tokens += s.request.prompt_len;
        s.cached_tokens = f.cached_tokens;
      }
      if (eng.role == PoolRole::Prefill) {
        prefill_done(f.id, idx, now);
      } else {
        eng.stats.output_tokens += s.request.output_len - (eng.role == PoolRole::Decode ? 1 : 0);
        complete(f.id, now);
      }
    }
  }
  after_step(unit, now);
}

void ClusterSimulation::Impl::after_step(int unit, TimeNs now) {
  ClusterUnit& u = units_[static_cast<std::size_t>(unit)];
  bool live = false;
  std::int64_t steps = std::numeric_limits<std::int64_t>::max();
  for (std::size_t i = 0; i < u.engines.size(); ++i) {
    const EngineCore& core = *engines_[u.engines[i]].core;
    u.run_ranks[i] = SteadyRun{};
    if (core.num_live() == 0)
      continue;
    live = true;
    if (options_.steady_runs)
      u.run_ranks[i] = core.steady_run();
    steps = std::min(steps, u.run_ranks[i].steps);
  }
  if (!live) {
    u.state = UnitState::Idle;
    return;
  }
  if (steps >= 1) {
    start_steady(unit, steps, now);
    return;
  }
  u.state = UnitState::StepQueued;
  const ClusterEvent start{.time_ns = now, .kind = ClusterEventKind::StepStart, .target = unit};
  // Nothing else happens at this instant before a step start (no step end, KV arrival or
  // arrival is queued for it): start the step now instead of queueing it. Steps of other units
  // at the same instant do not depend on each other's order.
  if (queue_.empty() || queue_.top().time_ns > now ||
      queue_.top().kind == ClusterEventKind::StepStart) {
    on_step_start(start);
    return;
  }
  push(start);
}

double ClusterSimulation::Impl::price_steady_step(ClusterUnit& u, std::int64_t j) const {
  const ResolvedGroup& g = groups_[static_cast<std::size_t>(u.group)];
  for (std::size_t i = 0; i < u.engines.size(); ++i) {
    const SteadyRun& r = u.run_ranks[i];
    u.sums[i] = BatchSums{};
    if (r.seqs > 0)
      u.sums[i].add_decodes(r.seqs, r.context + j * r.seqs);
  }
  return g.lockstep ? g.lockstep->cost(u.sums).step_s
                    : g.model->step_cost_of_sums(u.sums.front()).total_s();
}

TimeNs ClusterSimulation::Impl::run_elapsed(const ClusterUnit& u, std::int64_t j) noexcept {
  if (j <= 0)
    return 0;
  if (!u.run_affine)
    return u.run_ends[static_cast<std::size_t>(j - 1)];
  const auto n = static_cast<double>(j);
  // Positive: adding a half and truncating rounds as llround does, without the libm call (it
  // differs only at 0.49999999999999994, far below a nanosecond's meaning here).
  // NOLINTNEXTLINE(bugprone-incorrect-roundings)
  return static_cast<TimeNs>(n * u.run_p0_ns + u.run_slope_ns * n * (n - 1) / 2 + 0.5);
}

void ClusterSimulation::Impl::start_steady(int unit, std::int64_t steps, TimeNs now) {
  ClusterUnit& u = units_[static_cast<std::size_t>(unit)];
  // `run_ranks` holds each engine's steady run as `after_step` found it (idle ranks: none).
  // Step j's context grows by the lane's size each step. Every step-time term is convex in it
  // (sums of maxima of affine terms), so when the step time at the last step lies on the line
  // through the first two, it lies on that line at every step: two prices give the whole run,
  // in closed form. Otherwise each step is priced and rounded as the engine would.
  const double p0 = price_steady_step(u, 0);
  u.run_affine = false;
  if (steps >= 3) {
    const double last = price_steady_step(u, steps - 1);
    const auto on_line = [&](double slope) {
      const double line = p0 + static_cast<double>(steps - 1) * slope;
      return std::abs(last - line) <= 1e-9 * std::max(last, 1e-12);
    };
    // One engine: the step time grows by a fixed cost per token of context, learnt from the
    // group's first run that lies on its line, so later runs need two prices, not three.
    double& per_context = group_slope_[static_cast<std::size_t>(u.group)];
    const std::int64_t seqs = u.run_ranks.front().seqs;
    const bool single = u.engines.size() == 1 && seqs > 0;
    double slope = single && per_context >= 0 ? per_context * static_cast<double>(seqs) : -1;
    if (slope < 0 || !on_line(slope)) {
      slope = price_steady_step(u, 1) - p0;
      if (!on_line(slope))
        slope = -1;
      else if (single)
        per_context = slope / static_cast<double>(seqs);
    }
    if (slope >= 0) {
      u.run_affine = true;
      u.run_p0_ns = p0 * 1e9;
      u.run_slope_ns = slope * 1e9;
    }
  }
  u.run_steps = steps;
  if (!u.run_affine) {
    u.run_ends.resize(static_cast<std::size_t>(steps));
    TimeNs end = 0;
    for (std::int64_t j = 0; j < steps; ++j) {
      end += step_ns(j == 0 ? p0 : price_steady_step(u, j));
      u.run_ends[static_cast<std::size_t>(j)] = end;
    }
  }
  u.run_start_ns = now;
  ++u.gen;
  u.state = UnitState::Steady;
  push(ClusterEvent{.time_ns = now + run_elapsed(u, steps),
                    .kind = ClusterEventKind::StepEnd,
                    .tag = u.gen,
                    .target = unit});
}

std::pair<std::int64_t, TimeNs> ClusterSimulation::Impl::steps_before(const ClusterUnit& u,
                                                                      TimeNs now) const {
  // Step j starts at run_elapsed(j): the first j whose start is at or after `now`.
  std::int64_t lo = 0;
  std::int64_t hi = u.run_steps;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (u.run_start_ns + run_elapsed(u, mid) < now)
      lo = mid + 1;
    else
      hi = mid;
  }
  return {lo, u.run_start_ns + run_elapsed(u, lo)};
}

void ClusterSimulation::Impl::cut_steady(int unit, TimeNs now) {
  ClusterUnit& u = units_[static_cast<std::size_t>(unit)];
  // The steps that started before `now` run to their end; the request joins the next one.
  const auto [j, end] = steps_before(u, now);
  apply_steady(unit, j);
  ++u.gen;
  u.state = UnitState::StepQueued;
  push(ClusterEvent{
      .time_ns = std::max(end, now), .kind = ClusterEventKind::StepStart, .target = unit});
}

void ClusterSimulation::Impl::sync_steady(int unit, TimeNs now) {
  ClusterUnit& u = units_[static_cast<std::size_t>(unit)];
  if (u.state != UnitState::Steady)
    return;
  const auto [j, end] = steps_before(u, now);
  if (j == 0)
    return;
  apply_steady(unit, j);
  // The run goes on from the end of the steps applied; its end event stays valid.
  if (u.run_affine) {
    // Step j becomes step 0; the end stays where it was (the sum is rounded from the new start,
    // a difference of at most 1 ns, which the end event does not see).
    u.run_p0_ns += static_cast<double>(j) * u.run_slope_ns;
  } else {
    const TimeNs base = u.run_ends[static_cast<std::size_t>(j - 1)];
    u.run_ends.erase(u.run_ends.begin(), u.run_ends.begin() + j);
    for (auto& e : u.run_ends) e -= base;
  }
  u.run_start_ns = end;
  u.run_steps -= j;
  for (auto& r : u.run_ranks) r.context += j * r.seqs;
}

void ClusterSimulation::Impl::apply_steady(int unit, std::int64_t steps) {
  if (steps <= 0)
    return;
  ClusterUnit& u = units_[static_cast<std::size_t>(unit)];
  const ResolvedGroup& g = groups_[static_cast<std::size_t>(u.group)];
  const double tau = g.tokens_per_step();
  const int version = group_version_[static_cast<std::size_t>(u.group)];
  // Per-token ITL of the run's steps (a line when affine, else step by step), once per rank.
  for (std::size_t i = 0; i < u.engines.size(); ++i) {
    const std::int64_t seqs = u.run_ranks[i].seqs;
    if (seqs <= 0)
      continue;
    const double weight = static_cast<double>(seqs) * tau;
    const auto add = [&](StreamingHistogram& h) {
      if (u.run_affine) {
        h.add_linear(u.run_p0_ns * 1e-6 / tau, u.run_slope_ns * 1e-6 / tau, steps, weight);
      } else {
        for (std::int64_t j = 0; j < steps; ++j)
          h.add(ns_to_ms(run_elapsed(u, j + 1) - run_elapsed(u, j)) / tau, weight);
      }
    };
    add(result_.overall.itl_ms);
    if (version >= 0)
      add(result_.versions[static_cast<std::size_t>(version)].latency.itl_ms);
    if (options_.records != RecordsMode::None)
      for (std::int64_t j = 1; j <= steps; ++j)
        engines_[u.engines[i]].ring.push(u.run_start_ns + run_elapsed(u, j));
  }
  const double busy = ns_to_s(run_elapsed(u, steps));
  for (std::size_t i = 0; i < u.engines.size(); ++i)
    if (u.run_ranks[i].seqs > 0)
      engines_[u.engines[i]].core->skip_steady_steps(steps, busy);
  u.steps += steps;
  u.steady_steps += steps;
  u.busy_s += busy;
}

}  // namespace llmbench::sim
