#pragma once
/// @file
/// The output of `llmbench compare` (docs/compare.md "Output"): per B, a table of every metric's
/// statistics in A and B, B − A absolute and relative, the bootstrap interval of B − A, the
/// Holm-adjusted rank-test p-value and the verdict, then the gates; as text, Markdown or JSON.

#include "llmbench/analysis/compare.hpp"
#include "llmbench/analysis/gate.hpp"
#include "llmbench/analysis/what_if.hpp"
#include "llmbench/app/compare_inputs.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::app {

/// `--format` of `compare`.
enum class CompareFormat : std::uint8_t { Text, Markdown, Json };

/// The format named `name` ("text", "markdown", "json"); throws `Exception` naming `--format`
/// and the valid names.
CompareFormat compare_format_from_string(std::string_view name);
/// "text, markdown, json" for help and errors.
std::string valid_compare_formats();

/// B against the baseline A, with its gates (empty without `--gate`).
struct RunComparison {
  const CompareInput* a = nullptr;
  const CompareInput* b = nullptr;
  std::vector<analysis::MetricComparison> metrics{};
  std::vector<analysis::GateResult> gates{};
  /// The bottleneck of each and whether it moved, when both results hold engine facts
  /// (`what_if_of_results`: two `simulate` results or points of a `--simulate` sweep).
  std::optional<analysis::WhatIf> what_if{};
};

/// True when every gate of every comparison passed (also when there are none).
bool gates_passed(const std::vector<RunComparison>& comparisons);

/// The text (`markdown` false: aligned columns) or Markdown tables of `comparisons`.
std::string compare_text(const std::vector<RunComparison>& comparisons,
                         const analysis::CompareOptions& options, bool markdown);

/// The JSON document: `options` (resamples, confidence, alpha, seed), `baseline` (path, format,
/// requests), `comparisons` [{path, format, requests, metrics: [{metric, unit, units_a,
/// units_b, u, z, p_value, p_adjusted, verdict, statistics: [{statistic, a, b, difference,
/// relative, ci_low, ci_high}]}], gates: [{gate, measured, limit, passed, message}], what_if
/// (`what_if_json`, null without engine facts)}] and `gates_passed`. Undefined numbers are
/// null.
nlohmann::json compare_json(const std::vector<RunComparison>& comparisons,
                            const analysis::CompareOptions& options);

}  // namespace llmbench::app
