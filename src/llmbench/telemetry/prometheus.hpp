#pragma once
/// @file
/// A parser of the Prometheus text exposition format, version 0.0.4
/// (prometheus.io/docs/instrumenting/exposition_formats, "Text-based format"), the body of a
/// server's `GET /metrics`. What it accepts, rule by rule from that page:
/// - lines end with `\n`; empty lines (blanks and tabs only) are ignored;
/// - `# HELP name text` (text escapes `\\` and `\n`) and `# TYPE name type` (counter, gauge,
///   histogram, summary, untyped); any other line starting with `#` is a comment. A name has at
///   most one TYPE line, and it must come before the name's first sample;
/// - a sample is `name[{label="value",...}] value [timestamp]`: metric names match
///   `[a-zA-Z_:][a-zA-Z0-9_:]*`, label names `[a-zA-Z_][a-zA-Z0-9_]*`, label values are quoted
///   with escapes `\\`, `\"` and `\n`, a trailing comma in the label list is allowed; the value
///   is a float (Go's ParseFloat: `NaN`, `+Inf`, `-Inf` included); the timestamp is an int64 of
///   milliseconds since the epoch, optional.
/// The parser never throws on input; errors name the line (1-based) and its byte offset.
/// Tests: tests/unit/telemetry/prometheus_test.cpp.

#include "llmbench/core/error.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::telemetry {

/// A metric family's `# TYPE` (Untyped when there is no TYPE line).
enum class MetricType : std::uint8_t { Untyped, Counter, Gauge, Histogram, Summary };

/// The TYPE keyword of each `MetricType` (the one table behind parsing and messages).
struct MetricTypeName {
  MetricType type;
  std::string_view name;
};
inline constexpr std::array<MetricTypeName, 5> kMetricTypeNames{{
    {.type = MetricType::Untyped, .name = "untyped"},
    {.type = MetricType::Counter, .name = "counter"},
    {.type = MetricType::Gauge, .name = "gauge"},
    {.type = MetricType::Histogram, .name = "histogram"},
    {.type = MetricType::Summary, .name = "summary"},
}};

/// The TYPE keyword of `type` ("counter", ...).
[[nodiscard]] std::string_view metric_type_name(MetricType type) noexcept;

/// One label pair, the value unescaped.
struct Label {
  std::string name;
  std::string value;
};

/// One sample line. `labels` keep the order of the line.
struct Sample {
  std::string name;  ///< the sample's own name (`x_bucket` for a histogram bucket of `x`)
  std::vector<Label> labels{};
  double value = std::numeric_limits<double>::quiet_NaN();
  std::optional<std::int64_t> timestamp_ms;  ///< ms since the Unix epoch, when given

  /// The value of label `name`, or nullopt.
  [[nodiscard]] std::optional<std::string_view> label(std::string_view name) const;
  /// `name{a="x",b="y"}` with the labels sorted by name and values re-escaped: one key per
  /// series, the same whatever order the server wrote the labels in. `name` alone without labels.
  [[nodiscard]] std::string series_key() const;
};

/// A family's metadata from its `# HELP` and `# TYPE` lines.
struct Family {
  std::string name;
  MetricType type = MetricType::Untyped;
  std::string help{};  ///< unescaped; "" without a HELP line
};

/// A parsed exposition: every sample in order, and the families that had HELP or TYPE lines.
struct Exposition {
  std::vector<Sample> samples;
  std::vector<Family> families;

  /// The family a sample name belongs to: the family of that exact name, else (for `_bucket`,
  /// `_sum`, `_count` of a histogram, `_sum`, `_count` of a summary) the base name's family.
  /// nullptr when the name has no HELP or TYPE line.
  [[nodiscard]] const Family* family_of(std::string_view sample_name) const;
  /// The type of a sample name through `family_of` (Untyped without one).
  [[nodiscard]] MetricType type_of(std::string_view sample_name) const;
};

/// Parses `text` (a whole `/metrics` body). Errors: `source` = `source_name`, `offset` = the byte
/// offset of the offending line's start, the message starting with "line N: ".
[[nodiscard]] Result<Exposition> parse_exposition(std::string_view text,
                                                  std::string_view source_name = "/metrics");

/// Parses one float the way the format spells them (Go's ParseFloat: decimal or exponent form,
/// an optional sign, `NaN`, `Inf`, `+Inf`, `-Inf`, case-insensitive). nullopt when malformed.
[[nodiscard]] std::optional<double> parse_prometheus_float(std::string_view text) noexcept;

}  // namespace llmbench::telemetry
