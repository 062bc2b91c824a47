#include "llmbench/analysis/slo_search.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/text.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace llmbench::analysis {

namespace {

[[noreturn]] void fail(const std::string& message, std::string_view text, std::size_t at) {
  throw Exception(
      Error{fmt::format("{} in '{}'", message, text), "--slo", static_cast<std::int64_t>(at)});
}

std::string_view op_text(SloOp op) {
  for (const auto& o : kSloOps) {
    if (o.op == op)
      return o.text;
  }
  return "?";
}

/// The lowest margin the interpolation uses for the failing end.
constexpr double kMarginFloor = -1.0;
/// Each new point lies at least this fraction of the bracket inside it, so it always narrows.
constexpr double kMinStep = 0.1;

bool meets(const SloConstraint& c, double margin) {
  return (c.op == SloOp::Lt || c.op == SloOp::Gt) ? margin > 0 : margin >= 0;
}

}  // namespace

std::vector<SloConstraint> parse_slo_constraints(std::string_view text) {
  std::vector<SloConstraint> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view item = trim(text.substr(pos, comma - pos));
    const std::size_t at = pos;
    std::size_t op_at = std::string_view::npos;
    const SloOpName* op = nullptr;
    for (const auto& candidate : kSloOps) {
      const std::size_t found = item.find(candidate.text);
      if (found != std::string_view::npos && (op == nullptr || found < op_at)) {
        op = &candidate;
        op_at = found;
      }
    }
    if (op == nullptr) {
      fail(
          fmt::format("'{}' has no comparison (valid: <=, >=, <, >; e.g. p99_ttft_ms<=2000)", item),
          text, at);
    }
    const std::string_view metric = trim(item.substr(0, op_at));
    const std::string bound_text(trim(item.substr(op_at + op->text.size())));
    if (metric.empty())
      fail(fmt::format("'{}' names no metric", item), text, at);
    char* end = nullptr;
    const double bound = std::strtod(bound_text.c_str(), &end);
    if (bound_text.empty() || *end != '\0' || !std::isfinite(bound))
      fail(fmt::format("bound '{}' is not a number", bound_text), text, at);
    out.push_back(SloConstraint{.metric = std::string(metric), .op = op->op, .bound = bound});
    pos = comma + 1;
  }
  return out;
}

std::string to_string(const SloConstraint& c) {
  return fmt::format("{}{}{:g}", c.metric, op_text(c.op), c.bound);
}

double slo_margin(const SloConstraint& c, double value) noexcept {
  if (std::isnan(value))
    return -std::numeric_limits<double>::infinity();
  const double scale = c.bound != 0 ? std::abs(c.bound) : 1.0;
  return (c.op == SloOp::Le || c.op == SloOp::Lt) ? (c.bound - value) / scale
                                                  : (value - c.bound) / scale;
}

SloSearchResult slo_search(const std::vector<SloConstraint>& constraints, const SloSearchOptions& o,
                           const SloMeasure& measure) {
  if (!(o.lo > 0 && o.lo < o.hi))
    throw Exception(Error{"the search range must have 0 < LO < HI", "--sweep", -1});
  if (!(o.resolution > 0 && o.resolution < 1))
    throw Exception(Error{"must be in (0, 1)", "--slo-resolution", -1});
  if (o.max_points < 2)
    throw Exception(Error{"must be at least 2 (the range's ends)", "--max-points", -1});
  SloSearchResult r;
  // Measures `load`; false when the search is to stop.
  const auto eval = [&](double load) -> const SloPoint* {
    auto m = measure(load);
    if (!m) {
      r.stopped = true;
      r.reason = "stopped by a signal";
      return nullptr;
    }
    const double ran_at = std::isnan(m->load) ? load : m->load;
    SloPoint p{.load = ran_at, .measurement = std::move(*m)};
    p.meets = p.measurement.ran;
    p.margin = p.measurement.ran ? std::numeric_limits<double>::infinity() : p.margin;
    for (const auto& c : constraints) {
      const auto it = p.measurement.metrics.find(c.metric);
      const double margin =
          slo_margin(c, it == p.measurement.metrics.end() ? std::nan("") : it->second);
      p.margin = std::min(p.margin, margin);
      p.meets = p.meets && meets(c, margin);
    }
    r.points.push_back(std::move(p));
    return &r.points.back();
  };
  const SloPoint* lo = eval(o.lo);
  if (lo == nullptr)
    return r;
  if (!lo->meets) {
    r.first_failing = o.lo;
    r.reason = fmt::format(
        "LO = {:g} already misses a constraint: no load in the range meets the SLO", o.lo);
    return r;
  }
  double good = lo->load;
  double good_margin = lo->margin;
  const SloPoint* hi = eval(o.hi);
  if (hi == nullptr) {
    r.best = good;
    return r;
  }
  if (hi->meets) {
    r.best = hi->load;
    r.reason =
        fmt::format("HI = {:g} meets every constraint: the answer is at least HI (raise it)", o.hi);
    return r;
  }
  double bad = hi->load;
  double bad_margin = hi->margin;
  int same_side = 0;  // > 0: the good end moved last that many times; < 0: the bad end
  const auto narrow = [&] {
    return bad - good <= o.resolution * good || (o.integer && bad - good <= 1);
  };
  while (!narrow() && r.points.size() < o.max_points) {
    // The failing end's margin counts at most −1 (a metric at twice its bound): latency grows
    // without bound near saturation, and an unbounded margin would pin every interpolated
    // point to the good end.
    const double capped = std::max(bad_margin, kMarginFloor);
    double x = 0.5 * (good + bad);
    if (std::abs(same_side) < 2 && std::isfinite(good_margin) && good_margin > capped) {
      x = good + (bad - good) * good_margin / (good_margin - capped);
    }
    x = std::clamp(x, good + kMinStep * (bad - good), bad - kMinStep * (bad - good));
    if (o.integer)
      x = std::clamp(std::round(x), good + 1, bad - 1);
    const SloPoint* p = eval(x);
    if (p == nullptr)
      break;
    x = p->load;
    if (p->meets) {
      good = x;
      good_margin = p->margin;
      same_side = same_side > 0 ? same_side + 1 : 1;
    } else {
      bad = x;
      bad_margin = p->margin;
      same_side = same_side < 0 ? same_side - 1 : -1;
    }
  }
  r.best = good;
  r.first_failing = bad;
  r.converged = narrow();
  if (!r.stopped) {
    r.reason = r.converged ? fmt::format("bracket [{:g}, {:g}] within the resolution {:g}", good,
                                         bad, o.resolution)
                           : fmt::format("point budget ({}) spent with the bracket at [{:g}, {:g}]",
                                         o.max_points, good, bad);
  }
  return r;
}

}  // namespace llmbench::analysis
