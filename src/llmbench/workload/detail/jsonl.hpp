#pragma once
/// @file
/// Private helpers of the dataset readers (formats.cpp, named_sets.cpp): errors naming the file
/// and line, the JSONL line loop and the output-length rule.

#include "llmbench/core/error.hpp"
#include "llmbench/core/text.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace llmbench::workload::detail {

inline constexpr std::int64_t kDefaultOutputLen = 256;

[[noreturn]] inline void fail(const std::string& path, std::string message,
                              std::int64_t offset = -1) {
  throw Exception(Error{std::move(message), path, offset});
}

[[noreturn]] inline void fail_line(const std::string& path, std::int64_t line,
                                   const std::string& what, std::int64_t offset) {
  fail(path, fmt::format("line {}: {}", line, what), offset);
}

/// nlohmann's message without its "[json.exception...] " tag and "parse error at line L, column C:
/// " head, whose line/column would be relative to one JSONL line, not to the file.
inline std::string clean_parse_message(const nlohmann::json::exception& e) {
  std::string msg = e.what();
  if (const auto tag = msg.find("] "); msg.starts_with('[') && tag != std::string::npos) {
    msg.erase(0, tag + 2);
  }
  const auto column = msg.find("column");
  const auto colon = msg.find(": ", column == std::string::npos ? 0 : column);
  if (colon != std::string::npos) {
    msg = msg.substr(colon + 2);
  }
  return msg;
}

/// 1-based line number of byte `offset` in `text`.
inline std::int64_t line_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<std::int64_t>(std::count(
                 text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

/// Output length rule shared by the fixed datasets: the fixed `--output-len` when given (> 0),
/// else the dataset's own value when it has one (> 0), else 256.
inline std::int64_t choose_output_len(std::int64_t fixed, std::int64_t own) {
  if (fixed > 0) {
    return fixed;
  }
  return own > 0 ? own : kDefaultOutputLen;
}

/// One JSONL line handed to a per-line parser: 1-based number, byte offset of its start.
struct JsonlLine {
  std::int64_t number = 0;
  std::int64_t offset = 0;
  nlohmann::json value;
};

/// Calls `fn(JsonlLine&)` for every non-blank line of the JSONL `text` read from `path`. A leading
/// UTF-8 byte-order mark and "\r\n" line ends are accepted. Lines that are not JSON throw, naming
/// the line and the byte offset in the file.
template <class Fn>
inline void for_each_jsonl(std::string_view text, const std::string& path, Fn&& fn) {
  std::size_t pos = 0;
  if (text.starts_with("\xEF\xBB\xBF")) {
    pos = 3;
  }
  std::int64_t number = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    ++number;
    std::string_view line(text.data() + pos, end - pos);
    const auto line_offset = static_cast<std::int64_t>(pos);
    pos = end + 1;
    if (line.ends_with('\r')) {
      line.remove_suffix(1);
    }
    if (is_blank(line)) {
      continue;
    }
    JsonlLine item{number, line_offset, {}};
    try {
      item.value = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      const auto at = line_offset + static_cast<std::int64_t>(e.byte > 0 ? e.byte - 1 : 0);
      fail_line(path, number, "not valid JSON: " + clean_parse_message(e), at);
    } catch (const nlohmann::json::exception& e) {
      // Valid syntax nlohmann cannot hold, such as a number beyond double's range (found by
      // fuzzing: `1e999999` escaped as out_of_range.406 instead of naming the line).
      fail_line(path, number, "not valid JSON: " + clean_parse_message(e), line_offset);
    }
    if (!item.value.is_object()) {
      fail_line(path, number, "expected a JSON object", line_offset);
    }
    fn(item);
  }
}

}  // namespace llmbench::workload::detail
