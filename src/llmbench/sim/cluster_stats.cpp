#include "llmbench/sim/cluster_stats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace llmbench::sim {

namespace {

constexpr int kSubBits = 7;        // 128 buckets per octave: 1/128 relative width
constexpr int kMinExponent = -40;  // 2^-40 ≈ 1e-12 (ms): smaller values share bucket 0
constexpr int kMaxExponent = 40;   // 2^40 ≈ 1e12 (ms): larger share the last bucket
constexpr int kOctaves = kMaxExponent - kMinExponent;
constexpr std::size_t kBuckets = static_cast<std::size_t>(kOctaves) << kSubBits;

/// Bucket of a positive finite value: (exponent − min) · 128 + the top 7 mantissa bits.
std::size_t bucket_of(double v) noexcept {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  const int exponent = static_cast<int>((bits >> 52U) & 0x7ffU) - 1023;
  if (exponent < kMinExponent)
    return 0;
  if (exponent >= kMaxExponent)
    return kBuckets - 1;
  const auto sub = static_cast<std::size_t>((bits >> (52U - kSubBits)) & ((1U << kSubBits) - 1));
  return (static_cast<std::size_t>(exponent - kMinExponent) << kSubBits) | sub;
}

/// The lowest value of bucket `b` (b ≥ 1).
double bucket_low(std::size_t b) noexcept {
  const int exponent = static_cast<int>(b >> kSubBits) + kMinExponent;
  const double sub = static_cast<double>(b & ((1U << kSubBits) - 1));
  return std::ldexp(1.0 + sub / (1U << kSubBits), exponent);
}

/// The middle of bucket `b`'s value range.
double bucket_mid(std::size_t b) noexcept {
  const int exponent = static_cast<int>(b >> kSubBits) + kMinExponent;
  const double sub = static_cast<double>(b & ((1U << kSubBits) - 1));
  return std::ldexp(1.0 + (sub + 0.5) / (1U << kSubBits), exponent);
}

}  // namespace

StreamingHistogram::StreamingHistogram() : buckets_(kBuckets, 0.0) {}

void StreamingHistogram::add(double value, double count) noexcept {
  if (std::isnan(value) || !(count > 0))
    return;
  value = std::max(value, 0.0);
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ += count;
  sum_ += value * count;
  sum_sq_ += value * value * count;
  if (value == 0)
    zeros_ += count;
  else
    buckets_[bucket_of(value)] += count;
}

void StreamingHistogram::add_linear(double first, double step, std::int64_t n,
                                    double count) noexcept {
  if (n <= 0 || !(count > 0) || std::isnan(first) || std::isnan(step))
    return;
  if (n == 1) {
    add(first, count);
    return;
  }
  if (step < 0) {  // the same values, ascending
    first += static_cast<double>(n - 1) * step;
    step = -step;
  }
  first = std::max(first, 0.0);
  const double nd = static_cast<double>(n);
  const double last = first + (nd - 1) * step;
  if (count_ == 0) {
    min_ = first;
    max_ = last;
  } else {
    min_ = std::min(min_, first);
    max_ = std::max(max_, last);
  }
  count_ += nd * count;
  // Σ (a + i·b) = n·a + b·n(n − 1)/2; Σ (a + i·b)² = n·a² + a·b·n(n − 1) + b²·(n − 1)n(2n − 1)/6.
  sum_ += count * (nd * first + step * nd * (nd - 1) / 2);
  sum_sq_ += count * (nd * first * first + first * step * nd * (nd - 1) +
                      step * step * (nd - 1) * nd * (2 * nd - 1) / 6);
  std::int64_t i = 0;
  if (first == 0) {
    const std::int64_t zeros = step == 0 ? n : 1;
    zeros_ += static_cast<double>(zeros) * count;
    i = zeros;
  }
  while (i < n) {
    const double v = first + static_cast<double>(i) * step;
    const std::size_t b = bucket_of(v);
    // The values left in bucket b: those below the next bucket's lower bound.
    std::int64_t next = n;
    if (step > 0 && b + 1 < kBuckets) {
      const double upper = bucket_low(b + 1);
      next = std::min<std::int64_t>(
          n, std::max<std::int64_t>(i + 1,
                                    static_cast<std::int64_t>(std::ceil((upper - first) / step))));
      while (next > i + 1 && bucket_of(first + static_cast<double>(next - 1) * step) != b) --next;
      while (next < n && bucket_of(first + static_cast<double>(next) * step) == b) ++next;
    }
    buckets_[b] += static_cast<double>(next - i) * count;
    i = next;
  }
}

void StreamingHistogram::merge(const StreamingHistogram& other) noexcept {
  if (other.count_ == 0)
    return;
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  count_ += other.count_;
  sum_ += other.sum_;
  sum_sq_ += other.sum_sq_;
  zeros_ += other.zeros_;
  for (std::size_t i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
}

double StreamingHistogram::mean() const noexcept {
  return count_ > 0 ? sum_ / count_ : metrics::kUndefined;
}

double StreamingHistogram::value_at_rank(double rank) const {
  double seen = zeros_;
  if (rank < seen)
    return 0.0;
  for (std::size_t b = 0; b < kBuckets; ++b) {
    seen += buckets_[b];
    if (rank < seen)
      return std::clamp(bucket_mid(b), min_, max_);
  }
  return max_;
}

double StreamingHistogram::percentile(double q) const {
  if (count_ <= 0)
    return metrics::kUndefined;
  // numpy's linear method over the order statistics (0-based rank (n − 1)·q/100).
  const double rank = std::max(0.0, (count_ - 1) * q / 100.0);
  const double lo = std::floor(rank);
  const double a = value_at_rank(lo);
  const double b = value_at_rank(std::min(lo + 1, std::max(count_ - 1, 0.0)));
  return a + (b - a) * (rank - lo);
}

metrics::Stats StreamingHistogram::stats(const std::vector<double>& qs) const {
  metrics::Stats s;
  if (count_ <= 0) {
    for (const double q : qs) s.percentiles.emplace_back(q, metrics::kUndefined);
    return s;
  }
  s.count = static_cast<std::size_t>(std::llround(count_));
  s.mean = sum_ / count_;
  s.stddev = std::sqrt(std::max(0.0, sum_sq_ / count_ - s.mean * s.mean));
  s.min = min_;
  s.max = max_;
  s.median = percentile(50);
  for (const double q : qs) s.percentiles.emplace_back(q, percentile(q));
  return s;
}

void LatencyStats::add_request(TimeNs arrival_ns, TimeNs first_token_ns, TimeNs done_ns,
                               std::int64_t input, std::int64_t output, std::int64_t cached) {
  ++completed;
  input_tokens += input;
  output_tokens += output;
  cached_tokens += std::max<std::int64_t>(cached, 0);
  if (first_arrival_ns < 0 || arrival_ns < first_arrival_ns)
    first_arrival_ns = arrival_ns;
  last_done_ns = std::max(last_done_ns, done_ns);
  ttft_ms.add(ns_to_ms(first_token_ns - arrival_ns));
  e2el_ms.add(ns_to_ms(done_ns - arrival_ns));
  if (output >= 2)
    tpot_ms.add(ns_to_ms(done_ns - first_token_ns) / static_cast<double>(output - 1));
}

double LatencyStats::duration_s() const noexcept {
  return first_arrival_ns >= 0 && last_done_ns > first_arrival_ns
             ? ns_to_s(last_done_ns - first_arrival_ns)
             : 0.0;
}

metrics::Summary to_summary(const LatencyStats& stats, const std::vector<double>& percentiles) {
  metrics::Summary s;
  s.total = static_cast<std::size_t>(stats.completed + stats.failed);
  s.completed = static_cast<std::size_t>(stats.completed);
  s.failed = static_cast<std::size_t>(stats.failed);
  if (stats.failed > 0)
    s.failures_by_kind["http_4xx"] = static_cast<std::size_t>(stats.failed);
  s.duration_s = stats.duration_s();
  s.total_input_tokens = stats.input_tokens;
  s.total_output_tokens = stats.output_tokens;
  if (s.duration_s > 0) {
    s.request_throughput = static_cast<double>(stats.completed) / s.duration_s;
    s.output_throughput = static_cast<double>(stats.output_tokens) / s.duration_s;
    s.total_token_throughput =
        static_cast<double>(stats.input_tokens + stats.output_tokens) / s.duration_s;
  }
  s.good_requests = s.completed;
  s.request_goodput = s.request_throughput;
  s.ttft_ms = stats.ttft_ms.stats(percentiles);
  s.ttft_sched_ms = s.ttft_ms;
  s.tpot_ms = stats.tpot_ms.stats(percentiles);
  s.itl_ms = stats.itl_ms.stats(percentiles);
  s.e2el_ms = stats.e2el_ms.stats(percentiles);
  s.e2el_sched_ms = s.e2el_ms;
  const StreamingHistogram empty;
  s.ttfat_ms = empty.stats(percentiles);
  s.inter_chunk_ms = empty.stats(percentiles);
  s.lateness_ms = empty.stats(percentiles);
  s.queue_wait_ms = empty.stats(percentiles);
  return s;
}

}  // namespace llmbench::sim
