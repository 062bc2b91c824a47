// Trace readers and the replay window. Formats (docs/workloads.md, "Trace replay"):
//  - Azure LLM inference trace 2023 (github.com/Azure/AzurePublicDataset,
//  AzureLLMInferenceDataset2023.md):
//    CSV header `TIMESTAMP,ContextTokens,GeneratedTokens`; TIMESTAMP a naive datetime
//    `YYYY-MM-DD HH:MM:SS.fffffff` (100 ns resolution).
//  - Mooncake FAST'25 traces (github.com/kvcache-ai/Mooncake, FAST25-release/traces): JSONL with
//    `timestamp` (ms), `input_length`, `output_length`, `hash_ids` (one id per 512-token block).
//  - BurstGPT (github.com/HPMLL/BurstGPT, README): CSV `Timestamp` (s since the trace start),
//    `Model`, `Request tokens`, `Response tokens`, `Total tokens`, `Log Type`; failed requests have
//    `Response tokens` 0.

#include "llmbench/workload/trace.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/core/text.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

namespace llmbench::workload {
namespace {

[[noreturn]] void fail_line(const std::string& path, std::int64_t line, const std::string& what) {
  throw Exception(Error{fmt::format("line {}: {}", line, what), path, -1});
}

/// Calls `fn(line_number, line)` for each non-blank line (a BOM and "\r\n" are accepted).
template <class Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  std::size_t pos = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  std::int64_t number = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    ++number;
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.ends_with('\r')) {
      line.remove_suffix(1);
    }
    if (!is_blank(line)) {
      fn(number, line);
    }
  }
}

/// CSV fields of one line (these traces quote nothing; surrounding quotes are stripped).
std::vector<std::string_view> csv_fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = std::min(line.find(',', pos), line.size());
    std::string_view field = trim(line.substr(pos, comma - pos));
    if (field.size() >= 2 && field.front() == '"' && field.back() == '"') {
      field = field.substr(1, field.size() - 2);
    }
    out.push_back(field);
    if (comma == line.size()) {
      return out;
    }
    pos = comma + 1;
  }
}

std::optional<std::int64_t> to_int(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) {
    return std::nullopt;
  }
  return v;
}

std::optional<double> to_double(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-Compatible Low-Level
/// Date Algorithms", `days_from_civil`).
std::int64_t days_from_civil(std::int64_t y, std::int64_t m, std::int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/// ns since 1970 of an Azure `YYYY-MM-DD HH:MM:SS[.f...]` naive datetime; nullopt if malformed.
std::optional<TimeNs> azure_time(std::string_view s) {
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  const auto y = to_int(s.substr(0, 4));
  const auto mo = to_int(s.substr(5, 2));
  const auto d = to_int(s.substr(8, 2));
  const auto h = to_int(s.substr(11, 2));
  const auto mi = to_int(s.substr(14, 2));
  const auto sec = to_int(s.substr(17, 2));
  if (!y || !mo || !d || !h || !mi || !sec || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 ||
      *mi > 59 || *sec > 60) {
    return std::nullopt;
  }
  TimeNs frac = 0;
  if (s.size() > 19) {
    const std::string_view digits = s.substr(20);
    if (s[19] != '.' || digits.empty() || digits.size() > 9 || !to_int(digits) ||
        digits.front() == '-' || digits.front() == '+') {
      return std::nullopt;
    }
    frac = *to_int(digits);
    for (std::size_t i = digits.size(); i < 9; ++i) frac *= 10;
  }
  const std::int64_t secs = ((days_from_civil(*y, *mo, *d) * 24 + *h) * 60 + *mi) * 60 + *sec;
  return secs * 1'000'000'000 + frac;
}

/// Index of the header column named `name` (case-insensitive); fails naming the file otherwise.
std::size_t column(const std::vector<std::string_view>& header, std::string_view name,
                   const std::string& path, std::int64_t line) {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i].size() == name.size() &&
        std::equal(name.begin(), name.end(), header[i].begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return i;
    }
  }
  fail_line(path, line, fmt::format("the header has no \"{}\" column", name));
}

std::int64_t positive_length(std::string_view field, std::string_view what, const std::string& path,
                             std::int64_t line) {
  const auto v = to_int(field);
  if (!v || *v <= 0) {
    fail_line(path, line, fmt::format("{} must be a positive integer, got \"{}\"", what, field));
  }
  return *v;
}

std::vector<TraceRow> parse_csv(std::string_view text, const std::string& path,
                                TraceFormat format) {
  const bool azure = format == TraceFormat::Azure;
  std::vector<TraceRow> rows;
  std::vector<std::string_view> header;
  std::size_t time_col = 0;
  std::size_t in_col = 0;
  std::size_t out_col = 0;
  std::int64_t skipped = 0;
  for_each_line(text, [&](std::int64_t number, std::string_view line) {
    auto fields = csv_fields(line);
    if (header.empty()) {
      header = std::move(fields);
      time_col = column(header, azure ? "TIMESTAMP" : "Timestamp", path, number);
      in_col = column(header, azure ? "ContextTokens" : "Request tokens", path, number);
      out_col = column(header, azure ? "GeneratedTokens" : "Response tokens", path, number);
      return;
    }
    if (fields.size() != header.size()) {
      fail_line(path, number,
                fmt::format("{} fields, the header has {}", fields.size(), header.size()));
    }
    TraceRow row;
    row.line = number;
    if (azure) {
      const auto t = azure_time(fields[time_col]);
      if (!t) {
        fail_line(
            path, number,
            fmt::format("TIMESTAMP \"{}\" is not YYYY-MM-DD HH:MM:SS.fffffff", fields[time_col]));
      }
      row.time_ns = *t;
    } else {
      const auto t = to_double(fields[time_col]);
      if (!t || *t < 0) {
        fail_line(path, number,
                  fmt::format("Timestamp \"{}\" is not a number of seconds", fields[time_col]));
      }
      row.time_ns = std::llround(*t * 1e9);
      if (to_int(fields[out_col]) == 0) {
        ++skipped;  // BurstGPT's failed requests
        return;
      }
    }
    row.input_len = positive_length(fields[in_col], header[in_col], path, number);
    row.output_len = positive_length(fields[out_col], header[out_col], path, number);
    rows.push_back(std::move(row));
  });
  if (skipped > 0) {
    log::info("{}: skipped {} failed requests (Response tokens 0)", path, skipped);
  }
  return rows;
}

std::int64_t json_length(const nlohmann::json& v, const char* key, const std::string& path,
                         std::int64_t line) {
  const auto it = v.find(key);
  if (it == v.end() || !it->is_number_integer() || it->get<std::int64_t>() <= 0) {
    fail_line(path, line, fmt::format("\"{}\" must be a positive integer", key));
  }
  return it->get<std::int64_t>();
}

std::vector<TraceRow> parse_mooncake(std::string_view text, const std::string& path) {
  std::vector<TraceRow> rows;
  for_each_line(text, [&](std::int64_t number, std::string_view line) {
    nlohmann::json v;
    try {
      v = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      fail_line(path, number, fmt::format("not valid JSON ({})", e.what()));
    }
    if (!v.is_object()) {
      fail_line(path, number, "expected a JSON object");
    }
    TraceRow row;
    row.line = number;
    const auto ts = v.find("timestamp");
    if (ts == v.end() || !ts->is_number() || ts->get<double>() < 0) {
      fail_line(path, number, "\"timestamp\" must be a number of milliseconds >= 0");
    }
    row.time_ns = std::llround(ts->get<double>() * 1e6);
    row.input_len = json_length(v, "input_length", path, number);
    row.output_len = json_length(v, "output_length", path, number);
    const auto ids = v.find("hash_ids");
    if (ids == v.end() || !ids->is_array()) {
      fail_line(path, number, "\"hash_ids\" must be an array of integers");
    }
    for (const auto& id : *ids) {
      if (!id.is_number_integer() || id.get<std::int64_t>() < 0) {
        fail_line(path, number, "\"hash_ids\" must hold integers >= 0");
      }
      row.hash_ids.push_back(id.get<std::uint64_t>());
    }
    rows.push_back(std::move(row));
  });
  return rows;
}

}  // namespace

TraceFormat parse_trace_format(std::string_view name) {
  if (const auto format = kTraceFormats.find(name))
    return *format;
  throw Exception(
      Error{fmt::format("unknown trace format \"{}\"; valid: {}", name, trace_format_names()),
            "--trace-format", -1});
}

std::string_view trace_format_name(TraceFormat format) {
  return kTraceFormats.name(format, "?");
}

std::string trace_format_names() {
  return kTraceFormats.names();
}

TraceFormat detect_trace_format(std::string_view text, const std::string& path) {
  std::optional<TraceFormat> found;
  std::int64_t first = 0;
  for_each_line(text, [&](std::int64_t number, std::string_view line) {
    if (first != 0) {
      return;
    }
    first = number;
    if (trim(line).starts_with('{')) {
      found = TraceFormat::Mooncake;
    } else if (line.find("ContextTokens") != std::string_view::npos) {
      found = TraceFormat::Azure;
    } else if (line.find("Request tokens") != std::string_view::npos) {
      found = TraceFormat::BurstGpt;
    }
  });
  if (!found) {
    throw Exception(Error{fmt::format("cannot tell the trace format from line {} (Mooncake JSONL, "
                                      "or a CSV header with ContextTokens or Request tokens); "
                                      "give --trace-format ({})",
                                      std::max<std::int64_t>(first, 1), trace_format_names()),
                          path, -1});
  }
  return *found;
}

std::vector<TraceRow> parse_trace(std::string_view text, const std::string& path,
                                  TraceFormat format) {
  auto rows =
      format == TraceFormat::Mooncake ? parse_mooncake(text, path) : parse_csv(text, path, format);
  if (rows.empty()) {
    throw Exception(Error{"the trace has no rows", path, -1});
  }
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].time_ns < rows[i - 1].time_ns) {
      fail_line(path, rows[i].line,
                fmt::format("time goes back from line {} (rows must be sorted by time)",
                            rows[i - 1].line));
    }
  }
  return rows;
}

TimeNs trace_tick_ns(const std::vector<TraceRow>& rows) {
  std::vector<TimeNs> gaps;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].time_ns != rows[i - 1].time_ns) {
      gaps.push_back(rows[i].time_ns - rows[i - 1].time_ns);
    }
  }
  if (gaps.empty()) {
    return 0;
  }
  const auto mid = gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2);
  std::nth_element(gaps.begin(), mid, gaps.end());
  return *mid;
}

void spread_ticks(std::vector<TraceRow>& rows) {
  const TimeNs tick = trace_tick_ns(rows);
  std::size_t i = 0;
  while (i < rows.size()) {
    std::size_t j = i + 1;
    while (j < rows.size() && rows[j].time_ns == rows[i].time_ns) ++j;
    const TimeNs t = rows[i].time_ns;
    const TimeNs gap = j < rows.size() ? rows[j].time_ns - t : tick;
    const auto k = static_cast<TimeNs>(j - i);
    for (std::size_t r = i; r < j; ++r) {
      rows[r].time_ns = t + static_cast<TimeNs>(r - i) * gap / k;
    }
    i = j;
  }
}

std::vector<TraceRow> replay_window(std::vector<TraceRow> rows, const TraceOptions& options) {
  if (!(options.speedup > 0) || !std::isfinite(options.speedup)) {
    throw Exception(Error{fmt::format("must be a positive number, got {}", options.speedup),
                          "--trace-speedup", -1});
  }
  if (!(options.start_s >= 0) || !std::isfinite(options.start_s)) {
    throw Exception(Error{"must be a number of seconds >= 0", "--trace-start-s", -1});
  }
  if (!(options.duration_s > 0)) {
    throw Exception(Error{"must be a positive number of seconds", "--trace-duration-s", -1});
  }
  if (options.spread) {
    spread_ticks(rows);
  }
  const TimeNs t0 = rows.empty() ? 0 : rows.front().time_ns;
  const double start_ns = options.start_s * 1e9;
  const double end_ns = start_ns + options.duration_s * 1e9;
  std::vector<TraceRow> out;
  for (auto& row : rows) {
    const auto since = static_cast<double>(row.time_ns - t0);
    if (since >= start_ns && since < end_ns) {
      out.push_back(std::move(row));
    }
  }
  if (out.empty()) {
    throw Exception(Error{fmt::format("no trace row in [{} s, {} s) after the first row",
                                      options.start_s, options.start_s + options.duration_s),
                          "--trace-start-s", -1});
  }
  const TimeNs first = out.front().time_ns;
  for (auto& row : out) {
    row.time_ns = std::llround(static_cast<double>(row.time_ns - first) / options.speedup);
  }
  return out;
}

}  // namespace llmbench::workload
