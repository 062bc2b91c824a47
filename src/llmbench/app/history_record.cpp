#include "llmbench/app/history_record.hpp"

#include "llmbench/core/log.hpp"
#include "llmbench/report/history.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <array>
#include <chrono>
#include <system_error>
#include <unistd.h>

namespace llmbench::app {

namespace {

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0)
    return "";
  return name.data();
}

std::string absolute_path(const std::filesystem::path& p) {
  if (p.empty())
    return "";
  std::error_code ec;
  const auto a = std::filesystem::absolute(p, ec);
  return ec ? p.string() : a.string();
}

}  // namespace

void record_history(const std::string& history_path, const std::string& label,
                    const std::string& kind, const nlohmann::json& results,
                    const std::filesystem::path& results_path,
                    const std::filesystem::path& records_path) {
  const auto str = [&](const char* key) {
    const auto it = results.find(key);
    return it != results.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  report::HistoryEntry e{
      .kind = kind,
      .time_utc = fmt::format(
          "{:%Y-%m-%dT%H:%M:%SZ}",
          fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()))),
      .label = label,
      .model = str("model_id"),
      .backend = str("backend"),
      .host = host_name(),
      .tool_version = str("tool_version"),
      .git_sha = str("git_sha"),
      .results_path = absolute_path(results_path),
      .records_path = absolute_path(records_path),
      .config = {{"requested", results.value("config_requested", nlohmann::json::object())},
                 {"effective", results.value("config_effective", nlohmann::json::object())}},
      .summary = report::summary_numbers(results)};
  report::History history(history_path);
  const auto id = history.add(e);
  log::info("recorded as run {} in the history {}", id, history_path);
}

}  // namespace llmbench::app
