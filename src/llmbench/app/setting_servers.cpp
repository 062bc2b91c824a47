#include "llmbench/app/setting_servers.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

namespace llmbench::app {

namespace {

constexpr const char* kFlag = "--serve-cmd";

/// `text` with every character that is not safe in a file name replaced by '_'.
std::string file_safe(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-' || c == '+' || c == '=';
    if (!safe)
      c = '_';
  }
  return out;
}

}  // namespace

SettingServers::SettingServers(SettingServersOptions options)
    : options_(std::move(options)), template_(parse_command_template(options_.command, kFlag)) {
  std::vector<std::string> known = options_.knobs;
  known.emplace_back("host");
  known.emplace_back("port");
  check_placeholders(template_, known, kFlag);
  const auto used = placeholder_names(template_);
  for (const auto& knob : options_.knobs) {
    if (std::find(used.begin(), used.end(), knob) == used.end()) {
      throw Exception(Error{fmt::format("the --sweep axis {} varies nothing: the server command "
                                        "'{}' has no {{{}}}",
                                        knob, options_.command, knob),
                            kFlag, -1});
    }
  }
}

SettingServers::~SettingServers() {
  try {
    stop_current();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
  }
}

std::string SettingServers::failure(const std::string& what) const {
  const std::string tail = server_ ? server_->log_tail(options_.log_tail_lines) : std::string();
  return fmt::format("setting {} ({}): {}; log {}{}", settings_.back().index,
                     settings_.back().command, what, settings_.back().log_file,
                     tail.empty() ? std::string(" (empty)") : ", last lines:\n" + tail);
}

void SettingServers::stop_current() {
  if (!server_)
    return;
  SettingRecord& s = settings_.back();
  s.exit_status = server_->stop();
  log::info("server of setting {} stopped: {}", s.index, s.exit_status);
  server_.reset();
}

std::optional<std::string> SettingServers::prepare(std::size_t point,
                                                   const std::vector<std::string>& values) {
  if (!settings_.empty() && settings_.back().values == values) {
    settings_.back().points.push_back(point);
    if (failed_)
      return fmt::format("not run: the server of setting {} failed ({})", settings_.back().index,
                         settings_.back().ready);
    return std::nullopt;
  }
  stop_current();
  failed_ = false;
  std::map<std::string, std::string> fill{{"host", options_.url.host},
                                          {"port", std::to_string(options_.url.port)}};
  std::string where;
  for (std::size_t i = 0; i < options_.knobs.size() && i < values.size(); ++i) {
    fill[options_.knobs[i]] = values[i];
    where += fmt::format("-{}={}", options_.knobs[i], file_safe(values[i]));
  }
  SettingRecord s;
  s.index = settings_.size();
  s.values = values;
  s.points.push_back(point);
  ServerLaunch launch{.argv = fill_command(template_, fill),
                      .log_path = options_.dir / fmt::format("{}-s{:02}{}.server.log",
                                                             options_.stem, s.index, where),
                      .url = options_.url,
                      .ready_timeout = options_.ready_timeout,
                      .grace = options_.grace};
  s.command = command_line(launch.argv);
  s.log_file = launch.log_path.filename().string();
  settings_.push_back(std::move(s));
  SettingRecord& rec = settings_.back();
  log::info("setting {}: starting {} (log {})", rec.index, rec.command, rec.log_file);
  try {
    server_ = std::make_unique<ServerProcess>(std::move(launch));
  } catch (const Exception& e) {
    failed_ = true;
    rec.error = e.what();
    return failure(e.what());
  }
  rec.pid = server_->pid();
  const ReadyResult ready = server_->wait_ready();
  rec.ready = std::string(to_string(ready.outcome));
  rec.startup_s = ready.seconds;
  if (ready.outcome == ReadyOutcome::Ready) {
    log::info("setting {}: ready in {:.2f} s", rec.index, ready.seconds);
    return std::nullopt;
  }
  failed_ = true;
  rec.error = ready.message;
  std::string message = failure(ready.message);
  stop_current();
  return message;
}

std::optional<std::string> SettingServers::check_after_point() {
  if (!server_ || failed_)
    return std::nullopt;
  const auto how = server_->exited();
  if (!how)
    return std::nullopt;
  failed_ = true;
  SettingRecord& rec = settings_.back();
  rec.error = fmt::format("the server {} during point {}", *how, rec.points.back());
  std::string message = failure(rec.error);
  stop_current();
  return message;
}

void SettingServers::finish() {
  stop_current();
}

nlohmann::json SettingServers::json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : settings_) {
    nlohmann::json knobs = nlohmann::json::object();
    for (std::size_t i = 0; i < options_.knobs.size() && i < s.values.size(); ++i)
      knobs[options_.knobs[i]] = s.values[i];
    out.push_back(
        {{"index", s.index},
         {"knobs", knobs},
         {"command", s.command},
         {"log_file", s.log_file},
         {"pid", s.pid},
         {"ready", s.ready},
         {"startup_s", s.startup_s},
         {"exit_status", s.exit_status.empty() ? nlohmann::json() : nlohmann::json(s.exit_status)},
         {"error", s.error.empty() ? nlohmann::json() : nlohmann::json(s.error)},
         {"points", s.points}});
  }
  return out;
}

}  // namespace llmbench::app
