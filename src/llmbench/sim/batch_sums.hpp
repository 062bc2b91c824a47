#pragma once
/// @file
/// What a step computes, per sequence (`SeqWork`) and reduced to sums (`BatchSums`): the
/// interface between a scheduler's batch and the execution-time model (cost_model.hpp).

#include <cstdint>
#include <vector>

namespace llmbench::sim {

/// The work of one sequence in a step.
struct SeqWork {
  std::int64_t num_new_tokens = 0;      ///< tokens computed this step (1 for a decode)
  std::int64_t num_context_tokens = 0;  ///< tokens already in the KV cache before this step
  bool samples = false;                 ///< the step ends its prompt/recompute and samples a token
};

/// A batch reduced to the sums every roofline term is linear in (docs/simulator.md "Step-time
/// model"), in batch order. A sequence with q new tokens after p cached ones is a decode when q = 1
/// and p > 0 (attention reads c = p + 1 tokens), else a prefill chunk (q·(p + q/2) score FLOPs, p
/// for the latent up-projection, p + q tokens read).
struct BatchSums {
  std::int64_t num_seqs = 0;
  std::int64_t tokens = 0;           ///< Σ q
  std::int64_t sampling = 0;         ///< sequences that sample a token
  std::int64_t decode_seqs = 0;      ///< decodes
  std::int64_t decode_context = 0;   ///< Σ (p + 1) over decodes
  std::int64_t prefill_context = 0;  ///< Σ p over prefill chunks
  std::int64_t prefill_read = 0;     ///< Σ (p + q) over prefill chunks
  double prefill_qp = 0;             ///< Σ q·(p + q/2) over prefill chunks
  bool any_prefill = false;
  /// KV cells held outside the batch by idle slots that keep their last request's cache
  /// (llama.cpp's prompt cache, `sim::SlotCache`); 0 elsewhere. A shared-window attention
  /// (`ExecModelParams::shared_kv_window`) spans these plus the batch's own cells.
  std::int64_t retained_cells = 0;
  /// The cells a shared KV window spans in this step: `retained_cells` + Σ (p + 1) over decodes +
  /// Σ (p + q) over prefill chunks (every batch sequence's cells after the step's writes).
  [[nodiscard]] std::int64_t window_cells() const noexcept {
    return retained_cells + decode_context + prefill_read;
  }
  /// Adds one sequence (q ≥ 1 new tokens after p ≥ 0).
  void add(std::int64_t q, std::int64_t p, bool samples) noexcept {
    ++num_seqs;
    tokens += q;
    sampling += samples ? 1 : 0;
    if (q == 1 && p > 0) {
      ++decode_seqs;
      decode_context += p + 1;
    } else {
      any_prefill = true;
      prefill_qp +=
          static_cast<double>(q) * (static_cast<double>(p) + static_cast<double>(q) / 2.0);
      prefill_context += p;
      prefill_read += p + q;
    }
  }
  /// Adds `count` decodes (one sampling token each after their context) whose Σ (p + 1) is
  /// `context`: `add(1, p, true)` for each, in one step (decode terms are integer sums, so the
  /// order does not matter).
  void add_decodes(std::int64_t count, std::int64_t context) noexcept {
    num_seqs += count;
    tokens += count;
    sampling += count;
    decode_seqs += count;
    decode_context += context;
  }
  /// Field-wise equality (exact, `prefill_qp` included: the same additions in the same order).
  bool operator==(const BatchSums&) const = default;
  /// The sums of `batch`, in order.
  [[nodiscard]] static BatchSums of(const std::vector<SeqWork>& batch) noexcept {
    BatchSums s;
    for (const auto& w : batch) s.add(w.num_new_tokens, w.num_context_tokens, w.samples);
    return s;
  }
};

}  // namespace llmbench::sim
