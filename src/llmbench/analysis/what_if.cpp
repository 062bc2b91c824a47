#include "llmbench/analysis/what_if.hpp"

#include <fmt/format.h>

#include <cmath>

namespace llmbench::analysis {

namespace {

/// 602000 → "602k", 2500 → "2.5k", 235 → "235".
std::string short_count(double v) {
  if (!std::isfinite(v))
    return "n/a";
  if (std::abs(v) >= 1e6)
    return fmt::format("{:.3g}M", v / 1e6);
  if (std::abs(v) >= 1e3)
    return fmt::format("{:.3g}k", v / 1e3);
  return fmt::format("{:.0f}", v);
}

}  // namespace

std::string_view to_string(Bottleneck which) noexcept {
  for (const auto& b : kBottleneckNames) {
    if (b.which == which)
      return b.name;
  }
  return "none (demand-bound)";
}

BottleneckFinding name_bottleneck(const EngineFacts& f) {
  BottleneckFinding out;
  const bool cap_reached = f.max_num_seqs > 0 && f.running_mean >= 0.95 * f.max_num_seqs;
  const bool kv_full = f.kv_usage_max >= 0.9 || f.preemptions > 0;
  // A short queue behind a batch at its cap (or a full cache) is the engine's limit all the same.
  const bool waits = f.waiting_mean >= 1 || ((cap_reached || kv_full) && f.waiting_mean >= 0.1);
  if (!waits) {
    out.which = Bottleneck::None;
    out.reason = fmt::format(
        "demand-bound: requests waited {:.2f} on average; the engine had room (running {:.1f} of "
        "max_num_seqs {:g}, KV peak {:.0f}%)",
        f.waiting_mean, f.running_mean, f.max_num_seqs, 100 * f.kv_usage_max);
    return out;
  }
  // A cache that preempted could not hold the batch it had: it binds even where the batch also
  // reached max_num_seqs (raising the cap would only preempt more).
  if ((kv_full && !cap_reached) || f.preemptions > 0) {
    out.which = Bottleneck::KvCache;
    const double fit =
        f.request_tokens_mean > 0 ? f.kv_capacity_tokens / f.request_tokens_mean : std::nan("");
    const std::string cap =
        cap_reached ? fmt::format(
                          "max_num_seqs {:g} is reached too, but the cache preempted: a "
                          "larger batch would not fit",
                          f.max_num_seqs)
                    : fmt::format("max_num_seqs {:g} is not reached", f.max_num_seqs);
    out.reason = fmt::format(
        "KV cache bound: {} KV tokens hold ~{} requests of {} tokens; {} (running {:.1f} on "
        "average, {:g} at most; KV peak {:.0f}%, {} preemption(s))",
        short_count(f.kv_capacity_tokens), short_count(fit), short_count(f.request_tokens_mean),
        cap, f.running_mean, f.running_max, 100 * f.kv_usage_max, f.preemptions);
    return out;
  }
  if (cap_reached) {
    out.which = Bottleneck::MaxNumSeqs;
    out.reason = fmt::format(
        "max_num_seqs bound: the batch ran {:.1f} of max_num_seqs {:g} while {:.1f} requests "
        "waited (KV peak {:.0f}%)",
        f.running_mean, f.max_num_seqs, f.waiting_mean, 100 * f.kv_usage_max);
    return out;
  }
  if (f.token_budget > 0 && f.step_tokens_mean >= 0.9 * f.token_budget) {
    out.which = Bottleneck::TokenBudget;
    out.reason = fmt::format(
        "token budget bound: steps computed {:.0f} of max_num_batched_tokens {:g} tokens on "
        "average while {:.1f} requests waited",
        f.step_tokens_mean, f.token_budget, f.waiting_mean);
    return out;
  }
  out.which = Bottleneck::Compute;
  out.reason = fmt::format(
      "compute bound: {:.1f} requests waited with no limit reached (running {:.1f} of "
      "max_num_seqs {:g}, KV peak {:.0f}%, {:.0f} of {:g} budget tokens a step, busy {:.0f}%)",
      f.waiting_mean, f.running_mean, f.max_num_seqs, 100 * f.kv_usage_max, f.step_tokens_mean,
      f.token_budget, 100 * f.busy_fraction);
  return out;
}

std::string explain_what_if(const EngineFacts& a, const EngineFacts& b) {
  return what_if(a, b).statement;
}

WhatIf what_if(const EngineFacts& a, const EngineFacts& b) {
  WhatIf out{.a_setting = a.setting,
             .b_setting = b.setting,
             .a = name_bottleneck(a),
             .b = name_bottleneck(b),
             .moved = false,
             .statement = {}};
  const BottleneckFinding& fa = out.a;
  const BottleneckFinding& fb = out.b;
  out.moved = fa.which != fb.which;
  const double gain =
      a.request_throughput > 0 ? b.request_throughput / a.request_throughput - 1 : std::nan("");
  const std::string moved =
      fa.which == fb.which
          ? fmt::format("the bottleneck did not move ({} in both)", to_string(fa.which))
          : fmt::format("the bottleneck moved: {} → {}", to_string(fa.which), to_string(fb.which));
  out.statement = fmt::format(
      "{} → {}: {}: {:.2f} → {:.2f} req/s ({:+.1f}%), preemptions {} → {}, p99 TPOT {:.1f} → "
      "{:.1f} ms. {}: {}. {}: {}",
      a.setting, b.setting, moved, a.request_throughput, b.request_throughput, 100 * gain,
      a.preemptions, b.preemptions, a.p99_tpot_ms, b.p99_tpot_ms, a.setting, fa.reason, b.setting,
      fb.reason);
  return out;
}

}  // namespace llmbench::analysis
