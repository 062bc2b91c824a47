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
    r.first_failing = lo->load;
    r.reason = fmt::format(
        "LO = {:g} already misses a constraint: no load in the range meets the SLO", o.lo);
    explain_slo_answer(r, constraints, o);
    return r;
  }
  double good = lo->load;
  double good_margin = lo->margin;
  const SloPoint* hi = eval(o.hi);
  if (hi == nullptr) {
    r.best = good;
    explain_slo_answer(r, constraints, o);
    return r;
  }
  if (hi->meets) {
    r.best = hi->load;
    r.reason =
        fmt::format("HI = {:g} meets every constraint: the answer is at least HI (raise it)", o.hi);
    explain_slo_answer(r, constraints, o);
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
  explain_slo_answer(r, constraints, o);
  return r;
}

double round_to_resolution(double value, double resolution, bool integer) {
  if (!std::isfinite(value) || !(value > 0) || !(resolution > 0))
    return value;
  double step = std::pow(10.0, std::floor(std::log10(resolution * value)));
  if (integer)
    step = std::max(1.0, std::round(step));
  // The small nudge keeps 2.1 (stored as 2.0999...) from rounding down to 2.0.
  const double rounded = std::floor(value / step * (1 + 1e-12)) * step;
  return std::min(value, rounded > 0 ? rounded : value);
}

namespace {

/// The index of the point measured at `load` (the last one, if measured twice).
std::optional<std::size_t> point_at(const SloSearchResult& r, const std::optional<double>& load) {
  if (!load)
    return std::nullopt;
  for (std::size_t i = r.points.size(); i-- > 0;) {
    if (r.points[i].load == *load)
      return i;
  }
  return std::nullopt;
}

double value_of(const SloPoint& p, const std::string& metric) {
  const auto it = p.measurement.metrics.find(metric);
  return it == p.measurement.metrics.end() ? std::nan("") : it->second;
}

}  // namespace

void explain_slo_answer(SloSearchResult& r, const std::vector<SloConstraint>& constraints,
                        const SloSearchOptions& o) {
  r.answer_point = point_at(r, r.best);
  r.failing_point = point_at(r, r.first_failing);
  if (r.best)
    r.answer_rounded = round_to_resolution(*r.best, o.resolution, o.integer);
  // The binding constraint: the one the first failing point misses by the most, else the
  // tightest at the answer.
  const SloPoint* decide = r.failing_point
                               ? &r.points[*r.failing_point]
                               : (r.answer_point ? &r.points[*r.answer_point] : nullptr);
  if (decide != nullptr && !constraints.empty()) {
    const SloConstraint* tight = nullptr;
    double lowest = std::numeric_limits<double>::infinity();
    for (const auto& c : constraints) {
      const double m = slo_margin(c, value_of(*decide, c.metric));
      if (tight == nullptr || m < lowest) {
        tight = &c;
        lowest = m;
      }
    }
    std::string at;
    if (r.answer_point) {
      at += fmt::format("{:g} at the answer", value_of(r.points[*r.answer_point], tight->metric));
    }
    if (r.failing_point) {
      at += fmt::format("{}{:g} at {:g}", at.empty() ? "" : ", ",
                        value_of(r.points[*r.failing_point], tight->metric),
                        r.points[*r.failing_point].load);
    }
    r.binding = fmt::format("{} ({})", to_string(*tight), at);
  }
  // Non-monotonic: a point that meets at a load above one that misses.
  for (const auto& hi : r.points) {
    if (!hi.meets || !hi.measurement.ran)
      continue;
    for (const auto& lo : r.points) {
      if (lo.load < hi.load && !lo.meets && lo.measurement.ran) {
        r.non_monotonic.push_back(fmt::format(
            "{:g} meets every constraint but the lower load {:g} misses one", hi.load, lo.load));
      }
    }
  }
  const auto check = [&](const std::optional<std::size_t>& i, std::string_view what) {
    if (!i || r.points[*i].measurement.valid)
      return;
    r.provisional = true;
    std::string why;
    for (const auto& reason : r.points[*i].measurement.invalid_reasons)
      why += (why.empty() ? "" : "; ") + reason;
    r.provisional_reasons.push_back(
        fmt::format("{} ({:g}) is invalid: {}", what, r.points[*i].load, why));
  };
  check(r.answer_point, "the answer");
  check(r.failing_point, "the first failing point");
}

std::vector<std::string> slo_answer_lines(const SloSearchResult& r,
                                          const std::vector<SloConstraint>& constraints,
                                          std::string_view axis) {
  std::vector<std::string> lines;
  std::string slo;
  for (const auto& c : constraints) slo += (slo.empty() ? "" : ", ") + to_string(c);
  if (!r.best) {
    lines.push_back(fmt::format("SLO {}: no {} in the range meets it ({})", slo, axis, r.reason));
  } else {
    lines.push_back(fmt::format(
        "SLO {}: highest {} meeting it: {:g}{} (measured {:g}{}; {})", slo, axis,
        r.answer_rounded.value_or(*r.best), r.provisional ? " [provisional]" : "", *r.best,
        r.first_failing ? fmt::format(", first failing {:g}", *r.first_failing) : std::string(),
        r.reason));
  }
  if (!r.binding.empty())
    lines.push_back("  binding constraint: " + r.binding);
  if (r.answer_point) {
    const SloPoint& p = r.points[*r.answer_point];
    struct Shown {
      std::string_view key;
      std::string_view label;
    };
    constexpr Shown kShown[] = {
        {"output_throughput", "output tok/s"}, {"request_throughput", "req/s"},
        {"request_goodput", "goodput req/s"},  {"p99_ttft_ms", "p99 TTFT ms"},
        {"p99_tpot_ms", "p99 TPOT ms"},        {"p99_itl_ms", "p99 ITL ms"},
        {"p99_e2el_ms", "p99 E2EL ms"}};
    std::string at;
    for (const auto& s : kShown) {
      const double v = value_of(p, std::string(s.key));
      if (std::isfinite(v))
        at += fmt::format("{}{} {:.4g}", at.empty() ? "" : ", ", s.label, v);
    }
    if (!at.empty())
      lines.push_back("  at the answer: " + at);
  }
  for (const auto& n : r.non_monotonic) lines.push_back("  non-monotonic: " + n);
  for (const auto& p : r.provisional_reasons) lines.push_back("  provisional: " + p);
  return lines;
}

}  // namespace llmbench::analysis
