#include "llmbench/sim/scheduler.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/sim/batch_schedulers.hpp"
#include "llmbench/sim/sglang_scheduler.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <string>

namespace llmbench::sim {

VllmV1Scheduler::VllmV1Scheduler(const SchedulerConfig& config, std::int64_t num_blocks,
                                 std::int64_t block_size)
    : config_(config),
      blocks_(num_blocks, block_size, config.enable_prefix_caching),
      cpu_free_(config.num_cpu_blocks) {
  validate_scheduler_config(config);
}

void VllmV1Scheduler::add_request(RequestState* request) {
  request->status = RequestStatus::Waiting;
  waiting_.push_back(request);
}

void VllmV1Scheduler::preempt(RequestState* victim, SchedulerOutput& out) {
  const std::int64_t held = blocks_.blocks_of(victim->id);
  blocks_.free(victim->id);  // hashes stay cached
  victim->num_kv_slots = 0;
  ++victim->num_preemptions;
  ++stats_.preemptions;
  out.preempted.push_back(victim->id);
  if (config_.num_cpu_blocks > 0 && held > 0 && held <= cpu_free_) {
    // Swap out: the KV stays valid on the CPU, computed tokens are kept.
    cpu_free_ -= held;
    victim->num_swapped_blocks = held;
    victim->status = RequestStatus::Swapped;
    swapped_.push_front(victim);
    out.swapped_out.push_back(victim->id);
    out.num_swap_out_blocks += held;
    ++stats_.swap_outs;
    stats_.swap_out_blocks += held;
    return;
  }
  if (config_.num_cpu_blocks > 0)
    ++stats_.recompute_fallbacks;
  // Recompute: drop the KV, re-queue at the head of WAITING.
  victim->num_computed_tokens = 0;
  victim->status = RequestStatus::Preempted;
  waiting_.push_front(victim);
}

std::int64_t VllmV1Scheduler::slots_for(std::int64_t tokens) const noexcept {
  const std::int64_t bs = blocks_.block_size();
  return (tokens + bs - 1) / bs * bs;
}

namespace {

/// Where a request with admission position `seq` stands (or belongs) in `queue`, which is sorted
/// by `admit_seq`.
std::vector<RequestState*>::iterator by_admission(std::vector<RequestState*>& queue,
                                                  std::uint64_t seq) {
  return std::lower_bound(queue.begin(), queue.end(), seq,
                          [](const RequestState* x, std::uint64_t s) { return x->admit_seq < s; });
}

}  // namespace

void VllmV1Scheduler::insert_running(RequestState* r) {
  running_.insert(by_admission(running_, r->admit_seq), r);
}

bool VllmV1Scheduler::enable_decode_lane() {
  LLMBENCH_ASSERT(running_.empty() && waiting_.empty() && swapped_.empty(),
                  "the decode lane must be enabled before the first request");
  lane_on_ = true;
  return true;
}

/// The batch of one step while `schedule_into` forms it: the sequences written so far, the token
/// budget left and the running sums of the cost model's inputs.
struct VllmV1Scheduler::StepDraft {
  ScheduledSeq* seqs = nullptr;  ///< storage sized for the largest possible batch
  std::size_t count = 0;         ///< sequences written into `seqs`
  std::int64_t budget = 0;       ///< tokens left of `max_num_batched_tokens`
  std::int64_t threshold = 0;    ///< `long_prefill_token_threshold` (0 = none)
  std::int64_t lane_n = 0;       ///< requests in the decode lane this step
  BatchSums sums{};
  /// Running decodes (one token after context, always sampling) are summed in these counters
  /// (fewer updates per sequence than `BatchSums::add`) and merged at the end.
  std::int64_t decodes = 0;
  std::int64_t decode_context = 0;

  /// Appends `req` with `n` new tokens after `computed` and charges them to the budget.
  void take(RequestState* req, std::int64_t n, std::int64_t computed) noexcept {
    seqs[count++] = ScheduledSeq{req, n, computed};
    sums.add(n, computed, computed + n == req->num_tokens());
    budget -= n;
  }
};

void VllmV1Scheduler::release_lane_for_step() {
  // Lane members that need a block in this step go back to one-at-a-time scheduling, and all
  // of them when the step cannot be formed with the lane.
  for (RequestState* r : lane_.release_block_wakes()) insert_running(r);
  if (!lane_.empty() && !lane_.step_fits(running_, config_.max_num_batched_tokens,
                                         config_.long_prefill_token_threshold,
                                         blocks_.num_free_blocks(), blocks_.block_size())) {
    for (RequestState* r : lane_.release_all()) insert_running(r);
  }
}

void VllmV1Scheduler::schedule_running(StepDraft& d, SchedulerOutput& out) {
  const CacheHit no_hit;
  std::size_t index = 0;
  while (index < running_.size() && d.budget > 0) {
    RequestState* req = running_[index];
    std::int64_t n = std::min(req->num_tokens() - req->num_computed_tokens, d.budget);
    if (d.threshold > 0)
      n = std::min(n, d.threshold);
    if (n <= 0) {
      ++index;
      continue;
    }
    // Fast path: a decode (prompt blocks already hashed) whose last block has room needs no
    // new block, so the block manager would change nothing.
    bool scheduled = req->num_computed_tokens >= req->prompt_len &&
                     req->num_computed_tokens + n <= req->num_kv_slots;
    while (!scheduled) {
      if (blocks_.allocate_slots(req->id, req->num_computed_tokens, n, no_hit, req->block_hashes)) {
        scheduled = true;
        req->num_kv_slots = slots_for(req->num_computed_tokens + n);
        break;
      }
      // Preempt the most recently admitted request (FCFS `self.running.pop()`).
      RequestState* victim = running_.back();
      running_.pop_back();
      preempt(victim, out);
      if (victim == req)
        break;
    }
    if (!scheduled)
      break;
    const std::int64_t computed = req->num_computed_tokens;
    if (n == 1 && computed > 0 && computed + 1 == req->num_tokens()) {
      d.seqs[d.count++] = ScheduledSeq{req, n, computed};
      ++d.decodes;
      d.decode_context += computed + 1;
      d.budget -= n;
    } else {
      d.take(req, n, computed);
    }
    ++index;
  }
}

void VllmV1Scheduler::schedule_swapped(StepDraft& d, SchedulerOutput& out) {
  const CacheHit no_hit;
  while (!swapped_.empty() && d.budget > 0 &&
         static_cast<std::int64_t>(running_.size()) + d.lane_n < config_.max_num_seqs) {
    RequestState* req = swapped_.front();
    std::int64_t n = std::min(req->num_tokens() - req->num_computed_tokens, d.budget);
    if (d.threshold > 0)
      n = std::min(n, d.threshold);
    if (!blocks_.allocate_slots(req->id, req->num_computed_tokens, n, no_hit, req->block_hashes))
      break;
    swapped_.pop_front();
    req->num_kv_slots = slots_for(req->num_computed_tokens + n);
    cpu_free_ += req->num_swapped_blocks;
    out.num_swap_in_blocks += req->num_swapped_blocks;
    stats_.swap_in_blocks += req->num_swapped_blocks;
    ++stats_.swap_ins;
    req->num_swapped_blocks = 0;
    req->status = RequestStatus::Running;
    req->admit_seq = next_admit_seq_++;
    running_.push_back(req);
    out.swapped_in.push_back(req->id);
    d.take(req, n, req->num_computed_tokens);
  }
}

void VllmV1Scheduler::schedule_waiting(StepDraft& d) {
  while (!waiting_.empty() && d.budget > 0) {
    if (static_cast<std::int64_t>(running_.size()) + d.lane_n >= config_.max_num_seqs)
      break;
    RequestState* req = waiting_.front();
    CacheHit hit;
    const bool external = req->num_external_tokens > 0;
    if (req->num_computed_tokens == 0 && !external)
      hit = blocks_.find_cached(req->block_hashes, req->num_tokens());
    // KV transferred from a prefill engine counts as computed (no lookup, no compute).
    const std::int64_t computed =
        std::max(req->num_computed_tokens, req->num_external_tokens) + hit.num_tokens;
    std::int64_t n = req->num_tokens() - computed;
    if (d.threshold > 0)
      n = std::min(n, d.threshold);
    if (!config_.enable_chunked_prefill && n > d.budget)
      break;
    n = std::min(n, d.budget);
    if (!blocks_.allocate_slots(req->id, computed, n, hit, req->block_hashes))
      break;  // no preemption on behalf of waiting requests
    waiting_.pop_front();
    req->num_kv_slots = slots_for(computed + n);
    req->num_external_tokens = 0;
    if (!external) {
      stats_.prefix_queries += req->num_tokens();
      stats_.prefix_hits += hit.num_tokens;
    }
    if (req->cached_tokens < 0)
      req->cached_tokens = hit.num_tokens;
    req->num_computed_tokens = computed;
    req->status = RequestStatus::Running;
    req->admit_seq = next_admit_seq_++;
    running_.push_back(req);
    d.take(req, n, computed);
  }
}

void VllmV1Scheduler::schedule_into(SchedulerOutput& out) {
  if (lane_on_)
    release_lane_for_step();
  const auto lane_n = static_cast<std::int64_t>(lane_.size());
  // The batch is written by index into storage sized for its largest possible length (every
  // running request plus admissions up to max_num_seqs), then trimmed: no capacity check per
  // sequence. resize() only initialises elements past the previous size.
  const std::size_t admit_cap = static_cast<std::size_t>(std::max<std::int64_t>(
      0, config_.max_num_seqs - static_cast<std::int64_t>(running_.size()) - lane_n));
  out.seqs.resize(running_.size() + std::min(waiting_.size() + swapped_.size(), admit_cap));
  out.preempted.clear();
  out.swapped_out.clear();
  out.swapped_in.clear();
  out.num_swap_out_blocks = 0;
  out.num_swap_in_blocks = 0;
  // The lane's members take one token each; `step_fits` made sure the budget reaches them
  // all in RUNNING order, so taking their tokens first changes no other request's share.
  StepDraft d{.seqs = out.seqs.data(),
              .budget = config_.max_num_batched_tokens - lane_n,
              .threshold = config_.long_prefill_token_threshold,
              .lane_n = lane_n};

  // RUNNING first, in admission order; then SWAPPED and WAITING, only when nothing was
  // preempted this step, and WAITING only once SWAPPED is empty.
  schedule_running(d, out);
  if (out.preempted.empty())
    schedule_swapped(d, out);
  if (out.preempted.empty() && swapped_.empty())
    schedule_waiting(d);

  out.seqs.resize(d.count);
  out.lane = lane_.share();
  d.sums.add_decodes(d.decodes + out.lane.seqs, d.decode_context + out.lane.context);
  out.sums = d.sums;
  out.has_sums = true;
  out.num_tokens = config_.max_num_batched_tokens - d.budget;
  stats_.max_running =
      std::max(stats_.max_running, static_cast<std::int64_t>(running_.size()) + lane_n);
}

void VllmV1Scheduler::update_into(const SchedulerOutput& output, StepResult& result) {
  result.finished.clear();
  result.emitted.resize(output.seqs.size());  // written by index, trimmed below
  RequestState** const emitted = result.emitted.data();
  std::size_t num_emitted = 0;
  for (const auto& s : output.seqs) {
    if (!detail::apply_step(s))
      continue;
    emitted[num_emitted++] = s.request;
    if (s.request->status == RequestStatus::Finished)
      result.finished.push_back(s.request);
  }
  result.emitted.resize(num_emitted);
  const std::size_t explicit_finished = result.finished.size();
  if (lane_on_) {
    // Lane members that sample their last token in this step.
    for (RequestState* r : lane_.finish_due()) {
      r->status = RequestStatus::Finished;
      result.finished.push_back(r);
    }
  }
  if (result.finished.size() > explicit_finished) {
    // Blocks are freed in RUNNING order, as vLLM frees a batch's finished requests: the order
    // decides which cached blocks are evicted first later.
    std::sort(
        result.finished.begin(), result.finished.end(),
        [](const RequestState* a, const RequestState* b) { return a->admit_seq < b->admit_seq; });
  }
  for (RequestState* r : result.finished) {
    blocks_.free(r->id);
    r->num_kv_slots = 0;
  }
  if (explicit_finished > 0) {
    running_.erase(
        std::remove_if(running_.begin(), running_.end(),
                       [](const RequestState* r) { return r->status == RequestStatus::Finished; }),
        running_.end());
  }
  if (lane_on_) {
    lane_.step_applied();
    bool entered = false;
    for (RequestState* r : result.emitted) {
      if (r->status == RequestStatus::Running) {
        lane_.try_enter(r);
        entered = entered || DecodeLane::contains(*r);
      }
    }
    if (entered) {
      running_.erase(std::remove_if(running_.begin(), running_.end(),
                                    [](const RequestState* r) { return DecodeLane::contains(*r); }),
                     running_.end());
    }
  }
  lane_.take_runs(result.lane_runs);
}

bool VllmV1Scheduler::abort(std::int64_t id) {
  RequestState* r = detail::take_by_id(running_, id);
  if (r == nullptr) {
    const auto& members = lane_.members();
    const auto in_lane = std::find_if(members.begin(), members.end(),
                                      [id](const RequestState* x) { return x->id == id; });
    if (in_lane != members.end()) {
      r = *in_lane;
      lane_.remove(r);
    }
  }
  if (r == nullptr)
    r = detail::take_by_id(waiting_, id);
  if (r == nullptr) {
    r = detail::take_by_id(swapped_, id);
    if (r != nullptr) {
      cpu_free_ += r->num_swapped_blocks;
      r->num_swapped_blocks = 0;
    }
  }
  if (r == nullptr)
    return false;
  blocks_.free(id);  // no-op for a request holding none
  r->num_kv_slots = 0;
  r->status = RequestStatus::Finished;
  return true;
}

SteadyRun VllmV1Scheduler::steady_run() const {
  if (!lane_on_ || !running_.empty() || !waiting_.empty() || !swapped_.empty() ||
      static_cast<std::int64_t>(lane_.size()) > config_.max_num_batched_tokens)
    return {};
  const LaneShare share = lane_.share();
  // Runs are capped at 16 blocks of steps: the members' block needs are listed up to there.
  const std::int64_t bs = blocks_.block_size();
  return SteadyRun{.steps = lane_.steady_steps(blocks_.num_free_blocks(), bs, 16 * bs),
                   .seqs = share.seqs,
                   .context = share.context};
}

void VllmV1Scheduler::skip_steady_steps(std::int64_t k) {
  LLMBENCH_ASSERT(k >= 0 && k <= steady_run().steps, "skipping more than the steady steps");
  const std::int64_t end = lane_.step() + k;
  while (lane_.next_block_wake() < end) {
    lane_.skip_steps(lane_.next_block_wake() - lane_.step());
    // The step at which these members need a block: in RUNNING order each gets one fresh block
    // from the free queue's head (as `schedule_into` would allocate it; `steady_run` made sure
    // there are enough) and goes back into the lane with its counters as of this step, so its
    // lane run resumes here.
    const std::vector<RequestState*>& woken = lane_.release_block_wakes();
    due_.assign(woken.begin(), woken.end());
    std::sort(due_.begin(), due_.end(), [](const RequestState* a, const RequestState* b) {
      return a->admit_seq < b->admit_seq;
    });
    const CacheHit no_hit;
    for (RequestState* r : due_) {
      const bool ok =
          blocks_.allocate_slots(r->id, r->num_computed_tokens, 1, no_hit, r->block_hashes);
      LLMBENCH_ASSERT(ok, "a steady step ran out of free blocks");
      r->num_kv_slots = slots_for(r->num_computed_tokens + 1);
      lane_.try_enter(r);
      LLMBENCH_ASSERT(DecodeLane::contains(*r), "a member did not go back into the lane");
    }
  }
  lane_.skip_steps(end - lane_.step());
}

std::vector<std::int64_t> VllmV1Scheduler::running_ids() const {
  std::vector<const RequestState*> all(running_.begin(), running_.end());
  all.insert(all.end(), lane_.members().begin(), lane_.members().end());
  std::sort(all.begin(), all.end(), [](const RequestState* a, const RequestState* b) {
    return a->admit_seq < b->admit_seq;
  });
  std::vector<std::int64_t> out;
  out.reserve(all.size());
  for (const auto* r : all) out.push_back(r->id);
  return out;
}

std::vector<std::int64_t> VllmV1Scheduler::waiting_ids() const {
  std::vector<std::int64_t> out;
  out.reserve(waiting_.size());
  for (const auto* r : waiting_) out.push_back(r->id);
  return out;
}

std::vector<std::int64_t> VllmV1Scheduler::swapped_ids() const {
  std::vector<std::int64_t> out;
  for (const auto* r : swapped_) out.push_back(r->id);
  return out;
}

void validate_scheduler_config(const SchedulerConfig& c) {
  const auto bad = [](const char* flag, const std::string& what) {
    throw Exception(Error{what, flag, -1});
  };
  if (c.max_num_seqs < 1)
    bad("--max-num-seqs", fmt::format("must be ≥ 1, got {}", c.max_num_seqs));
  if (c.max_num_batched_tokens < 1)
    bad("--max-num-batched-tokens", fmt::format("must be ≥ 1, got {}", c.max_num_batched_tokens));
  if (c.long_prefill_token_threshold < 0)
    bad("--long-prefill-token-threshold",
        fmt::format("must be ≥ 0 (0 = off), got {}", c.long_prefill_token_threshold));
  if (c.num_cpu_blocks < 0)
    bad("--swap-space", fmt::format("must give ≥ 0 CPU blocks, got {}", c.num_cpu_blocks));
  if (!(c.batch_window_ms >= 0))
    bad("--batch-window-ms", fmt::format("τ must be ≥ 0 ms, got {}", c.batch_window_ms));
  if (!(c.batch_length_beta > 0))
    bad("--batch-length-beta", fmt::format("β must be > 0, got {}", c.batch_length_beta));
  if (c.max_prefill_tokens < 0)
    bad("--max-prefill-tokens",
        fmt::format("must be ≥ 0 (0 = no cap), got {}", c.max_prefill_tokens));
  if (c.num_continuous_decode_steps < 1)
    bad("--num-continuous-decode-steps",
        fmt::format("must be ≥ 1, got {}", c.num_continuous_decode_steps));
  if (c.length_history < 1)
    bad("--batch-length-history", fmt::format("must be ≥ 1, got {}", c.length_history));
}

SchedulerKind parse_scheduler_kind(std::string_view name) {
  if (name == "vllm-v1" || name == "vllm" || name == "continuous")
    return SchedulerKind::VllmV1;
  if (name == "static")
    return SchedulerKind::Static;
  if (name == "dynamic")
    return SchedulerKind::Dynamic;
  if (name == "sglang")
    return SchedulerKind::Sglang;
  throw Exception(
      Error{fmt::format("unknown scheduler '{}' (known: vllm-v1, static, dynamic, sglang)", name),
            "--scheduler", -1});
}

const std::map<SchedulerKind, SchedulerFactory>& scheduler_registry() {
  static const std::map<SchedulerKind, SchedulerFactory> registry{
      {SchedulerKind::VllmV1,
       [](const SchedulerConfig& c, std::int64_t blocks, std::int64_t block_size) {
         return std::make_unique<VllmV1Scheduler>(c, blocks, block_size);
       }},
      {SchedulerKind::Static,
       [](const SchedulerConfig& c, std::int64_t blocks, std::int64_t block_size) {
         return std::make_unique<StaticBatchScheduler>(c, blocks, block_size);
       }},
      {SchedulerKind::Dynamic,
       [](const SchedulerConfig& c, std::int64_t blocks, std::int64_t block_size) {
         return std::make_unique<DynamicBatchScheduler>(c, blocks, block_size);
       }},
      {SchedulerKind::Sglang,
       [](const SchedulerConfig& c, std::int64_t blocks, std::int64_t block_size) {
         return std::make_unique<SglangScheduler>(c, blocks, block_size);
       }},
  };
  return registry;
}

std::unique_ptr<Scheduler> make_scheduler(SchedulerKind kind, const SchedulerConfig& config,
                                          std::int64_t num_blocks, std::int64_t block_size) {
  const auto& reg = scheduler_registry();
  const auto it = reg.find(kind);
  LLMBENCH_ASSERT(it != reg.end(), "scheduler kind not registered");
  return it->second(config, num_blocks, block_size);
}

}  // namespace llmbench::sim
