#include "llmbench/sim/scheduler.hpp"

#include "llmbench/core/error.hpp"

#include <algorithm>

namespace llmbench::sim {

VllmV1Scheduler::VllmV1Scheduler(const SchedulerConfig& config, std::int64_t num_blocks,
                                 std::int64_t block_size)
    : config_(config), blocks_(num_blocks, block_size, config.enable_prefix_caching) {
  LLMBENCH_ASSERT(config.max_num_seqs >= 1 && config.max_num_batched_tokens >= 1,
                  "max_num_seqs and max_num_batched_tokens must be >= 1");
}

void VllmV1Scheduler::add_request(RequestState* request) {
  request->status = RequestStatus::Waiting;
  waiting_.push_back(request);
}

SchedulerOutput VllmV1Scheduler::schedule() {
  SchedulerOutput out;
  std::int64_t budget = config_.max_num_batched_tokens;
  const CacheHit no_hit;

  // ---- RUNNING first, in admission order ----
  std::size_t index = 0;
  while (index < running_.size() && budget > 0) {
    RequestState* req = running_[index];
    std::int64_t n = std::min(req->num_tokens() - req->num_computed_tokens, budget);
    if (config_.long_prefill_token_threshold > 0)
      n = std::min(n, config_.long_prefill_token_threshold);
    if (n <= 0) {
      ++index;
      continue;
    }
    bool scheduled = false;
    while (true) {
      if (blocks_.allocate_slots(req->id, req->num_computed_tokens, n, no_hit, req->block_hashes)) {
        scheduled = true;
        break;
      }
      // Preempt the most recently admitted request (FCFS `self.running.pop()`): free its
      // blocks (hashes stay cached), recompute from scratch, re-queue at the head of WAITING.
      RequestState* victim = running_.back();
      running_.pop_back();
      blocks_.free(victim->id);
      victim->num_computed_tokens = 0;
      victim->status = RequestStatus::Preempted;
      ++victim->num_preemptions;
      ++stats_.preemptions;
      waiting_.push_front(victim);
      out.preempted.push_back(victim->id);
      if (victim == req)
        break;
    }
    if (!scheduled)
      break;
    out.seqs.push_back(ScheduledSeq{req, n, req->num_computed_tokens});
    budget -= n;
    ++index;
  }

  // ---- WAITING, only when nothing was preempted this step ----
  if (out.preempted.empty()) {
    while (!waiting_.empty() && budget > 0) {
      if (static_cast<std::int64_t>(running_.size()) >= config_.max_num_seqs)
        break;
      RequestState* req = waiting_.front();
      CacheHit hit;
      if (req->num_computed_tokens == 0)
        hit = blocks_.find_cached(req->block_hashes, req->num_tokens());
      const std::int64_t computed = req->num_computed_tokens + hit.num_tokens;
      std::int64_t n = req->num_tokens() - computed;
      if (config_.long_prefill_token_threshold > 0)
        n = std::min(n, config_.long_prefill_token_threshold);
      if (!config_.enable_chunked_prefill && n > budget)
        break;
      n = std::min(n, budget);
      if (!blocks_.allocate_slots(req->id, computed, n, hit, req->block_hashes))
        break;  // no preemption on behalf of waiting requests
      waiting_.pop_front();
      stats_.prefix_queries += req->num_tokens();
      stats_.prefix_hits += hit.num_tokens;
      if (req->cached_tokens < 0)
        req->cached_tokens = hit.num_tokens;
      req->num_computed_tokens = computed;
      req->status = RequestStatus::Running;
      running_.push_back(req);
      out.seqs.push_back(ScheduledSeq{req, n, computed});
      budget -= n;
    }
  }
  out.num_tokens = config_.max_num_batched_tokens - budget;
  stats_.max_running = std::max(stats_.max_running, static_cast<std::int64_t>(running_.size()));
  return out;
}

StepResult VllmV1Scheduler::update(const SchedulerOutput& output) {
  StepResult result;
  for (const auto& s : output.seqs) {
    RequestState* req = s.request;
    LLMBENCH_ASSERT(req->status == RequestStatus::Running, "updating a request not running");
    const bool samples = s.samples();
    req->num_computed_tokens += s.num_new_tokens;
    if (!samples)
      continue;
    ++req->num_output_tokens;
    result.emitted.push_back(req);
    if (req->num_output_tokens >= req->output_len) {
      req->status = RequestStatus::Finished;
      blocks_.free(req->id);
      result.finished.push_back(req);
    }
  }
  if (!result.finished.empty()) {
    running_.erase(
        std::remove_if(running_.begin(), running_.end(),
                       [](const RequestState* r) { return r->status == RequestStatus::Finished; }),
        running_.end());
  }
  return result;
}

std::vector<std::int64_t> VllmV1Scheduler::running_ids() const {
  std::vector<std::int64_t> out;
  for (const auto* r : running_) out.push_back(r->id);
  return out;
}

std::vector<std::int64_t> VllmV1Scheduler::waiting_ids() const {
  std::vector<std::int64_t> out;
  for (const auto* r : waiting_) out.push_back(r->id);
  return out;
}

SchedulerKind parse_scheduler_kind(std::string_view name) {
  if (name == "vllm-v1" || name == "vllm")
    return SchedulerKind::VllmV1;
  throw Exception(Error{"unknown scheduler (known: vllm-v1)", "--scheduler", -1});
}

const std::map<SchedulerKind, SchedulerFactory>& scheduler_registry() {
  static const std::map<SchedulerKind, SchedulerFactory> registry{
      {SchedulerKind::VllmV1,
       [](const SchedulerConfig& c, std::int64_t blocks, std::int64_t block_size) {
         return std::make_unique<VllmV1Scheduler>(c, blocks, block_size);
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
