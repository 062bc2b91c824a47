#include "llmbench/analysis/windows.hpp"

#include "llmbench/analysis/trend.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/metrics/summary.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>
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

/// The ITL statistics of one window: all its samples, and those parted by whether their gap
/// held another request's first chunk (`Window::itl_decode_ms`, `itl_prefill_ms`).
struct WindowItl {
  metrics::Stats all;
  metrics::Stats decode;
  metrics::Stats prefill;
  /// A window whose samples are all of one kind (the usual case; `prefill`: all held a first
  /// chunk) is described once: the same samples in the same order give the same statistics.
  static WindowItl of_one_kind(const metrics::Stats& all, bool prefill,
                               const std::vector<double>& qs) {
    WindowItl out{.all = all, .decode = all, .prefill = metrics::describe({}, qs)};
    if (prefill)
      std::swap(out.decode, out.prefill);
    return out;
  }
};

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
    prefill_at_.resize(n);
    ttft_ratio_.resize(n);
    area_.resize(n, 0.0);
    queued_area_.resize(n, 0.0);
  }

  /// Window of time `t` (times outside the span are clamped to its first or last window).
  [[nodiscard]] std::size_t index(TimeNs t) const noexcept {
    if (t <= start_)
      return 0;
    const auto i = static_cast<std::size_t>((t - start_) / width_);
    return std::min(i, windows_.size() - 1);
  }

  /// Adds `tokens` output tokens to window `i` (`index` of their time).
  void add_tokens_at(std::size_t i, std::int64_t tokens) { windows_[i].output_tokens += tokens; }
  void add_ttft(TimeNs t, double ms, double ratio) {
    ttft_[index(t)].push_back(ms);
    if (std::isfinite(ratio))
      ttft_ratio_[index(t)].push_back(ratio);
  }
  /// Adds `count` ITL samples of `ms` to window `i` (`index` of the time they end);
  /// `prefill`: their gap held another request's first chunk.
  void add_itl_at(std::size_t i, double ms, std::int64_t count, bool prefill) {
    for (std::int64_t k = 0; k < count; ++k) {  // almost always one sample
      if (prefill)
        prefill_at_[i].push_back(itl_[i].size());
      itl_[i].push_back(ms);
    }
  }
  void add_done(TimeNs t, bool ok) {
    auto& w = windows_[index(t)];
    (ok ? w.completed : w.failed) += 1;
  }

  /// Requests in flight from the (sent, done) of every measured request: a time-weighted mean
  /// and the maximum per window. A request that never ended stays in flight to the span's end.
  void add_in_flight(const std::vector<RequestRecord>& records) {
    std::vector<std::pair<TimeNs, int>> events;
    std::vector<std::pair<TimeNs, int>> queued;
    for (const auto& r : records) {
      if (!measured(r))
        continue;
      events.emplace_back(r.sent_ns, +1);
      events.emplace_back(r.done_ns >= 0 ? r.done_ns : end_, -1);
      if (r.scheduled_ns >= 0 && r.scheduled_ns < r.sent_ns) {
        queued.emplace_back(r.scheduled_ns, +1);
        queued.emplace_back(r.sent_ns, -1);
      }
    }
    std::sort(events.begin(), events.end());  // at one instant, ends (-1) before starts
    TimeNs now = start_;
    std::int64_t count = 0;
    for (const auto& [t, delta] : events) {
      hold(now, t, count, area_, true);
      now = std::max(now, t);
      count += delta;
      auto& w = windows_[index(t)];
      w.max_in_flight =
          std::max(w.max_in_flight, static_cast<std::size_t>(std::max<std::int64_t>(0, count)));
    }
    std::sort(queued.begin(), queued.end());
    now = std::numeric_limits<TimeNs>::min();
    count = 0;
    for (const auto& [t, delta] : queued) {
      hold(std::max(now, start_), t, count, queued_area_, false);
      now = std::max(now, t);
      count += delta;
    }
  }

  /// The number of windows.
  [[nodiscard]] std::size_t size() const noexcept { return windows_.size(); }

  /// Gives the ITL statistics of each window, called with the windows' indices in order as each
  /// is finished (so that a source can add one window's samples at a time, `ChunkSamples`).
  using DescribeItl = std::function<WindowItl(Binner&, std::size_t)>;

  std::vector<Window> finish(const WindowOptions& options, const DescribeItl& describe_itl) && {
    for (std::size_t i = 0; i < windows_.size(); ++i) {
      WindowItl itl = describe_itl(*this, i);
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
      const auto length = static_cast<double>(w.end_ns - w.start_ns);
      w.mean_in_flight = w.end_ns > w.start_ns ? area_[i] / length : metrics::kUndefined;
      w.mean_queued = w.end_ns > w.start_ns ? queued_area_[i] / length : metrics::kUndefined;
      w.ttft_ms = metrics::describe(std::move(ttft_[i]), options.percentiles);
      w.itl_ms = std::move(itl.all);
      w.itl_decode_ms = std::move(itl.decode);
      w.itl_prefill_ms = std::move(itl.prefill);
      w.ttft_ratio = metrics::describe(std::move(ttft_ratio_[i]), options.percentiles);
    }
    return std::move(windows_);
  }

  /// The ITL statistics of the samples added to window `i` (`add_itl_at`), which it lets go.
  WindowItl describe_itl(std::size_t i, const std::vector<double>& qs) {
    const std::vector<std::size_t> held = std::exchange(prefill_at_[i], {});
    std::vector<double> itl = std::exchange(itl_[i], {});
    if (held.empty() || held.size() == itl.size())
      return WindowItl::of_one_kind(metrics::describe(std::move(itl), qs), !held.empty(), qs);
    // One list serves both groupings (a copy of a window's samples was the run's peak memory):
    // the sums of all the samples in their order first, then the decode samples alone, then
    // all of them again, in another order, for their order statistics.
    const metrics::SampleSums all_sums = metrics::sample_sums(itl);
    std::vector<double> held_samples = take_held(itl, held);
    metrics::Stats decode = metrics::describe_in_place(itl, metrics::sample_sums(itl), qs);
    itl.insert(itl.end(), held_samples.begin(), held_samples.end());
    return WindowItl{.all = metrics::describe_in_place(itl, all_sums, qs),
                     .decode = std::move(decode),
                     .prefill = metrics::describe(std::move(held_samples), qs)};
  }

 private:
  /// Moves the samples at the positions `held` (ascending) of one window's ITL samples `itl`
  /// out, in their order, and leaves the others in `itl` in theirs (the order the sums of
  /// `describe` see): those whose gap held another request's first chunk and those whose gap
  /// held none. Parted when the window is finished, so the samples are held once while the
  /// records are read.
  static std::vector<double> take_held(std::vector<double>& itl,
                                       const std::vector<std::size_t>& held) {
    std::vector<double> out;
    out.reserve(held.size());
    std::size_t kept = 0;
    auto next_held = held.begin();
    for (std::size_t k = 0; k < itl.size(); ++k) {
      if (next_held != held.end() && *next_held == k) {
        out.push_back(itl[k]);
        ++next_held;
      } else {
        itl[kept++] = itl[k];
      }
    }
    itl.resize(kept);
    return out;
  }

  /// `count` requests over [from, to): adds count × overlap to each window's `area` and, for
  /// the in-flight count (`peak`), raises the maximum of each window the interval touches.
  void hold(TimeNs from, TimeNs to, std::int64_t count, std::vector<double>& area, bool peak) {
    if (to <= from || count <= 0)
      return;
    for (std::size_t i = index(from); i < windows_.size(); ++i) {
      const TimeNs w0 = start_ + static_cast<TimeNs>(i) * width_;
      const TimeNs w1 = i + 1 == windows_.size() ? std::max(end_, w0) : w0 + width_;
      const TimeNs overlap = std::min(to, w1) - std::max(from, w0);
      if (overlap > 0) {
        area[i] += static_cast<double>(count) * static_cast<double>(overlap);
        if (peak)
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
  /// Per window: the positions in `itl_` of the samples whose gap held a prefill, ascending.
  std::vector<std::vector<std::size_t>> prefill_at_;
  std::vector<std::vector<double>> ttft_ratio_;
  std::vector<double> area_;         ///< ∫ in-flight dt per window (request·ns)
  std::vector<double> queued_area_;  ///< ∫ queued dt per window (request·ns)
};

/// The first-chunk times of every measured request, sorted: a gap (prev, t] of another
/// request "held a prefill" when one of them lies in (prev + tolerance, t + tolerance].
class FirstChunks {
 public:
  void add(TimeNs t) { times_.push_back(t); }
  void sort() { std::sort(times_.begin(), times_.end()); }
  [[nodiscard]] bool any_in(TimeNs prev, TimeNs t) const {
    const auto it = std::upper_bound(times_.begin(), times_.end(), prev + kPrefillTolerance);
    return it != times_.end() && *it <= t + kPrefillTolerance;
  }
  /// `any_in(prev, t)` for gaps asked in time order (`prev` never decreasing from one call to
  /// the next with the same `from`): `from`, the caller's position in the times (0 at first),
  /// moves past those ≤ prev + tolerance, so a walk costs one pass over the times.
  [[nodiscard]] bool any_in_from(std::size_t& from, TimeNs prev, TimeNs t) const {
    while (from < times_.size() && times_[from] <= prev + kPrefillTolerance) ++from;
    return from < times_.size() && times_[from] <= t + kPrefillTolerance;
  }
  /// `any_in(grid[k − 1], grid[k])` for each instant k ≥ 1 of a non-decreasing grid (1 = true;
  /// entry 0 is 0), in one pass over the grid and the times together.
  [[nodiscard]] std::vector<std::uint8_t> any_in_steps(const std::vector<TimeNs>& grid) const {
    std::vector<std::uint8_t> out(grid.size(), 0);
    std::size_t from = 0;
    for (std::size_t k = 1; k < grid.size(); ++k)
      out[k] = any_in_from(from, grid[k - 1], grid[k]) ? 1 : 0;
    return out;
  }

 private:
  std::vector<TimeNs> times_;
};

/// The output tokens and ITL samples of the measured, successful records' chunks, added to the
/// windows one window at a time (`add`), so that the windows hold one window's ITL samples at
/// once, not every sample of the run. As `metrics::append_itl_ms`: a chunk of zero tokens gives
/// no sample, and its gap is carried into the next chunk that has tokens. A record's chunks
/// come in time order, so a window's chunks are a run of each record's, taken record by record:
/// the order of adding every sample at once, which the sums of `describe` see.
class ChunkSamples {
 public:
  /// Adds every chunk up to window `last` (`kAll`: every chunk).
  static constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();

  ChunkSamples(const std::vector<RequestRecord>& records, const FirstChunks& firsts)
      : records_(records),
        firsts_(firsts),
        next_(records.size(), 0),
        prev_(records.size(), -1),
        first_from_(records.size(), 0) {
    for (std::size_t r = 0; r < records.size(); ++r) {
      if (measured(records[r]) && records[r].ok() && !records[r].chunks.empty())
        pending_.push_back(r);
    }
  }

  /// True when every record's chunk times are in order; else every chunk is added at once.
  [[nodiscard]] static bool in_time_order(const std::vector<RequestRecord>& records) {
    return std::all_of(records.begin(), records.end(), [](const RequestRecord& r) {
      return std::is_sorted(r.chunks.begin(), r.chunks.end(),
                            [](const auto& a, const auto& b) { return a.time_ns < b.time_ns; });
    });
  }

  void add(Binner& bins, std::size_t last) {
    for (const std::size_t r : pending_) {
      const auto& rec = records_[r];
      std::size_t& k = next_[r];
      TimeNs& prev = prev_[r];
      for (; k < rec.chunks.size(); ++k) {
        const TimeNs t = rec.chunks[k].time_ns;
        const std::size_t window = bins.index(t);
        if (window > last)
          break;
        const std::int64_t tokens = metrics::tokens_or_one(rec.chunks[k]);
        bins.add_tokens_at(window, tokens);
        if (prev < 0) {
          prev = t;
          continue;
        }
        if (tokens == 0)
          continue;
        // In time order (`in_time_order`), a record's gaps come in order: one pass per record.
        const bool held =
            last == kAll ? firsts_.any_in(prev, t) : firsts_.any_in_from(first_from_[r], prev, t);
        bins.add_itl_at(window, ns_to_ms(t - prev) / static_cast<double>(tokens), tokens, held);
        prev = t;
      }
    }
    // Records whose every chunk is added leave the walk (their order is kept: see above).
    std::erase_if(pending_, [&](std::size_t r) { return next_[r] == records_[r].chunks.size(); });
  }

 private:
  const std::vector<RequestRecord>& records_;
  const FirstChunks& firsts_;
  std::vector<std::size_t> pending_;  ///< records with chunks not added yet, in index order
  std::vector<std::size_t> next_;     ///< per record: its first chunk not added yet
  std::vector<TimeNs> prev_;          ///< per record: the end of its last ITL gap (-1 = none yet)
  std::vector<std::size_t> first_from_;  ///< per record: its position in `firsts_` (any_in_from)
};

/// The output tokens and ITL samples of the simulator's token runs (those of the measured,
/// successful requests), window by window, with no step per token where a run is uniform: every
/// run with a token at one instant of a grid waited the same gap since the grid's instant before
/// (the engine's step), and whether that gap held another request's first chunk is the
/// instant's too. So a window's order statistics come from its instants' gaps, each with the
/// number of runs that span it, and its samples in order (for the sums of `describe`) are ranges
/// of the per-instant gaps: run by run in the runs' order, each run's range preceded by the gap
/// from the request's previous run where the run starts in the window. That is the order in
/// which adding each token's sample to its window lists them.
class RunSamples {
 public:
  RunSamples(const std::vector<RequestRecord>& records, const metrics::TokenRuns& tokens,
             const FirstChunks& firsts, Binner& bins)
      : runs_(tokens.runs), grids_(tokens.grids.size()) {
    std::vector<std::vector<std::int64_t>> emitted(grids_.size());  // as differences along k
    for (std::size_t g = 0; g < grids_.size(); ++g) {
      const std::vector<TimeNs>& grid = tokens.grids[g];
      Grid& out = grids_[g];
      out.gap_ms.assign(grid.size(), 0.0);
      for (std::size_t k = 1; k < grid.size(); ++k) out.gap_ms[k] = ns_to_ms(grid[k] - grid[k - 1]);
      out.held = firsts.any_in_steps(grid);
      out.spanned.assign(grid.size() + 1, 0);
      out.window_start = window_starts(grid, bins);
      emitted[g].assign(grid.size() + 1, 0);
    }
    std::vector<TimeNs> last(records.size(), -1);  // per request: its last token so far
    for (std::size_t r = 0; r < runs_.size(); ++r) {
      const auto& run = runs_[r];
      if (!measured(records[run.request]) || !records[run.request].ok())
        continue;
      const std::vector<TimeNs>& grid = tokens.grids[run.grid];
      const auto first = static_cast<std::size_t>(run.first);
      const std::size_t end = first + static_cast<std::size_t>(run.count);
      ++emitted[run.grid][first];
      --emitted[run.grid][end];
      ++grids_[run.grid].spanned[first + 1];
      --grids_[run.grid].spanned[end];
      TimeNs& prev = last[run.request];
      pending_.push_back(Pending{.run = r, .next = first, .end = end});
      if (prev >= 0) {
        pending_.back().gap_ms = ns_to_ms(grid[first] - prev);
        pending_.back().gap_held = firsts.any_in(prev, grid[first]);
      }
      prev = grid[end - 1];
    }
    for (std::size_t g = 0; g < grids_.size(); ++g) {
      std::int64_t tokens_at = 0;
      std::int64_t spanned = 0;
      for (std::size_t k = 0; k < tokens.grids[g].size(); ++k) {
        tokens_at += emitted[g][k];
        if (tokens_at > 0)
          bins.add_tokens_at(bins.index(tokens.grids[g][k]), tokens_at);
        spanned += grids_[g].spanned[k];
        grids_[g].spanned[k] = spanned;
      }
    }
  }

  /// The ITL statistics of window `w`; the windows are asked for in order.
  WindowItl describe(std::size_t w, const std::vector<double>& qs) {
    Sample all;
    Sample decode;
    Sample prefill;
    for (const Grid& grid : grids_) {
      for (std::size_t k = grid.window_start[w]; k < grid.window_start[w + 1]; ++k) {
        if (grid.spanned[k] > 0) {
          const auto runs = static_cast<std::size_t>(grid.spanned[k]);
          all.distinct.emplace_back(grid.gap_ms[k], runs);
          (grid.held[k] != 0 ? prefill : decode).distinct.emplace_back(grid.gap_ms[k], runs);
        }
      }
    }
    // Decode and prefill samples are listed apart only where the window has a prefill sample;
    // otherwise the decode samples are all of them (`WindowItl::of_one_kind`).
    const bool split = !prefill.distinct.empty() || holds_prefill_gap(w);
    for (Pending& p : pending_) {
      const Grid& grid = grids_[runs_[p.run].grid];
      const auto first = static_cast<std::size_t>(runs_[p.run].first);
      const std::size_t end = std::min(p.end, grid.window_start[w + 1]);
      if (p.next >= end)
        continue;
      if (p.next == first && !std::isnan(p.gap_ms)) {
        all.add_one(p.gap_ms);
        if (split)
          (p.gap_held ? prefill : decode).add_one(p.gap_ms);
      }
      const std::size_t from = std::max(p.next, first + 1);
      if (from < end)
        all.values.insert(all.values.end(), grid.gap_ms.begin() + static_cast<std::ptrdiff_t>(from),
                          grid.gap_ms.begin() + static_cast<std::ptrdiff_t>(end));
      if (split) {
        for (std::size_t k = from; k < end; ++k)
          (grid.held[k] != 0 ? prefill : decode).values.push_back(grid.gap_ms[k]);
      }
      p.next = end;
    }
    std::erase_if(pending_, [](const Pending& p) { return p.next == p.end; });
    if (!split || decode.values.empty() || prefill.values.empty())
      return WindowItl::of_one_kind(std::move(all).describe(qs), !prefill.values.empty(), qs);
    return WindowItl{.all = std::move(all).describe(qs),
                     .decode = std::move(decode).describe(qs),
                     .prefill = std::move(prefill).describe(qs)};
  }

 private:
  /// Whether window `w` takes a run's first sample (the gap from the request's previous run)
  /// that held another request's first chunk.
  [[nodiscard]] bool holds_prefill_gap(std::size_t w) const {
    return std::any_of(pending_.begin(), pending_.end(), [&](const Pending& p) {
      const auto first = static_cast<std::size_t>(runs_[p.run].first);
      return p.gap_held && p.next == first && !std::isnan(p.gap_ms) &&
             first < grids_[runs_[p.run].grid].window_start[w + 1];
    });
  }

  /// One time grid's instants.
  struct Grid {
    std::vector<double> gap_ms;             ///< [k]: grid[k] − grid[k − 1] in ms ([0]: 0)
    std::vector<std::uint8_t> held;         ///< [k]: that gap held another first chunk
    std::vector<std::int64_t> spanned;      ///< [k]: counted runs with tokens at k − 1 and k
    std::vector<std::size_t> window_start;  ///< [w]: the first instant of window w or later
  };
  /// A counted run with instants not yet given to a window.
  struct Pending {
    std::size_t run = 0;   ///< index into the runs
    std::size_t next = 0;  ///< its first instant not yet given
    std::size_t end = 0;   ///< one past its last instant
    /// The ITL sample from the request's previous run to this run's first token (NaN: none).
    double gap_ms = metrics::kUndefined;
    bool gap_held = false;  ///< that gap held another first chunk
  };
  /// One window's samples of one kind: in order, and their distinct values with counts.
  struct Sample {
    std::vector<double> values;
    std::vector<std::pair<double, std::size_t>> distinct;
    void add_one(double v) {
      values.push_back(v);
      distinct.emplace_back(v, 1);
    }
    [[nodiscard]] metrics::Stats describe(const std::vector<double>& qs) && {
      return metrics::describe_weighted(values, std::move(distinct), qs);
    }
  };

  /// [w] = the first instant of `grid` in window w or later (w = 0 … windows; the last entry is
  /// the grid's size).
  static std::vector<std::size_t> window_starts(const std::vector<TimeNs>& grid,
                                                const Binner& bins) {
    std::vector<std::size_t> starts(bins.size() + 1, grid.size());
    std::size_t k = 0;
    for (std::size_t w = 0; w < bins.size(); ++w) {
      while (k < grid.size() && bins.index(grid[k]) < w) ++k;
      starts[w] = k;
    }
    return starts;
  }

  const std::vector<metrics::TokenRuns::Run>& runs_;
  std::vector<Grid> grids_;
  std::vector<Pending> pending_;  ///< the counted runs not finished yet, in the runs' order
};

void check_width(const WindowOptions& options) {
  if (options.width_ns <= 0) {
    throw Exception(
        Error{fmt::format("the window must be longer than 0 s (got {} ns)", options.width_ns),
              "--window-s", -1});
  }
}

/// Completions, failures and TTFTs of the measured requests: `first_token` is each record's
/// first output time (−1 = none), the TTFT's end, the TTFT model fitted over them all.
/// For each record, the prompt tokens of its own prompt plus those of the requests sent before
/// it that had no first chunk yet when it was sent (the prefill queued ahead of it); −1 for a
/// record without a send. `first_chunk` is each record's first output time (−1 = none: such a
/// request stays ahead until it ended).
std::vector<double> prefill_tokens_ahead(const std::vector<RequestRecord>& records,
                                         const std::vector<TimeNs>& first_chunk) {
  // (time, kind, index): kind 0 = a first chunk or an end (leaves the queue), 1 = a send.
  std::vector<std::tuple<TimeNs, int, std::size_t>> events;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (!measured(r))
      continue;
    events.emplace_back(r.sent_ns, 1, i);
    const TimeNs left = first_chunk[i] >= 0 ? first_chunk[i] : r.done_ns;
    if (left >= 0)
      events.emplace_back(left, 0, i);
  }
  std::sort(events.begin(), events.end());
  std::vector<double> out(records.size(), -1.0);
  double queued = 0;
  for (const auto& [t, kind, i] : events) {
    const auto tokens = static_cast<double>(metrics::input_token_count(records[i]));
    if (kind == 1) {
      queued += tokens;
      out[i] = queued;
    } else {
      queued -= tokens;
    }
  }
  return out;
}

void add_requests(Binner& bins, const std::vector<RequestRecord>& records,
                  const std::vector<TimeNs>& first_token, const std::vector<TimeNs>& first_chunk) {
  const std::vector<double> ahead = prefill_tokens_ahead(records, first_chunk);
  std::vector<std::pair<double, double>> points;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (measured(r) && r.ok() && first_token[i] >= 0)
      points.emplace_back(ahead[i], ns_to_ms(first_token[i] - r.sent_ns));
  }
  const TtftModel model = fit_ttft_model(points);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (!measured(r))
      continue;
    bins.add_done(r.done_ns >= 0 ? r.done_ns : r.sent_ns, r.ok());
    if (!r.ok() || first_token[i] < 0)
      continue;
    const double ttft = ns_to_ms(first_token[i] - r.sent_ns);
    const double expected = model.expected_ms(ahead[i]);
    bins.add_ttft(first_token[i], ttft, expected > 0 ? ttft / expected : metrics::kUndefined);
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
  FirstChunks firsts;
  std::vector<TimeNs> first(records.size(), -1);
  std::vector<TimeNs> any_first(records.size(), -1);
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (measured(records[i]) && !records[i].chunks.empty()) {
      any_first[i] = records[i].chunks.front().time_ns;
      firsts.add(any_first[i]);
      if (records[i].ok())
        first[i] = any_first[i];
    }
  }
  firsts.sort();
  ChunkSamples chunks(records, firsts);
  if (!ChunkSamples::in_time_order(records))
    chunks.add(bins, ChunkSamples::kAll);
  add_requests(bins, records, first, any_first);
  return std::move(bins).finish(options, [&](Binner& b, std::size_t window) {
    chunks.add(b, window);
    return b.describe_itl(window, options.percentiles);
  });
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
  for (const auto& run : tokens.runs) {
    if (!measured(records[run.request]) || run.count <= 0)
      continue;
    const TimeNs t = tokens.grids[run.grid][static_cast<std::size_t>(run.first)];
    TimeNs& f = first[run.request];
    f = f < 0 ? t : std::min(f, t);
  }
  FirstChunks firsts;
  for (const TimeNs t : first) {
    if (t >= 0)
      firsts.add(t);
  }
  firsts.sort();
  RunSamples samples(records, tokens, firsts, bins);
  const std::vector<TimeNs> any_first = first;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (!records[i].ok())
      first[i] = -1;
  }
  add_requests(bins, records, first, any_first);
  return std::move(bins).finish(options, [&](Binner&, std::size_t window) {
    return samples.describe(window, options.percentiles);
  });
}

// ---- the TTFT a prompt explains ----

double TtftModel::expected_ms(double tokens) const noexcept {
  return std::max(intercept_ms + slope_ms_per_token * std::max(0.0, tokens), floor_ms);
}

TtftModel fit_ttft_model(const std::vector<std::pair<double, double>>& points) {
  std::vector<std::pair<double, double>> pts;
  for (const auto& p : points) {
    if (std::isfinite(p.first) && std::isfinite(p.second))
      pts.push_back(p);
  }
  TtftModel m;
  m.points = pts.size();
  if (pts.empty())
    return m;
  std::vector<double> ttft;
  ttft.reserve(pts.size());
  for (const auto& p : pts) ttft.push_back(p.second);
  std::sort(ttft.begin(), ttft.end());
  m.floor_ms = metrics::percentile_sorted(ttft, 10);
  // At most 400 evenly spaced requests: 80k pairwise slopes.
  constexpr std::size_t kFitPoints = 400;
  const std::size_t stride = (pts.size() + kFitPoints - 1) / kFitPoints;
  std::vector<std::pair<double, double>> sample;
  for (std::size_t i = 0; i < pts.size(); i += stride) sample.push_back(pts[i]);
  std::vector<double> slopes;
  for (std::size_t i = 0; i + 1 < sample.size(); ++i) {
    for (std::size_t j = i + 1; j < sample.size(); ++j) {
      const double dx = sample[j].first - sample[i].first;
      if (dx != 0)
        slopes.push_back((sample[j].second - sample[i].second) / dx);
    }
  }
  m.slope_ms_per_token = slopes.empty() ? 0.0 : std::max(0.0, median_of(std::move(slopes)));
  std::vector<double> residual;
  residual.reserve(pts.size());
  for (const auto& p : pts) residual.push_back(p.second - m.slope_ms_per_token * p.first);
  m.intercept_ms = median_of(std::move(residual));
  return m;
}

}  // namespace llmbench::analysis
