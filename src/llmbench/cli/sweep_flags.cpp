#include "llmbench/cli/sweep_flags.hpp"

#include "llmbench/app/sweep_axes.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/metrics/catalog.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <set>
#include <string_view>

namespace llmbench::cli {

namespace {

/// The sweep's own flags (and `--quiet`, which a sweep's points always are, and `--report`, the
/// sweep's HTML report), accepted in both modes.
constexpr std::array<std::string_view, 20> kSweepOwn{"--sweep",
                                                     "--simulate",
                                                     "--slo",
                                                     "--slo-resolution",
                                                     "--max-points",
                                                     "--quiet",
                                                     "--disable-tqdm",
                                                     "--report",
                                                     "--max-trials",
                                                     "--valid-min-duration",
                                                     "--valid-min-completed",
                                                     "--valid-max-error-rate",
                                                     "--profile",
                                                     "--profile-rates",
                                                     "--profile-max-concurrency",
                                                     "--verbose",
                                                     "--min-duration",
                                                     "--min-requests",
                                                     "--predict",
                                                     "--verify-top"};

/// Long names ("--gpu") of the options `register_flags` adds to a scratch app.
template <typename Fn>
std::set<std::string> option_names(Fn&& register_flags) {
  CLI::App app;
  register_flags(app);
  std::set<std::string> out;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& name : opt->get_lnames()) out.insert("--" + name);
  }
  return out;
}

}  // namespace

void add_sweep_flags(CLI::App& app, SweepFlags& f) {
  // The sweep's own flags first, in their own section: `sweep --help` starts with them.
  const auto first = app.get_options().size();
  app.add_option("--sweep", f.sweep,
                 "AXIS=LIST (1,2,4,8), AXIS=LO:HI:xF or LO:HI:+S (a ladder), or AXIS=LO:HI (the "
                 "range of --slo); repeatable, several axes give their product. Axes: " +
                     app::axis_names() + " (engine knobs need --simulate or --serve-cmd)");
  app.add_flag("--simulate", f.simulate,
               "Sweep `simulate` points (virtual time, no HTTP) instead of `run` points");
  app.add_option("--cluster", f.cluster_path,
                 "--simulate: simulate this cluster spec at every point (simulate --cluster)");
  app.add_option("--records", f.records,
                 "--simulate --cluster: records per point: none, sample or all");
  app.add_option("--slo", f.slo,
                 "Search the highest load meeting every constraint, e.g. "
                 "'p99_ttft_ms<=2000,p99_tpot_ms<=80' (a number of the results JSON: a "
                 "<stat>_<metric>_ms of " +
                     metrics::latency_metric_names() + ", or " + metrics::summary_number_names() +
                     ")");
  app.add_option("--slo-resolution", f.slo_resolution,
                 "--slo: stop when the bracket is narrower than this fraction of its lower end")
      ->capture_default_str();
  app.add_option("--max-points", f.max_points, "--slo: most points measured")
      ->capture_default_str();
  app.add_option("--max-trials", f.max_trials,
                 "Measure a point that is not stable again with twice the requests (or "
                 "--duration), up to this many trials in all (1 = once)")
      ->capture_default_str();
  app.add_option("--profile", f.profile,
                 "auto: a synchronous point, a saturating point (concurrency doubled until "
                 "output tok/s grows < 10%), then --profile-rates rates evenly between "
                 "(GuideLLM's sweep); instead of --sweep");
  app.add_option("--profile-rates", f.profile_rates, "--profile auto: rates between")
      ->capture_default_str();
  app.add_option("--profile-max-concurrency", f.profile_max_concurrency,
                 "--profile auto: highest concurrency of the saturation search")
      ->capture_default_str();
  app.add_option("--valid-min-duration", f.validity.min_duration_s,
                 "Validity: a point measured for fewer seconds is invalid")
      ->capture_default_str();
  app.add_option("--valid-min-completed", f.validity.min_completed,
                 "Validity: a point with fewer completed requests is invalid")
      ->capture_default_str();
  app.add_option("--valid-max-error-rate", f.validity.max_error_rate,
                 "Validity: a point whose failed share is above this (0-1) is invalid")
      ->capture_default_str();
  app.add_flag("--verbose", f.verbose,
               "Details in the console: each queue-model fit's parameters and error");
  app.add_option("--min-duration", f.min_duration_s,
                 "A point measured for fewer seconds (or invalid for too few samples) is measured "
                 "again with more requests until valid, up to 16x (also raises "
                 "--valid-min-duration)");
  app.add_option("--min-requests", f.min_requests,
                 "A point with fewer completed requests (or invalid for too few samples) is "
                 "measured again with more, up to 16x (also raises --valid-min-completed)");
  app.add_flag("--predict", f.predict,
               "--serve-cmd: simulate the grid first (the engine flags, --calibration FILE), "
               "rank the settings (by the SLO answer with --slo, else throughput) and measure "
               "only the top --verify-top for real; predicted against measured with errors");
  app.add_option("--verify-top", f.verify_top, "--predict: settings measured for real")
      ->capture_default_str();
  add_serve_cmd_flags(app, f.serve);
  const auto options = app.get_options();
  for (auto i = first; i < options.size(); ++i) options[i]->group("Sweep");
  add_run_flags(app, f.run);
  add_engine_flags(app, f.engine, "", "--simulate: ");
}

void check_sweep_flags(const SweepFlags& f) {
  if (f.max_trials < 1 || f.max_trials > 10)
    throw Exception(
        Error{fmt::format("must be in [1, 10], got {}", f.max_trials), "--max-trials", -1});
  if (!f.profile.empty() && f.profile != "auto")
    throw Exception(
        Error{fmt::format("'{}' is not a profile (valid: auto)", f.profile), "--profile", -1});
  if (f.profile.empty() == f.sweep.empty())
    throw Exception(
        Error{"give --sweep AXIS=VALUES or --profile auto (one of them)", "--sweep", -1});
  if (f.profile_rates < 1 || f.profile_rates > 50)
    throw Exception(Error{"must be in [1, 50]", "--profile-rates", -1});
  if (f.profile_max_concurrency < 2)
    throw Exception(Error{"must be >= 2", "--profile-max-concurrency", -1});
  check_serve_cmd_flags(f.serve, f.simulate);
  if (!(f.min_duration_s >= 0 && f.min_duration_s <= 86400))
    throw Exception(Error{"must be in [0, 86400] seconds", "--min-duration", -1});
  if (f.predict && !f.profile.empty())
    throw Exception(Error{"ranks the settings of --sweep axes, not a profile", "--predict", -1});
  if (f.predict && f.serve.serve_cmd.empty())
    throw Exception(
        Error{"verifies predictions on a real server: give --serve-cmd", "--predict", -1});
  if (!f.predict &&
      std::find(f.run.given.begin(), f.run.given.end(), "--verify-top") != f.run.given.end())
    throw Exception(Error{"applies to a sweep with --predict", "--verify-top", -1});
  if (f.verify_top < 1 || f.verify_top > 100)
    throw Exception(Error{"must be in [1, 100]", "--verify-top", -1});
  const auto& given = f.run.given;
  if (!f.simulate && (!f.cluster_path.empty() || !f.records.empty())) {
    throw Exception(
        Error{"needs --simulate", f.cluster_path.empty() ? "--records" : "--cluster", -1});
  }
  const auto own = [](const std::string& name) {
    return std::find(kSweepOwn.begin(), kSweepOwn.end(), name) != kSweepOwn.end();
  };
  if (f.simulate) {
    SimulateFlags scratch;
    const auto simulate = option_names([&](CLI::App& app) { add_simulate_flags(app, scratch); });
    for (const auto& name : given) {
      if (!own(name) && simulate.count(name) == 0) {
        throw Exception(
            Error{"is a `run` flag; a --simulate sweep takes the flags of `simulate`", name, -1});
      }
    }
    return;
  }
  if (f.predict)
    return;  // the engine flags describe the simulated engine of the prediction
  EngineFlags scratch;
  const auto engine = option_names([&](CLI::App& app) { add_engine_flags(app, scratch, "", ""); });
  for (const auto& name : given) {
    if (engine.count(name) != 0) {
      throw Exception(Error{fmt::format("is an engine flag of --simulate; the built-in server's "
                                        "is --{}{}",
                                        kServerFlagPrefix, name.substr(2)),
                            name, -1});
    }
  }
}

SimulateFlags simulate_flags_of(const SweepFlags& f) {
  SimulateFlags s;
  static_cast<WorkloadFlags&>(s) = static_cast<const WorkloadFlags&>(f.run);
  if (!was_given(f.run, "--dataset-name"))
    s.dataset_name = SimulateFlags{}.dataset_name;
  s.engine = f.engine;
  s.ignore_eos = f.run.ignore_eos;
  s.window_s = f.run.window_s;
  s.result_dir = f.run.result_dir;
  s.save_result = true;
  s.cluster_path = f.cluster_path;
  s.records = f.records;
  return s;
}

}  // namespace llmbench::cli
