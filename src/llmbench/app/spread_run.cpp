#include "llmbench/app/detail/spread.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace llmbench::app::detail {

namespace {

/// How far ahead of the latest rank's "ready" the measured phase starts: room for the
/// agreement's own messages and each rank's wake-up.
constexpr TimeNs kStartMarginNs = 100'000'000;

}  // namespace

Spread::Spread(dist::World& world, const RunPlan& plan, const loadgen::LoadOptions& load,
               const std::vector<workload::Sample>& samples)
    : world_(world) {
  if (plan.builtin) {
    throw Exception(
        Error{"under an MPI launcher give the target's --base-url: each rank would "
              "start a built-in server of its own",
              "--base-url", -1});
  }
  (void)dist::cap_share(load.max_concurrency, 0, world_.size());  // throws when too small
  digest_ = dist::schedule_digest(samples, load);
  const std::uint64_t leader_digest = world_.broadcast(digest_);
  if (world_.any(leader_digest != digest_)) {
    throw Exception(fmt::format(
        "the ranks drew different schedules (rank {} digest {:016x}, rank 0 {:016x}): every "
        "host must see the same dataset, tokenizer and flags",
        world_.rank(), digest_, leader_digest));
  }
  planned_ = load.duration_s > 0 ? 0 : load.num_prompts;
  before_ = world_.measure_offsets(dist::kOffsetRounds);
  if (leader()) {
    for (std::size_t i = 1; i < before_.size(); ++i) {
      log::info("rank {}: clock offset {:+.3f} ms to rank 0, within ±{:.3f} ms", i,
                static_cast<double>(before_[i].offset_ns) / 1e6,
                static_cast<double>(before_[i].bound_ns) / 1e6);
    }
  }
}

loadgen::LoadOptions Spread::share(loadgen::LoadOptions load) const {
  load.max_concurrency = dist::cap_share(load.max_concurrency, world_.rank(), world_.size());
  const TimeNs offset = before_.at(static_cast<std::size_t>(world_.rank())).offset_ns;
  dist::World* world = &world_;
  load.share = loadgen::RankShare{.rank = world_.rank(),
                                  .ranks = world_.size(),
                                  .agree_start = [world, offset](TimeNs local_now) {
                                    // On rank 0's clock: the latest rank's "ready", plus a margin;
                                    // back on this clock.
                                    const TimeNs latest = world->max(local_now - offset);
                                    return latest + kStartMarginNs + offset;
                                  }};
  return load;
}

std::string Spread::common_stem(const std::string& stem) {
  return world_.broadcast(stem);
}

std::string Spread::rank_stem(const std::string& stem) const {
  return fmt::format("{}.rank{}", stem, world_.rank());
}

void Spread::gather(loadgen::LoadResult& result) {
  after_ = world_.measure_offsets(dist::kOffsetRounds);
  dist::RankPart mine{.rank = world_.rank(),
                      .host = world_.host(),
                      .run_start_steady_ns = result.run_start_steady_ns,
                      .connections_opened = result.connections_opened,
                      .ports_in_use_peak = result.ports_in_use_peak,
                      .connect_errors = result.connect_errors,
                      .loop_lag_ms = result.loop_lag_ms,
                      .records = {}};
  mine.records = std::move(result.records);
  const auto texts = world_.gather(dist::encode_part(mine));
  if (!leader()) {
    result.records = std::move(mine.records);
    return;
  }
  parts_.clear();
  for (const auto& text : texts) parts_.push_back(dist::decode_part(text));
  result.records = dist::merge_parts(parts_, before_, &result.run_start_steady_ns);
  // The merged load facts: every rank's lag samples and connections.
  result.loop_lag_ms.clear();
  result.connections_opened = 0;
  // Ports: each rank's peak on its own host; their sum bounds the ports held at once (on one
  // host the peaks need not coincide). Connect errors: every rank's, by cause.
  result.ports_in_use_peak = 0;
  result.connect_errors.clear();
  for (const auto& p : parts_) {
    result.loop_lag_ms.insert(result.loop_lag_ms.end(), p.loop_lag_ms.begin(), p.loop_lag_ms.end());
    result.connections_opened += p.connections_opened;
    result.ports_in_use_peak += p.ports_in_use_peak;
    for (const auto& [cause, n] : p.connect_errors) result.connect_errors[cause] += n;
  }
}

void Spread::share_merged(loadgen::LoadResult& result) {
  dist::RankPart merged;
  merged.run_start_steady_ns = result.run_start_steady_ns;
  if (leader())
    merged.records = std::move(result.records);
  std::string text = world_.broadcast(leader() ? dist::encode_part(merged) : std::string());
  if (leader()) {
    result.records = std::move(merged.records);
    return;
  }
  merged = dist::decode_part(text);
  text.clear();
  result.records = std::move(merged.records);
  result.run_start_steady_ns = merged.run_start_steady_ns;
}

void Spread::describe(RunResult& r) const {
  auto facts = dist::spread_facts(r.records, parts_, planned_, before_, after_,
                                  r.summary().duration_s, r.run_plan->window_s);
  facts.schedule_digest = digest_;
  for (const auto& warning : facts.warnings) log::warn("{}", warning);
  const bool rank_failed = std::any_of(
      facts.per_rank.begin(), facts.per_rank.end(),
      [](const auto& f) { return (f.requests == 0 && f.quota > 0) || f.connect_errors > 0; });
  if (rank_failed)
    r.exit_code = 1;
  log::info("{} ranks; clock error bound {:.3f} ms", facts.ranks,
            static_cast<double>(facts.max_error_bound_ns) / 1e6);
  r.spread = std::move(facts);
}

int Spread::common_exit_code(int code) {
  return static_cast<int>(world_.broadcast(static_cast<std::uint64_t>(code)));
}

}  // namespace llmbench::app::detail
