#include "llmbench/metrics/turns.hpp"

#include "llmbench/metrics/summary.hpp"

#include <cmath>
#include <map>

namespace llmbench::metrics {

namespace {

bool same(double a, double b) noexcept {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

/// The samples of one turn while the records are read.
struct TurnSamples {
  std::size_t failed = 0;
  std::vector<double> ttft_ms;
  std::vector<double> input_tokens;
  std::vector<double> cached_tokens;
};

}  // namespace

bool operator==(const TurnSummary& a, const TurnSummary& b) noexcept {
  return a.turn == b.turn && a.count == b.count && a.failed == b.failed && a.ttft_ms == b.ttft_ms &&
         same(a.p99_ttft_ms, b.p99_ttft_ms) && same(a.mean_input_tokens, b.mean_input_tokens) &&
         same(a.mean_cached_tokens, b.mean_cached_tokens) && a.cached_reported == b.cached_reported;
}

std::vector<TurnSummary> summarize_turns(const std::vector<RequestRecord>& records) {
  std::map<std::int64_t, TurnSamples> by_turn;
  for (const auto& r : records) {
    if (r.warmup || r.turn < 1) {
      continue;
    }
    auto& t = by_turn[r.turn];
    if (!r.ok()) {
      ++t.failed;
      continue;
    }
    // The summary's TTFT of the same record: a request without output has none.
    const double ttft = request_latency(r).ttft_ms;
    if (!std::isnan(ttft)) {
      t.ttft_ms.push_back(ttft);
    }
    t.input_tokens.push_back(static_cast<double>(input_token_count(r)));
    if (r.cached_tokens >= 0) {
      t.cached_tokens.push_back(static_cast<double>(r.cached_tokens));
    }
  }
  std::vector<TurnSummary> out;
  out.reserve(by_turn.size());
  for (auto& [turn, t] : by_turn) {
    TurnSummary s;
    s.turn = turn;
    s.count = t.input_tokens.size();
    s.failed = t.failed;
    s.ttft_ms = describe(std::move(t.ttft_ms), {50, 99});
    s.p99_ttft_ms =
        s.ttft_ms.percentiles.empty() ? kUndefined : s.ttft_ms.percentiles.back().second;
    s.mean_input_tokens = describe(std::move(t.input_tokens), {}).mean;
    s.cached_reported = t.cached_tokens.size();
    s.mean_cached_tokens = describe(std::move(t.cached_tokens), {}).mean;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace llmbench::metrics
