#pragma once
/// @file
/// Helpers shared by the files that build the report's embedded data (report_data.cpp,
/// sweep_data.cpp). Private to the report module.

#include "llmbench/report/inputs.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string_view>

namespace llmbench::report::detail {

/// `x` rounded to 6 significant digits (null when not finite): the embedded data is drawn, not
/// recomputed, and 6 digits keep the file small.
nlohmann::json round6(double x);

/// The number at `key` of `j` as a double; NaN when it is missing, null or not a number.
double number_at(const nlohmann::json& j, std::string_view key);

/// The sweep entry of the embedded data (docs/report.md "Embedded data", `sweeps`): its points
/// with their load, group and metrics, the knees of the sweep JSON, the SLO bounds of its
/// `slo_search` and the Pareto frontiers. `first_run` is the index in `runs` of the sweep's first
/// loaded point (`SweepData::points[0]`).
nlohmann::json sweep_data(const SweepData& sweep, std::size_t first_run);

}  // namespace llmbench::report::detail
