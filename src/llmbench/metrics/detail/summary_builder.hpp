#pragma once
/// @file
/// What both `summarize` overloads share (summary.cpp for records with chunks,
/// token_runs_summary.cpp for the simulator's token runs): the per-request latency rule and the
/// builder that gathers counts, totals and latency samples. Internal to the metrics module.

#include "llmbench/core/utf8.hpp"
#include "llmbench/metrics/summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llmbench::metrics::detail {

inline constexpr TimeNs kNsPerSecond = 1'000'000'000;

// Milliseconds between two timestamps, NaN when either never happened (-1).
inline double span_ms(TimeNs from, TimeNs to) noexcept {
  if (from < 0 || to < 0) {
    return kUndefined;
  }
  return ns_to_ms(to - from);
}

inline void push_if_finite(std::vector<double>& out, double value) {
  if (std::isfinite(value)) {
    out.push_back(value);
  }
}

// Whether a completed request meets every SLO given. A request with no output has no TTFT and
// fails a TTFT SLO (it never delivered a first token); a request with N < 2 has no TPOT and meets
// a TPOT SLO (vLLM's goodput treats a missing TPOT the same way).
inline bool meets_slo(const RequestLatency& latency, const Slo& slo) noexcept {
  if (slo.ttft_ms && !(latency.ttft_ms <= *slo.ttft_ms)) {
    return false;
  }
  if (slo.tpot_ms && std::isfinite(latency.tpot_ms) && !(latency.tpot_ms <= *slo.tpot_ms)) {
    return false;
  }
  if (slo.e2el_ms && !(latency.e2el_ms <= *slo.e2el_ms)) {
    return false;
  }
  return true;
}

// Peak number of intervals [sent, done] open at one instant (closed intervals: a request that
// starts exactly when another ends overlaps it).
inline std::size_t max_overlap(std::vector<std::pair<TimeNs, int>> events) {
  // Requests are open on [sent, done): at equal times an end comes before a start (-1 sorts
  // before +1), so a closed loop that sends the next request at the instant the previous one
  // finishes (the simulator does, in virtual time) is not counted twice.
  std::sort(events.begin(), events.end());
  std::int64_t open = 0;
  std::int64_t peak = 0;
  for (const auto& [time, delta] : events) {
    open += delta;
    peak = std::max(peak, open);
  }
  return static_cast<std::size_t>(peak);
}

/// `message` cut to `kErrorMessageChars` bytes, at a UTF-8 boundary, with "…" when cut.
inline std::string cut_message(const std::string& message) {
  if (message.size() <= kErrorMessageChars) {
    return message;
  }
  return message.substr(0, utf8_floor(message, kErrorMessageChars)) + "\u2026";
}

/// The `kTopErrorsPerKind` most frequent messages of `counts`, the most frequent first (ties in
/// message order, as the map holds them).
inline std::vector<ErrorMessageCount> top_messages(
    const std::map<std::string, std::size_t>& counts) {
  std::vector<ErrorMessageCount> all;
  all.reserve(counts.size());
  for (const auto& [message, count] : counts) {
    all.push_back(ErrorMessageCount{.message = message, .count = count});
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.count > b.count; });
  all.resize(std::min(all.size(), kTopErrorsPerKind));
  return all;
}

/// A request's output instants as the latencies read them (ns since run start).
struct OutputSpan {
  bool any = false;          // some output arrived; `first` and `last` are then set
  TimeNs first = -1;         // first output chunk
  TimeNs last = -1;          // last output chunk
  bool answered = false;     // some chunk was an answer chunk; `first_answer` is then set
  TimeNs first_answer = -1;  // first answer chunk
  std::int64_t chunks = 0;   // output chunks (events) the span covers
};

/// The latencies of a completed request with output `span` and N = `output_tokens`.
inline RequestLatency latency_of(const RequestRecord& record, const OutputSpan& span,
                                 std::int64_t output_tokens) noexcept {
  RequestLatency out;
  out.lateness_ms = span_ms(slot_time(record), record.sent_ns);
  out.queue_wait_ms = span_ms(record.scheduled_ns, slot_time(record));
  if (!span.any) {
    // No output: TTFT, TTFAT and TPOT stay undefined; latency runs to the stream's end.
    out.e2el_ms = span_ms(record.sent_ns, record.done_ns);
    out.e2el_sched_ms = span_ms(record.scheduled_ns, record.done_ns);
    return out;
  }
  out.ttft_ms = span_ms(record.sent_ns, span.first);
  out.ttft_sched_ms = span_ms(record.scheduled_ns, span.first);
  out.e2el_ms = span_ms(record.sent_ns, span.last);
  out.e2el_sched_ms = span_ms(record.scheduled_ns, span.last);
  if (span.answered) {
    out.ttfat_ms = span_ms(record.sent_ns, span.first_answer);
  }
  // TPOT needs N ≥ 2 tokens over at least two events: output that arrived all in one chunk has
  // no decode time to divide (it was reported as 0 and pulled the mean down).
  if (output_tokens >= 2 && span.chunks >= 2) {
    out.tpot_ms = ns_to_ms(span.last - span.first) / static_cast<double>(output_tokens - 1);
  }
  return out;
}

/// What `summarize` gathers over the records, whichever way their token times are held: counts,
/// token totals, per-request latencies, goodput, in-flight intervals and 1 s token windows.
class SummaryBuilder {
 public:
  /// Judges goodput by `slo`. Finds the duration window's opening (docs/metrics.md "Definitions",
  /// duration: "from the first send to the last completion"): the first send of any non-warm-up
  /// request, failed ones included (the load was running). It closes at the last `done` of a
  /// completed request (a trailing timeout does not stretch the window over which completed work is
  /// divided).
  SummaryBuilder(const std::vector<RequestRecord>& records, const Slo& slo) : slo_(slo) {
    for (const auto& r : records) {
      if (!r.warmup && r.sent_ns >= 0 && (first_send_ < 0 || r.sent_ns < first_send_)) {
        first_send_ = r.sent_ns;
      }
    }
  }

  /// Counts `record`; true when it is a completed non-warm-up request, whose latencies and
  /// tokens are then to be added.
  bool admit(const RequestRecord& record) {
    if (record.warmup) {
      return false;
    }
    ++s_.total;
    if (record.error_kind == ErrorKind::Cancelled) {
      ++s_.cancelled;  // the client's doing, not a failure of the server
      return false;
    }
    if (!record.ok()) {
      ++s_.failed;
      const std::string kind(to_string(record.error_kind));
      ++s_.failures_by_kind[kind];
      ++messages_[kind][cut_message(record.error_message)];
      return false;
    }
    ++s_.completed;
    last_done_ = std::max(last_done_, record.done_ns);
    return true;
  }

  /// Adds a completed request with N = `output_tokens` and its latencies.
  void add(const RequestRecord& record, std::int64_t output_tokens, const RequestLatency& latency) {
    s_.total_output_tokens += output_tokens;
    s_.total_input_tokens += input_token_count(record);
    s_.zero_output_completions += output_tokens == 0 ? 1 : 0;
    if (record.input_tokens >= 0 && record.input_tokens_local >= 0 &&
        record.input_tokens != record.input_tokens_local) {
      ++s_.prompt_token_mismatches;
    }
    if (record.output_tokens < 0) {
      ++s_.usage_missing;
      if (record.output_tokens_local >= 0 &&
          record.output_tokens_local_source == LocalCount::Tokenizer) {
        ++s_.output_tokens_counted_locally;
      }
    } else if (record.output_tokens_local >= 0 &&
               record.output_tokens != record.output_tokens_local) {
      ++s_.token_count_mismatches;
    }
    push_if_finite(ttft_, latency.ttft_ms);
    push_if_finite(ttfat_, latency.ttfat_ms);
    push_if_finite(ttft_sched_, latency.ttft_sched_ms);
    push_if_finite(tpot_, latency.tpot_ms);
    push_if_finite(e2el_, latency.e2el_ms);
    push_if_finite(e2el_sched_, latency.e2el_sched_ms);
    push_if_finite(lateness_, latency.lateness_ms);
    push_if_finite(queue_wait_, latency.queue_wait_ms);
    if (meets_slo(latency, slo_)) {
      ++s_.good_requests;
    }
    // N ≥ 2 with a first token but no TPOT: the output came in one event.
    if (output_tokens >= 2 && std::isfinite(latency.ttft_ms) && !std::isfinite(latency.tpot_ms)) {
      ++s_.single_chunk_outputs;
    }
    if (record.max_tokens >= 0) {
      ++s_.requests_with_max_tokens;
      s_.total_requested_output_tokens += record.max_tokens;
      s_.finished_before_max_tokens += output_tokens < record.max_tokens ? 1 : 0;
    }
    if (record.sent_ns >= 0 && record.done_ns >= record.sent_ns) {
      intervals_.emplace_back(record.sent_ns, +1);
      intervals_.emplace_back(record.done_ns, -1);
    }
  }

  /// Adds `tokens` output tokens of a completed request received at `time_ns` to its window
  /// [first_send + k s, first_send + (k+1) s).
  void add_tokens(TimeNs time_ns, std::int64_t tokens) {
    const TimeNs offset = first_send_ >= 0 ? std::max<TimeNs>(0, time_ns - first_send_) : 0;
    // Token times arrive mostly in order, so the window changes rarely: divide only when one
    // leaves the current window (a 64-bit division per token was a tenth of `simulate`'s summary).
    if (offset >= window_end_ || offset < window_start_) {
      window_ = static_cast<std::size_t>(offset / kNsPerSecond);
      window_start_ = static_cast<TimeNs>(window_) * kNsPerSecond;
      window_end_ = window_start_ + kNsPerSecond;
    }
    if (window_ >= kDenseWindows) {
      far_windows_[window_] += tokens;  // a run over 12 days, or a corrupt time
      return;
    }
    if (window_ >= tokens_per_window_.size()) {
      tokens_per_window_.resize(window_ + 1, 0);
    }
    tokens_per_window_[window_] += tokens;
  }

  /// The summary, with the ITL and (when they differ from the ITLs) inter-chunk statistics.
  Summary finish(Stats itl, std::optional<Stats> inter_chunk, const SummaryOptions& options) {
    if (first_send_ >= 0 && last_done_ > first_send_) {
      s_.duration_s = ns_to_s(last_done_ - first_send_);
    }
    if (s_.duration_s > 0) {
      s_.request_throughput = static_cast<double>(s_.completed) / s_.duration_s;
      s_.output_throughput = static_cast<double>(s_.total_output_tokens) / s_.duration_s;
      s_.total_token_throughput =
          static_cast<double>(s_.total_input_tokens + s_.total_output_tokens) / s_.duration_s;
      s_.request_goodput = static_cast<double>(s_.good_requests) / s_.duration_s;
    }
    // Peak output tokens in a 1 s window.
    for (const std::int64_t tokens : tokens_per_window_) {
      s_.max_output_tokens_per_s =
          std::max(s_.max_output_tokens_per_s, static_cast<double>(tokens));
    }
    for (const auto& [window, tokens] : far_windows_) {
      s_.max_output_tokens_per_s =
          std::max(s_.max_output_tokens_per_s, static_cast<double>(tokens));
    }
    // Peak concurrency over completed requests (as vLLM counts it), exact rather than per second.
    s_.max_concurrent_requests = max_overlap(std::move(intervals_));
    const auto& qs = options.percentiles;
    const auto& extra = options.extra_percentiles;
    s_.ttft_ms = describe(std::move(ttft_), qs, extra);
    s_.ttfat_ms = describe(std::move(ttfat_), qs, extra);
    s_.ttft_sched_ms = describe(std::move(ttft_sched_), qs, extra);
    s_.tpot_ms = describe(std::move(tpot_), qs, extra);
    s_.itl_ms = std::move(itl);
    s_.inter_chunk_ms = inter_chunk ? std::move(*inter_chunk) : s_.itl_ms;
    s_.e2el_ms = describe(std::move(e2el_), qs, extra);
    s_.e2el_sched_ms = describe(std::move(e2el_sched_), qs, extra);
    s_.lateness_ms = describe(std::move(lateness_), qs, extra);
    s_.queue_wait_ms = describe(std::move(queue_wait_), qs, extra);
    for (auto& [kind, counts] : messages_) {
      s_.top_errors_by_kind[kind] = top_messages(counts);
    }
    return std::move(s_);
  }

 private:
  // Dense for the first 2^20 windows, a map beyond.
  static constexpr std::size_t kDenseWindows = std::size_t{1} << 20;
  Summary s_;
  Slo slo_;  // what `add` judges goodput by
  TimeNs first_send_ = -1;
  TimeNs last_done_ = -1;
  std::vector<double> ttft_, ttfat_, ttft_sched_, tpot_, e2el_, e2el_sched_, lateness_, queue_wait_;
  std::vector<std::pair<TimeNs, int>> intervals_;
  std::map<std::string, std::map<std::string, std::size_t>> messages_;  // kind → message → count
  std::vector<std::int64_t> tokens_per_window_;
  std::map<std::size_t, std::int64_t> far_windows_;
  std::size_t window_ = 0;
  TimeNs window_start_ = 0;
  TimeNs window_end_ = -1;
};

}  // namespace llmbench::metrics::detail
