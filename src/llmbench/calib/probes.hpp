#pragma once
/// @file
/// The probes `llmbench calibrate --base-url` runs against a live server (at most
/// `kMaxProbes`, short enough for a few minutes in all): single requests over input lengths
/// (prefill cost and per-request overhead), closed loops of short prompts at several concurrencies
/// (decode cost against batch size) and mixed points (prefill interrupting decodes). The command
/// runs them through `llmbench run`'s machinery and fits the results like any other points.

#include "llmbench/calib/points.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace llmbench::calib {

/// The most probes a live calibration runs.
inline constexpr std::size_t kMaxProbes = 20;

/// What bounds the probes: the server's slots (llama.cpp `total_slots`; for vLLM/SGLang the
/// largest concurrency to try), the longest prompt a request may have, and output tokens.
struct ProbeLimits {
  std::int64_t max_concurrency = 8;
  std::int64_t max_input_len = 2048;  ///< prompt tokens (llama.cpp: context per slot − output)
  std::int64_t output_len = 64;       ///< tokens per decode probe
};

/// One probe: a closed-loop workload with fixed lengths and what it is for.
struct Probe {
  std::string
      kind;  ///< "prefill", "decode", "mixed" or "window" (one sequence after all slots filled)
  Workload workload;
};

/// The probe plan for `limits`: prefill probes (concurrency 1, three requests each, prompts of
/// 32, max/4 and max tokens, 4 output tokens), decode probes (32-token prompts, `output_len`
/// tokens, concurrency 1, max/8, max/4, max/2 and max, two requests per slot) and three mixed
/// probes (half and full concurrency with prompts of max/2 and max/4 tokens, then full concurrency
/// with prompts of max tokens — every slot full, the largest KV window —, a quarter of
/// `output_len`, two requests per slot). Duplicates are dropped; never more than `kMaxProbes`.
std::vector<Probe> probe_plan(const ProbeLimits& limits);

}  // namespace llmbench::calib
