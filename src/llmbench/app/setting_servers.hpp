#pragma once
/// @file
/// The servers of a sweep with a server command (docs/sweep.md "Restarting the server per
/// setting"): one `ServerProcess` per engine setting (one combination of the knob axes' values),
/// started from the command template before the setting's first point, waited for, kept over the
/// setting's load points, and stopped before the next setting starts. Per setting it keeps the
/// exact command, the log file, how start-up ended and took, and the exit status; a setting whose
/// server fails to start, or dies during a point, is failed (with the log's tail) and the sweep
/// goes on with the next one.

#include "llmbench/app/server_process.hpp"
#include "llmbench/http/url.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::app {

/// What a sweep's servers are started from.
struct SettingServersOptions {
  std::string command;             ///< the template (`--serve-cmd`)
  std::vector<std::string> knobs;  ///< the placeholder name of each setting axis, in axis order
  http::Url url;                   ///< where the server answers (its `{host}` and `{port}`)
  std::filesystem::path dir;       ///< the results folder (the logs go beside the results)
  std::string stem;                ///< the sweep's file stem (log names start with it)
  std::chrono::milliseconds ready_timeout{std::chrono::seconds(300)};
  std::chrono::milliseconds grace{std::chrono::seconds(10)};
  std::size_t log_tail_lines = 15;  ///< lines of the log quoted in a failure's message
  /// Between two points of one setting: a fresh server for every point (`--restart-per-point`).
  bool restart_per_point = false;
  /// Between two points of one setting: this command (a template with the same placeholders)
  /// instead of the prefix-cache reset requests (`--reset-cmd`, vLLM's `--after-bench-cmd`).
  std::string reset_command;
};

/// One setting's server as the sweep JSON's `settings` keep it.
struct SettingRecord {
  std::size_t index = 0;              ///< settings in the order they ran
  std::vector<std::string> values;    ///< one per knob
  std::string command;                ///< the exact command line (`command_line`)
  std::string log_file;               ///< its log, a file name in the results folder
  long pid = 0;                       ///< its process (and process group) id; 0 = not started
  std::string ready = "not started";  ///< `to_string(ReadyOutcome)`, or "not started"
  double startup_s = 0;               ///< start to ready (or to giving up)
  std::string exit_status;            ///< "exited with status 0", ... ("" while it runs)
  std::string error;                  ///< why the setting failed ("" when it did not)
  std::vector<std::size_t> points;    ///< indexes of the sweep points it served
  /// How the server was cleaned before each of its points after the first ("before point 3:
  /// POST /reset_prefix_cache -> 200", "... --reset-cmd ... exited with status 0", "... none").
  std::vector<std::string> cleaning;
};

/// The servers of one sweep, one setting at a time. Between two points of one setting the
/// server's prefix cache is reset so that a point does not hit what an earlier one cached: the
/// reset command when there is one; else `POST /reset_prefix_cache` (vLLM) and, when that is not
/// found, `POST /flush_cache` (SGLang); which happened is recorded. With `restart_per_point`
/// every point starts its own server instead (a new setting record each). Construct and destroy on
/// the main thread.
class SettingServers {
 public:
  /// Parses the template and checks it against the knobs: every placeholder must be a knob,
  /// `host` or `port`, and every knob must be used. Throws `Exception` naming `--serve-cmd` and
  /// the offending placeholder's byte offset, or the unused knob.
  explicit SettingServers(SettingServersOptions options);
  ~SettingServers();
  SettingServers(const SettingServers&) = delete;
  SettingServers& operator=(const SettingServers&) = delete;
  SettingServers(SettingServers&&) = delete;
  SettingServers& operator=(SettingServers&&) = delete;

  /// Before point `point`, whose knob values are `values`: when they differ from the running
  /// setting's, stops its server and starts the new setting's, waiting until it is ready. Returns
  /// nullopt when the setting's server is ready, else why the point cannot run (the start-up
  /// failure with the log's tail; or, for later points of a failed setting, that it failed).
  std::optional<std::string> prepare(std::size_t point, const std::vector<std::string>& values);

  /// After a point: nullopt while the server still runs; else what happened ("the server ...
  /// during the point", the log's tail), and the setting is failed.
  std::optional<std::string> check_after_point();

  /// Stops the running server (if any) and records its exit status.
  void finish();

  /// Every setting so far, for the sweep JSON's `settings`.
  [[nodiscard]] nlohmann::json json() const;
  [[nodiscard]] const std::vector<SettingRecord>& settings() const noexcept { return settings_; }

 private:
  void stop_current();
  std::string failure(const std::string& what) const;
  std::optional<std::string> start(std::size_t point, const std::vector<std::string>& values);
  std::string clean();

  std::map<std::string, std::string> fill_;  ///< the placeholder values of the running setting

  SettingServersOptions options_;
  CommandTemplate template_;
  std::optional<CommandTemplate> reset_template_;
  std::vector<SettingRecord> settings_;
  std::unique_ptr<ServerProcess> server_;  ///< the server of `settings_.back()`, while it runs
  bool failed_ = false;                    ///< `settings_.back()` failed
};

}  // namespace llmbench::app
