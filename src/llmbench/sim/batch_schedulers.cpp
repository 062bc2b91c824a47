#include "llmbench/sim/batch_schedulers.hpp"

#include "llmbench/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace llmbench::sim {

// ---- BatchScheduler ----

BatchScheduler::BatchScheduler(const SchedulerConfig& config, std::int64_t num_blocks,
                               std::int64_t block_size)
    : config_(config), blocks_(num_blocks, block_size, false) {
  validate_scheduler_config(config);
}

bool BatchScheduler::try_admit(RequestState* request) {
  if (static_cast<std::int64_t>(batch_.size()) >= config_.max_num_seqs)
    return false;
  static const std::vector<std::uint64_t> kNoHashes;
  if (!blocks_.allocate_slots(request->id, 0, request->prompt_len + request->output_len, CacheHit{},
                              kNoHashes))
    return false;
  if (request->cached_tokens < 0)
    request->cached_tokens = 0;
  request->status = RequestStatus::Running;
  batch_.push_back(request);
  return true;
}

void BatchScheduler::schedule_into(SchedulerOutput& out) {
  out.seqs.clear();
  out.preempted.clear();
  out.swapped_out.clear();
  out.swapped_in.clear();
  out.num_swap_out_blocks = 0;
  out.num_swap_in_blocks = 0;
  out.num_tokens = 0;
  if (batch_.empty()) {
    form_batch();
    if (batch_.empty())
      return;
    ++stats_.batches;
    stats_.max_running = std::max(stats_.max_running, static_cast<std::int64_t>(batch_.size()));
  }
  // Prefill phase while any member's prompt is incomplete; then decodes.
  const bool prefill = std::any_of(batch_.begin(), batch_.end(), [](const RequestState* r) {
    return r->num_computed_tokens < r->prompt_len;
  });
  std::int64_t budget = config_.max_num_batched_tokens;
  for (RequestState* r : batch_) {
    if (budget <= 0)
      break;
    if (prefill && r->num_computed_tokens >= r->prompt_len)
      continue;
    const std::int64_t n = std::min(r->num_tokens() - r->num_computed_tokens, budget);
    if (n <= 0)
      continue;
    out.seqs.push_back(ScheduledSeq{r, n, r->num_computed_tokens});
    budget -= n;
  }
  out.num_tokens = config_.max_num_batched_tokens - budget;
}

void BatchScheduler::update_into(const SchedulerOutput& output, StepResult& result) {
  result.emitted.clear();
  result.finished.clear();
  for (const auto& s : output.seqs) {
    if (!detail::apply_step(s))
      continue;
    result.emitted.push_back(s.request);
    if (s.request->status == RequestStatus::Finished) {
      blocks_.free(s.request->id);
      result.finished.push_back(s.request);
    }
  }
  if (!result.finished.empty()) {
    batch_.erase(
        std::remove_if(batch_.begin(), batch_.end(),
                       [](const RequestState* r) { return r->status == RequestStatus::Finished; }),
        batch_.end());
  }
}

std::vector<std::int64_t> BatchScheduler::batch_ids() const {
  std::vector<std::int64_t> out;
  for (const auto* r : batch_) out.push_back(r->id);
  return out;
}

bool BatchScheduler::abort(std::int64_t id) {
  const auto it = std::find_if(batch_.begin(), batch_.end(),
                               [id](const RequestState* r) { return r->id == id; });
  RequestState* r = nullptr;
  if (it != batch_.end()) {
    r = *it;
    batch_.erase(it);
    blocks_.free(id);
  } else {
    r = remove_waiting(id);
  }
  if (r == nullptr)
    return false;
  r->status = RequestStatus::Finished;
  return true;
}

// ---- StaticBatchScheduler ----

StaticBatchScheduler::StaticBatchScheduler(const SchedulerConfig& config, std::int64_t num_blocks,
                                           std::int64_t block_size)
    : BatchScheduler(config, num_blocks, block_size) {}

void StaticBatchScheduler::add_request(RequestState* request) {
  request->status = RequestStatus::Waiting;
  waiting_.push_back(request);
}

void StaticBatchScheduler::form_batch() {
  while (!waiting_.empty() && try_admit(waiting_.front())) waiting_.pop_front();
}

RequestState* StaticBatchScheduler::remove_waiting(std::int64_t id) {
  return detail::take_by_id(waiting_, id);
}

std::vector<std::int64_t> StaticBatchScheduler::waiting_ids() const {
  std::vector<std::int64_t> out;
  for (const auto* r : waiting_) out.push_back(r->id);
  return out;
}

// ---- DynamicBatchScheduler ----

DynamicBatchScheduler::DynamicBatchScheduler(const SchedulerConfig& config, std::int64_t num_blocks,
                                             std::int64_t block_size)
    : BatchScheduler(config, num_blocks, block_size) {}

double DynamicBatchScheduler::predicted_length() const {
  if (history_.empty())
    return 0;
  const double sum = static_cast<double>(
      std::accumulate(history_.begin(), history_.end(), static_cast<std::int64_t>(0)));
  return sum / static_cast<double>(history_.size());
}

void DynamicBatchScheduler::add_request(RequestState* request) {
  request->status = RequestStatus::Waiting;
  const std::int64_t length = request->prompt_len + request->output_len;
  bool new_group = !open_ || groups_.empty();
  if (!new_group) {
    const Group& g = groups_.back();
    const double gap_ms = static_cast<double>(now_ns_ - g.first_arrival_ns) / 1e6;
    // ⌈β·L̂⌉ from the previous requests only (the note's "history").
    const auto cap =
        static_cast<std::int64_t>(std::ceil(config_.batch_length_beta * predicted_length()));
    new_group = gap_ms > config_.batch_window_ms || (!history_.empty() && length >= cap) ||
                static_cast<std::int64_t>(g.members.size()) >= config_.max_num_seqs;
  }
  if (new_group) {
    groups_.push_back(Group{now_ns_, {}});
    open_ = true;
  }
  groups_.back().members.push_back(request);
  history_.push_back(length);
  while (static_cast<std::int64_t>(history_.size()) > config_.length_history) history_.pop_front();
}

void DynamicBatchScheduler::form_batch() {
  if (groups_.empty())
    return;
  if (groups_.size() == 1)
    open_ = false;  // the open group is taken now: later arrivals start a new one
  Group& g = groups_.front();
  while (!g.members.empty() && try_admit(g.members.front())) g.members.pop_front();
  if (g.members.empty())
    groups_.pop_front();
}

RequestState* DynamicBatchScheduler::remove_waiting(std::int64_t id) {
  for (auto g = groups_.begin(); g != groups_.end(); ++g) {
    RequestState* r = detail::take_by_id(g->members, id);
    if (r == nullptr)
      continue;
    if (g->members.empty() && std::next(g) != groups_.end())
      groups_.erase(g);  // the back (possibly open) group is kept even when empty
    return r;
  }
  return nullptr;
}

std::size_t DynamicBatchScheduler::num_waiting() const {
  std::size_t n = 0;
  for (const auto& g : groups_) n += g.members.size();
  return n;
}

std::vector<std::vector<std::int64_t>> DynamicBatchScheduler::group_ids() const {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& g : groups_) {
    out.emplace_back();
    for (const auto* r : g.members) out.back().push_back(r->id);
  }
  return out;
}

}  // namespace llmbench::sim
