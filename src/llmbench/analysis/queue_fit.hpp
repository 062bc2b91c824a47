#pragma once
/// @file
/// Queueing curves fitted to a sweep's points (docs/sweep.md "Queue-model
/// fits"), each with its parameters and fit error:
///
/// - the M/M/1-style latency curve L(X) = L0 / (1 − X / Xmax) of latency L against throughput X
///   (the mean response time of an M/M/1 queue, 1/(μ − λ) = (1/μ)/(1 − ρ), with the light-load
///   latency L0 and the saturation throughput Xmax for 1/μ and μ; Kleinrock, "Queueing Systems",
///   vol. 1, §3.2), fitted by least squares on 1/L = 1/L0 − X/(L0·Xmax), which is linear in X;
/// - the practitioners' knee model, λ_c = μ(1 − ρ)/(1 + Q(1 − ρ)), with the queue
///   depth Q the point's concurrency and λ_c its throughput, fitted over μ (closed form for a
///   given ρ) and ρ (a grid over (0, 1)).
///
/// The fit error is the root mean square of the relative errors (predicted − measured) /
/// measured over the points used.

#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace llmbench::analysis {

/// One fitted curve.
struct QueueFit {
  bool ok = false;
  double a = std::numeric_limits<double>::quiet_NaN();  ///< L0 (M/M/1) or μ (knee model)
  double b = std::numeric_limits<double>::quiet_NaN();  ///< Xmax (M/M/1) or ρ (knee model)
  double rms_relative_error = std::numeric_limits<double>::quiet_NaN();
  std::size_t points = 0;  ///< points used
  std::string reason;      ///< why not `ok`
};

/// L(X) = L0 / (1 − X/Xmax) to `points` (X, L), both > 0 (others dropped); needs ≥ 2 points
/// with distinct X and a latency that rises with throughput (else not ok).
QueueFit fit_mm1_latency(const std::vector<std::pair<double, double>>& points);

/// X(Q) = μ(1 − ρ)/(1 + Q(1 − ρ)) to `points` (Q, X), both > 0; needs ≥ 2 points. ρ is
/// searched on the grid 0.001, 0.002, ..., 0.999.
QueueFit fit_knee_model(const std::vector<std::pair<double, double>>& points);

/// A fit is reported as a finding only when its rms relative error is at most this (ours,
/// docs/sweep.md "Queue-model fits"); otherwise "no fit".
inline constexpr double kFitErrorBound = 0.15;

/// True when `fit` is ok and its error is within `kFitErrorBound`.
[[nodiscard]] bool within_bound(const QueueFit& fit) noexcept;

/// One console line on both fits. By default the finding alone: each fit within the bound with
/// the capacity it gives ("queue fits: M/M/1 within 15%, Xmax 5.80 req/s"), else "queue fits: no
/// fit within 15%". `verbose` adds the details: each fit's parameters and rms error, and the
/// errors that missed the bound ("no fit within 15% (M/M/1 86.4%, knee model 323.1%)").
std::string fits_line(const QueueFit& mm1, const QueueFit& knee_model, bool verbose = false);

}  // namespace llmbench::analysis
