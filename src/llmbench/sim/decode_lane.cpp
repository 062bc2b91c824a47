#include "llmbench/sim/decode_lane.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/sim/scheduler.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace llmbench::sim {

// ---- LaneWakes ----

LaneWakes::List* LaneWakes::find(std::int64_t step) noexcept {
  if (lists_ == 0 || step < base_ || step > last_)
    return nullptr;
  List& list = ring_[static_cast<std::size_t>(step) & (ring_.size() - 1)];
  return list.head != nullptr && list.step == step ? &list : nullptr;
}

void LaneWakes::grow(std::int64_t lo, std::int64_t hi) {
  std::size_t size = std::max<std::size_t>(64, ring_.size());
  while (static_cast<std::int64_t>(size) <= hi - lo) size *= 2;
  if (size == ring_.size())
    return;
  std::vector<List> ring(size);
  for (const List& list : ring_)
    if (list.head != nullptr)
      ring[static_cast<std::size_t>(list.step) & (size - 1)] = list;
  ring_ = std::move(ring);
}

void LaneWakes::advance_base() noexcept {
  if (lists_ == 0) {
    last_ = base_;
    return;
  }
  const std::size_t mask = ring_.size() - 1;
  do {
    ++base_;
  } while (ring_[static_cast<std::size_t>(base_) & mask].head == nullptr);
}

void LaneWakes::push(std::int64_t step, RequestState* r) {
  if (lists_ == 0)
    base_ = last_ = step;
  const std::int64_t lo = std::min(base_, step);
  const std::int64_t hi = std::max(last_, step);
  if (ring_.empty() || hi - lo >= static_cast<std::int64_t>(ring_.size()))
    grow(lo, hi);
  base_ = lo;
  last_ = hi;
  List& list = ring_[static_cast<std::size_t>(step) & (ring_.size() - 1)];
  if (list.head == nullptr) {
    list.step = step;
    ++lists_;
  }
  r->lane.wake_prev = list.tail;
  r->lane.wake_next = nullptr;
  (list.tail != nullptr ? list.tail->lane.wake_next : list.head) = r;
  list.tail = r;
}

void LaneWakes::remove(std::int64_t step, RequestState* r) {
  List* list = find(step);
  LLMBENCH_ASSERT(list != nullptr, "lane member without its wake-up");
  LaneMember& m = r->lane;
  (m.wake_prev != nullptr ? m.wake_prev->lane.wake_next : list->head) = m.wake_next;
  (m.wake_next != nullptr ? m.wake_next->lane.wake_prev : list->tail) = m.wake_prev;
  m.wake_prev = m.wake_next = nullptr;
  if (list->head == nullptr) {
    *list = List{};
    --lists_;
    if (step == base_)
      advance_base();
  }
}

void LaneWakes::take(std::int64_t step, std::vector<RequestState*>& out) {
  out.clear();
  List* list = find(step);
  if (list == nullptr)
    return;
  for (RequestState* r = list->head; r != nullptr;) {
    RequestState* next = r->lane.wake_next;
    r->lane.wake_prev = r->lane.wake_next = nullptr;
    out.push_back(r);
    r = next;
  }
  *list = List{};
  --lists_;
  if (step == base_)
    advance_base();
}

std::int64_t LaneWakes::first_step() const noexcept {
  return lists_ == 0 ? std::numeric_limits<std::int64_t>::max() : base_;
}

// ---- DecodeLane ----

bool DecodeLane::contains(const RequestState& r) noexcept {
  return r.lane.entry_step >= 0;
}

void DecodeLane::take_wakes(LaneWakes& wakes) {
  wakes.take(step_, due_);
  for (RequestState* r : due_) r->lane.wake_step = -1;  // dequeued
}

void DecodeLane::leave(RequestState* r, std::int64_t last_step) {
  LaneMember& m = r->lane;
  if (m.wake_step >= 0) {
    (m.wake_finishes ? finish_wakes_ : block_wakes_).remove(m.wake_step, r);
    m.wake_step = -1;
  }
  const std::int64_t delta = step_ - m.entry_step;
  if (last_step >= m.entry_step)
    runs_.push_back(LaneRun{.id = r->id, .first = m.entry_step, .last = last_step});
  r->num_computed_tokens += delta;
  r->num_output_tokens += delta;
  context_ -= r->num_computed_tokens + 1;
  m.entry_step = -1;
  LLMBENCH_ASSERT(m.index < members_.size() && members_[m.index] == r,
                  "request not in the decode lane");
  RequestState* moved = members_.back();  // swap-remove: the lane is kept unordered
  members_[m.index] = moved;
  moved->lane.index = m.index;
  members_.pop_back();
  if (r->admit_seq == last_seq_) {
    last_seq_ = 0;
    for (const RequestState* x : members_) last_seq_ = std::max(last_seq_, x->admit_seq);
  }
}

const std::vector<RequestState*>& DecodeLane::release_block_wakes() {
  take_wakes(block_wakes_);
  // Their tokens so far came from steps entry … step_ − 1 (the step being formed is not yet).
  for (RequestState* r : due_) leave(r, step_ - 1);
  return due_;
}

const std::vector<RequestState*>& DecodeLane::release_all() {
  due_.clear();
  while (!members_.empty()) {
    RequestState* r = members_.back();
    leave(r, step_ - 1);
    due_.push_back(r);
  }
  return due_;
}

const std::vector<RequestState*>& DecodeLane::finish_due() {
  take_wakes(finish_wakes_);
  for (RequestState* r : due_) {
    leave(r, step_);  // the step just applied emitted its last token
    ++r->num_computed_tokens;
    ++r->num_output_tokens;
  }
  return due_;
}

void DecodeLane::step_applied() noexcept {
  ++step_;
  context_ += static_cast<std::int64_t>(members_.size());  // every member computed one more
}

void DecodeLane::try_enter(RequestState* r) {
  if (r->num_computed_tokens != r->num_tokens() - 1 || r->num_computed_tokens < r->prompt_len)
    return;
  const std::int64_t room = r->num_kv_slots - r->num_computed_tokens;  // steps before a block
  if (room <= 0)
    return;
  LaneMember& m = r->lane;
  m.entry_step = step_;
  m.index = members_.size();
  members_.push_back(r);
  last_seq_ = members_.size() == 1 ? r->admit_seq : std::max(last_seq_, r->admit_seq);
  context_ += r->num_computed_tokens + 1;
  // Step t schedules it with computed + (t − step_) tokens before: it needs a block at
  // step_ + room and samples its last token at step_ + (output_len − output − 1).
  const std::int64_t block_step = step_ + room;
  const std::int64_t finish_step = step_ + (r->output_len - r->num_output_tokens - 1);
  m.wake_finishes = finish_step < block_step;
  m.wake_step = m.wake_finishes ? finish_step : block_step;
  (m.wake_finishes ? finish_wakes_ : block_wakes_).push(m.wake_step, r);
}

void DecodeLane::remove(RequestState* r) {
  leave(r, step_ - 1);  // the tokens of the steps applied so far were emitted
}

std::int64_t DecodeLane::steady_steps(std::int64_t free_blocks, std::int64_t block_size,
                                      std::int64_t max_steps) const {
  if (members_.empty() || max_steps <= 0)
    return 0;
  // A member samples its last token in step entry + (output_len − output − 1), whatever block
  // wake-ups come before (counters are as of its entry): that step is formed the ordinary way.
  std::int64_t horizon = step_ + max_steps;
  for (const RequestState* r : members_)
    horizon = std::min(horizon, r->lane.entry_step + (r->output_len - r->num_output_tokens - 1));
  // Its blocks: the first when the room of its entry is used up, then one every block_size steps.
  // When the free blocks cover every member's most within the horizon, none needs counting.
  const std::int64_t most = (horizon - step_) / block_size + 1;
  if (static_cast<std::int64_t>(members_.size()) * most <= free_blocks)
    return std::max<std::int64_t>(0, horizon - step_);
  needs_.clear();
  for (const RequestState* r : members_) {
    const std::int64_t first = r->lane.entry_step + (r->num_kv_slots - r->num_computed_tokens);
    for (std::int64_t s = first; s < horizon; s += block_size) needs_.push_back(s);
  }
  if (static_cast<std::int64_t>(needs_.size()) > free_blocks) {
    // The (free_blocks + 1)-th block needed could not be had without a preemption.
    const auto nth = needs_.begin() + free_blocks;
    std::nth_element(needs_.begin(), nth, needs_.end());
    horizon = std::min(horizon, *nth);
  }
  return std::max<std::int64_t>(0, horizon - step_);
}

void DecodeLane::skip_steps(std::int64_t k) noexcept {
  step_ += k;
  context_ += k * static_cast<std::int64_t>(members_.size());
}

void DecodeLane::take_runs(std::vector<LaneRun>& out) {
  out.swap(runs_);
  runs_.clear();
}

bool DecodeLane::step_fits(const std::vector<RequestState*>& running,
                           std::int64_t max_num_batched_tokens,
                           std::int64_t long_prefill_token_threshold, std::int64_t free_blocks,
                           std::int64_t block_size) const {
  const auto slots_for = [block_size](std::int64_t tokens) {
    return (tokens + block_size - 1) / block_size * block_size;
  };
  std::int64_t budget_to_lane_end = static_cast<std::int64_t>(members_.size());
  std::int64_t new_blocks = 0;
  for (const RequestState* r : running) {
    std::int64_t want = r->num_tokens() - r->num_computed_tokens;
    if (long_prefill_token_threshold > 0)
      want = std::min(want, long_prefill_token_threshold);
    if (want <= 0)
      continue;
    if (r->admit_seq < last_seq_)
      budget_to_lane_end += want;
    const bool no_block =
        r->num_computed_tokens >= r->prompt_len && r->num_computed_tokens + want <= r->num_kv_slots;
    if (!no_block)
      new_blocks += std::max<std::int64_t>(
          0, (slots_for(r->num_computed_tokens + want) - r->num_kv_slots) / block_size);
  }
  return budget_to_lane_end <= max_num_batched_tokens && new_blocks <= free_blocks;
}

}  // namespace llmbench::sim
