// `llmbench sweep`: a ladder of `run` points against one target (or of `simulate` points with
// `--simulate`), one results JSON and records file per point as `run` writes them, a sweep JSON
// and CSV rewritten after every point, and a console row per point (docs/sweep.md).

#include "llmbench/analysis/slo_search.hpp"
#include "llmbench/app/outputs.hpp"
#include "llmbench/app/session.hpp"
#include "llmbench/app/setting_servers.hpp"
#include "llmbench/app/stop_signals.hpp"
#include "llmbench/app/sweep_axes.hpp"
#include "llmbench/app/sweep_predict.hpp"
#include "llmbench/app/sweep_profile.hpp"
#include "llmbench/app/sweep_report.hpp"
#include "llmbench/app/sweep_slo.hpp"
#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/config_json.hpp"
#include "llmbench/cli/flag_checks.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/cli/help_sections.hpp"
#include "llmbench/cli/report_command.hpp"
#include "llmbench/cli/run_plan.hpp"
#include "llmbench/cli/sweep_axes.hpp"
#include "llmbench/cli/sweep_flags.hpp"
#include "llmbench/core/build_info.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/json_number.hpp"
#include "llmbench/core/log.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::cli {

namespace {

using nlohmann::json;

/// The points of one sweep: runs each as a point of one `app::Session` (against the target it
/// keeps, or as a simulation), keeps its row, prints it, and rewrites the sweep's files after
/// each.
class Sweep {
 public:
  /// `stem_suffix` follows the sweep's file stem (the predicted sweep of `--predict`).
  Sweep(const SweepFlags& flags, std::vector<app::SweepAxis> axes,
        const std::string& stem_suffix = {})
      : f_(flags),
        axes_(std::move(axes)),
        dir_(flags.run.result_dir.empty() ? "." : flags.run.result_dir),
        env_(ResolveEnv::current()) {
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    date_ = fmt::format("{:%Y%m%d-%H%M%S}", fmt::localtime(now));
    stem_ = flags.run.result_filename.empty()
                ? "sweep-" + date_
                : std::filesystem::path(flags.run.result_filename).replace_extension().string();
    stem_ += stem_suffix;
    if (!f_.serve.serve_cmd.empty())
      start_servers();
    for (const auto& axis : axes_) {
      if (app::axis_info(axis.axis).simulate_only && !f_.simulate && !servers_) {
        WorkloadFlags scratch;
        apply_axis(axis.axis, app::AxisValue{}, scratch, nullptr);  // throws, naming the axis
      }
    }
    if (!f_.simulate)
      check_target();
    app::prepare_result_dir(dir_);
  }

  /// Runs the point with `values` (one per axis), prints and stores its row, rewrites the files.
  const app::PointRow& run(const std::vector<app::AxisValue>& values) {
    const std::size_t index = rows_.size();
    std::string stem = fmt::format("{}-p{:02}", stem_, index);
    for (std::size_t i = 0; i < axes_.size(); ++i) {
      stem += fmt::format("-{}={}", app::axis_name(axes_[i]), app::file_safe(values[i].text));
    }
    app::PointRow row;
    last_.reset();
    try {
      if (const auto why = prepare_server(index, values))
        throw Exception(*why);
      app::RunResult result = measure(values, stem, 1);
      std::vector<std::string> earlier;
      std::size_t trials = 1;
      // --max-trials: a point that is not stable is measured again, twice as long each time.
      while (!result.verdicts().stability.stable && !result.interrupted &&
             !app::StopSignals::stop_requested() &&
             trials < static_cast<std::size_t>(f_.max_trials)) {
        earlier.push_back(result.results_path.filename().string());
        ++trials;
        log::info("point {} is not stable ({}); trial {} of at most {} with {}x the requests",
                  index, result.verdicts().stability.reason, trials, f_.max_trials,
                  std::int64_t{1} << (trials - 1));
        result =
            measure(values, fmt::format("{}-t{}", stem, trials), std::int64_t{1} << (trials - 1));
      }
      // --min-duration / --min-requests: a point invalid for too little data is measured again
      // with more requests, up to the cap (app::extension_scale).
      std::int64_t scale = std::int64_t{1} << (trials - 1);
      while (const auto next = app::extension_scale(result, validity_, extend_, scale)) {
        if (app::StopSignals::stop_requested())
          break;
        earlier.push_back(result.results_path.filename().string());
        ++trials;
        scale = *next;
        log::info(
            "point {} holds too little data to be valid; measuring it again with {}x the "
            "requests",
            index, scale);
        result = measure(values, fmt::format("{}-x{}", stem, scale), scale);
      }
      row = app::point_row(index, values, result);
      row.trials = trials;
      row.scale = scale;
      row.earlier_results = std::move(earlier);
      last_ = std::make_unique<app::RunResult>(std::move(result));
    } catch (const Exception& e) {
      row = app::PointRow{};
      row.index = index;
      row.values = values;
      row.status = app::PointStatus::Failed;
      row.error = e.what();
      log::error("point {} failed: {}", index, e.what());
    }
    // A server that ended while a stop signal ended the point was stopped by that signal.
    const bool stopping = app::StopSignals::stop_requested();
    if (const auto died = servers_ && !stopping ? servers_->check_after_point() : std::nullopt) {
      row.status = app::PointStatus::Failed;  // its finished requests stay in its files
      row.error = *died;
      log::error("point {} failed: {}", index, *died);
    }
    if (row.status == app::PointStatus::Interrupted || app::StopSignals::stop_requested())
      stopped_ = true;
    if (rows_.empty() && app::leads_output())  // under MPI, rank 0 prints and writes
      std::printf("%s\n", app::table_header(axes_).c_str());
    rows_.push_back(std::move(row));
    if (app::leads_output())
      std::printf("%s\n", app::table_row(axes_, rows_.back()).c_str());
    std::fflush(stdout);
    write();
    return rows_.back();
  }

  /// Rewrites the sweep JSON and CSV with every row so far and `extra_` (knee, SLO answer).
  void write() const {
    if (!app::leads_output())
      return;
    json extra = extra_;
    extra["date"] = date_;
    extra["tool_version"] = std::string(build_info::version());
    extra["git_sha"] = std::string(build_info::git_sha());
    extra["config_requested"] =
        f_.simulate ? simulate_flags_json(simulate_flags_of(f_)) : run_flags_json(f_.run);
    extra["stopped_early"] = stopped_;
    if (servers_)
      extra["settings"] = servers_->json();
    app::write_sweep_files(dir_, stem_,
                           app::sweep_json(f_.simulate ? "simulate" : "run", axes_, rows_, extra),
                           app::sweep_csv(axes_, rows_));
  }

  [[nodiscard]] bool stopped() const noexcept { return stopped_; }
  /// Stops the last setting's server (`--serve-cmd`), recording its exit status.
  void finish_servers() {
    if (servers_)
      servers_->finish();
  }
  /// The result of the last point (null when it failed).
  [[nodiscard]] const app::RunResult* last_result() const noexcept { return last_.get(); }
  [[nodiscard]] const std::vector<app::PointRow>& rows() const noexcept { return rows_; }
  [[nodiscard]] const std::vector<app::SweepAxis>& axes() const noexcept { return axes_; }
  /// Keys added to the sweep JSON at the top level (the knee, the SLO search).
  json& extra() noexcept { return extra_; }
  [[nodiscard]] std::filesystem::path json_path() const { return dir_ / (stem_ + ".sweep.json"); }

 private:
  /// What can fail before any point does so now, with `run`'s message: the client's TLS
  /// options for the target (a bad `--ca-cert`). A flag that makes the sweep's base point
  /// invalid is left to the points, each of which reports it.
  void check_target() {
    std::optional<app::RunPlan> base;
    try {
      base = resolve_run(f_.run, env_);
    } catch (const Exception&) {
      return;
    }
    if (!base->builtin)
      app::check_client(base->load);
  }

  /// `--serve-cmd`: the knob axes (every axis but the load axes) go first, so each setting runs
  /// its load points in a row under one server; the servers are made for the target's address.
  void start_servers() {
    std::stable_partition(axes_.begin(), axes_.end(),
                          [](const app::SweepAxis& a) { return !app::axis_info(a.axis).load; });
    const app::RunPlan base = resolve_run(f_.run, env_);
    if (base.builtin)
      throw Exception(
          Error{"needs the address the server will listen on: give --base-url "
                "or --host and --port (they fill {host} and {port})",
                "--serve-cmd", -1});
    std::vector<std::string> knobs;
    for (const auto& axis : axes_) {
      if (!app::axis_info(axis.axis).load)
        knobs.push_back(app::placeholder_of(axis));
    }
    servers_ = std::make_unique<app::SettingServers>(app::SettingServersOptions{
        .command = f_.serve.serve_cmd,
        .knobs = std::move(knobs),
        .url = base.load.url,
        .dir = dir_,
        .stem = stem_,
        .ready_timeout = std::chrono::milliseconds(
            static_cast<std::int64_t>(f_.serve.server_ready_timeout_s * 1000)),
        .grace = std::chrono::milliseconds(
            static_cast<std::int64_t>(f_.serve.server_stop_grace_s * 1000)),
        .restart_per_point = f_.serve.restart_per_point,
        .reset_command = f_.serve.reset_cmd});
  }

  /// `--serve-cmd`: the server of the point's setting, started and ready; why not otherwise.
  std::optional<std::string> prepare_server(std::size_t index,
                                            const std::vector<app::AxisValue>& values) {
    if (!servers_)
      return std::nullopt;
    std::vector<std::string> knobs;
    for (std::size_t i = 0; i < axes_.size(); ++i) {
      if (!app::axis_info(axes_[i].axis).load)
        knobs.push_back(values[i].text);
    }
    return servers_->prepare(index, knobs);
  }

  /// One measurement of the point with `scale` times the requests (or `--duration`).
  app::RunResult measure(const std::vector<app::AxisValue>& values, const std::string& stem,
                         std::int64_t scale) {
    if (f_.simulate) {
      SimulateFlags s = simulate_flags_of(f_);
      for (std::size_t i = 0; i < axes_.size(); ++i) {
        apply_axis(axes_[i].axis, values[i], s, &s.engine);
      }
      s.num_prompts *= scale;
      s.result_dir = dir_.string();
      s.result_filename = stem + ".json";
      app::SimPlan plan = resolve_simulate(s, env_.data_dir, env_.memory_bytes);
      plan.validity = validity_;
      return session_.simulate(plan);
    }
    RunFlags r = f_.run;
    for (std::size_t i = 0; i < axes_.size(); ++i) {
      if (servers_ && !app::axis_info(axes_[i].axis).load)
        continue;  // a knob of the server's command line
      apply_axis(axes_[i].axis, values[i], r, nullptr);
    }
    // Against a server, every measurement draws its own prompts (`--seed` + its index in the
    // sweep): one server serves the whole sweep, and a prefix cache that kept an earlier
    // point's prompts would otherwise serve a later point's prefills from cache
    // (docs/sweep.md, "Prompts per point"). `simulate` points start with an empty cache.
    r.seed = f_.run.seed + run_measurements_++;
    if (r.duration_s > 0)
      r.duration_s *= static_cast<double>(scale);
    else
      r.num_prompts *= scale;
    r.save_result = true;
    r.result_dir = dir_.string();
    r.result_filename = stem + ".json";
    r.quiet = true;
    app::RunPlan plan = resolve_run(r, env_);
    plan.validity = validity_;
    plan.output.history_kind = "sweep-point";
    plan.output.report_path.clear();  // the sweep's report, of every point, comes at its end
    return session_.run(plan);
  }

  const SweepFlags& f_;
  app::ExtendRule extend_{.min_duration_s = f_.min_duration_s, .min_requests = f_.min_requests};
  analysis::ValidityRule validity_ = app::with_floors(f_.validity, extend_);
  std::vector<app::SweepAxis> axes_;
  std::filesystem::path dir_;
  std::string date_;
  std::string stem_;
  ResolveEnv env_;
  app::Session session_;
  std::vector<app::PointRow> rows_;
  json extra_ = json::object();
  std::unique_ptr<app::RunResult> last_;
  bool stopped_ = false;
  std::uint64_t run_measurements_ = 0;  ///< `run` measurements so far (each one's seed offset)
  std::unique_ptr<app::SettingServers> servers_;  ///< `--serve-cmd` (null without it)
};

/// Runs every point of the ladder in order until the end or a signal.
void run_ladder(Sweep& sweep) {
  for (const auto& axis : sweep.axes()) {
    if (axis.search_range) {
      throw Exception(Error{fmt::format("{}: LO:HI is the range of an --slo search; a ladder "
                                        "range is LO:HI:xF or LO:HI:+S",
                                        app::axis_name(axis)),
                            "--sweep", -1});
    }
  }
  const auto points = app::sweep_points(sweep.axes());
  for (std::size_t i = 0; i < points.size() && !sweep.stopped(); ++i) {
    std::string where;
    for (std::size_t a = 0; a < points[i].size(); ++a) {
      where += fmt::format(" {}={}", app::axis_name(sweep.axes()[a]), points[i][a].text);
    }
    log::info("sweep point {}/{}:{}", i + 1, points.size(), where);
    sweep.run(points[i]);
  }
}

/// `--slo`: one search over the `--sweep AXIS=LO:HI` load axis per engine setting (the knob
/// axes' combinations; `only` restricts them), by `app::search_settings`. One setting without
/// knob axes writes the sweep JSON's `slo_search`; several write `slo_settings` and the table.
std::vector<app::SettingSearch> run_slo_search(Sweep& sweep, const SweepFlags& f,
                                               std::vector<std::string>& lines,
                                               const std::vector<std::size_t>* only = nullptr) {
  const auto constraints = analysis::parse_slo_constraints(f.slo);
  const auto& axes = sweep.axes();
  const app::SweepGrid grid = app::sweep_grid(axes);
  const bool one_range = grid.load_axes.size() == 1 && axes[grid.load_axes[0]].search_range;
  const bool knob_lists = std::none_of(grid.knob_axes.begin(), grid.knob_axes.end(),
                                       [&](std::size_t i) { return axes[i].search_range; });
  if (!one_range || !knob_lists) {
    throw Exception(
        Error{"--slo searches one load axis per engine setting: give one --sweep "
              "max-concurrency=LO:HI or --sweep request-rate=LO:HI, and lists for the knob axes",
              "--sweep", -1});
  }
  const app::SweepAxis& load = axes[grid.load_axes[0]];
  const app::Axis axis = load.axis;
  const analysis::SloSearchOptions options{
      .lo = load.search_range->first,
      .hi = load.search_range->second,
      .resolution = f.slo_resolution,
      .max_points = static_cast<std::size_t>(std::max(0, f.max_points)),
      .integer = app::axis_info(axis).type == app::AxisType::Count};
  std::vector<std::size_t> chosen(grid.settings.size());
  std::iota(chosen.begin(), chosen.end(), std::size_t{0});
  if (only != nullptr)
    chosen = *only;
  std::vector<std::string> labels;
  std::vector<json> knobs;
  for (const std::size_t s : chosen) {
    labels.push_back(grid.labels[s]);
    knobs.push_back(grid.knobs[s]);
  }
  auto searches = app::search_settings(
      labels, knobs, constraints, options,
      [&](std::size_t s, double at) -> std::optional<app::SearchPoint> {
        if (sweep.stopped())
          return std::nullopt;
        const app::AxisValue value = app::axis_value(axis, at);
        log::info("SLO search point {}: {}{}={}", sweep.rows().size() + 1,
                  labels[s].empty() ? "" : labels[s] + " ", app::axis_info(axis).name, value.text);
        const app::PointRow& row = sweep.run(grid.point(chosen[s], {value}));
        if (sweep.stopped())
          return std::nullopt;
        const app::RunResult* result =
            row.status == app::PointStatus::Ok ? sweep.last_result() : nullptr;
        auto m = app::slo_measurement(result, constraints, row.results_file);
        m.load = value.number;  // the rounded value the point ran at
        return app::SearchPoint{.measurement = std::move(m),
                                .row = row.index,
                                .p99_ci = row.p99_ci,
                                .scale = row.scale,
                                .measurements = row.trials,
                                .engine = result != nullptr && result->simulation
                                              ? std::optional(result->simulation->engine)
                                              : std::nullopt};
      });
  const std::string axis_name_text(app::axis_info(axis).name);
  if (grid.knob_axes.empty() && searches.size() == 1) {
    sweep.extra()["slo_search"] =
        app::slo_search_json(searches[0], constraints, axis_name_text, options);
  } else {
    sweep.extra()["slo_settings"] =
        app::slo_settings_json(searches, constraints, axis_name_text, options);
  }
  for (const auto& search : searches) {
    const auto l = app::slo_search_lines(search, constraints, axis_name_text);
    lines.insert(lines.end(), l.begin(), l.end());
  }
  if (!grid.knob_axes.empty()) {
    const auto table =
        app::slo_settings_table(searches, axis_name_text,
                                axis == app::Axis::RequestRate ? "req/s" : "", options.resolution);
    lines.insert(lines.end(), table.begin(), table.end());
  }
  const auto bottlenecks = app::slo_bottleneck_lines(searches, axis_name_text);
  lines.insert(lines.end(), bottlenecks.begin(), bottlenecks.end());
  return searches;
}

/// `--predict`: the grid in the simulator first (a sweep of its own, `<stem>-predicted`), the
/// settings ranked by the predicted SLO answer (`--slo`) or highest output tok/s, the best
/// `--verify-top` measured on the real server, and the sweep JSON's `predict` (app/sweep_predict).
void run_predict(Sweep& real, const SweepFlags& f, std::vector<std::string>& lines) {
  for (const auto& axis : real.axes()) {
    if (axis.axis == app::Axis::Free)
      throw Exception(
          Error{fmt::format("--predict: the simulator has no knob '{}'", app::axis_name(axis)),
                "--sweep", -1});
  }
  SweepFlags pf = f;
  pf.simulate = true;
  pf.predict = false;
  pf.serve = ServeCmdFlags{};
  pf.run.report_path.clear();
  std::vector<std::string> predicted_lines;
  Sweep predicted(pf, real.axes(), "-predicted");
  const app::SweepGrid grid = app::sweep_grid(real.axes());
  std::vector<double> scores(grid.settings.size(), std::nan(""));
  std::vector<app::SettingSearch> predicted_searches;
  // Row index of each (setting, load) of the predicted ladder.
  std::vector<std::vector<std::size_t>> predicted_rows(grid.settings.size());
  if (!f.slo.empty()) {
    predicted_searches = run_slo_search(predicted, pf, predicted_lines);
    for (std::size_t s = 0; s < predicted_searches.size(); ++s) {
      const auto& r = predicted_searches[s].result;
      scores[s] = r.best ? *r.best : std::nan("");
    }
  } else {
    for (std::size_t s = 0; s < grid.settings.size() && !predicted.stopped(); ++s) {
      for (const auto& load : grid.loads) {
        predicted_rows[s].push_back(predicted.run(grid.point(s, load)).index);
        const auto m = app::row_metrics(predicted.rows().back());
        const auto t = m.find("output_throughput");
        if (t != m.end() && std::isfinite(t->second) && !(t->second <= scores[s]))
          scores[s] = t->second;
      }
    }
  }
  predicted.write();
  lines.push_back(fmt::format("Prediction: the grid simulated ({}):",
                              predicted.json_path().filename().string()));
  lines.insert(lines.end(), predicted_lines.begin(), predicted_lines.end());
  std::vector<std::size_t> top;
  const auto ranked =
      app::ranked_settings(grid.labels, scores, static_cast<std::size_t>(f.verify_top), top);
  std::vector<app::PredictionError> errors;
  const std::vector<std::string> metrics(std::begin(app::kPredictedMetrics),
                                         std::end(app::kPredictedMetrics));
  if (!f.slo.empty()) {
    const auto measured = run_slo_search(real, f, lines, &top);
    for (std::size_t i = 0; i < measured.size(); ++i) {
      auto e = app::compare_slo_answers(grid.labels[top[i]], predicted_searches[top[i]].result,
                                        measured[i].result);
      errors.insert(errors.end(), e.begin(), e.end());
    }
  } else {
    for (std::size_t i = 0; i < top.size() && !real.stopped(); ++i) {
      for (std::size_t l = 0; l < grid.loads.size() && !real.stopped(); ++l) {
        const app::PointRow& row = real.run(grid.point(top[i], grid.loads[l]));
        const app::PointRow& guess = predicted.rows()[predicted_rows[top[i]][l]];
        auto e =
            app::compare_point(grid.labels[top[i]], grid.load_label(real.axes(), grid.loads[l]),
                               app::row_metrics(guess), app::row_metrics(row), metrics);
        errors.insert(errors.end(), e.begin(), e.end());
      }
    }
    real.extra()["knee"] = app::knee_report(real.axes(), real.rows(), lines);
  }
  const std::string by = f.slo.empty() ? "highest output tok/s" : "SLO answer";
  real.extra()["predict"] =
      app::predict_json(by, predicted.json_path().filename().string(),
                        f.engine.calibration.value_or(""), top.size(), ranked, errors);
  const auto l = app::predict_lines(by, ranked, errors);
  lines.insert(lines.end(), l.begin(), l.end());
}

/// `--profile auto` (app::profile_auto): the points are `request-rate` x `max-concurrency` rows.
void run_profile_auto(Sweep& sweep, const SweepFlags& f, std::vector<std::string>& lines) {
  const app::Axis rate_axis = sweep.axes()[0].axis;
  const app::Axis conc_axis = sweep.axes()[1].axis;
  const auto point = [&](double rate, double conc) -> std::optional<app::ProfilePoint> {
    if (sweep.stopped())
      return std::nullopt;
    log::info("profile auto point {}: request-rate={} max-concurrency={}", sweep.rows().size() + 1,
              app::axis_value(rate_axis, rate).text, app::axis_value(conc_axis, conc).text);
    const auto m = app::row_metrics(
        sweep.run({app::axis_value(rate_axis, rate), app::axis_value(conc_axis, conc)}));
    const auto at = [&](const char* key) {
      const auto it = m.find(key);
      return it == m.end() ? std::nan("") : it->second;
    };
    return app::ProfilePoint{.request_throughput = at("request_throughput"),
                             .output_throughput = at("output_throughput")};
  };
  sweep.extra()["profile"] = app::profile_auto(
      {.rates = f.profile_rates, .max_concurrency = f.profile_max_concurrency}, point, lines);
}

int execute_sweep(const SweepFlags& f) {
  check_sweep_flags(f);
  const bool profile = f.profile == "auto";
  Sweep sweep(
      f, app::parse_sweep_axes(
             profile ? std::vector<std::string>{"request-rate=inf", "max-concurrency=1"} : f.sweep,
             !f.serve.serve_cmd.empty()));
  const app::StopSignals signals;
  std::vector<std::string> lines;
  if (profile) {
    run_profile_auto(sweep, f, lines);
  } else if (f.predict) {
    run_predict(sweep, f, lines);
  } else if (f.slo.empty()) {
    run_ladder(sweep);
    sweep.extra()["knee"] = app::knee_report(sweep.axes(), sweep.rows(), lines, f.verbose);
  } else {
    run_slo_search(sweep, f, lines);
  }
  sweep.finish_servers();
  sweep.extra()["pareto"] = app::pareto_report(sweep.axes(), sweep.rows(), lines);
  for (const auto& row : sweep.rows()) {
    if (row.status == app::PointStatus::Ok && !row.valid) {
      lines.push_back(
          fmt::format("point {}: invalid: {}", row.index,
                      fmt::join(row.invalid_reasons.begin(), row.invalid_reasons.end(), "; ")));
    }
    if (row.batching_failed)
      lines.push_back(
          fmt::format("point {}: dynamic batching failed (see its results' batching)", row.index));
    constexpr std::size_t kSpikeLines = 3;  // per point; the results list every one
    for (std::size_t k = 0; k < row.spikes.size() && k < kSpikeLines; ++k)
      lines.push_back(fmt::format("point {}: {}", row.index, row.spikes[k]));
    if (row.spikes.size() > kSpikeLines) {
      lines.push_back(fmt::format("point {}: {} more spike(s) in its results", row.index,
                                  row.spikes.size() - kSpikeLines));
    }
  }
  for (const auto& line : lines) {
    if (app::leads_output())
      std::printf("%s\n", line.c_str());
  }
  sweep.write();
  if (sweep.stopped())
    log::warn("sweep stopped early: {} point(s) finished and kept", sweep.rows().size());
  log::info("sweep written to {} (and .sweep.csv)", sweep.json_path().string());
  if (!f.run.report_path.empty() && app::leads_output())
    write_report(f.run.report_path, report::load_inputs({sweep.json_path().string()}));
  for (const auto& row : sweep.rows()) {
    if (row.status != app::PointStatus::Ok)
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
  apply_help_sections(*sub, help_all_requested());
  return [f, sub] {
    f->run.given = given_flags(*sub);
    take_serve_cmd_flags(f->run.given, f->serve);
    return execute_sweep(*f);
  };
}

}  // namespace llmbench::cli
