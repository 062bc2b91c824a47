#pragma once
/// @file
/// The knee of a measured curve by Kneedle (Satopää, Albrecht, Irwin, Raghavan, "Finding a
/// 'Kneedle' in a Haystack: Detecting Knee Points in System Behavior", ICDCS workshops 2011;
/// docs/sweep.md "Knee"): throughput against offered load (concave, increasing: where it stops
/// growing) and latency against throughput (convex, increasing: where it takes off).

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
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

/// One point of a load ladder (one sweep group), for `describe_knee`.
struct LadderPoint {
  double load = std::numeric_limits<double>::quiet_NaN();  ///< concurrency or request rate
  double output_throughput = std::numeric_limits<double>::quiet_NaN();  ///< tok/s
  double p99_ttft_ms = std::numeric_limits<double>::quiet_NaN();
  double median_ttft_ms = std::numeric_limits<double>::quiet_NaN();  ///< for the queue edge
};

/// A step of the ladder that gains less than this share of throughput has stopped growing (the
/// saturation rule of `--profile auto`, docs/sweep.md).
inline constexpr double kSaturationGain = 0.10;

/// A step of the ladder whose median TTFT grows by at least this factor while its throughput
/// gains less than `kSaturationGain` is a queue edge: past it, requests wait for the server
/// (a slot, a batch place) instead of being served sooner, the sign of a slot-limited server.
inline constexpr double kQueueEdgeFactor = 5.0;

/// The throughput knee of a ladder stated with what surrounds it, so that it cannot contradict
/// the saturation throughput: the knee, the throughput gained past it and the latency paid for
/// it, and whether the ladder saturated (its last step gained under `kSaturationGain`).
struct KneeStatement {
  Knee knee;               ///< Kneedle on output tok/s against the load (see `geometric`)
  bool geometric = false;  ///< the loads grow by one factor (±25%): Kneedle runs on log2(load)
  double saturation_tok_s = std::numeric_limits<double>::quiet_NaN();  ///< highest tok/s
  double saturation_load = std::numeric_limits<double>::quiet_NaN();   ///< its load
  /// (saturation − knee tok/s) / knee tok/s; NaN without a knee.
  double gained_past_knee = std::numeric_limits<double>::quiet_NaN();
  double ttft_at_knee_ms = std::numeric_limits<double>::quiet_NaN();
  double ttft_at_saturation_ms = std::numeric_limits<double>::quiet_NaN();
  double last_step_gain = std::numeric_limits<double>::quiet_NaN();  ///< tok/s gain, last step
  bool saturated = false;  ///< last_step_gain < kSaturationGain
  /// The knee came from the saturation rule, not Kneedle: the ladder never gained
  /// `kSaturationGain` over its first point (the knee is that point), or Kneedle saw no bend and
  /// the lowest load no later point betters by `kSaturationGain` is the second-to-last.
  bool saturation_rule = false;
  /// The knee came from the queue edge (`kQueueEdgeFactor`): the first step that gained under
  /// `kSaturationGain` while median TTFT grew `kQueueEdgeFactor`× or more, where that step comes
  /// before the knee Kneedle or the saturation rule placed (the knee is the step's lower load).
  bool queue_edge = false;
  /// The lower load of the ladder's queue edge wherever it lies (the knee's load when
  /// `queue_edge`; later than the knee on a server whose throughput did not grow with the
  /// batch, e.g. a compute-bound CPU server whose slots still queue requests); NaN when none.
  double queue_edge_load = std::numeric_limits<double>::quiet_NaN();
  std::string text;  ///< one line (without a "Knee:" label)
};

/// Kneedle (concave) on the ladder (or the saturation rule where Kneedle cannot see the bend:
/// `KneeStatement::saturation_rule`), moved down to an earlier queue edge
/// (`KneeStatement::queue_edge`: throughput noise past a slot limit can put Kneedle's knee
/// later, while the median TTFT marks the edge by an order of magnitude), then the statement.
/// "Throughput stops growing" is said only when less than `kSaturationGain` was gained past the
/// knee; otherwise the gain is stated. Points with a non-finite load or throughput are left out.
KneeStatement describe_knee(std::vector<LadderPoint> points, std::string_view load_name);

}  // namespace llmbench::analysis
