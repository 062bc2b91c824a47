#include "llmbench/cli/flag_parsing.hpp"

#include "llmbench/core/build_info.hpp"
#include "llmbench/core/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <unistd.h>

namespace llmbench::cli {

double parse_positive_or_inf(const std::string& text, const char* flag) {
  if (text == "inf" || text == "Inf" || text == "infinity") {
    return std::numeric_limits<double>::infinity();
  }
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(v > 0) || std::isnan(v)) {
    throw Exception(Error{fmt::format("expected a positive number or 'inf', got '{}'", text), flag,
                          end == nullptr ? 0 : end - text.c_str()});
  }
  if (std::isinf(v)) {
    throw Exception(Error{
        fmt::format("'{}' is too large for a number (write 'inf' for no limit)", text), flag, 0});
  }
  return v;
}

CLI::Validator non_negative_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto digits = text.find_first_not_of("0123456789");
        if (text.empty() || digits != std::string::npos) {
          return fmt::format("'{}' is not a non-negative integer (at byte {})", text,
                             digits == std::string::npos ? 0 : digits);
        }
        errno = 0;
        (void)std::strtoull(text.c_str(), nullptr, 10);
        if (errno == ERANGE) {
          return fmt::format("'{}' is above the largest value, 2^64 - 1", text);
        }
        return {};
      },
      "UINT");
}

void require_in_range(double value, double lo, double hi, const std::string& flag,
                      const std::string& what) {
  if (!(value >= lo && value <= hi)) {
    throw Exception(Error{fmt::format("must be {}, got {}", what, value), flag, -1});
  }
}

std::vector<std::string> split_csv(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    if (comma > pos) {
      out.push_back(text.substr(pos, comma - pos));
    }
    pos = comma + 1;
  }
  return out;
}

std::vector<double> parse_percentiles(const std::string& text) {
  std::vector<double> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !(v >= 0 && v <= 100)) {
      throw Exception(Error{fmt::format("'{}' is not a percentile in [0, 100]", item),
                            "--metric-percentiles", static_cast<std::int64_t>(pos)});
    }
    out.push_back(v);
    pos = comma + 1;
  }
  return out;
}

std::string data_dir() {
  if (const char* d = std::getenv("LLMBENCH_DATA_DIR"); d != nullptr && *d != '\0') {
    return d;
  }
  std::string built(build_info::data_dir());
  std::error_code ec;
  if (std::filesystem::is_directory(built, ec)) {
    return built;
  }
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const auto& candidate :
         {exe.parent_path() / ".." / "share" / "llmbench" / "data", exe.parent_path() / "data"}) {
      if (std::filesystem::is_directory(candidate, ec)) {
        return candidate.lexically_normal().string();
      }
    }
  }
  return built;
}

void add_window_flag(CLI::App& app, double& window_s) {
  app.add_option("--window-s", window_s,
                 "Seconds per time window in the results (windows, stable): completed, tok/s, "
                 "in flight, TTFT/ITL percentiles per window")
      ->capture_default_str();
}

void check_window(double window_s) {
  require_in_range(window_s, 0.001, 1e6, "--window-s", "a number of seconds in [0.001, 1e6]");
}

}  // namespace llmbench::cli
