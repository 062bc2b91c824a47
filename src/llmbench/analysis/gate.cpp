#include "llmbench/analysis/gate.hpp"

#include "llmbench/core/suggest.hpp"

#include <fmt/core.h>

#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <utility>

namespace llmbench::analysis {

namespace {

/// The one name table of `GateBound`: its operator as written, longest first for parsing.
struct BoundName {
  GateBound bound;
  std::string_view op;
};
constexpr std::array<BoundName, 8> kBounds{{{GateBound::MoveAtMost, "±"},
                                            {GateBound::MoveAtMost, "+-"},
                                            {GateBound::RiseAtMost, "+"},
                                            {GateBound::FallAtMost, "-"},
                                            {GateBound::AtMost, "<="},
                                            {GateBound::Below, "<"},
                                            {GateBound::AtLeast, ">="},
                                            {GateBound::Above, ">"}}};

/// Statistic names a gate key may start with ("median" is vLLM's name for p50).
constexpr std::array<std::pair<std::string_view, Statistic>, 5> kGateStatistics{
    {{"mean", Statistic::Mean},
     {"median", Statistic::P50},
     {"p50", Statistic::P50},
     {"p90", Statistic::P90},
     {"p99", Statistic::P99}}};

constexpr std::string_view kValidKeys =
    "<stat>_<latency>_ms with stat mean, median, p50, p90, p99 and latency ttft, tpot, itl, "
    "e2el; error_rate; output_throughput; request_throughput; or canary";

/// Every gate key, for "did you mean": <stat>_<latency>_ms and the keys of the other metrics.
std::vector<std::string> gate_keys() {
  std::vector<std::string> keys;
  for (const char* latency : {"ttft", "tpot", "itl", "e2el"}) {
    for (const auto& [stat, statistic] : kGateStatistics)
      keys.push_back(fmt::format("{}_{}_ms", stat, latency));
  }
  for (const char* other : {"error_rate", "output_throughput", "request_throughput", "canary"})
    keys.emplace_back(other);
  return keys;
}

bool is_change(GateBound b) noexcept {
  return b == GateBound::RiseAtMost || b == GateBound::FallAtMost || b == GateBound::MoveAtMost;
}

std::string_view op_of(GateBound b) noexcept {
  for (const auto& n : kBounds) {
    if (n.bound == b)
      return n.op;
  }
  return "?";
}

std::string_view trim_view(std::string_view s, std::size_t& offset) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
    ++offset;
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Error gate_error(std::size_t offset, const std::string& what) {
  return Error{what, "--gate", static_cast<std::int64_t>(offset)};
}

/// The metric and statistic of a key such as "p99_ttft_ms" or "error_rate".
std::optional<std::pair<Metric, Statistic>> parse_key(std::string_view key) {
  if (const auto m = metric_from_string(key); m && !is_latency(*m))
    return std::pair{*m, Statistic::Mean};
  constexpr std::string_view kSuffix = "_ms";
  if (key.size() <= kSuffix.size() || key.substr(key.size() - kSuffix.size()) != kSuffix)
    return std::nullopt;
  key.remove_suffix(kSuffix.size());
  const auto underscore = key.find('_');
  if (underscore == std::string_view::npos)
    return std::nullopt;
  const auto metric = metric_from_string(key.substr(underscore + 1));
  if (!metric || !is_latency(*metric))
    return std::nullopt;
  for (const auto& [name, statistic] : kGateStatistics) {
    if (name == key.substr(0, underscore))
      return std::pair{*metric, statistic};
  }
  return std::nullopt;
}

/// One `key:bound` item starting at `offset` of the whole spec.
Result<Gate> parse_item(std::string_view item, std::size_t offset) {
  const auto colon = item.find(':');
  if (colon == std::string_view::npos)
    return gate_error(offset, fmt::format("expected KEY:BOUND, got '{}'", item));
  Gate gate{.text = std::string(item)};
  std::size_t key_offset = offset;
  const std::string_view key = trim_view(item.substr(0, colon), key_offset);
  const auto parsed = parse_key(key);
  if (!parsed)
    return gate_error(key_offset, fmt::format("unknown gate key '{}'{} (valid: {})", key,
                                              did_you_mean(key, gate_keys()), kValidKeys));
  gate.metric = parsed->first;
  gate.statistic = parsed->second;
  std::size_t pos = offset + colon + 1;
  std::string_view rest = trim_view(item.substr(colon + 1), pos);
  const BoundName* bound = nullptr;
  for (const auto& b : kBounds) {
    if (rest.substr(0, b.op.size()) == b.op) {
      bound = &b;
      break;
    }
  }
  if (bound == nullptr)
    return gate_error(pos, "expected one of + - ± +- < <= > >= before the number");
  gate.bound = bound->bound;
  rest.remove_prefix(bound->op.size());
  pos += bound->op.size();
  const auto* first = rest.data();
  const auto* last = rest.data() + rest.size();
  const auto [end, ec] = std::from_chars(first, last, gate.value);
  if (ec != std::errc() || !std::isfinite(gate.value) || gate.value < 0)
    return gate_error(pos, fmt::format("expected a non-negative number, got '{}'", rest));
  pos += static_cast<std::size_t>(end - first);
  const std::string_view unit = rest.substr(static_cast<std::size_t>(end - first));
  if (unit == "%") {
    gate.percent = true;
    if (!is_change(gate.bound) && gate.metric != Metric::ErrorRate)
      return gate_error(
          pos, "'%' bounds a change (+ - ±) or error_rate, not a limit on " + std::string(key));
  } else if (unit == "ms") {
    if (!is_latency(gate.metric))
      return gate_error(pos, fmt::format("'ms' is the unit of latencies, not of {}", key));
  } else if (!unit.empty()) {
    return gate_error(pos, fmt::format("unknown unit '{}' (valid: ms, %)", unit));
  }
  return gate;
}

/// The unit a metric is printed in, and the factor from its value to that unit.
std::pair<std::string_view, double> display_unit(Metric metric) noexcept {
  switch (metric) {
    case Metric::ErrorRate:
      return {"%", 100.0};
    case Metric::OutputThroughput:
      return {" tok/s", 1.0};
    case Metric::RequestThroughput:
      return {" req/s", 1.0};
    default:
      return {" ms", 1.0};
  }
}

}  // namespace

Result<std::vector<Gate>> parse_gates(std::string_view spec) {
  std::vector<Gate> gates;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    std::size_t offset = start;
    const std::string_view item = trim_view(spec.substr(start, comma - start), offset);
    if (item.empty())
      return gate_error(offset, "empty gate (two commas, or a comma at an end)");
    if (item == "canary") {
      auto canary = parse_gates(kCanaryGate);
      if (!canary)
        return canary.error();
      gates.insert(gates.end(), canary->begin(), canary->end());
    } else {
      auto gate = parse_item(item, offset);
      if (!gate)
        return gate.error();
      gates.push_back(std::move(*gate));
    }
    start = comma + 1;
  }
  return gates;
}

std::vector<GateResult> evaluate_gates(const std::vector<Gate>& gates,
                                       const std::vector<MetricComparison>& metrics) {
  std::vector<GateResult> results;
  for (const Gate& gate : gates) {
    GateResult r{.gate = gate};
    const StatisticComparison* row = nullptr;
    for (const auto& m : metrics) {
      if (m.metric == gate.metric)
        row = m.find(gate.statistic);
    }
    const auto [unit, factor] = display_unit(gate.metric);
    const bool change = is_change(gate.bound);
    if (row != nullptr) {
      r.measured = change ? row->difference : row->b;
      // '%' is a share of A's value for a change, and of requests for error_rate.
      if (!gate.percent)
        r.limit = gate.value;
      else if (gate.metric == Metric::ErrorRate)
        r.limit = gate.value / 100.0;
      else
        r.limit = gate.value / 100.0 * std::abs(row->a);
    }
    const double m = r.measured;
    const double l = r.limit;
    switch (gate.bound) {
      case GateBound::RiseAtMost:
        r.passed = m <= l;
        break;
      case GateBound::FallAtMost:
        r.passed = -m <= l;
        break;
      case GateBound::MoveAtMost:
        r.passed = std::abs(m) <= l;
        break;
      case GateBound::Below:
        r.passed = m < l;
        break;
      case GateBound::AtMost:
        r.passed = m <= l;
        break;
      case GateBound::Above:
        r.passed = m > l;
        break;
      case GateBound::AtLeast:
        r.passed = m >= l;
        break;
    }
    const std::string verdict = r.passed ? "pass" : "FAIL";
    if (row == nullptr || std::isnan(m) || std::isnan(l)) {
      r.passed = false;
      r.message = fmt::format("{}: undefined (no samples in A or B): FAIL", gate.text);
    } else if (change) {
      r.message = fmt::format(
          "{}: B − A = {:+.2f}{} ({:.2f} → {:.2f}), limit {}{:.2f}{}{}: {}", gate.text, m * factor,
          unit, row->a * factor, row->b * factor, op_of(gate.bound), l * factor, unit,
          gate.percent ? fmt::format(" ({:g}% of A)", gate.value) : "", verdict);
    } else {
      r.message = fmt::format("{}: B = {:.4g}{}, limit {} {:.4g}{}: {}", gate.text, m * factor,
                              unit, op_of(gate.bound), l * factor, unit, verdict);
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace llmbench::analysis
