#pragma once
/// @file
/// `llmbench sweep --profile auto` (docs/sweep.md "--profile auto"), on the application floor:
/// the synchronous point (concurrency 1), the saturation search (concurrency doubled, every
/// request sent at once, until output tok/s grows less than 10% over the previous point or the
/// cap is reached), then `rates` request rates evenly spaced strictly between the synchronous
/// and the saturating request throughput, each capped at the saturating concurrency. The points
/// are measured by the caller (`ProfileMeasure`).

#include <nlohmann/json.hpp>

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::app {

/// What the profile reads of one point (NaN for a point that failed).
struct ProfilePoint {
  double request_throughput = std::numeric_limits<double>::quiet_NaN();  ///< req/s
  double output_throughput = std::numeric_limits<double>::quiet_NaN();   ///< tok/s
};

/// Measures the point (request rate, +inf = all at once; max concurrency); nullopt once the
/// sweep is stopped (a signal): the profile ends there.
using ProfileMeasure = std::function<std::optional<ProfilePoint>(double rate, double concurrency)>;

/// `--profile-rates` and `--profile-max-concurrency`.
struct ProfileOptions {
  int rates = 5;
  int max_concurrency = 256;
};

/// Runs the profile; returns the sweep JSON's `profile` (name, rule, both throughputs, the
/// saturating concurrency, saturated, reason, rates) and appends its console line to `lines`.
nlohmann::json profile_auto(const ProfileOptions& options, const ProfileMeasure& measure,
                            std::vector<std::string>& lines);

}  // namespace llmbench::app
