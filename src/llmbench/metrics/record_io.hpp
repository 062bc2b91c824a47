#pragma once
/// @file
/// One JSON object per line for `RequestRecord` (the per-request JSONL of `--result-dir`). The
/// schema is documented in docs/metrics.md ("Per-request records").

#include "llmbench/core/error.hpp"
#include "llmbench/metrics/record.hpp"

#include <string>
#include <string_view>

namespace llmbench::metrics {

/// Serializes a record as one compact JSON line without the trailing newline. Times in ns.
std::string record_to_json_line(const RequestRecord& record);

/// Parses a line written by `record_to_json_line`. Errors name the field and byte offset.
Result<RequestRecord> record_from_json_line(std::string_view line);

}  // namespace llmbench::metrics
