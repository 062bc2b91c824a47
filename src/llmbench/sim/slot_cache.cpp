#include "llmbench/sim/slot_cache.hpp"

#include "llmbench/core/error.hpp"

#include <algorithm>

namespace llmbench::sim {

SlotCache::SlotCache(std::int64_t num_slots, std::span<const std::int64_t> initial_cells) {
  LLMBENCH_ASSERT(num_slots >= 1, "a slot cache needs at least one slot");
  slots_.resize(static_cast<std::size_t>(num_slots));
  // Slots without a history count as used longest ago; then the given ones in their order.
  const std::size_t given = std::min(initial_cells.size(), slots_.size());
  const std::size_t first = slots_.size() - given;
  for (std::size_t i = 0; i < given; ++i) {
    Slot& s = slots_[first + i];
    s.cells = std::max<std::int64_t>(0, initial_cells[i]);
    s.used = ++clock_;
    retained_ += s.cells;
  }
}

void SlotCache::take(std::int64_t id) {
  Slot* lru = nullptr;
  for (Slot& s : slots_) {
    if (s.request < 0 && (lru == nullptr || s.used < lru->used))
      lru = &s;
  }
  if (lru == nullptr)
    return;
  retained_ -= lru->cells;
  lru->cells = 0;
  lru->request = id;
}

void SlotCache::release(std::int64_t id, std::int64_t cells) {
  const auto it =
      std::find_if(slots_.begin(), slots_.end(), [id](const Slot& s) { return s.request == id; });
  if (it == slots_.end())
    return;
  it->request = -1;
  it->cells = std::max<std::int64_t>(0, cells);
  it->used = ++clock_;
  retained_ += it->cells;
}

std::vector<std::int64_t> SlotCache::cells_by_age() const {
  std::vector<const Slot*> order;
  order.reserve(slots_.size());
  for (const Slot& s : slots_) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(),
                   [](const Slot* a, const Slot* b) { return a->used < b->used; });
  std::vector<std::int64_t> out;
  out.reserve(order.size());
  for (const Slot* s : order) out.push_back(s->request < 0 ? s->cells : 0);
  return out;
}

}  // namespace llmbench::sim
