// `llmbench sweep`: a ladder of `run` points against one target (or of `simulate` points with
// `--simulate`), one results JSON and records file per point as `run` writes them, a sweep JSON
// and CSV rewritten after every point, and a console row per point (docs/sweep.md).

#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/config_json.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/cli/run_point.hpp"
#include "llmbench/cli/sweep_axes.hpp"
#include "llmbench/cli/sweep_flags.hpp"
#include "llmbench/cli/sweep_report.hpp"
#include "llmbench/core/build_info.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace llmbench::cli {

namespace {

using nlohmann::json;

std::atomic<bool> g_sweep_stop{false};
extern "C" void on_sweep_signal(int /*sig*/) {
  g_sweep_stop.store(true);
}

/// SIGINT / SIGTERM / SIGHUP between points end the sweep after the point in flight (a `run`
/// point installs its own handlers while it sends, and is itself cut short); restored on exit.
class SweepSignals {
 public:
  SweepSignals() {
    g_sweep_stop.store(false);
    struct sigaction sa {};
    sa.sa_handler = on_sweep_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
    sigaction(SIGHUP, &sa, &old_hup_);
  }
  ~SweepSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGHUP, &old_hup_, nullptr);
  }
  SweepSignals(const SweepSignals&) = delete;
  SweepSignals& operator=(const SweepSignals&) = delete;
  SweepSignals(SweepSignals&&) = delete;
  SweepSignals& operator=(SweepSignals&&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_hup_ {};
};

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

/// The points of one sweep: runs each (against one `RunSession`, or as a simulation), keeps its
/// row, prints it, and rewrites the sweep's files after each.
class Sweep {
 public:
  Sweep(const SweepFlags& flags, std::vector<SweepAxis> axes)
      : f_(flags),
        axes_(std::move(axes)),
        dir_(flags.run.result_dir.empty() ? "." : flags.run.result_dir) {
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    date_ = fmt::format("{:%Y%m%d-%H%M%S}", fmt::localtime(now));
    stem_ = flags.run.result_filename.empty()
                ? "sweep-" + date_
                : std::filesystem::path(flags.run.result_filename).replace_extension().string();
    for (const auto& axis : axes_) {
      if (axis_info(axis.axis).simulate_only && !f_.simulate) {
        WorkloadFlags scratch;
        apply_axis(axis.axis, AxisValue{}, scratch, nullptr);  // throws, naming the axis
      }
    }
    prepare_result_dir(dir_);
    if (!f_.simulate)
      session_ = std::make_unique<RunSession>();
  }

  /// Runs the point with `values` (one per axis), prints and stores its row, rewrites the files.
  const PointRow& run(const std::vector<AxisValue>& values) {
    const std::size_t index = rows_.size();
    std::string stem = fmt::format("{}-p{:02}", stem_, index);
    for (std::size_t i = 0; i < axes_.size(); ++i) {
      stem += fmt::format("-{}={}", axis_info(axes_[i].axis).name, file_safe(values[i].text));
    }
    PointRow row;
    try {
      row = point_row(index, values, measure(values, stem));
    } catch (const Exception& e) {
      row = PointRow{};
      row.index = index;
      row.values = values;
      row.status = PointStatus::Failed;
      row.error = e.what();
      log::error("point {} failed: {}", index, e.what());
    }
    if (row.status == PointStatus::Interrupted || g_sweep_stop.load())
      stopped_ = true;
    if (rows_.empty())
      std::printf("%s\n", table_header(axes_).c_str());
    rows_.push_back(std::move(row));
    std::printf("%s\n", table_row(axes_, rows_.back()).c_str());
    std::fflush(stdout);
    write();
    return rows_.back();
  }

  /// Rewrites the sweep JSON and CSV with every row so far and `extra_` (knee, SLO answer).
  void write() const {
    json extra = extra_;
    extra["date"] = date_;
    extra["tool_version"] = std::string(build_info::version());
    extra["git_sha"] = std::string(build_info::git_sha());
    extra["config_requested"] =
        f_.simulate ? simulate_flags_json(simulate_flags_of(f_)) : run_flags_json(f_.run);
    extra["stopped_early"] = stopped_;
    write_sweep_files(dir_, stem_,
                      sweep_json(f_.simulate ? "simulate" : "run", axes_, rows_, extra),
                      sweep_csv(axes_, rows_));
  }

  [[nodiscard]] bool stopped() const noexcept { return stopped_; }
  [[nodiscard]] const std::vector<PointRow>& rows() const noexcept { return rows_; }
  [[nodiscard]] const std::vector<SweepAxis>& axes() const noexcept { return axes_; }
  /// Keys added to the sweep JSON at the top level (the knee, the SLO search).
  json& extra() noexcept { return extra_; }
  [[nodiscard]] std::filesystem::path json_path() const { return dir_ / (stem_ + ".sweep.json"); }

 private:
  PointReport measure(const std::vector<AxisValue>& values, const std::string& stem) {
    if (f_.simulate) {
      SimulateFlags s = simulate_flags_of(f_);
      for (std::size_t i = 0; i < axes_.size(); ++i) {
        apply_axis(axes_[i].axis, values[i], s, &s.engine);
      }
      s.result_dir = dir_.string();
      s.result_filename = stem + ".json";
      return simulate_point(s, false);
    }
    RunFlags r = f_.run;
    for (std::size_t i = 0; i < axes_.size(); ++i) {
      apply_axis(axes_[i].axis, values[i], r, nullptr);
    }
    r.save_result = true;
    r.result_dir = dir_.string();
    r.result_filename = stem + ".json";
    r.quiet = true;
    return session_->run_point(r);
  }

  const SweepFlags& f_;
  std::vector<SweepAxis> axes_;
  std::filesystem::path dir_;
  std::string date_;
  std::string stem_;
  std::unique_ptr<RunSession> session_;
  std::vector<PointRow> rows_;
  json extra_ = json::object();
  bool stopped_ = false;
};

/// Runs every point of the ladder in order until the end or a signal.
void run_ladder(Sweep& sweep) {
  for (const auto& axis : sweep.axes()) {
    if (axis.search_range) {
      throw Exception(Error{fmt::format("{}: LO:HI is the range of an --slo search; a ladder "
                                        "range is LO:HI:xF or LO:HI:+S",
                                        axis_info(axis.axis).name),
                            "--sweep", -1});
    }
  }
  const auto points = sweep_points(sweep.axes());
  for (std::size_t i = 0; i < points.size() && !sweep.stopped(); ++i) {
    std::string where;
    for (std::size_t a = 0; a < points[i].size(); ++a) {
      where += fmt::format(" {}={}", axis_info(sweep.axes()[a].axis).name, points[i][a].text);
    }
    log::info("sweep point {}/{}:{}", i + 1, points.size(), where);
    sweep.run(points[i]);
  }
}

int execute_sweep(const SweepFlags& f) {
  check_sweep_flags(f);
  Sweep sweep(f, parse_sweep_axes(f.sweep));
  const SweepSignals signals;
  run_ladder(sweep);
  std::vector<std::string> lines;
  sweep.extra()["knee"] = knee_report(sweep.axes(), sweep.rows(), lines);
  for (const auto& line : lines) std::printf("%s\n", line.c_str());
  sweep.write();
  if (sweep.stopped())
    log::warn("sweep stopped early: {} point(s) finished and kept", sweep.rows().size());
  log::info("sweep written to {} (and .sweep.csv)", sweep.json_path().string());
  for (const auto& row : sweep.rows()) {
    if (row.status != PointStatus::Ok)
      return 1;
  }
  return sweep.stopped() ? 1 : 0;
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto* sub = app.add_subcommand("sweep",
                                 "Run a ladder of load points (run, or simulate with --simulate): "
                                 "knee, SLO search, stability");
  auto f = std::make_shared<SweepFlags>();
  add_sweep_flags(*sub, *f);
  return [f, sub] {
    f->run.given = given_flags(*sub);
    return execute_sweep(*f);
  };
}

}  // namespace llmbench::cli
