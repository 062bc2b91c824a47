#pragma once
/// @file
/// A double as a JSON value. JSON has no NaN and no infinity (RFC 8259 section 6), so every
/// writer of results, configurations and telemetry picks one of the two named policies here
/// instead of a local helper.

#include <nlohmann/json.hpp>

#include <cmath>

namespace llmbench {

/// Policy "null": a finite number as itself; NaN, +inf and -inf as null. For measured values
/// (latencies, rates, spreads), where a non-finite value means "undefined".
inline nlohmann::json finite_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

/// Policy "inf as text": a finite number as itself, +inf as "inf" and -inf as "-inf", NaN as
/// null. For configured values where infinity is a choice (`--request-rate inf`,
/// `--trace-duration-s` left open), so it survives the round trip as the user typed it.
inline nlohmann::json number_or_inf(double value) {
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
}

}  // namespace llmbench
