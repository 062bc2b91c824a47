#pragma once
/// @file
/// Request traces with arrival times and token counts (`--dataset-name trace`): the Azure LLM
/// inference trace 2023 (Splitwise, ISCA'24; CSV `TIMESTAMP,ContextTokens,GeneratedTokens`), the
/// Mooncake FAST'25 traces (JSONL `timestamp` ms, `input_length`, `output_length`, `hash_ids` of
/// 512-token prefix blocks) and BurstGPT (CSV `Timestamp` s, `Request tokens`, `Response tokens`,
/// ...). docs/workloads.md, "Trace replay", has the format facts and sources. The readers follow
/// sse/parser.hpp's habit: they never crash on input, and every error names the file and line.

#include "llmbench/core/clock.hpp"
#include "llmbench/core/name_table.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::workload {

/// Trace file formats (`--trace-format`).
enum class TraceFormat { Azure, Mooncake, BurstGpt };

/// The one table of trace format names: parsing, the "valid: ..." message and `--help`.
inline constexpr auto kTraceFormats = make_name_table<TraceFormat>({
    {TraceFormat::Azure, "azure"},
    {TraceFormat::Mooncake, "mooncake"},
    {TraceFormat::BurstGpt, "burstgpt"},
});

/// Parses a `--trace-format` name; throws `Exception` naming the flag and the valid names.
TraceFormat parse_trace_format(std::string_view name);

/// The name of `format` in `kTraceFormats`.
std::string_view trace_format_name(TraceFormat format);

/// "azure, mooncake, burstgpt": the valid names, for messages and help.
std::string trace_format_names();

/// One request of a trace.
struct TraceRow {
  TimeNs time_ns = 0;           ///< arrival, ns on the trace's own clock (relative after replay)
  std::int64_t input_len = 0;   ///< prompt tokens (> 0)
  std::int64_t output_len = 0;  ///< output tokens (> 0)
  std::vector<std::uint64_t> hash_ids;  ///< Mooncake prefix-block ids; empty for other formats
  std::int64_t line = 0;                ///< 1-based line in the file (for messages)
};

/// The format of trace text: a first non-blank line starting with `{` is Mooncake JSONL, a CSV
/// header with `ContextTokens` is Azure, one with `Request tokens` is BurstGPT. Throws
/// `Exception` naming `path` otherwise.
TraceFormat detect_trace_format(std::string_view text, const std::string& path);

/// Every row of trace `text` (read from `path`, named in errors) in file order. Rows must have
/// positive lengths and non-decreasing times; BurstGPT rows whose `Response tokens` is 0 (its
/// failed requests) are skipped. Throws `Exception` naming the file and the line on a malformed
/// row, a missing column, a time going back, or a trace without rows.
std::vector<TraceRow> parse_trace(std::string_view text, const std::string& path,
                                  TraceFormat format);

/// What part of a trace to replay, and how (`--trace-*` flags).
struct TraceOptions {
  std::string format;  ///< `--trace-format`; empty = `detect_trace_format`
  double speedup = 1;  ///< `--trace-speedup`: trace time is divided by this (> 0)
  double start_s = 0;  ///< `--trace-start-s`: the window starts this long after the first row
  double duration_s = std::numeric_limits<double>::infinity();  ///< `--trace-duration-s`
  bool spread = false;  ///< `--trace-spread`: rows sharing a timestamp spread over its tick
  /// False with `--request-rate`: the rows give lengths only, the arrival process gives times.
  bool keep_schedule = true;
  /// Tokens per Mooncake `hash_ids` entry (the Mooncake traces use 512).
  std::int64_t block_size = 512;
  /// Text the prompts are cut from (file or folder of .txt); empty = the bundled corpus.
  std::string corpus_path;
  bool operator==(const TraceOptions&) const = default;
};

/// The median gap (ns) between consecutive distinct timestamps of `rows`: a trace's tick (about
/// 3 s in the Mooncake conversation trace); 0 with fewer than two distinct times.
TimeNs trace_tick_ns(const std::vector<TraceRow>& rows);

/// Spreads rows that share a timestamp evenly over the gap to the next distinct timestamp (the
/// last group over one `trace_tick_ns`): row j of a group of k at time t gets t + j·gap/k. Order
/// and the first row of each group are unchanged.
void spread_ticks(std::vector<TraceRow>& rows);

/// The rows to replay: spread when `options.spread`, then those whose time since the first row
/// lies in [start_s, start_s + duration_s), with times rebased to the first of them and divided
/// by `speedup`. Throws `Exception` naming the flag on a bad speed-up or window, or when the
/// window holds no row.
std::vector<TraceRow> replay_window(std::vector<TraceRow> rows, const TraceOptions& options);

}  // namespace llmbench::workload
