#include "llmbench/app/plan.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <ctime>

namespace llmbench::app {

std::string default_result_stem(const std::string& label, const std::string& backend, double rate,
                                std::int64_t max_concurrency, const std::string& model,
                                std::int64_t unix_time) {
  std::string m = model;
  std::replace(m.begin(), m.end(), '/', '_');
  std::replace(m.begin(), m.end(), ' ', '_');
  const std::string rate_s = std::isinf(rate) ? "inf" : fmt::format("{:g}", rate);
  const std::string conc =
      max_concurrency > 0 ? fmt::format("-concurrency{}", max_concurrency) : "";
  // vLLM's --label replaces the backend as the prefix ("label-rateqps-...").
  return fmt::format("{}-{}qps{}-{}-{:%Y%m%d-%H%M%S}", label.empty() ? backend : label, rate_s,
                     conc, m, fmt::localtime(static_cast<std::time_t>(unix_time)));
}

}  // namespace llmbench::app
