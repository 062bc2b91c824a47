#pragma once
/// @file
/// The calibration file's JSON inside `sim` (never in a public header): the one check of its
/// `format` and `format_version` (`parse_calibration_root`, used by the reader and by the writer
/// of the `comm` section, which keeps every other section as it found it) and the reader of the
/// `comm` section (`read_comm_section`), which `parse_calibration` calls.

#include "llmbench/sim/comm_model.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace llmbench::sim::detail {

/// The JSON object of a calibration file's `text` (read from `origin`). Throws `Exception`
/// naming `origin`: invalid JSON (with its byte offset), not an object, a `format` other than
/// `kCalibrationFormat`, or a `format_version` other than `kCalibrationFormatVersion`.
nlohmann::json parse_calibration_root(std::string_view text, const std::string& origin);

/// The `comm` section of `root` (a calibration file read from `origin`), nullopt when absent.
/// Throws `Exception` naming the field ("comm.fits[2].segments[0].latency_us: must be a number ≥
/// 0").
std::optional<CommModel> read_comm_section(const nlohmann::json& root, const std::string& origin);

}  // namespace llmbench::sim::detail
