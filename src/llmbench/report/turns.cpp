#include "llmbench/report/turns.hpp"

#include "llmbench/analysis/bootstrap.hpp"
#include "llmbench/core/json_number.hpp"
#include "llmbench/metrics/summary.hpp"

#include <fmt/core.h>

#include <cmath>

namespace llmbench::report {

namespace {

using nlohmann::json;

/// Completed TTFTs (ms) of `turn` among the measured records.
std::vector<double> ttfts_of(const std::vector<metrics::RequestRecord>& records,
                             std::int64_t turn) {
  std::vector<double> out;
  for (const auto& r : records) {
    if (r.warmup || r.turn != turn || !r.ok()) {
      continue;
    }
    const double ttft = metrics::request_latency(r).ttft_ms;
    if (!std::isnan(ttft)) {
      out.push_back(ttft);
    }
  }
  return out;
}

const metrics::TurnSummary* row(const std::vector<metrics::TurnSummary>& by_turn,
                                std::int64_t turn) {
  for (const auto& t : by_turn) {
    if (t.turn == turn) {
      return &t;
    }
  }
  return nullptr;
}

std::string ms_or_na(double v) {
  return std::isnan(v) ? std::string("n/a") : fmt::format("{:.2f}", v);
}

}  // namespace

TurnFinding turn_finding(const std::vector<metrics::RequestRecord>& records,
                         const std::vector<metrics::TurnSummary>& by_turn) {
  TurnFinding f;
  const auto* one = row(by_turn, 1);
  const auto* two = row(by_turn, 2);
  auto a = ttfts_of(records, 1);
  auto b = ttfts_of(records, 2);
  if (one == nullptr || two == nullptr || a.size() < kMinFindingSamples ||
      b.size() < kMinFindingSamples) {
    f.text = fmt::format(
        "no turn-2 finding: {} completed turn-1 and {} turn-2 requests (at least {} each "
        "needed)",
        a.size(), b.size(), kMinFindingSamples);
    return f;
  }
  f.evaluated = true;
  const double m1 = one->ttft_ms.median;
  const double m2 = two->ttft_ms.median;
  f.ttft_change_pct = (m2 / m1 - 1) * 100;
  f.input_change_pct = (two->mean_input_tokens / one->mean_input_tokens - 1) * 100;
  if (two->cached_reported > 0 && two->mean_input_tokens > 0) {
    f.cached_pct = two->mean_cached_tokens / two->mean_input_tokens * 100;
  }
  const auto ci = analysis::bootstrap_difference(
      analysis::per_unit(std::move(a)), analysis::per_unit(std::move(b)),
      {analysis::Statistic::P50}, 1.0, 1.0, "turn-ttft", analysis::BootstrapOptions{});
  f.ci_low_ms = ci.front().low;
  f.ci_high_ms = ci.front().high;
  f.said = ci.front().high < 0;
  const std::string input =
      fmt::format("{}{:.0f}% input tokens", f.input_change_pct >= 0 ? "+" : "", f.input_change_pct);
  const std::string cached =
      f.cached_pct >= 0 ? fmt::format("; {:.0f}% of turn-2 input tokens cached", f.cached_pct) : "";
  if (f.said) {
    f.text = fmt::format(
        "turn 2 TTFT is {:.0f}% lower than turn 1 (median {:.2f} vs {:.2f} ms, 95% CI of the "
        "difference {:.2f} to {:.2f} ms) at {} (prefix cache{})",
        -f.ttft_change_pct, m2, m1, f.ci_low_ms, f.ci_high_ms, input, cached);
  } else {
    f.text = fmt::format(
        "turn 2 TTFT is not lower than turn 1 beyond noise (median {:.2f} vs {:.2f} ms, 95% CI "
        "of the difference {:.2f} to {:.2f} ms) at {}{}",
        m2, m1, f.ci_low_ms, f.ci_high_ms, input, cached);
  }
  return f;
}

json by_turn_json(const std::vector<metrics::TurnSummary>& by_turn) {
  json out = json::array();
  for (const auto& t : by_turn) {
    out.push_back({{"turn", t.turn},
                   {"count", t.count},
                   {"failed", t.failed},
                   {"mean_ttft_ms", finite_or_null(t.ttft_ms.mean)},
                   {"median_ttft_ms", finite_or_null(t.ttft_ms.median)},
                   {"p99_ttft_ms", finite_or_null(t.p99_ttft_ms)},
                   {"mean_input_tokens", finite_or_null(t.mean_input_tokens)},
                   {"mean_cached_tokens", finite_or_null(t.mean_cached_tokens)},
                   {"cached_reported", t.cached_reported}});
  }
  return out;
}

json turn_finding_json(const TurnFinding& f) {
  json j{{"evaluated", f.evaluated}, {"said", f.said}, {"text", f.text}};
  if (f.evaluated) {
    j["ttft_change_pct"] = finite_or_null(f.ttft_change_pct);
    j["input_change_pct"] = finite_or_null(f.input_change_pct);
    j["ci_low_ms"] = finite_or_null(f.ci_low_ms);
    j["ci_high_ms"] = finite_or_null(f.ci_high_ms);
    j["cached_pct"] = f.cached_pct >= 0 ? finite_or_null(f.cached_pct) : json(nullptr);
  }
  return j;
}

std::string turns_console_text(const std::vector<metrics::TurnSummary>& by_turn,
                               const TurnFinding& finding) {
  if (by_turn.empty()) {
    return {};
  }
  std::string out = std::string(19, '-') + "TTFT by Turn" + std::string(19, '-') + "\n";
  out += fmt::format("{:>4} {:>6} {:>9} {:>9} {:>9} {:>8} {:>8}\n", "turn", "done", "mean ms",
                     "median ms", "p99 ms", "in tok", "cached");
  for (const auto& t : by_turn) {
    out +=
        fmt::format("{:>4} {:>6} {:>9} {:>9} {:>9} {:>8} {:>8}\n", t.turn, t.count,
                    ms_or_na(t.ttft_ms.mean), ms_or_na(t.ttft_ms.median), ms_or_na(t.p99_ttft_ms),
                    std::isnan(t.mean_input_tokens) ? std::string("n/a")
                                                    : fmt::format("{:.0f}", t.mean_input_tokens),
                    std::isnan(t.mean_cached_tokens) ? std::string("n/a")
                                                     : fmt::format("{:.0f}", t.mean_cached_tokens));
  }
  out += finding.text;
  out += '\n';
  return out;
}

}  // namespace llmbench::report
