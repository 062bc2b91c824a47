#pragma once
/// @file
/// The files and facts of `llmbench calibrate` and `llmbench probe comm` (docs/simulator.md
/// "Calibration"): what a live server says about itself, the calibration file written with the
/// `comm` section that belongs with it, and the `comm` section of a collective probe.

#include "llmbench/calib/report.hpp"
#include "llmbench/sim/comm_model.hpp"
#include "llmbench/sim/engine_spec.hpp"
#include "llmbench/telemetry/nccl.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace llmbench::app {

/// What the live server says about itself (llama.cpp `/props`, SGLang `/get_server_info`, vLLM
/// `/version`); unset fields stay unknown.
struct ServerFacts {
  std::optional<std::string> engine{};  ///< family name
  std::string version{};
  std::optional<std::int64_t> slots{};         ///< llama.cpp `total_slots`
  std::optional<std::int64_t> slot_context{};  ///< llama.cpp `n_ctx` per slot
  sim::EngineOverrides knobs{};                ///< knobs the server reported
};

/// Asks the server at `base_url` what it is (a few GETs, 10 s each at most); unreachable
/// endpoints are skipped. Throws `Exception` naming "--base-url" when it is no URL.
ServerFacts discover_server(const std::string& base_url);

/// Writes the calibration `c` to `output` (throws `Exception` naming the file when it cannot),
/// with the `comm` section that belongs with it: the one of `--calibration` (in `spec`), else
/// the one of the file being replaced at `output`, so that a refit keeps the measured
/// collectives `llmbench probe comm` wrote (docs/calibration.md).
void write_calibration(const calib::Calibration& c, const sim::EngineSpec& spec,
                       const std::string& output);

/// The `comm` section of a collective probe: the measurement's facts (tool, date, NCCL and CUDA
/// versions, devices, environment, iterations) and the fits of `result`'s timings (`fit`).
sim::CommModel comm_model(const telemetry::CommProbeResult& result,
                          const telemetry::CommProbeOptions& options,
                          const sim::CommFitOptions& fit);

/// Writes `model` as the `comm` section of the calibration file `path`: a new file, or
/// `path`'s other sections kept. Throws `Exception` naming the file when it cannot.
void write_comm_section(const std::string& path, const sim::CommModel& model);

/// The local time now as ISO 8601 without zone ("2026-12-06T09:15:00"), the `created` of a
/// calibration file.
std::string local_time_iso();

}  // namespace llmbench::app
