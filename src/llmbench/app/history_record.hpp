#pragma once
/// @file
/// Writes a finished run into its `--history` database (report/history.hpp).

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace llmbench::app {

/// Records the run whose results document is `results` in the SQLite history at `history_path`
/// with `label`: its configuration (`config_requested`, `config_effective`), summary numbers,
/// tool version, git SHA, host name, the current UTC time, and the absolute paths of its results
/// and records (empty when not saved: `history regress` then uses the summary only). Logs the
/// new entry's id; a history that cannot be written is an error (`Exception`).
void record_history(const std::string& history_path, const std::string& label,
                    const std::string& kind, const nlohmann::json& results,
                    const std::filesystem::path& results_path,
                    const std::filesystem::path& records_path);

}  // namespace llmbench::app
