#pragma once
/// @file
/// The SLO search of a sweep (docs/sweep.md "SLO search"), on the application floor: one load
/// search (`analysis::slo_search`) per engine setting (a combination of the knob axes' values,
/// one server start each under `--serve-cmd`), the table "setting -> highest load meeting the
/// SLO, binding constraint, throughput there", the sweep JSON's `slo_search` / `slo_settings`,
/// and the extension of a point that is invalid for too little data (`--min-duration`,
/// `--min-requests`). The points themselves are measured by the caller (`SettingMeasure`).

#include "llmbench/analysis/slo_search.hpp"
#include "llmbench/analysis/validity.hpp"
#include "llmbench/analysis/what_if.hpp"
#include "llmbench/app/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::app {

/// The floors of a sweep's points (`--min-duration`, `--min-requests`): a point that is invalid
/// because it holds too little data is measured again with more requests (or a longer
/// `--duration`) until it is valid or `max_scale` times the sweep's is reached.
struct ExtendRule {
  double min_duration_s = 0;     ///< seconds measured at least (0 = no floor)
  std::size_t min_requests = 0;  ///< completed requests at least (0 = no floor)
  std::int64_t max_scale = 16;   ///< most times the sweep's requests (or duration) one point gets
  /// True when a floor was given: only then are points extended.
  [[nodiscard]] bool active() const noexcept { return min_duration_s > 0 || min_requests > 0; }
};

/// `rule` raised to the floors of `extend` (a point shorter than `--min-duration` is invalid).
analysis::ValidityRule with_floors(analysis::ValidityRule rule, const ExtendRule& extend);

/// What the validity rule reads of a finished point: its duration, counts and p99 intervals.
analysis::PointFacts point_facts(const RunResult& result);

/// The scale (times the sweep's requests or duration) of the next measurement of a point that
/// ran at `scale`, or nullopt when it needs none: it is valid as far as data goes
/// (`analysis::needed_to_be_valid` under `rule`), it was interrupted, or `scale` already is the
/// cap. The next scale asks for what is missing with 10% to spare (completed requests grow with
/// the requests sent, and so does the duration of a point at a fixed rate or concurrency),
/// at least `scale + 1` and at most `extend.max_scale`.
std::optional<std::int64_t> extension_scale(const RunResult& result,
                                            const analysis::ValidityRule& rule,
                                            const ExtendRule& extend, std::int64_t scale);

/// One line on how a point was extended ("extended to 4x the requests (400 completed): valid"),
/// "" when it was measured once at scale 1.
std::string extension_note(std::int64_t scale, std::size_t measurements, std::size_t completed,
                           bool valid);

/// What the SLO search reads of a finished point: the constrained metrics, the numbers the
/// answer line shows beside them (throughputs, goodput, p99s), the sample count and the validity
/// verdict. `result` null: a point that did not run (it meets nothing). Throws `Exception` naming
/// `--slo` when a constraint names no number of the results JSON (`results_file` names the file
/// to look in).
analysis::SloMeasurement slo_measurement(const RunResult* result,
                                         const std::vector<analysis::SloConstraint>& constraints,
                                         const std::string& results_file);

/// One point of a setting's search as the sweep measured it.
struct SearchPoint {
  analysis::SloMeasurement measurement;
  std::size_t row = 0;              ///< the sweep point's index
  nlohmann::json p99_ci = nullptr;  ///< the results' `p99_ci`
  std::int64_t scale = 1;           ///< requests (or duration) times the sweep's
  std::size_t measurements = 1;     ///< measurements made of the point (more when extended)
  /// The simulated engine's facts (a `--simulate` sweep's point; none against a server).
  std::optional<analysis::EngineFacts> engine;
};

/// Measures `load` in setting `setting` (an index into the settings given to
/// `search_settings`); nullopt stops the whole search (a signal).
using SettingMeasure = std::function<std::optional<SearchPoint>(std::size_t setting, double load)>;

/// One setting's search.
struct SettingSearch {
  std::string label;               ///< "max-num-seqs=256 max-num-batched-tokens=2048" ("" = none)
  nlohmann::json knobs = nullptr;  ///< {axis name: value} of the setting (null = no knob axis)
  analysis::SloSearchResult result;
  std::vector<SearchPoint> points;  ///< one per `result.points`, in order
};

/// Runs one load search per setting, in order, with `options` and `constraints`; stops (the
/// remaining settings unsearched) when `measure` returns nullopt. `labels` and `knobs` have one
/// entry per setting.
std::vector<SettingSearch> search_settings(const std::vector<std::string>& labels,
                                           const std::vector<nlohmann::json>& knobs,
                                           const std::vector<analysis::SloConstraint>& constraints,
                                           const analysis::SloSearchOptions& options,
                                           const SettingMeasure& measure);

/// The point of a setting's search whose engine names what bounds the setting: the first point
/// that failed the SLO (the load the engine could not carry), else the answer's point; null when
/// that point holds no engine facts (a search against a server).
const SearchPoint* bounding_point(const SettingSearch& search);

/// The bottleneck of each setting at its `bounding_point` (`analysis::name_bottleneck`, docs/
/// compare.md "What-if: the bottleneck"), one line each, then, with two or more such settings,
/// the what-if from the first to the last ("max-num-seqs=256 → max-num-seqs=512: the bottleneck
/// did not move (KV cache in both): ..."); empty when no setting has engine facts.
std::vector<std::string> slo_bottleneck_lines(const std::vector<SettingSearch>& searches,
                                              std::string_view axis);

/// The throughput at a search's answer (output tok/s of the answer's point; NaN without one).
double throughput_at_answer(const analysis::SloSearchResult& result);

/// The binding constraint alone ("p99_ttft_ms<=2000"), without the values `binding` adds.
std::string binding_constraint(const analysis::SloSearchResult& result);

/// The sweep JSON's `slo_search` of one setting: constraints, axis, range, resolution,
/// max_points, method, answer, answer_rounded, first_failing, binding, non_monotonic,
/// provisional(_reasons), converged, stopped, reason and points [{load, meets, margin, samples,
/// ran, p99_ci, row, scale, measurements}].
nlohmann::json slo_search_json(const SettingSearch& search,
                               const std::vector<analysis::SloConstraint>& constraints,
                               std::string_view axis, const analysis::SloSearchOptions& options);

/// The sweep JSON's `slo_settings`: one object per setting {setting, knobs, answer,
/// answer_rounded, binding, binding_constraint, output_throughput, request_throughput,
/// provisional, points, search: `slo_search_json`}.
nlohmann::json slo_settings_json(const std::vector<SettingSearch>& searches,
                                 const std::vector<analysis::SloConstraint>& constraints,
                                 std::string_view axis, const analysis::SloSearchOptions& options);

/// The console lines of one setting's answer (`analysis::slo_answer_lines`, the samples per
/// point, the extended points and the p99 interval of each constrained p99 at the answer).
std::vector<std::string> slo_search_lines(const SettingSearch& search,
                                          const std::vector<analysis::SloConstraint>& constraints,
                                          std::string_view axis);

/// The table of every setting: a title, a header, then one row per setting "setting | highest
/// <axis> meeting the SLO (rounded) | binding constraint | output tok/s there", and one summary
/// line "max-num-seqs=256: 5.8 req/s; max-num-seqs=512: 5.8 req/s". `unit` follows the load
/// ("req/s" or "" for a concurrency).
std::vector<std::string> slo_settings_table(const std::vector<SettingSearch>& searches,
                                            std::string_view axis, std::string_view unit,
                                            double resolution);

}  // namespace llmbench::app
