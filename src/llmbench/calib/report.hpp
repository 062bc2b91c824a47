#pragma once
/// @file
/// What a calibration writes: the calibration file (the sections of sim/calibration_file.hpp, plus
/// the `fit` section with what was fitted on and the error per metric) and the console tables of
/// predicted against measured figures, fitted and held-out points apart.

#include "llmbench/calib/fit.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace llmbench::calib {

/// A finished calibration: the fit, the held-out predictions and how it was asked for.
struct Calibration {
  FitResult fit;
  std::vector<PointResult> held_out;  ///< predicted with the fitted spec, never fitted on
  std::string engine_version;         ///< "" = unknown
  std::vector<std::string> inputs;    ///< files (or the live server's URL) the points came from
  std::vector<std::string> select;    ///< `--select` filters as typed
  std::vector<std::string> holdout;   ///< `--holdout` filters as typed
  std::string created;                ///< date and time, ISO 8601
};

/// The step-time model's parameters as a JSON object under the `sim::Efficiency` field names:
/// the calibration file's `cost_model` section (read back by sim/calibration_file.hpp) and the
/// `efficiency` of the engine in a results file's `config_effective`.
nlohmann::json cost_model_json(const sim::Efficiency& efficiency);

/// Mean absolute percentage errors of one point set, per metric (`kMissing` where no point has
/// the metric).
struct ErrorSummary {
  double ttft_mean = kMissing;
  double ttft_median = kMissing;
  double ttft_p99 = kMissing;
  double tpot = kMissing;
  double output_per_gpu = kMissing;
  double e2e_mean = kMissing;
  double itl_median = kMissing;
  std::size_t points = 0;
};
/// The MAPEs of `results`.
ErrorSummary summarize_errors(const std::vector<PointResult>& results);

/// One line for logs and the file's `fit.summary`: engine, target, points fitted and the held-out
/// (else fit) MAPE of TPOT, mean TTFT and output tokens/s per GPU.
std::string summary_line(const Calibration& c);

/// The calibration file's JSON text (format of sim/calibration_file.hpp, 2-space indented).
std::string calibration_json(const Calibration& c);

/// A text table: per point, measured / predicted / error of mean, median and p99 TTFT, TPOT and
/// output tokens/s per GPU; then the MAPE per metric.
std::string points_table(const std::vector<PointResult>& results, const std::string& title);

/// The fitted parameters: initial and fitted value, posterior spread, identified or not.
std::string params_table(const FitResult& fit);

}  // namespace llmbench::calib
