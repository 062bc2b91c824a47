#pragma once
/// @file
/// The calibration file (`llmbench calibrate` writes it; `--calibration FILE` on `simulate`,
/// `serve`, `sweep --simulate` and `plan` reads it): a JSON object of named sections, so that
/// later fits can add theirs without touching these (format and fields: docs/simulator.md
/// "Calibration file"):
///
/// * `"format"`: `"llmbench-calibration"`, `"format_version"`: 1;
/// * `"target"`: what was calibrated — engine family and version, model and GPU profiles,
///   parallelism;
/// * `"engine"`: the calibrated server's scheduler knobs (vLLM `EngineArgs` names; SGLang's and
///   llama.cpp's as mapped in docs/simulator.md "Engine families");
/// * `"cost_model"`: the step-time model's parameters (`Efficiency` field names);
/// * `"serving"`: the costs outside engine steps (`ServingOverheads`);
/// * `"fit"`: what the parameters were fitted on, the error per metric, the parameters the data
///   could not identify (written by the calib module; here only its one-line `"summary"` is read);
/// * `"comm"` (optional): measured collectives, all-reduce and all-to-all time against size per
///   GPU count (`llmbench probe comm`, comm_calibration.hpp);
/// * `"tool"`: the llmbench version that wrote it.
///
/// Every section is optional (a file `probe comm` started holds `target` and `comm` only);
/// sections this reader does not know are left alone. This header is the one reader, used by
/// `load_engine_spec`; the writers are `calib::calibration_json` (the engine terms, keeping a
/// `comm` section it was given) and `write_comm_calibration` (the `comm` section alone).

#include "llmbench/sim/engine.hpp"
#include "llmbench/sim/engine_spec.hpp"
#include "llmbench/sim/profiles.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace llmbench::sim {

/// The `"format"` value of a calibration file.
inline constexpr std::string_view kCalibrationFormat = "llmbench-calibration";
/// The `"format_version"` this reader understands.
inline constexpr int kCalibrationFormatVersion = 1;

/// The `"target"` section: what the parameters belong to.
struct CalibrationTarget {
  std::string engine;          ///< engine family name (`to_string(EngineFamily)`)
  std::string engine_version;  ///< "0.5.9", "b4798", … ("" = unknown)
  std::string model_profile;   ///< data/sim/models name
  std::string gpu;             ///< data/sim/gpus name
  int tp = 0;                  ///< 0 = not recorded
  int ep = 0;
  int dp = 0;
};

/// A calibration file as read.
struct Calibration {
  std::string origin;  ///< the path it was read from
  CalibrationTarget target;
  /// The calibrated server's knobs (`"engine"`), with `engine`, `model_profile`, `gpu` and the
  /// parallelism of `target` filled in: the defaults a run with this file starts from.
  EngineOverrides engine;
  Efficiency cost_model;  ///< `"cost_model"` (absent fields keep `Efficiency`'s defaults)
  bool has_cost_model = false;
  ServingOverheads serving;       ///< `"serving"`
  std::string fit_summary;        ///< `"fit"."summary"`: one line for logs ("" when absent)
  std::optional<CommModel> comm;  ///< `"comm"`: measured collectives, nullopt when absent
};

/// Parses a calibration file. Throws `Exception` whose source is `origin` and whose message names
/// the section and field ("engine.max_num_seqs: must be an integer ≥ 1"), on a wrong format name
/// or a format version this reader does not know.
Calibration parse_calibration(std::string_view json_text, const std::string& origin);
/// Reads and parses `path` (`parse_calibration`); a missing file is an `Exception` naming it.
Calibration load_calibration(const std::string& path);

/// `typed` over `file`: every override set in `typed` wins, every other one comes from the
/// calibration's `engine` knobs. `typed.calibration` is kept.
EngineOverrides merge_overrides(const EngineOverrides& typed, const EngineOverrides& file);

}  // namespace llmbench::sim
