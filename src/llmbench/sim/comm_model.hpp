#pragma once
/// @file
/// Measured communication for the cost model: curves t(S) fitted to the collectives that
/// `llmbench probe comm` timed (core/collective.hpp's `CollectiveTiming`), and the terms one
/// deployment takes from them (`CommTerms`: the TP all-reduce at tp GPUs, the EP all-to-all at
/// ep GPUs). The calibration file's `comm` section carries them (comm_calibration.hpp); the
/// formulas and the fit are in docs/communication.md.
///
/// The fit. nccl-tests' own reading of its times (`doc/PERFORMANCE.md`, "Time") is that a
/// collective costs about "overhead + size / bw". Per collective, dtype and GPU count the probe
/// fits t(S) = latency + S / bandwidth by weighted least squares on the relative error
/// (minimising Σ ((latency + S_i/bandwidth − t_i) / t_i)², closed form; each parameter kept ≥ 0),
/// so a 4 KB message weighs as much as a 1 GB one. One line over 4 KB..1 GB is reported as the
/// headline; because NCCL switches protocol and algorithm with the size, the simulator uses a
/// curve of at most `max_pieces` such lines over contiguous size ranges (each fitted to at least
/// two sizes), the fewest whose largest relative error at every measured size is within
/// `tolerance`, found exactly by dynamic programming over the split points (ties: smaller sum of
/// squared relative errors). Between two pieces the switch is at the geometric mean of the sizes
/// that bound them; below the first and above the last measured size the end pieces extrapolate.

#include "llmbench/core/collective.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace llmbench::sim {

/// t(S) = latency_us + S · us_per_byte, fitted on sizes [min_bytes, max_bytes].
struct CommPiece {
  std::int64_t min_bytes = 0;
  std::int64_t max_bytes = 0;
  double latency_us = 0;
  double us_per_byte = 0;  ///< 1 / bandwidth; 0 = the time does not grow with the size
  double max_error = 0;  ///< largest |fit − measured| / measured over the sizes it was fitted on

  /// µs for a message of `bytes` (nccl-tests size S).
  [[nodiscard]] double time_us(double bytes) const noexcept {
    return latency_us + us_per_byte * bytes;
  }
  /// The bandwidth in GB/s (10^9 B/s); infinity when `us_per_byte` is 0.
  [[nodiscard]] double bandwidth_gb_s() const noexcept;
};

/// Contiguous pieces in increasing size (file comment: where one hands over to the next).
struct CommCurve {
  std::vector<CommPiece> pieces{};

  /// µs for `bytes` (pieces non-empty).
  [[nodiscard]] double time_us(double bytes) const noexcept;
  /// Seconds for `bytes`.
  [[nodiscard]] double time_s(double bytes) const noexcept { return time_us(bytes) * 1e-6; }
  /// The largest `max_error` of the pieces.
  [[nodiscard]] double max_error() const noexcept;
};

/// How closely the curve must follow the measurements.
struct CommFitOptions {
  double tolerance = 0.10;  ///< largest relative error wanted at any measured size
  int max_pieces = 4;       ///< most pieces allowed (each fitted to ≥ 2 sizes)
};

/// The one line fitted to `points` (≥ 2, any order): the weighted least squares of the file
/// comment, with `min_bytes`/`max_bytes` and `max_error` set over them.
CommPiece fit_line(std::span<const CollectiveTiming> points);
/// The curve fitted to `points` (≥ 2, sorted by size) as the file comment says.
CommCurve fit_curve(std::span<const CollectiveTiming> points, const CommFitOptions& options);
/// (fit − measured) / measured of `curve` at `point` (mean time).
double fit_error(const CommCurve& curve, const CollectiveTiming& point) noexcept;

/// The fit of one collective, dtype and GPU count.
struct CommFit {
  Collective collective = Collective::AllReduce;
  CommDtype dtype = CommDtype::Bf16;
  int gpus = 0;
  CommPiece line{};   ///< one line over every size: the "latency + size / bandwidth" headline
  CommCurve curve{};  ///< what the simulator uses
  std::vector<CollectiveTiming> points{};  ///< the measurements, by size
};

/// Fits every (GPU count, collective, dtype) of `timings` with at least two sizes, in the order
/// they first appear; the points of a fit are sorted by size.
std::vector<CommFit> fit_comm(std::span<const CollectiveTiming> timings,
                              const CommFitOptions& options);

/// Where and how the measurements were taken (the `comm` section's header).
struct CommMeasurement {
  std::string tool{};  ///< "llmbench 0.x (sha)"
  std::string date{};  ///< local time of the sweep, "2026-12-01 12:00:00"
  std::string nccl_version{};
  int cuda_runtime_version = 0;
  int cuda_driver_version = 0;
  std::vector<std::string> devices{};  ///< "0: NVIDIA H100 80GB HBM3 (compute capability 9.0)"
  std::vector<std::pair<std::string, std::string>> nccl_env{};  ///< NCCL_* variables in effect
  int iters = 0;
  int warmup_iters = 0;
  CommFitOptions fit{};
};

/// A set of fits with their provenance: what a calibration file's `comm` section holds.
struct CommModel {
  std::string origin{};  ///< the file it was read from ("" when fitted in this process)
  CommMeasurement measurement{};
  std::vector<CommFit> fits{};

  /// The fit of `c` on `gpus` GPUs in the first dtype of `preference` that has one; nullptr
  /// when none.
  [[nodiscard]] const CommFit* find(Collective c, int gpus,
                                    std::span<const CommDtype> preference) const noexcept;
  /// The GPU counts with a fit of `c`, ascending.
  [[nodiscard]] std::vector<int> gpu_counts(Collective c) const;
};

/// The dtypes the TP all-reduce may take its curve from, in order: the activations are BF16
/// (FP16 moves the same bytes the same way).
inline constexpr std::array<CommDtype, 2> kAllReduceDtypes{CommDtype::Bf16, CommDtype::Fp16};
/// The dtypes the EP all-to-all may take its curve from, in order (it moves bytes, whatever
/// their type: FP8 dispatch and BF16 combine are priced by their sizes).
inline constexpr std::array<CommDtype, 4> kAllToAllDtypes{CommDtype::Bf16, CommDtype::Fp16,
                                                          CommDtype::Fp8E4M3, CommDtype::Fp8E5M2};

/// The measured curves one deployment uses in place of the datasheet terms. Empty = datasheet.
struct CommTerms {
  std::optional<CommCurve> all_reduce{};  ///< TP all-reduce over tp GPUs
  std::optional<CommCurve> all_to_all{};  ///< EP dispatch/combine over ep GPUs
};

/// The terms of `model` for TP `tp` and EP `ep` (a term only where the file has a fit for
/// exactly that GPU count, and only when the deployment uses it: tp > 1, ep > 1).
CommTerms comm_terms(const CommModel& model, int tp, int ep);

}  // namespace llmbench::sim
