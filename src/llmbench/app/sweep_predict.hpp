#pragma once
/// @file
/// Predict, then verify (docs/sweep.md "Predict, then verify"): a sweep with `--predict` runs
/// its grid in the simulator first, ranks the engine settings by what the simulation says (the
/// SLO answer with `--slo`, else the highest output tok/s of the setting), measures only the best
/// `--verify-top K` settings on the real server, and states the prediction beside the
/// measurement with its error, per setting, load point and metric.

#include "llmbench/analysis/slo_search.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace llmbench::app {

/// The metrics compared per point: throughputs and the latencies users set SLOs on.
inline constexpr const char* kPredictedMetrics[] = {
    "output_throughput", "request_throughput", "mean_ttft_ms", "p99_ttft_ms",
    "mean_tpot_ms",      "p99_tpot_ms",        "mean_e2el_ms"};

/// The order of the settings, best first, by `scores` (higher is better; NaN ranks last, ties
/// keep the settings' order).
std::vector<std::size_t> rank_settings(const std::vector<double>& scores);

/// One number predicted and measured. `error` = (predicted − measured) / |measured| (NaN when
/// either is undefined or the measurement is 0).
struct PredictionError {
  std::string setting;  ///< the setting's label
  std::string point;    ///< the load ("max-concurrency=4"), or "SLO answer" / "at the SLO answer"
  std::string metric;
  double predicted = std::numeric_limits<double>::quiet_NaN();
  double measured = std::numeric_limits<double>::quiet_NaN();
  double error = std::numeric_limits<double>::quiet_NaN();
};

/// (predicted − measured) / |measured|; NaN when undefined.
double relative_error(double predicted, double measured) noexcept;

/// The comparisons of one point: each of `metrics` found in both maps.
std::vector<PredictionError> compare_point(const std::string& setting, const std::string& point,
                                           const std::map<std::string, double>& predicted,
                                           const std::map<std::string, double>& measured,
                                           const std::vector<std::string>& metrics);

/// A setting of the prediction: its label, its predicted score, its rank (0 = best) and whether
/// it was measured.
struct RankedSetting {
  std::string label;
  double score = std::numeric_limits<double>::quiet_NaN();
  std::size_t rank = 0;
  bool verified = false;
};

/// The settings ranked by `scores` (`rank_settings`), the best `verify_top` marked verified;
/// `top` gets their indexes, best first.
std::vector<RankedSetting> ranked_settings(const std::vector<std::string>& labels,
                                           const std::vector<double>& scores,
                                           std::size_t verify_top, std::vector<std::size_t>& top);

/// The comparisons of one setting's SLO search, predicted against measured: the answer (the
/// highest load meeting the SLO) and `kPredictedMetrics` at each search's own answer (point
/// "at the SLO answer").
std::vector<PredictionError> compare_slo_answers(const std::string& setting,
                                                 const analysis::SloSearchResult& predicted,
                                                 const analysis::SloSearchResult& measured);

/// The sweep JSON's `predict`: {ranked_by, predicted_sweep, calibration, verify_top, settings:
/// [{setting, score, rank, verified}], comparisons: [{setting, point, metric, predicted,
/// measured, error}], max_abs_error: {metric: worst |error|}}.
nlohmann::json predict_json(const std::string& ranked_by, const std::string& predicted_sweep,
                            const std::string& calibration, std::size_t verify_top,
                            const std::vector<RankedSetting>& settings,
                            const std::vector<PredictionError>& comparisons);

/// The console lines: the ranking, then a table "setting | point | metric | predicted |
/// measured | error", then the worst error per metric.
std::vector<std::string> predict_lines(const std::string& ranked_by,
                                       const std::vector<RankedSetting>& settings,
                                       const std::vector<PredictionError>& comparisons);

}  // namespace llmbench::app
