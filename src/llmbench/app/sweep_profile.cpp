#include "llmbench/app/sweep_profile.hpp"

#include "llmbench/core/json_number.hpp"

#include <fmt/core.h>

#include <cmath>

namespace llmbench::app {

nlohmann::json profile_auto(const ProfileOptions& options, const ProfileMeasure& measure,
                            std::vector<std::string>& lines) {
  const double inf = std::numeric_limits<double>::infinity();
  // The synchronous point always runs; later ones until `measure` says the sweep stopped.
  const ProfilePoint sync = measure(inf, 1).value_or(ProfilePoint{});
  const double r_sync = sync.request_throughput;
  double prev = sync.output_throughput;
  double conc = 1;
  double r_max = std::nan("");
  bool saturated = false;
  bool stopped = false;
  while (conc * 2 <= options.max_concurrency) {
    const auto r = measure(inf, conc * 2);
    if (!r) {
      stopped = true;
      break;
    }
    conc *= 2;
    r_max = r->request_throughput;
    if (!(r->output_throughput >= 1.1 * prev)) {  // NaN (a failed point) ends the search too
      saturated = true;
      break;
    }
    prev = r->output_throughput;
  }
  const bool usable = std::isfinite(r_sync) && std::isfinite(r_max) && r_max > r_sync;
  for (int i = 1; usable && i <= options.rates && !stopped; ++i) {
    stopped = !measure(r_sync + (r_max - r_sync) * i / (options.rates + 1), conc);
  }
  const std::string reason =
      saturated ? fmt::format("output tok/s grew less than 10% from max-concurrency={:g} to {:g}",
                              conc / 2, conc)
                : fmt::format(
                      "not saturated: output tok/s still grew 10% or more at the cap "
                      "max-concurrency={:g}",
                      conc);
  lines.push_back(
      fmt::format("Profile auto: synchronous {:.3f} req/s, saturating {:.3f} req/s at "
                  "max-concurrency={:g} ({})",
                  r_sync, r_max, conc, reason));
  return {{"name", "auto"},
          {"rule", "concurrency doubled from 1 until output_throughput < 1.1 x the previous point"},
          {"synchronous_request_throughput", finite_or_null(r_sync)},
          {"saturating_concurrency", conc},
          {"saturating_request_throughput", finite_or_null(r_max)},
          {"saturated", saturated},
          {"reason", reason},
          {"rates", options.rates}};
}

}  // namespace llmbench::app
