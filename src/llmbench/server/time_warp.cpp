#include "llmbench/server/time_warp.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

namespace llmbench::server {
namespace {

constexpr double kDayS = 86400;

/// "A:B" as two finite numbers; throws naming `flag` and `what` (the expected shape).
std::pair<double, double> parse_pair(std::string_view text, const std::string& flag,
                                     std::string_view what) {
  const auto colon = text.find(':');
  const auto number = [&](std::string_view part, std::size_t offset) {
    double v = 0;
    const auto* end = part.data() + part.size();
    const auto [ptr, ec] = std::from_chars(part.data(), end, v);
    if (part.empty() || ec != std::errc() || ptr != end || !std::isfinite(v)) {
      throw Exception(
          Error{fmt::format("'{}' is not {} (bad number at byte {})", text, what, offset), flag,
                static_cast<std::int64_t>(offset)});
    }
    return v;
  };
  if (colon == std::string_view::npos) {
    throw Exception(Error{fmt::format("'{}' is not {} (no ':')", text, what), flag, -1});
  }
  return {number(text.substr(0, colon), 0), number(text.substr(colon + 1), colon + 1)};
}

TimeNs s_to_ns(double s) {
  return static_cast<TimeNs>(std::llround(s * 1e9));
}

}  // namespace

Stall parse_stall(std::string_view text, const std::string& flag) {
  const auto [at, len] = parse_pair(text, flag, "AT_S:FOR_S (seconds after the first request)");
  return Stall{.at_s = at, .for_s = len};
}

Drift parse_drift(std::string_view text, const std::string& flag) {
  const auto [factor, over] = parse_pair(text, flag, "FACTOR:SECONDS");
  return Drift{.factor = factor, .over_s = over};
}

void validate_perturbation(const TimingPerturbation& p) {
  auto stalls = p.stalls;
  std::sort(stalls.begin(), stalls.end(),
            [](const Stall& a, const Stall& b) { return a.at_s < b.at_s; });
  for (std::size_t i = 0; i < stalls.size(); ++i) {
    const Stall& s = stalls[i];
    if (!(s.at_s >= 0 && s.at_s <= kDayS && s.for_s > 0 && s.for_s <= kDayS)) {
      throw Exception(Error{fmt::format("{}:{}: the start must be in [0, 86400] s and the length "
                                        "in (0, 86400] s",
                                        s.at_s, s.for_s),
                            "--stall", -1});
    }
    if (i > 0 && s.at_s < stalls[i - 1].at_s + stalls[i - 1].for_s) {
      throw Exception(Error{fmt::format("the stall at {} s starts inside the one at {} s", s.at_s,
                                        stalls[i - 1].at_s),
                            "--stall", -1});
    }
  }
  const Drift& d = p.drift;
  if (!(d.factor > 0 && d.factor <= 100) || !(d.over_s >= 0 && d.over_s <= kDayS) ||
      (d.factor != 1.0 && d.over_s == 0)) {
    throw Exception(Error{fmt::format("{}:{}: the factor must be in (0, 100] and the seconds in "
                                      "(0, 86400]",
                                      d.factor, d.over_s),
                          "--drift", -1});
  }
}

TimeWarp::TimeWarp(TimingPerturbation p) : p_(std::move(p)) {
  std::sort(p_.stalls.begin(), p_.stalls.end(),
            [](const Stall& a, const Stall& b) { return a.at_s < b.at_s; });
}

TimeNs TimeWarp::to_wall(TimeNs engine_ns) const noexcept {
  if (engine_ns < 0)
    return engine_ns;
  const double f = p_.drift.factor;
  const double t_end = p_.drift.over_s;
  const double tau = static_cast<double>(engine_ns) / 1e9;
  double u = tau;
  if (f != 1.0) {
    // d(wall)/d(engine) = f + (1 − f)·τ/T up to T, then 1.
    u = tau <= t_end ? f * tau + (1 - f) * tau * tau / (2 * t_end)
                     : t_end * (1 + f) / 2 + (tau - t_end);
  }
  TimeNs wall = f != 1.0 ? s_to_ns(u) : engine_ns;
  for (const Stall& s : p_.stalls) {
    if (wall < s_to_ns(s.at_s))
      break;
    wall += s_to_ns(s.for_s);
  }
  return wall;
}

TimeNs TimeWarp::to_engine(TimeNs wall_ns) const noexcept {
  if (wall_ns < 0)
    return wall_ns;
  TimeNs shift = 0;
  TimeNs unstalled = wall_ns;
  for (const Stall& s : p_.stalls) {
    const TimeNs at = s_to_ns(s.at_s);
    const TimeNs end = at + s_to_ns(s.for_s);
    if (wall_ns < at)
      break;
    if (wall_ns < end) {
      unstalled = at - shift;  // inside the stall: the clock stands at its start
      shift = -1;
      break;
    }
    shift += end - at;
  }
  if (shift >= 0)
    unstalled = wall_ns - shift;
  const double f = p_.drift.factor;
  if (f == 1.0)
    return unstalled;
  const double t_end = p_.drift.over_s;
  const double u = static_cast<double>(unstalled) / 1e9;
  const double u_end = t_end * (1 + f) / 2;
  if (u > u_end)
    return s_to_ns(t_end + (u - u_end));
  // Solve a·τ² + f·τ − u = 0 with a = (1 − f)/(2T); the root that is 0 at u = 0.
  const double a = (1 - f) / (2 * t_end);
  const double disc = std::max(0.0, f * f + 4 * a * u);
  return s_to_ns((std::sqrt(disc) - f) / (2 * a));
}

}  // namespace llmbench::server
