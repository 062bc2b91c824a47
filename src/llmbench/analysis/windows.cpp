#include "llmbench/analysis/windows.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/metrics/summary.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace llmbench::analysis {

namespace {

using metrics::RequestRecord;

/// The span [start, end) of a run's measured requests: first send to last completion (the
/// span of `Summary::duration_s`), or to the last chunk or send when a request never ended.
struct Span {
  TimeNs start = std::numeric_limits<TimeNs>::max();
  TimeNs end = std::numeric_limits<TimeNs>::min();
  TimeNs last_sent = std::numeric_limits<TimeNs>::min();
  [[nodiscard]] bool empty() const noexcept { return start > end; }
};

bool measured(const RequestRecord& r) noexcept {
  return !r.warmup && r.sent_ns >= 0;
}

Span measured_span(const std::vector<RequestRecord>& records) {
  Span s;
  for (const auto& r : records) {
    if (!measured(r))
      continue;
    s.start = std::min(s.start, r.sent_ns);
    s.last_sent = std::max(s.last_sent, r.sent_ns);
    s.end = std::max({s.end, r.sent_ns, r.done_ns});
    if (!r.chunks.empty())
      s.end = std::max(s.end, r.chunks.back().time_ns);
  }
  return s;
}

/// Accumulates samples into the windows of one span, then turns them into `Window`s.
class Binner {
 public:
  Binner(const Span& span, TimeNs width)
      : start_(span.start), end_(span.end), last_sent_(span.last_sent), width_(width) {
    const TimeNs length = span.end - span.start;
    const auto n = static_cast<std::size_t>(std::max<TimeNs>(1, (length + width - 1) / width));
    windows_.resize(n);
    ttft_.resize(n);
    itl_.resize(n);
    area_.resize(n, 0.0);
  }

  /// Window of time `t` (times outside the span are clamped to its first or last window).
  [[nodiscard]] std::size_t index(TimeNs t) const noexcept {
    if (t <= start_)
      return 0;
    const auto i = static_cast<std::size_t>((t - start_) / width_);
    return std::min(i, windows_.size() - 1);
  }

  void add_tokens(TimeNs t, std::int64_t tokens) { windows_[index(t)].output_tokens += tokens; }
  void add_ttft(TimeNs t, double ms) { ttft_[index(t)].push_back(ms); }
  void add_itl(TimeNs t, double ms, std::int64_t count) {
    auto& v = itl_[index(t)];
    v.insert(v.end(), static_cast<std::size_t>(count), ms);
  }
  void add_done(TimeNs t, bool ok) {
    auto& w = windows_[index(t)];
    (ok ? w.completed : w.failed) += 1;
  }

  /// Requests in flight from the (sent, done) of every measured request: a time-weighted mean
  /// and the maximum per window. A request that never ended stays in flight to the span's end.
  void add_in_flight(const std::vector<RequestRecord>& records) {
    std::vector<std::pair<TimeNs, int>> events;
    for (const auto& r : records) {
      if (!measured(r))
        continue;
      events.emplace_back(r.sent_ns, +1);
      events.emplace_back(r.done_ns >= 0 ? r.done_ns : end_, -1);
    }
    std::sort(events.begin(), events.end());  // at one instant, ends (-1) before starts
    TimeNs now = start_;
    std::int64_t count = 0;
    for (const auto& [t, delta] : events) {
      hold(now, t, count);
      now = std::max(now, t);
      count += delta;
      auto& w = windows_[index(t)];
      w.max_in_flight =
          std::max(w.max_in_flight, static_cast<std::size_t>(std::max<std::int64_t>(0, count)));
    }
  }

  std::vector<Window> finish(const WindowOptions& options) && {
    for (std::size_t i = 0; i < windows_.size(); ++i) {
      auto& w = windows_[i];
      w.start_ns = start_ + static_cast<TimeNs>(i) * width_;
      w.end_ns = i + 1 == windows_.size() ? std::max(end_, w.start_ns) : w.start_ns + width_;
      w.full = w.end_ns - w.start_ns == width_;
      w.sending = w.end_ns <= last_sent_;
      const double seconds = ns_to_s(w.end_ns - w.start_ns);
      w.output_throughput =
          seconds > 0 ? static_cast<double>(w.output_tokens) / seconds : metrics::kUndefined;
      w.request_throughput =
          seconds > 0 ? static_cast<double>(w.completed) / seconds : metrics::kUndefined;
      w.mean_in_flight = w.end_ns > w.start_ns
                             ? area_[i] / static_cast<double>(w.end_ns - w.start_ns)
                             : metrics::kUndefined;
      w.ttft_ms = metrics::describe(std::move(ttft_[i]), options.percentiles);
      w.itl_ms = metrics::describe(std::move(itl_[i]), options.percentiles);
    }
    return std::move(windows_);
  }

 private:
  /// `count` requests in flight over [from, to): adds count × overlap to each window's area and
  /// raises the maximum of each window the interval touches.
  void hold(TimeNs from, TimeNs to, std::int64_t count) {
    if (to <= from || count <= 0)
      return;
    for (std::size_t i = index(from); i < windows_.size(); ++i) {
      const TimeNs w0 = start_ + static_cast<TimeNs>(i) * width_;
      const TimeNs w1 = i + 1 == windows_.size() ? std::max(end_, w0) : w0 + width_;
      const TimeNs overlap = std::min(to, w1) - std::max(from, w0);
      if (overlap > 0) {
        area_[i] += static_cast<double>(count) * static_cast<double>(overlap);
        windows_[i].max_in_flight =
            std::max(windows_[i].max_in_flight, static_cast<std::size_t>(count));
      }
      if (w1 >= to)
        break;
    }
  }

  TimeNs start_;
  TimeNs end_;
  TimeNs last_sent_;
  TimeNs width_;
  std::vector<Window> windows_;
  std::vector<std::vector<double>> ttft_;
  std::vector<std::vector<double>> itl_;
  std::vector<double> area_;  ///< ∫ in-flight dt per window (request·ns)
};

void check_width(const WindowOptions& options) {
  if (options.width_ns <= 0) {
    throw Exception(
        Error{fmt::format("the window must be longer than 0 s (got {} ns)", options.width_ns),
              "--window-s", -1});
  }
}

/// Completions, failures and TTFTs of the measured requests (TTFT from `request_latency` for
/// records with chunks, or from `first_token` (per record, −1 = none) for token runs).
void add_requests(Binner& bins, const std::vector<RequestRecord>& records,
                  const std::vector<TimeNs>* first_token) {
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (!measured(r))
      continue;
    bins.add_done(r.done_ns >= 0 ? r.done_ns : r.sent_ns, r.ok());
    if (!r.ok())
      continue;
    if (first_token == nullptr) {
      if (!r.chunks.empty())
        bins.add_ttft(r.chunks.front().time_ns, metrics::request_latency(r).ttft_ms);
    } else if ((*first_token)[i] >= 0) {
      bins.add_ttft((*first_token)[i], ns_to_ms((*first_token)[i] - r.sent_ns));
    }
  }
  bins.add_in_flight(records);
}

}  // namespace

std::vector<Window> time_windows(const std::vector<RequestRecord>& records,
                                 const WindowOptions& options) {
  check_width(options);
  const Span span = measured_span(records);
  if (span.empty())
    return {};
  Binner bins(span, options.width_ns);
  for (const auto& r : records) {
    if (!measured(r) || !r.ok())
      continue;
    // As `metrics::append_itl_ms`: a chunk of zero tokens gives no sample, and its gap is
    // carried into the next chunk that has tokens.
    TimeNs prev = -1;
    for (const auto& chunk : r.chunks) {
      const std::int64_t tokens = metrics::tokens_or_one(chunk);
      bins.add_tokens(chunk.time_ns, tokens);
      if (prev < 0) {
        prev = chunk.time_ns;
        continue;
      }
      if (tokens == 0)
        continue;
      bins.add_itl(chunk.time_ns, ns_to_ms(chunk.time_ns - prev) / static_cast<double>(tokens),
                   tokens);
      prev = chunk.time_ns;
    }
  }
  add_requests(bins, records, nullptr);
  return std::move(bins).finish(options);
}

std::vector<Window> time_windows(const std::vector<RequestRecord>& records,
                                 const metrics::TokenRuns& tokens, const WindowOptions& options) {
  check_width(options);
  metrics::check_token_runs(tokens, records.size());
  Span span = measured_span(records);
  if (span.empty())
    return {};
  for (const auto& run : tokens.runs) {
    if (measured(records[run.request]))
      span.end = std::max(
          span.end, tokens.grids[run.grid][static_cast<std::size_t>(run.first + run.count - 1)]);
  }
  Binner bins(span, options.width_ns);
  std::vector<TimeNs> first(records.size(), -1);
  std::vector<TimeNs> prev(records.size(), -1);
  for (const auto& run : tokens.runs) {
    const auto& r = records[run.request];
    if (!measured(r) || !r.ok())
      continue;
    const auto& grid = tokens.grids[run.grid];
    for (std::int64_t k = run.first; k < run.first + run.count; ++k) {
      const TimeNs t = grid[static_cast<std::size_t>(k)];
      bins.add_tokens(t, 1);
      TimeNs& last = prev[run.request];
      if (last < 0) {
        first[run.request] = t;
      } else {
        bins.add_itl(t, ns_to_ms(t - last), 1);
      }
      last = t;
    }
  }
  add_requests(bins, records, &first);
  return std::move(bins).finish(options);
}

namespace {

/// max/min − 1 of `values` (all > 0), or NaN when one is not positive or not finite.
double spread(const std::vector<double>& values) {
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  for (const double v : values) {
    if (!(std::isfinite(v) && v > 0))
      return metrics::kUndefined;
  }
  return *hi / *lo - 1.0;
}

double stats_percentile(const metrics::Stats& s, double q) {
  for (const auto& [p, value] : s.percentiles) {
    if (p == q)
      return value;
  }
  return metrics::kUndefined;
}

}  // namespace

Stability stability(const std::vector<Window>& windows, const StabilityRule& rule) {
  Stability out;
  std::vector<const Window*> full;
  for (const auto& w : windows) {
    if (w.full && w.sending)
      full.push_back(&w);
  }
  const std::size_t n = std::max<std::size_t>(2, rule.windows);
  if (full.size() < n) {
    out.reason =
        fmt::format("only {} full window(s) before the last send; the rule compares the last {}",
                    full.size(), n);
    return out;
  }
  std::vector<double> throughput;
  std::vector<double> latency;
  for (std::size_t i = full.size() - n; i < full.size(); ++i) {
    throughput.push_back(full[i]->output_throughput);
    latency.push_back(stats_percentile(full[i]->itl_ms, rule.latency_percentile));
  }
  out.throughput_spread = spread(throughput);
  out.latency_spread = spread(latency);
  const double limit = 100 * rule.tolerance;
  if (std::isnan(out.throughput_spread) || std::isnan(out.latency_spread)) {
    out.reason = fmt::format("one of the last {} windows has no output tokens or no ITL sample", n);
    return out;
  }
  const double tp = 100 * out.throughput_spread;
  const double lat = 100 * out.latency_spread;
  out.stable = tp <= limit && lat <= limit;
  out.reason = fmt::format(
      "last {} windows: output tok/s max/min {:+.1f}%, p{:g} ITL max/min {:+.1f}% ({} {:g}%)", n,
      tp, rule.latency_percentile, lat, out.stable ? "both within" : "not both within", limit);
  return out;
}

}  // namespace llmbench::analysis
