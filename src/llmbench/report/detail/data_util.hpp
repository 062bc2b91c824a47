#pragma once
/// @file
/// Helpers shared by the files that build the report's embedded data (report_data.cpp,
/// sweep_data.cpp). Private to the report module.

#include "llmbench/core/error.hpp"
#include "llmbench/report/inputs.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace llmbench::report::detail {

/// `f()`, with a nlohmann::json exception (a results or sweep file whose value has an unexpected
/// type, such as a string where a number belongs) turned into an `Exception` (exit 2) that says
/// so, instead of an internal error.
template <typename F>
auto reading_files(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const nlohmann::json::exception& e) {
    throw Exception(Error{std::string("a results or sweep file holds a value of an unexpected "
                                      "type or shape: ") +
                              e.what(),
                          "report", -1});
  }
}

/// `x` rounded to 6 significant digits (null when not finite): the embedded data is drawn, not
/// recomputed, and 6 digits keep the file small.
nlohmann::json round6(double x);

/// The number at `key` of `j` as a double; NaN when it is missing, null or not a number.
double number_at(const nlohmann::json& j, std::string_view key);

/// The sweep entry of the embedded data (docs/report.md "Embedded data", `sweeps`): its points
/// with their load (the chart's x), configuration, percentiles, verdict badges and SLO result,
/// the configurations, the shared configuration lines, the headlines, the knees of the sweep
/// JSON, the SLO bounds of its `slo_search` and the Pareto frontier. `first_run` is the index in
/// `runs` of the sweep's first loaded point (`SweepData::points[0]`).
nlohmann::json sweep_data(const SweepData& sweep, std::size_t first_run);

/// The server-metrics and GPU series of the results' `telemetry` on the run's clock (seconds
/// since run start): `server` {engine, scrapes, failures, t_s, series [{key, label, values}]}
/// (gauges as they are, KV-cache usage and hit rates in %, counters as rates per second between
/// scrapes) or null, and `gpus` [{name, t_s, sm_util_pct, mem_util_pct, power_w, sm_clock_mhz,
/// temperature_c, memory_used_gib}]. Failed scrapes and missing NVML are added to `notes`.
nlohmann::json telemetry_series(const nlohmann::json& results, nlohmann::json& notes);

}  // namespace llmbench::report::detail
