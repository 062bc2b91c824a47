#include "llmbench/app/setting_servers.hpp"

#include "llmbench/app/outputs.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/dist/world.hpp"
#include "llmbench/http/client.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <thread>
#include <utility>

namespace llmbench::app {

namespace {

constexpr const char* kFlag = "--serve-cmd";

/// Collects a response's status (the body is not needed).
class StatusOnly : public http::ResponseHandler {
 public:
  void on_sent(TimeNs /*now_ns*/) override {}
  void on_headers(int /*status*/, TimeNs /*now_ns*/) override {}
  void on_body(std::string_view /*bytes*/, TimeNs /*now_ns*/) override {}
};

/// `POST target` with an empty JSON body; the status (0 with `error` set when no answer came).
int post_empty(const http::Url& url, const std::string& target, std::string& error) {
  boost::asio::io_context ioc;
  http::ClientOptions o;
  constexpr auto kTimeout = std::chrono::seconds(30);
  o.connect_timeout = kTimeout;
  o.total_timeout = kTimeout;
  o.first_byte_timeout = kTimeout;
  o.idle_timeout = kTimeout;
  http::ConnectionPool pool(ioc, url, o);
  http::Request req;
  req.method = "POST";
  req.target = target;
  req.accept = "application/json";
  StatusOnly handler;
  http::Outcome outcome;
  boost::asio::co_spawn(
      ioc, pool.execute(req, handler),
      [&](const std::exception_ptr& /*e*/, http::Outcome o2) { outcome = std::move(o2); });
  ioc.run();
  if (outcome.failure != http::Failure::None)
    error = outcome.message;
  return outcome.status;
}

}  // namespace

SettingServers::SettingServers(SettingServersOptions options)
    : options_(std::move(options)), template_(parse_command_template(options_.command, kFlag)) {
  if (const dist::World* world = dist::World::current(); world != nullptr && world->size() > 1) {
    throw Exception(
        Error{"under an MPI launcher each rank would start the server: start it "
              "once yourself and give its --base-url",
              kFlag, -1});
  }
  std::vector<std::string> known = options_.knobs;
  known.emplace_back("host");
  known.emplace_back("port");
  check_placeholders(template_, known, kFlag);
  if (!options_.reset_command.empty()) {
    reset_template_ = parse_command_template(options_.reset_command, "--reset-cmd");
    check_placeholders(*reset_template_, known, "--reset-cmd");
  }
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
  if (!settings_.empty() && settings_.back().values == values &&
      (failed_ || !options_.restart_per_point)) {
    SettingRecord& rec = settings_.back();
    rec.points.push_back(point);
    if (failed_)
      return fmt::format("not run: the server of setting {} failed ({})", rec.index, rec.ready);
    rec.cleaning.push_back(fmt::format("before point {}: {}", point, clean()));
    return std::nullopt;
  }
  const bool restart = !settings_.empty() && settings_.back().values == values;
  stop_current();
  failed_ = false;
  auto why = start(point, values);
  if (restart)
    settings_.back().cleaning.push_back(
        fmt::format("before point {}: restarted (--restart-per-point)", point));
  return why;
}

std::string SettingServers::clean() {
  if (reset_template_) {
    const auto argv = fill_command(*reset_template_, fill_);
    ServerLaunch launch{.argv = argv,
                        .log_path = options_.dir / settings_.back().log_file,
                        .url = options_.url,
                        .ready_timeout = {},
                        .grace = options_.grace};
    try {
      ServerProcess reset(std::move(launch));
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!reset.exited() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const std::string how = reset.stop();
      return fmt::format("--reset-cmd {} {}", command_line(argv), how);
    } catch (const Exception& e) {
      return fmt::format("--reset-cmd failed: {}", e.what());
    }
  }
  std::string tried;
  for (const char* path : {"/reset_prefix_cache", "/flush_cache"}) {
    std::string error;
    const int status = post_empty(options_.url, options_.url.path_prefix + path, error);
    if (status >= 200 && status < 300)
      return fmt::format("POST {} -> {}", path, status);
    tried += fmt::format("{}POST {} -> {}", tried.empty() ? "" : ", ", path,
                         status != 0 ? std::to_string(status) : error);
  }
  return "none: the server reset no prefix cache (" + tried + ")";
}

std::optional<std::string> SettingServers::start(std::size_t point,
                                                 const std::vector<std::string>& values) {
  fill_ = {{"host", options_.url.host}, {"port", std::to_string(options_.url.port)}};
  std::string where;
  for (std::size_t i = 0; i < options_.knobs.size() && i < values.size(); ++i) {
    fill_[options_.knobs[i]] = values[i];
    where += fmt::format("-{}={}", options_.knobs[i], file_safe(values[i]));
  }
  SettingRecord s;
  s.index = settings_.size();
  s.values = values;
  s.points.push_back(point);
  ServerLaunch launch{.argv = fill_command(template_, fill_),
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
         {"points", s.points},
         {"cleaning", s.cleaning}});
  }
  return out;
}

}  // namespace llmbench::app
