#pragma once
/// @file
/// The `comm` section of a calibration file (calibration_file.hpp, docs/calibration.md): what
/// `llmbench probe comm` writes and what `--calibration FILE` gives the simulator's TP
/// all-reduce and EP all-to-all terms. The one reader of the file, `parse_calibration`, reads it
/// into `Calibration::comm`; the writer here replaces only `comm` and leaves every other section
/// as it found it. Fields:
///
/// ```
/// "comm": {
///   "tool", "date", "nccl_version", "cuda_runtime_version", "cuda_driver_version",
///   "devices": ["0: NVIDIA H100 80GB HBM3 (compute capability 9.0)", …],
///   "nccl_env": {"NCCL_NVLS_ENABLE": "0", …}, "iters", "warmup_iters",
///   "timing": "…", "fit_method": "…", "fit_tolerance", "max_pieces",
///   "fits": [{
///     "collective": "all_reduce", "dtype": "bf16", "gpus": 8,
///     "latency_us", "bandwidth_gb_s", "max_error",            ← the one-line headline
///     "segments": [{"min_bytes", "max_bytes", "latency_us", "bandwidth_gb_s", "max_error"}],
///     "points": [{"bytes", "count", "iters", "mean_us", "p99_us", "min_us", "max_us",
///                 "algbw_gb_s", "busbw_gb_s", "fit_us", "error"}]
///   }, …]
/// }
/// ```
/// `bandwidth_gb_s` is the fit's S / (t − latency) in 10^9 B/s with S the nccl-tests size (null:
/// the time does not grow with the size). Only `collective`, `dtype`, `gpus` and `segments` (or,
/// without segments, `latency_us` and `bandwidth_gb_s` as one segment) are needed to read a fit,
/// so a hand-written fragment works too; `points` are kept for reports.

#include "llmbench/sim/comm_model.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace llmbench::sim {

/// The calibration file with `model` as its `comm` section: `existing` (the file's text, "" for
/// a new file) with only `comm` replaced, or a new file with an empty `target`.
/// Throws `Exception` naming `origin` when `existing` is not a calibration file.
std::string write_comm_calibration(const CommModel& model, std::string_view existing,
                                   const std::string& origin);

/// Checks that `path` can take a `comm` section before anything is measured: absent, or a
/// calibration file. Throws `Exception` naming the path otherwise.
void check_comm_calibration_output(const std::string& path);

}  // namespace llmbench::sim
