#pragma once
/// @file
/// Why, for what-ifs (docs/compare.md "What-if: the bottleneck"): which engine limit held a
/// simulated run's capacity, named from the engine facts a simulation already has (KV-cache use
/// and preemptions, the running batch against `max_num_seqs`, the step's token budget, the
/// steps' busy time), and whether it moved between two settings. A pure function of two sets of
/// facts; `simulate` and a `--simulate` sweep fill them.

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace llmbench::analysis {

/// What one simulated run's engine did (NaN = not known). The batch figures (`running_*`,
/// `step_tokens_mean`) are taken over the steps during which requests waited (all steps when
/// none did): what held the batch while work queued is what limited capacity. Counts of
/// sequences and waiting requests are summed over data-parallel replicas.
struct EngineFacts {
  std::string setting;  ///< how the run differs, for messages ("max_num_seqs 256")
  double kv_capacity_tokens = std::numeric_limits<double>::quiet_NaN();  ///< blocks × size × dp
  double kv_usage_mean = std::numeric_limits<double>::quiet_NaN();  ///< 0..1, step-time weighted
  double kv_usage_max = std::numeric_limits<double>::quiet_NaN();   ///< 0..1
  std::int64_t preemptions = 0;
  double max_num_seqs = std::numeric_limits<double>::quiet_NaN();  ///< × replicas
  double running_mean = std::numeric_limits<double>::quiet_NaN();  ///< step-time weighted
  double running_max = std::numeric_limits<double>::quiet_NaN();
  double waiting_mean = std::numeric_limits<double>::quiet_NaN();      ///< step-time weighted
  double token_budget = std::numeric_limits<double>::quiet_NaN();      ///< max_num_batched_tokens
  double step_tokens_mean = std::numeric_limits<double>::quiet_NaN();  ///< tokens per step
  double request_tokens_mean = std::numeric_limits<double>::quiet_NaN();  ///< prompt + output
  double busy_fraction = std::numeric_limits<double>::quiet_NaN();  ///< Σ step time / span, ≤ 1
  double request_throughput = std::numeric_limits<double>::quiet_NaN();  ///< req/s
  double p99_tpot_ms = std::numeric_limits<double>::quiet_NaN();
};

/// The limit that held a run's capacity.
enum class Bottleneck : std::uint8_t {
  None,         ///< requests did not wait: the load, not the engine, set the throughput
  KvCache,      ///< the KV cache was full (or preempted) before the batch reached its cap
  MaxNumSeqs,   ///< the running batch sat at `max_num_seqs` while requests waited
  TokenBudget,  ///< steps ran full token budgets (prefill-bound) while requests waited
  Compute,      ///< requests waited with no limit reached: the step time itself
};

/// Each bottleneck's name.
struct BottleneckName {
  Bottleneck which = Bottleneck::None;
  std::string_view name;
};
inline constexpr std::array<BottleneckName, 5> kBottleneckNames{{
    {.which = Bottleneck::None, .name = "none (demand-bound)"},
    {.which = Bottleneck::KvCache, .name = "KV cache"},
    {.which = Bottleneck::MaxNumSeqs, .name = "max_num_seqs"},
    {.which = Bottleneck::TokenBudget, .name = "token budget"},
    {.which = Bottleneck::Compute, .name = "compute (step time)"},
}};

/// The bottleneck's name.
std::string_view to_string(Bottleneck which) noexcept;

/// A named bottleneck with the facts behind it.
struct BottleneckFinding {
  Bottleneck which = Bottleneck::None;
  std::string reason;  ///< "KV cache bound: 602k KV tokens hold ~235 requests of 2.5k tokens;
                       ///< max_num_seqs 512 is not reached (most running 236)"
};

/// Two runs' bottlenecks and whether the limit moved between them.
struct WhatIf {
  std::string a_setting;  ///< `EngineFacts::setting` of a
  std::string b_setting;  ///< of b
  BottleneckFinding a;
  BottleneckFinding b;
  bool moved = false;     ///< `a.which != b.which`
  std::string statement;  ///< `explain_what_if(a, b)`
};

/// The rule, in order (thresholds ours, docs/compare.md): nothing waits (mean waiting < 1, or
/// < 0.1 when the batch is at `max_num_seqs` or the cache is full) → None; the engine preempted, or
/// KV usage peaked at ≥ 90% while the batch stayed under `max_num_seqs` → KvCache; the batch
/// reached `max_num_seqs` (its mean ≥ 95% of it) → MaxNumSeqs; mean tokens per step ≥ 90% of the
/// token budget → TokenBudget; else Compute.
BottleneckFinding name_bottleneck(const EngineFacts& facts);

/// The what-if of `a` → `b`: each one's bottleneck, whether it moved, and what the change did
/// to capacity, preemptions and p99 TPOT ("max_num_seqs 256 → max_num_seqs 512: the bottleneck
/// did not move (KV cache in both): 5.80 → 5.80 req/s (+0.0%), preemptions 0 → 412, p99 TPOT
/// 41.0 → 63.2 ms").
std::string explain_what_if(const EngineFacts& a, const EngineFacts& b);

/// `explain_what_if(a, b)` with both findings, for outputs that keep them apart (JSON).
WhatIf what_if(const EngineFacts& a, const EngineFacts& b);

}  // namespace llmbench::analysis
