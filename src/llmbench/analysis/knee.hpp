#pragma once
/// @file
/// The knee of a measured curve by Kneedle (Satopää, Albrecht, Irwin, Raghavan, "Finding a
/// 'Kneedle' in a Haystack: Detecting Knee Points in System Behavior", ICDCS workshops 2011;
/// docs/sweep.md "Knee"): throughput against offered load (concave, increasing: where it stops
/// growing) and latency against throughput (convex, increasing: where it takes off).

#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace llmbench::analysis {

/// Which way the curve bends (Kneedle handles each by the sign of its difference curve).
enum class CurveShape : unsigned char {
  ConcaveIncreasing,  ///< rises, then flattens (throughput against load)
  ConvexIncreasing,   ///< flat, then rises (latency against throughput)
};

/// Kneedle's parameters.
struct KneeOptions {
  CurveShape shape = CurveShape::ConcaveIncreasing;
  double sensitivity = 1.0;  ///< S: how far the difference curve must fall after a maximum
};

/// A knee (or why there is none).
struct Knee {
  bool found = false;
  std::size_t index = 0;  ///< index of the knee in the points sorted by x
  double x = std::numeric_limits<double>::quiet_NaN();
  double y = std::numeric_limits<double>::quiet_NaN();
  double difference = std::numeric_limits<double>::quiet_NaN();  ///< Kneedle's d at the knee
  std::string reason;  ///< why none was found ("" when found)
};

/// Kneedle, offline: the points (x, y) are sorted by x (ties keep their order); x and y are
/// normalized to [0, 1]; the difference curve is d = y_n − x_n (concave) or x_n − y_n (convex);
/// the first local maximum of d after which d falls below d_max − S / (n − 1) (the paper's
/// threshold with evenly spaced normalized x: S times the mean x gap) before the next local
/// maximum is the knee. A maximum at the last point, or a curve that never falls enough, is no
/// knee (the curve has not bent within the points: "not saturated"). Needs ≥ 3 points with
/// distinct x and y; non-finite points are dropped.
Knee find_knee(std::vector<std::pair<double, double>> points, const KneeOptions& options);

}  // namespace llmbench::analysis
