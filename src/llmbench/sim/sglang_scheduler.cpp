#include "llmbench/sim/sglang_scheduler.hpp"

#include "llmbench/core/error.hpp"

#include <algorithm>

namespace llmbench::sim {

SglangScheduler::SglangScheduler(const SchedulerConfig& config, std::int64_t num_blocks,
                                 std::int64_t block_size)
    : config_(config), blocks_(num_blocks, block_size, config.enable_prefix_caching) {
  validate_scheduler_config(config);
}

void SglangScheduler::add_request(RequestState* request) {
  request->status = RequestStatus::Waiting;
  waiting_.push_back(request);
}

std::int64_t SglangScheduler::slots_for(std::int64_t tokens) const noexcept {
  const std::int64_t bs = blocks_.block_size();
  return (tokens + bs - 1) / bs * bs;
}

void SglangScheduler::retract(RequestState* victim, SchedulerOutput& out) {
  blocks_.free(victim->id);  // hashes stay cached
  victim->num_kv_slots = 0;
  victim->num_computed_tokens = 0;
  ++victim->num_preemptions;
  ++stats_.preemptions;
  victim->status = RequestStatus::Preempted;
  out.preempted.push_back(victim->id);
  waiting_.push_front(victim);
  new_token_ratio_ = kInitNewTokenRatio;
}

bool SglangScheduler::schedule_prefill(SchedulerOutput& out) {
  std::int64_t budget = config_.max_num_batched_tokens;
  if (config_.max_prefill_tokens > 0)
    budget = std::min(budget, config_.max_prefill_tokens);
  const CacheHit no_hit;
  BatchSums sums;
  // A prompt being prefilled over several steps (SGLang's chunked request) goes on first.
  for (RequestState* req : running_) {
    if (budget <= 0)
      break;
    const std::int64_t left = req->num_tokens() - req->num_computed_tokens;
    if (req->num_computed_tokens >= req->prompt_len && left == 1)
      continue;  // decoding: not a prefill
    const std::int64_t n = std::min(left, budget);
    if (!blocks_.allocate_slots(req->id, req->num_computed_tokens, n, no_hit, req->block_hashes))
      break;
    req->num_kv_slots = slots_for(req->num_computed_tokens + n);
    out.seqs.push_back(ScheduledSeq{req, n, req->num_computed_tokens});
    sums.add(n, req->num_computed_tokens, req->num_computed_tokens + n == req->num_tokens());
    budget -= n;
  }
  // KV left for new prompts once the running requests' future outputs are reserved.
  const auto future = [this](const RequestState* r) {
    return static_cast<double>(std::min(r->output_len - r->num_output_tokens, kClipMaxNewTokens)) *
           new_token_ratio_;
  };
  double room = static_cast<double>(blocks_.num_free_blocks() * blocks_.block_size());
  for (const RequestState* r : running_) room -= future(r);
  while (!waiting_.empty() && budget > 0 &&
         static_cast<std::int64_t>(running_.size()) < config_.max_num_seqs) {
    RequestState* req = waiting_.front();
    CacheHit hit;
    if (req->num_computed_tokens == 0)
      hit = blocks_.find_cached(req->block_hashes, req->num_tokens());
    const std::int64_t computed = req->num_computed_tokens + hit.num_tokens;
    const std::int64_t n = std::min(req->num_tokens() - computed, budget);
    const double need = static_cast<double>(req->num_tokens() - computed) + future(req);
    if (need > room && !running_.empty())
      break;  // SGLang's PrefillAdder: not enough KV for it and the decodes to come
    room -= need;
    if (!blocks_.allocate_slots(req->id, computed, n, hit, req->block_hashes))
      break;  // no retraction on behalf of waiting requests
    waiting_.pop_front();
    req->num_kv_slots = slots_for(computed + n);
    stats_.prefix_queries += req->num_tokens();
    stats_.prefix_hits += hit.num_tokens;
    if (req->cached_tokens < 0)
      req->cached_tokens = hit.num_tokens;
    req->num_computed_tokens = computed;
    req->status = RequestStatus::Running;
    running_.push_back(req);
    out.seqs.push_back(ScheduledSeq{req, n, computed});
    sums.add(n, computed, computed + n == req->num_tokens());
    budget -= n;
  }
  if (out.seqs.empty())
    return false;
  out.sums = sums;
  out.has_sums = true;
  return true;
}

void SglangScheduler::schedule_decode(SchedulerOutput& out) {
  const CacheHit no_hit;
  std::int64_t decodes = 0;
  std::int64_t context = 0;
  std::size_t index = 0;
  while (index < running_.size()) {
    RequestState* req = running_[index];
    const std::int64_t computed = req->num_computed_tokens;
    if (computed < req->prompt_len || req->num_tokens() - computed != 1) {
      ++index;  // a prompt still being prefilled waits for a prefill step
      continue;
    }
    bool scheduled = computed + 1 <= req->num_kv_slots;
    while (!scheduled) {
      if (blocks_.allocate_slots(req->id, computed, 1, no_hit, req->block_hashes)) {
        req->num_kv_slots = slots_for(computed + 1);
        scheduled = true;
        break;
      }
      RequestState* victim = running_.back();
      running_.pop_back();
      retract(victim, out);
      if (victim == req)
        break;
    }
    if (!scheduled)
      break;
    out.seqs.push_back(ScheduledSeq{req, 1, computed});
    ++decodes;
    context += computed + 1;
    ++index;
  }
  out.sums = BatchSums{};
  out.sums.add_decodes(decodes, context);
  out.has_sums = true;
}

void SglangScheduler::schedule_into(SchedulerOutput& out) {
  out.seqs.clear();
  out.preempted.clear();
  out.swapped_out.clear();
  out.swapped_in.clear();
  out.num_swap_out_blocks = 0;
  out.num_swap_in_blocks = 0;
  out.lane = LaneShare{};
  const std::int64_t streak = std::max<std::int64_t>(1, config_.num_continuous_decode_steps);
  const bool may_prefill = decode_streak_ % streak == 0 || running_.empty();
  if (running_.empty())
    new_token_ratio_ = kInitNewTokenRatio;  // SGLang resets the estimate when idle
  if (may_prefill && schedule_prefill(out)) {
    decode_streak_ = 0;
  } else {
    schedule_decode(out);
    if (!out.seqs.empty()) {
      ++decode_streak_;
      new_token_ratio_ = std::max(new_token_ratio_ - kNewTokenRatioDecay, kMinNewTokenRatio);
    }
  }
  std::int64_t tokens = 0;
  for (const auto& s : out.seqs) tokens += s.num_new_tokens;
  out.num_tokens = tokens;
  stats_.max_running = std::max(stats_.max_running, static_cast<std::int64_t>(running_.size()));
}

void SglangScheduler::update_into(const SchedulerOutput& output, StepResult& result) {
  result.emitted.clear();
  result.finished.clear();
  result.lane_runs.clear();
  for (const auto& s : output.seqs) {
    if (!detail::apply_step(s))
      continue;
    result.emitted.push_back(s.request);
    if (s.request->status == RequestStatus::Finished)
      result.finished.push_back(s.request);
  }
  if (result.finished.empty())
    return;
  for (RequestState* r : result.finished) {
    blocks_.free(r->id);
    r->num_kv_slots = 0;
  }
  running_.erase(
      std::remove_if(running_.begin(), running_.end(),
                     [](const RequestState* r) { return r->status == RequestStatus::Finished; }),
      running_.end());
}

bool SglangScheduler::abort(std::int64_t id) {
  RequestState* r = detail::take_by_id(running_, id);
  if (r == nullptr)
    r = detail::take_by_id(waiting_, id);
  if (r == nullptr)
    return false;
  blocks_.free(id);
  r->num_kv_slots = 0;
  r->status = RequestStatus::Finished;
  return true;
}

std::vector<std::int64_t> SglangScheduler::running_ids() const {
  std::vector<std::int64_t> out;
  out.reserve(running_.size());
  for (const auto* r : running_) out.push_back(r->id);
  return out;
}

}  // namespace llmbench::sim
