// `llmbench calibrate`: fits the simulator's free parameters (cost model efficiencies and fixed
// costs, per-request API overhead, warm-up) to measured points — result files a team already has,
// published points, or short probes of a live server — and writes a calibration file that
// `simulate`, `serve`, `sweep --simulate` and `plan` take with `--calibration`
// (docs/simulator.md "Calibration").

#include "llmbench/app/calibration.hpp"
#include "llmbench/calib/fit.hpp"
#include "llmbench/calib/points.hpp"
#include "llmbench/calib/probes.hpp"
#include "llmbench/calib/report.hpp"
#include "llmbench/cli/calibrate_flags.hpp"
#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/cli/server_flags.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/sim/calibration_file.hpp"

#include <fmt/core.h>

#include <filesystem>
#include <memory>
#include <optional>

namespace llmbench::cli {

namespace {

std::vector<calib::Filter> filters(const std::vector<std::string>& texts, const char* flag) {
  std::vector<calib::Filter> out;
  out.reserve(texts.size());
  for (const auto& t : texts) out.push_back(calib::parse_filter(t, flag));
  return out;
}

/// The server's facts under the typed flags: what was typed wins.
void apply_facts(const app::ServerFacts& facts, CalibrateFlags& f) {
  f.engine = sim::merge_overrides(f.engine, facts.knobs);
  if (!f.engine.engine && facts.engine)
    f.engine.engine = facts.engine;
  if (f.engine_version.empty())
    f.engine_version = facts.version;
}

/// Live mode: discover the server, plan and run the probes, return their points.
std::vector<calib::Point> probe_live(CalibrateFlags& f, const std::string& data) {
  const app::ServerFacts facts = app::discover_server(f.base_url);
  apply_facts(facts, f);
  log::info("server at {}: engine {}{}{}", f.base_url, f.engine.engine.value_or("unknown"),
            facts.version.empty() ? "" : " " + facts.version,
            facts.slots ? fmt::format(", {} slots of {} tokens", *facts.slots,
                                      facts.slot_context.value_or(0))
                        : "");
  calib::ProbeLimits limits;
  limits.output_len = f.probe_output_len;
  limits.max_concurrency = f.probe_concurrency > 0 ? f.probe_concurrency : facts.slots.value_or(16);
  limits.max_input_len = f.probe_max_input;
  if (facts.slot_context)
    limits.max_input_len =
        std::min(limits.max_input_len, *facts.slot_context - f.probe_output_len - 16);
  const auto plan = calib::probe_plan(limits);
  const sim::EngineSpec spec = resolve_engine_spec(f.engine, data, "");
  const std::string dir =
      f.probe_dir.empty() ? std::filesystem::path(f.output).replace_extension(".probes").string()
                          : f.probe_dir;
  return run_probes(f, plan, dir, f.num_gpus > 0 ? f.num_gpus : spec.memory.tp * spec.memory.dp);
}

int execute_calibrate(CalibrateFlags f) {
  const std::string data = data_dir();
  if (f.inputs.empty() && f.base_url.empty())
    throw Exception(Error{"give result files or CSVs of points, or --base-url of a live server",
                          "calibrate", -1});
  std::vector<calib::Point> points;
  if (!f.base_url.empty())
    points = probe_live(f, data);
  sim::EngineSpec spec = resolve_engine_spec(f.engine, data, "");
  const int gpus = f.num_gpus > 0 ? f.num_gpus : spec.memory.tp * spec.memory.dp;
  for (const auto& path : f.inputs) {
    auto more = calib::read_points_file(path, gpus);
    points.insert(points.end(), std::make_move_iterator(more.begin()),
                  std::make_move_iterator(more.end()));
  }
  if (spec.engine.slot_cache)  // llama.cpp: what ran before a point is still in its KV cache
    calib::chain_slot_history(points, spec.engine.scheduler.max_num_seqs);
  points = calib::select_points(points, filters(f.select, "--select"));
  std::vector<calib::Point> fit_points, held_out;
  calib::split_holdout(points, filters(f.holdout, "--holdout"), fit_points, held_out);
  log::info("{}", spec.describe());
  log::info("{} points: {} to fit, {} held out", points.size(), fit_points.size(), held_out.size());
  if (f.evaluate) {
    std::printf(
        "%s",
        calib::points_table(calib::predict_all(spec, fit_points, false, f.jobs), "points").c_str());
    if (!held_out.empty())
      std::printf("%s", calib::points_table(calib::predict_all(spec, held_out, true, f.jobs),
                                            "held-out points")
                            .c_str());
    return 0;
  }
  if (fit_points.empty())
    throw Exception(Error{"no point left to fit after --select and --holdout", "calibrate", -1});
  calib::FitOptions opt;
  opt.jobs = f.jobs;
  if (!f.fit.empty()) {
    opt.params.clear();
    for (const auto& name : f.fit) opt.params.push_back(calib::parse_param(name));
  }
  opt.progress = [](int iter, double cost) {
    log::info("fit iteration {}: weighted squared error {:.3f}", iter + 1, cost);
  };
  calib::Calibration c;
  c.fit = calib::fit(spec, fit_points, opt);
  c.held_out = calib::predict_all(c.fit.spec, held_out, true, f.jobs);
  c.engine_version = f.engine_version;
  c.inputs = f.inputs;
  if (!f.base_url.empty())
    c.inputs.insert(c.inputs.begin(), f.base_url);
  c.select = f.select;
  c.holdout = f.holdout;
  c.created = app::local_time_iso();
  std::printf("%s\n", calib::params_table(c.fit).c_str());
  std::printf("%s", calib::points_table(c.fit.points, "fitted points").c_str());
  if (!c.held_out.empty())
    std::printf("%s", calib::points_table(c.held_out, "held-out points").c_str());
  app::write_calibration(c, spec, f.output);
  log::info("{}", calib::summary_line(c));
  log::info("calibration written to {} ({} simulations of the point set)", f.output,
            c.fit.evaluations);
  return 0;
}

}  // namespace

Command add_calibrate_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "calibrate",
      "Fit the simulator to measured points or a live server; write a calibration file");
  auto f = std::make_shared<CalibrateFlags>();
  add_calibrate_flags(*sub, *f);
  return [f] { return execute_calibrate(*f); };
}

}  // namespace llmbench::cli
