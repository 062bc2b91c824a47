#pragma once
/// @file
/// llama.cpp's server slots over its unified KV cache, as far as the step time needs them: a slot
/// keeps the cells of its last request after it finishes (the prompt cache, `cache_prompt` on by
/// default) until it takes another request, and a new request takes the least recently used idle
/// slot (`get_available_slot`; random prompts share too little for the similarity rule). The
/// cells held this way stay in the window every step's attention spans (`BatchSums::
/// retained_cells`, docs/simulator.md "llama.cpp's shared KV window").

#include <cstdint>
#include <span>
#include <vector>

namespace llmbench::sim {

/// The slots of one llama-server and the KV cells each keeps while idle.
class SlotCache {
 public:
  /// `num_slots` (≥ 1) idle slots; `initial_cells` (at most `num_slots` values ≥ 0, least
  /// recently used first) are the cells the first slots hold at the start (a server that served
  /// earlier runs), the rest hold none.
  SlotCache(std::int64_t num_slots, std::span<const std::int64_t> initial_cells);
  /// Request `id` starts: it takes the least recently used idle slot, whose cells are dropped
  /// (the new prompt replaces them). No slot idle (more requests than slots): nothing changes.
  void take(std::int64_t id);
  /// Request `id` ends with `cells` KV cells in its slot: the slot is idle again, keeps them and
  /// becomes the most recently used. An id that holds no slot changes nothing.
  void release(std::int64_t id, std::int64_t cells);
  /// Σ cells of the idle slots.
  [[nodiscard]] std::int64_t retained_cells() const noexcept { return retained_; }
  /// The cells each slot keeps (0 for a busy slot), least recently used first: the state to
  /// start a later run from.
  [[nodiscard]] std::vector<std::int64_t> cells_by_age() const;

 private:
  struct Slot {
    std::int64_t cells = 0;     ///< kept while idle
    std::int64_t request = -1;  ///< the request it serves, -1 = idle
    std::uint64_t used = 0;     ///< release order (larger = more recent)
  };
  std::vector<Slot> slots_;
  std::uint64_t clock_ = 0;
  std::int64_t retained_ = 0;
};

}  // namespace llmbench::sim
