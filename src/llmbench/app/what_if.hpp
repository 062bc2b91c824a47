#pragma once
/// @file
/// Why, for what-ifs (docs/compare.md "What-if: the bottleneck"): the engine facts of one
/// simulated run, taken from its steps when it runs and written into its results document
/// (`engine_facts`, `bottleneck`), and the what-if between two results documents that hold them
/// (`llmbench compare` of two `simulate` results, or of two points of a `--simulate` sweep).

#include "llmbench/analysis/what_if.hpp"
#include "llmbench/app/result.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/sim/engine.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace llmbench::app {

/// The facts of one simulated engine run: KV capacity (`num_gpu_blocks` × `block_size` × replicas),
/// `max_num_seqs` and the token budget from `options`; KV usage (step-time weighted mean, peak),
/// waiting (step-time weighted mean, summed over replicas), busy share (Σ step time over replicas
/// and the span, ≤ 1) from `steps`; the running batch and tokens per step over the steps during
/// which requests waited; preemptions from `stats`; request size (mean prompt + output of the
/// completed requests), req/s and p99 TPOT from `summary` (NaN where it was not asked for).
/// `setting` is left empty: it names a difference between runs, known only when comparing.
analysis::EngineFacts engine_facts(const sim::SimOptions& options, const sim::SimStats& stats,
                                   const std::vector<sim::StepTrace>& steps,
                                   const metrics::Summary& summary);

/// The results document's `engine_facts` object (the fields of `analysis::EngineFacts` but
/// `setting`, by name; null where not known).
nlohmann::json engine_facts_json(const analysis::EngineFacts& facts);

/// The results document's `bottleneck` object: `which` (the bottleneck's name, "KV cache") and
/// `statement` (`analysis::name_bottleneck`'s reason).
nlohmann::json bottleneck_json(const analysis::EngineFacts& facts);

/// The facts a results document holds under `engine_facts`; nullopt when it holds none (a `run`
/// result, a cluster, an older file). A missing or null field reads as NaN (0 preemptions).
std::optional<analysis::EngineFacts> engine_facts_from_results(const nlohmann::json& results);

/// The what-if from results document `a` to `b`: each run's bottleneck and whether it moved, each
/// run named by the settings in which the two differ ("max_num_seqs 256"; "A" and "B" when they
/// differ in none); nullopt unless both hold engine facts.
std::optional<analysis::WhatIf> what_if_of_results(const nlohmann::json& a,
                                                   const nlohmann::json& b);

/// `{moved, statement, a: {setting, bottleneck, reason}, b: {...}}` of a what-if (`compare`'s
/// JSON).
nlohmann::json what_if_json(const analysis::WhatIf& what_if);

}  // namespace llmbench::app
